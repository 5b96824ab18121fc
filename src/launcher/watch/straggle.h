/*
 * straggle.h -- the running job's stragglers: every rank's pace (pace.h)
 * from its lines and its reported steps, judged every few seconds once the
 * ranks run; a rank (or a whole host) that stays slower than the others by
 * --straggler-threshold is named once, with the evidence, and then, by
 * --on-straggler, its stack is shown or the job is stopped.
 */
#ifndef DT_STRAGGLE_H
#define DT_STRAGGLE_H

#include <stddef.h>
#include <stdint.h>

struct ap_coll;
struct ap_wait;
struct event_base;
struct opts;
struct pace_now;
struct peerwait_now;
struct plan;
struct stackask;
struct straggle;
struct job_feature;

/* The straggler watch and dtrun top on the job's hooks (watchfeat.c). */
extern const struct job_feature watch_feature;

#define STRAGGLE_JUDGE_MS	2000	/* how often the paces are judged */
#define STRAGGLE_STACKS_MS	10000	/* a verdict's stacks, at most this often */

/* How a stop reaches the job; arg is the job's. */
struct straggle_cbs {
	/* --on-straggler stop: what names the straggler ("rank 5 on gpu07"). */
	void	(*stop)(void *arg, const char *who);
	void	*arg;
};

/*
 * The straggler watch of one attempt of p; stk: its stack reports (for
 * --on-straggler stack). NULL when --straggler-threshold is 0 (off).
 */
struct straggle	*straggle_new(struct event_base *, const struct opts *,
		    const struct plan *p, struct stackask *stk,
		    const struct straggle_cbs *);
void		 straggle_free(struct straggle *);

/* The ranks were started: the judging begins. */
void		 straggle_started(struct straggle *);
/* Bytes rank wrote (either stream). */
void		 straggle_output(struct straggle *, size_t rank, const char *,
		    size_t);
/*
 * rank's pace now (dtrun top); live 0: it ended, its silence since is no
 * slowness. Zeros when the watch is off.
 */
/*
 * Where host's ranks waited in the last second (its agent's samples):
 * the lock-step watch (peerwait.h).
 */
void		 straggle_waits(struct straggle *, size_t host,
		    const struct ap_wait *, size_t n);
/* rank's peer-wait share now (dtrun top). */
void		 straggle_peek_wait(struct straggle *, size_t rank,
		    struct peerwait_now *);
void		 straggle_peek(struct straggle *, size_t rank, int live,
		    struct pace_now *);
/*
 * host's ranks' arrivals at NCCL collectives (dtrun's plugin), its agent's
 * wall clock at agent_ns as it sent them: lockstep.h judges them.
 */
void		 straggle_colls(struct straggle *, size_t host,
		    uint64_t agent_ns, const struct ap_coll *, size_t n);
/* rank reported step age_ms ago (DTRUN_PROGRESS, through its agent). */
void		 straggle_step(struct straggle *, size_t rank, uint64_t step,
		    uint64_t age_ms);

#endif
