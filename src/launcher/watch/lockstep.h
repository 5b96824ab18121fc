/*
 * lockstep.h -- stragglers in lock-step training, from the ranks' arrivals
 * at NCCL collectives (dtrun's profiler plugin, through the agents): every
 * rank steps at the pace of the slowest, which arrives last at each
 * collective while the others wait for it. A collective is complete once
 * every rank of its communicator arrived; over the last LOCKSTEP_WINDOW
 * complete ones, a rank that was last at most of them (LOCKSTEP_SHARE),
 * by a lateness that is a real part of the time between collectives (the
 * straggler threshold), is the one the others wait for. Hosts' clocks are
 * aligned by what each agent's clock read when it sent the arrivals
 * against ours when they came (the smallest difference seen: a fixed link
 * delay shifts every rank of a host alike).
 */
#ifndef DT_LOCKSTEP_H
#define DT_LOCKSTEP_H

#include <stddef.h>
#include <stdint.h>

struct ap_coll;
struct lockstep;

#define LOCKSTEP_WINDOW		64	/* complete collectives judged */
#define LOCKSTEP_MIN		32	/* fewer: no judgement yet */
#define LOCKSTEP_SHARE		0.6	/* last at this share of them */
#define LOCKSTEP_PENDING_MAX	65536	/* collectives waiting for ranks */
#define LOCKSTEP_STALE_NS	(30ULL * 1000000000ULL)

/* Why a rank is named. */
struct lockstep_verdict {
	size_t	 rank;
	size_t	 last, of;	/* last at last of the of judged */
	double	 late_ms;	/* after the first rank, on average, then */
	double	 gap_ms;	/* between collectives, on average */
	size_t	 seen;		/* complete collectives in all */
};

/* The watch over nranks ranks on nhosts hosts. */
struct lockstep	*lockstep_new(size_t nranks, size_t nhosts);
void		 lockstep_free(struct lockstep *);

/*
 * A batch from host's agent: its clock read agent_ns as it sent it, ours
 * read now_ns as it came (both wall clocks, nanoseconds); then each of
 * the n arrivals.
 */
void		 lockstep_take(struct lockstep *, size_t host,
		    uint64_t agent_ns, uint64_t now_ns,
		    const struct ap_coll *, size_t n);

/*
 * 1 with *v filled when one rank, not named before, is last at most of
 * the window by at least threshold (a fraction) of the time between
 * collectives; it is then named (never again). 0 otherwise.
 */
int		 lockstep_judge(struct lockstep *, double threshold,
		    struct lockstep_verdict *v);

/* Complete collectives so far, and arrivals (-v says both at the end). */
size_t		 lockstep_seen(const struct lockstep *, size_t *arrivals);

#endif
