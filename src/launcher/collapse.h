/*
 * collapse.h -- --collapse: the same line said by several ranks at about
 * the same time goes to the terminal once, with the ranks that said it.
 *
 * Whole lines are held in groups keyed by (stream, text) for
 * COLLAPSE_WINDOW_MS after the group's first line came in, or until every
 * rank has said it; then the group is handed to the owner's callback with
 * its ranks, sorted. Groups go out in the order they were made, and a
 * rank's line joins a group only if the group is newer than the rank's
 * last held line on that stream, so no rank's lines on a stream ever
 * overtake each other. No I/O: the owner gives the time and owns the timer.
 */
#ifndef DT_COLLAPSE_H
#define DT_COLLAPSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * How long a line waits for the same line from other ranks. Ranks kept in
 * step by collectives print a step's lines within tens of milliseconds of
 * each other, plus what the agents' batching adds; 300 ms covers that and
 * is still short enough that a log followed live does not seem to lag.
 */
#define COLLAPSE_WINDOW_MS	300
/* Longer lines are never held: a traceback's frames repeat, pages do not. */
#define COLLAPSE_LINE_MAX	4096
/*
 * Holding a line costs a copy of it. A rank whose last COLLAPSE_ALONE_MAX
 * held lines all went out alone (a flood of its own lines: no other rank
 * says them) is not held for COLLAPSE_RELOOK_MS, from its last one's.
 */
#define COLLAPSE_ALONE_MAX	256
#define COLLAPSE_RELOOK_MS	10000

struct collapse;

/*
 * Called once per group that goes out: stream as given to collapse_add,
 * the ranks that said the line (sorted, n >= 1), the line's bytes with
 * its end, and the stamp its first line came in with.
 */
typedef void	(*collapse_cb)(void *arg, int stream, const uint32_t *ranks,
		    size_t n, const char *line, size_t len, uint64_t stamp);

/* A table for ranks 0..nranks-1 (exits when out of memory, as xmalloc). */
struct collapse	*collapse_new(size_t nranks, collapse_cb, void *arg);

/*
 * Holds rank's line on stream (0 or 1) (two parts, as lines_cb gives them; a + b at most
 * COLLAPSE_LINE_MAX) said at now (monotonic ms) with stamp (the owner's,
 * for the callback). May call the callback: for the group the line
 * completes, or for the oldest groups when too much is held. Returns 0,
 * or -1 when the line is not held (too long, no such rank, or the rank's
 * lines are not held for now: COLLAPSE_ALONE_MAX): the owner then calls
 * collapse_flush_rank and writes it itself.
 */
int		 collapse_add(struct collapse *, uint32_t rank, int stream,
		    const char *a, size_t alen, const char *b, size_t blen,
		    uint64_t now, uint64_t stamp);

/* Hands on every group up to and including rank's last held line (either stream). */
void		 collapse_flush_rank(struct collapse *, uint32_t rank);

/* Hands on the groups whose window has passed at now. */
void		 collapse_expire(struct collapse *, uint64_t now);

/* Hands on every group. */
void		 collapse_flush(struct collapse *);

/* When the oldest group's window ends (monotonic ms), or 0 when none is held. */
uint64_t	 collapse_deadline(const struct collapse *);

void		 collapse_free(struct collapse *);

#endif
