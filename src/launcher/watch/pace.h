/*
 * pace.h -- each rank's pace, and the ranks that fall behind, without any
 * I/O or clock of its own: the caller gives the times.
 *
 * A rank's pace comes from its steps: exactly, when it reports them
 * (DTRUN_PROGRESS: dtrun_progress.step(n), dtcomm_step()), or without a
 * change to its code, from the rhythm of its output: a training loop that
 * logs every K steps prints a line of one shape ("step 120 loss 0.31":
 * "step # loss #.#", digits aside) at a steady period, and each such line
 * is a tick. Ranks are compared only with ranks paced the same way (the
 * same line shape, or exact steps), against the median of them; a rank
 * slower by the threshold for PACE_SUSTAIN_STEPS of the median's steps
 * (at least PACE_SUSTAIN_MS) is named, once.
 */
#ifndef DT_PACE_H
#define DT_PACE_H

#include <stddef.h>
#include <stdint.h>

struct pace;

#define PACE_WINDOW	60	/* steps a pace is measured over, at most */
#define PACE_MIN_STEPS	8	/* fewer: no pace yet */
#define PACE_MIN_MS	5000	/* a window shorter than this: no pace yet */
/* Slow this long before it is named: 20 steps of the median's, or 10 s. */
#define PACE_SUSTAIN_STEPS 20
#define PACE_SUSTAIN_MS	10000
#define PACE_MIN_GROUP	3	/* ranks paced alike, for a median */
/*
 * How late a step may still be seen: a line comes at once; reported steps
 * come from the agent once a second (progress.h), then travel, and wait
 * their turn in a busy dtrun.
 */
#define PACE_UNSEEN_LINE_MS	200
#define PACE_UNSEEN_EXACT_MS	2500
#define PACE_SHAPE_MAX	48	/* bytes of a line's shape kept to show */
/*
 * What the watch costs the log path. A rank's lines are looked at (their
 * shapes hashed) until one shape is its tick, for at most PACE_LOOK_LINES
 * lines; none there, and it is not looked at again for PACE_RELOOK_MS.
 * A tick is at most PACE_TICK_MAX bytes of shape: a longer line is passed
 * by at once. Ticks closer than PACE_TICK_GAP_MS count as one (a tick is
 * counted at most once a read): a flood of them is not a pace (no window
 * of PACE_WINDOW steps spans PACE_MIN_MS), and the lines of a read that
 * come after its tick are not looked at.
 */
#define PACE_LOCK	4	/* moments a shape is printed at, to be the tick */
#define PACE_LOOK_LINES	2000
#define PACE_RELOOK_MS	10000
#define PACE_TICK_MAX	256
#define PACE_TICK_GAP_MS 10

/* A rank named slow. */
struct pace_slow {
	size_t		 rank;
	double		 secs;		/* its seconds per step (or line) */
	double		 median;	/* its group's */
	size_t		 steps;		/* its window's steps */
	int		 exact;		/* steps reported, not lines */
	char		 shape[PACE_SHAPE_MAX + 1]; /* the line's, when not */
};

/* Paces for nranks ranks; threshold: 0.10 is 10% slower than the median. */
struct pace	*pace_new(size_t nranks, double threshold);
void		 pace_free(struct pace *);

/* rank reported step (exact progress) at now_ms. */
void		 pace_step(struct pace *, size_t rank, uint64_t step,
		    uint64_t now_ms);

/* Bytes rank wrote (either stream) at now_ms: whole lines are ticks. */
void		 pace_output(struct pace *, size_t rank, const char *p,
		    size_t n, uint64_t now_ms);

/* What dtrun top shows of one rank. */
struct pace_now {
	uint64_t	 step;		/* last step (or line count); 0: none */
	double		 secs;		/* per step over the window; 0: unknown */
	uint64_t	 line_ms;	/* its last output; 0: none yet */
	int		 exact;
	int		 named;		/* named a straggler */
};

/* Rank's pace at now_ms (0: as of its last step, for one that ended). */
void		 pace_peek(struct pace *, size_t rank, uint64_t now_ms,
		    struct pace_now *);

/*
 * Judges at now_ms: the ranks named slow now (each at most once), up to
 * max of them into out. Returns how many.
 */
size_t		 pace_judge(struct pace *, uint64_t now_ms,
		    struct pace_slow *out, size_t max);

#endif
