/*
 * attempt.h -- what one attempt of the job sets up around its agents, and
 * tears down: the ranks' environment and ports, the rendezvous, the rank
 * table, signals, and the features (hooks.h: the output, stack reports,
 * the watch, the check, the sync). The job's core (job.c) drives the
 * agents; these serve it, each through the callbacks it is given here.
 */
#ifndef DT_ATTEMPT_H
#define DT_ATTEMPT_H

#include "launcher/plan/envctx.h"
#include "launcher/job/hooksint.h"
#include "launcher/job/jobmsg.h"
#include "launcher/job/jobrdzv.h"
#include "launcher/job/signals.h"

struct event_base;
struct job;
struct job_attempt;
struct job_host;
struct ranks;

struct attempt {
	struct env_ctx	 env;		/* what the ranks' variables are made of */
	struct jobmsg	 msg;		/* what the agents are told */
	struct jobrdzv	 rdzv;
	struct ranks	*ranks;
	struct signals	*sig;
	struct job_view	 view;		/* what the features see */
	struct hooks	 hooks;		/* the features' states */
};

/* The job's side of each; arg (the job) is given to every one. */
struct attempt_cbs {
	struct signals_cbs	 sig;
	struct jobrdzv_cbs	 rdzv;
};

/*
 * Sets up attempt a of job j (id, plan p, its hosts in p's order) on
 * base: a fresh MASTER_PORT after a restart, a fresh rendezvous secret,
 * then a's features. Returns 0, or dtrun's exit status (EXIT_CONFIG) once
 * it said why; r is then still to be drained and closed.
 */
int	attempt_open(struct attempt *r, struct event_base *,
	    const struct opts *, const struct plan *p, struct job_host **hosts,
	    const char *id, struct job_attempt *a, struct job *j,
	    const struct attempt_cbs *);
/* The attempt's loop is over: the features write out what is pending. */
void	attempt_drain(struct attempt *r);
/* Frees what attempt_open made. */
void	attempt_close(struct attempt *r);

#endif
