/*
 * env.h -- the environment every rank gets. The job sends the host part
 * once per host (JOB message) and the rank part with each rank (RANK); the
 * agent lays both over its own environment, rank part last.
 */
#ifndef DT_ENV_H
#define DT_ENV_H

struct opts;
struct plan;
struct strv;

struct env_ctx {
	const struct opts	*o;
	const struct plan	*plan;
	const char		*job_id;
	const char		*master_addr;
	int			 master_port;
	const char		*rdzv_addr;	/* host:port of dtrun's rendezvous */
	const char		*rdzv_token;	/* the job secret, hex */
};

/* Appends the variables shared by every rank of host h, then the user's -x. */
void	env_host(const struct env_ctx *, int h, struct strv *);
/* Appends the variables of one rank. */
void	env_rank(const struct env_ctx *, int rank, struct strv *);

#endif
