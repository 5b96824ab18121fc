/*
 * attempt.h -- what one attempt of the job sets up around its agents, and
 * tears down: the ranks' environment and ports, the rendezvous, the rank
 * table, the output and the terminal's status line, signals, stack
 * reports, the check and the sync. The job's core (job.c) drives the
 * agents; these serve it, each through the callbacks it is given here.
 */
#ifndef DT_ATTEMPT_H
#define DT_ATTEMPT_H

#include "launcher/check/check.h"
#include "launcher/plan/envctx.h"
#include "launcher/job/jobmsg.h"
#include "launcher/job/jobrdzv.h"
#include "launcher/job/signals.h"
#include "launcher/stacks/stackask.h"
#include "launcher/watch/straggle.h"

struct event_base;
struct job_attempt;
struct job_host;
struct output;
struct ranks;
struct status;
struct sync;
struct topview;

struct attempt {
	struct env_ctx	 env;		/* what the ranks' variables are made of */
	struct jobmsg	 msg;		/* what the agents are told */
	struct jobrdzv	 rdzv;
	struct ranks	*ranks;
	struct output	*out;
	struct status	*st;		/* the terminal's status line */
	struct signals	*sig;
	struct stackask	*stk;		/* stack reports, the hang watch */
	struct straggle	*strag;		/* the straggler watch; or NULL */
	struct topview	*top;		/* what dtrun top shows */
	struct check	*chk;		/* --check, --preflight; or NULL */
	struct sync	*sync;		/* --sync-dst-dir; or NULL */
};

/* The job's side of each; arg (the job) is given to every one. */
struct attempt_cbs {
	struct signals_cbs	 sig;
	struct stackask_cbs	 stk;
	struct straggle_cbs	 strag;
	struct jobrdzv_cbs	 rdzv;
	struct check_cbs	 chk;
	void	(*synced)(void *arg, int code);		/* sync_start's */
	void	(*pressure)(void *arg, int on);		/* output_cfg's */
	void	(*closed)(void *arg, int stream);	/* output_cfg's */
	void	*arg;
};

/*
 * Sets up attempt a of the job id (plan p, its hosts in p's order) on base: a fresh MASTER_PORT
 * after a restart, a fresh rendezvous secret. Returns 0, or dtrun's exit
 * status (EXIT_CONFIG) once it said why; r is then still to be drained
 * and closed.
 */
int	attempt_open(struct attempt *r, struct event_base *,
	    const struct opts *, const struct plan *p, struct job_host **hosts,
	    const char *id, struct job_attempt *a, const struct attempt_cbs *);
/* The attempt's loop is over: the status line goes, the output is all written. */
void	attempt_drain(struct attempt *r);
/* Frees what attempt_open made. */
void	attempt_close(struct attempt *r);

#endif
