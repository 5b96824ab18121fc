/*
 * stackask.h -- the job's stack reports: SIGQUIT (Ctrl-\), an agent's
 * STACKASK (dtrun-kill --stacks), --hang-timeout and --start-timeout ask
 * every agent for its ranks' stacks; once all are in (or the wait runs
 * out) the merged report (stackrep.h) goes to stderr and the full stacks
 * to a file. What the report was for (a hang, a start that timed out)
 * goes back to the job through its callbacks; the job goes on otherwise.
 */
#ifndef DT_STACKASK_H
#define DT_STACKASK_H

#include <stddef.h>
#include <stdint.h>

struct ap_stack;
struct event_base;
struct job_host;
struct opts;
struct plan;
struct ranks;
struct stackask;

/* What a stack report ends in. */
enum stk_then {
	STK_THEN_NONE,			/* the job goes on */
	STK_THEN_HANG,			/* --hang-timeout: stop, 123 */
	STK_THEN_START			/* --start-timeout: stop, 125 */
};

/* How the report reaches the job; arg is theirs. */
struct stackask_cbs {
	/* True once the job is stopping: no new report, no hang. */
	int	(*stopping)(void *arg);
	/* A report for a hang or a start timeout is in (or none could be made). */
	void	(*then)(void *arg, enum stk_then);
	void	*arg;
};

struct job;
struct job_feature;

/* Stack reports and the hang watch on the job's hooks (stackfeat.c). */
extern const struct job_feature stacks_feature;
/* The stack reports of job j's attempt, for a feature built on them; or NULL. */
struct stackask	*stackfeat_of(struct job *j);

/*
 * The reports of one attempt of p, its hosts (in p's order) and its
 * ranks' states in rk (attempt: its number, 0 first; dir: its
 * --output-dir or NULL). Never NULL.
 */
struct stackask	*stackask_new(struct event_base *, const struct opts *,
		    const struct plan *p, struct job_host **hosts,
		    const struct ranks *rk,
		    const char *job_id, int attempt,
		    const char *dir, const struct stackask_cbs *);
void		 stackask_free(struct stackask *);

/* The ranks were started: --hang-timeout counts from now. */
void		 stackask_started(struct stackask *);
/* A rank wrote a line or beat (dtcomm_heartbeat): it is not hung. */
void		 stackask_alive(struct stackask *);

/*
 * Asks the agents for stacks (why: what asked, for the user); only: NULL
 * for every rank, or a calloc'd byte per rank, taken, 1 for those to
 * show. then: what the report is for. A report under way answers this
 * ask too (it takes on then).
 */
void		 stackask_ask(struct stackask *, const char *why,
		    enum stk_then then, uint8_t *only);
/* An agent asked (STACKASK): a report, unless one just ended (Ctrl-\ reaches dtrun and a local agent). */
void		 stackask_agent(struct stackask *);
/* A STACK from host's agent: a rank's stack, or (AP_NORANK) the end of them. */
void		 stackask_stack(struct stackask *, size_t host,
		    const struct ap_stack *);
/* host's agent is gone: what it owed is missing. */
void		 stackask_host_gone(struct stackask *, size_t host);
/* What the report under way is for; STK_THEN_NONE when none. */
enum stk_then	 stackask_pending(const struct stackask *);

#endif
