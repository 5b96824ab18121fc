/*
 * peerwait.h -- stragglers in lock-step training, from where the ranks
 * wait (the agents' samples, agent/waits.h): every rank steps at the pace
 * of the slowest, and each step the others wait for it inside the
 * collective while it waits least. Over the last PEERWAIT_WINDOW seconds,
 * the rank whose share of samples waiting on a peer is below the other
 * ranks' median by at least threshold/(1+threshold) (the share of each of
 * their steps a rank that much slower keeps them waiting), in
 * PEERWAIT_SUSTAIN judgements in a row, is named, with what its own
 * samples say it was doing instead: its input, a short CPU, or compute.
 * Ranks that step on their own wait on no peer, and are never named here.
 */
#ifndef DT_PEERWAIT_H
#define DT_PEERWAIT_H

#include <stddef.h>
#include <stdint.h>

struct ap_wait;
struct peerwait;

#define PEERWAIT_WINDOW		30	/* seconds judged over, at most */
#define PEERWAIT_MIN_SAMPLES	200	/* a rank's, in the window: ~10 s */
#define PEERWAIT_SUSTAIN	3	/* judgements in a row naming it */

enum peerwait_why { PW_COMPUTE, PW_INPUT, PW_CPU };

struct peerwait_verdict {
	size_t			 rank;
	size_t			 others;	/* ranks judged beside it */
	size_t			 peer;		/* the one of them that waits most */
	double			 their_wait;	/* their median peer-wait share */
	double			 its_wait;
	enum peerwait_why	 why;
	double			 cpu;		/* its main thread's CPU share */
	double			 delay;		/* runnable, not running, share */
	const char		*what;		/* the input it waited on most */
};

/* What dtrun top shows for a rank. */
struct peerwait_now {
	int	 known;			/* samples in the window */
	double	 wait;			/* peer-wait share */
	int	 suspect;		/* the one judged now, not yet named */
	int	 named;			/* named the one the others wait for */
};

struct peerwait	*peerwait_new(size_t nranks);
void		 peerwait_free(struct peerwait *);

/*
 * One second of samples of n ranks (their ranks checked < nranks). An
 * item with no samples and a what says why its rank cannot be sampled:
 * returned through *off (its index in v, or -1), once per rank.
 */
void		 peerwait_take(struct peerwait *, const struct ap_wait *,
		    size_t n, long *off);

/*
 * 1 with *v filled when a rank, not named before, is the one the others
 * wait for (see above); it is then named. 0 otherwise.
 */
int		 peerwait_judge(struct peerwait *, double threshold,
		    struct peerwait_verdict *v);

/*
 * Forgets every window: the ranks were stopped a while (their stacks were
 * taken), which the samples would read as waiting.
 */
void		 peerwait_forget(struct peerwait *);

void		 peerwait_peek(const struct peerwait *, size_t rank,
		    struct peerwait_now *);

#endif
