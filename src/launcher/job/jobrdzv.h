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
	/* The server failed, or a rank's channel cannot be served: stop. */
	void	(*error)(void *arg, const char *msg);
	/* A rank joined. */
	void	(*join)(void *arg, int rank);
	/* A joined rank called dtcomm_heartbeat(). */
	void	(*alive)(void *arg, int rank);
	void	*arg;
};

struct jobrdzv_chan;
struct job_host;

struct jobrdzv {
	struct rdzv_server	*srv;		/* NULL until started */
	struct jobrdzv_cbs	 cb;
	int			 nworkers;
	char			 addr[300];	/* "agent": their way in */
	size_t			 refused;	/* channels not served */
	/* The ranks' channels through their agents: by host, by id - 1. */
	struct jobrdzv_chan	***ch;
	size_t			*nch;
	size_t			 nhosts;
};

/*
 * Starts r's server on base for plan's workers, listening on no port,
 * and points env's rdzv_addr at r (the ranks reach it through their
 * agents). Returns 0,
 * or a DT_ERR_* with e filled.
 */
int	jobrdzv_start(struct jobrdzv *r, struct event_base *,
	    const struct opts *, const struct plan *, struct env_ctx *env,
	    const struct jobrdzv_cbs *, struct dt_err *e);
/* START went out: --start-timeout counts from now (rdzv_server_start_clock). */
void	jobrdzv_started(struct jobrdzv *r);
/*
 * Bytes a rank sent through h's agent on channel chan (n == 0: it
 * closed): the server's virtual connection for it, opened by its first;
 * the server's answers go back to h's agent in RDZV frames. A channel
 * the server cannot take fails the job at once through cb.error.
 */
void	jobrdzv_chan_input(struct jobrdzv *r, struct job_host *h,
	    uint32_t chan, const uint8_t *p, size_t n);
/* h's agent is gone: so are its ranks' channels. */
void	jobrdzv_host_gone(struct jobrdzv *r, struct job_host *h);
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
