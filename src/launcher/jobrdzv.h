/*
 * jobrdzv.h -- a job attempt's rendezvous server (src/rendezvous/server.h)
 * on the job's event base: a fresh secret, the plan's workers, and an
 * address every host reaches. What happens at the rendezvous goes to the
 * job through callbacks.
 */
#ifndef DT_JOBRDZV_H
#define DT_JOBRDZV_H

#include "rendezvous/auth.h"

struct dt_err;
struct env_ctx;
struct event_base;
struct opts;
struct plan;
struct rdzv_server;

/* What the job hears from its rendezvous; arg is theirs. */
struct jobrdzv_cbs {
	/* Some rank joined, not all within --start-timeout; msg says so. */
	void	(*timeout)(void *arg, const char *msg);
	/* The server failed (out of descriptors): the job cannot start. */
	void	(*error)(void *arg, const char *msg);
	/* A rank joined. */
	void	(*join)(void *arg, int rank);
	/* A joined rank called dtcomm_heartbeat(). */
	void	(*alive)(void *arg, int rank);
	void	*arg;
};

struct jobrdzv {
	struct rdzv_server	*srv;		/* NULL until started */
	struct jobrdzv_cbs	 cb;
	int			 nworkers;
	char			 addr[300];	/* host:port, as the ranks reach it */
	char			 token[2 * RDZV_SECRET_LEN + 1]; /* the secret, hex */
};

/*
 * Starts r's server on base for plan's workers, and points env's
 * rdzv_addr and rdzv_token at r. Returns 0, or a DT_ERR_* with e filled.
 */
int	jobrdzv_start(struct jobrdzv *r, struct event_base *,
	    const struct opts *, const struct plan *, struct env_ctx *env,
	    const struct jobrdzv_cbs *, struct dt_err *e);
/* Workers blocked in a rendezvous wait hear why, not hang. */
void	jobrdzv_abort(struct jobrdzv *r, const char *why);
/*
 * For a --start-timeout: a calloc'd byte per rank of nranks, 1 for the
 * workers that never joined; *n: how many.
 */
uint8_t	*jobrdzv_missing(const struct jobrdzv *r, size_t nranks, int *n);
/* Frees the server and wipes the secret. */
void	jobrdzv_stop(struct jobrdzv *r);

#endif
