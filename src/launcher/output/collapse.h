/*
 * collapse.h -- --collapse: the same line said by several ranks goes to the
 * terminal once, with the ranks that said it.
 *
 * Whole lines are held in groups of the same (stream, text); a rank's k-th
 * saying of a text joins the k-th group of it that is still held, so "dup"
 * said three times by 8 ranks is three groups of 8. A group waits while
 * ranks keep joining it: COLLAPSE_WINDOW_MS after its latest line, longer
 * when its ranks came further apart (4 times their mean gap), so ranks that
 * start seconds apart still meet; never longer than COLLAPSE_HOLD_MAX_MS
 * after its first line, and not at all once every rank has said it. A
 * rank's '\r' segments and longer lines are held too, each alone, so that
 * they do not force the rank's shared lines out before the others say them.
 *
 * Every rank's pieces on a stream go out in the order it said them: held
 * groups are kept in one list, in the order they go out, where each rank's
 * groups stand in its own order; a line joins only a group after the
 * rank's last held one, and a line no held group has starts one right after
 * the rank's last held piece. No I/O: the owner gives the time and owns the
 * timer.
 */
#ifndef DT_COLLAPSE_H
#define DT_COLLAPSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * How long a group waits for the next rank to say its line. Ranks kept in
 * step by collectives print a step's lines within tens of milliseconds of
 * each other, plus what the agents' batching adds; 300 ms covers that and
 * is still short enough that a log followed live does not seem to lag.
 */
#define COLLAPSE_WINDOW_MS	300
/*
 * The longest a group waits, however its ranks keep coming: what lets
 * 2,048 ranks that start up to 10 s apart print their config dump once,
 * and bounds how long a stalled or dead rank holds anyone's lines.
 */
#define COLLAPSE_HOLD_MAX_MS	10000
/*
 * How long a line several ranks said waits for ranks that are behind: that
 * have said fewer pieces on the stream than its first rank had before it
 * (they started late, or are slow); a line of one rank waits for them only
 * in the stream's first COLLAPSE_BEHIND_MS. A rank that ended is never
 * behind.
 */
#define COLLAPSE_BEHIND_MS	5000
/* Longer lines never join a group: a traceback's frames repeat, pages do not. */
#define COLLAPSE_LINE_MAX	4096
/* Longer pieces are not held: their rank's held lines go out before them. */
#define COLLAPSE_SOLO_MAX	(64 * 1024)
/*
 * What is held, at most: past either, the oldest groups go out early. The
 * bytes count lines, rank lists and the groups themselves; a group's ranks
 * take at most nranks / 8 bytes (a bitmap once that is smaller).
 */
#define COLLAPSE_GROUPS_MAX	65536
#define COLLAPSE_BYTES_MAX	(32 * 1024 * 1024)
/*
 * Holding a line costs a copy of it. A rank whose last COLLAPSE_ALONE_MAX
 * held pieces all went out alone (a flood of its own lines: no other rank
 * says them) is not held for COLLAPSE_RELOOK_MS, from its last one's.
 */
#define COLLAPSE_ALONE_MAX	256
#define COLLAPSE_RELOOK_MS	10000

struct collapse;

/*
 * Called once per group that goes out: stream as given to collapse_add,
 * the ranks that said the line (sorted, n >= 1), the piece's bytes with
 * its end, and the stamp its first piece came in with.
 */
typedef void	(*collapse_cb)(void *arg, int stream, const uint32_t *ranks,
		    size_t n, const char *line, size_t len, uint64_t stamp);

/* A table for ranks 0..nranks-1 (exits when out of memory, as xmalloc). */
struct collapse	*collapse_new(size_t nranks, collapse_cb, void *arg);

/*
 * Holds rank's piece on stream (0 or 1), as lines_cb gives it: two parts,
 * and cont when it only finishes the piece before (the '\n' of a split
 * "\r\n"), said at now (monotonic ms) with stamp (the owner's, for the
 * callback). A whole line of at most COLLAPSE_LINE_MAX may join others; a
 * '\r' segment or a longer line of at most COLLAPSE_SOLO_MAX is held alone;
 * a cont is added to the rank's held '\r' segment. May call the callback:
 * for the group the line completes, or for the oldest groups when too much
 * is held. Returns 0, or -1 when the piece is not held (too long, no such
 * rank, a cont with nothing to finish, or the rank's lines are not held
 * for now: COLLAPSE_ALONE_MAX): the owner then calls collapse_flush_rank
 * and writes it itself.
 */
int		 collapse_add(struct collapse *, uint32_t rank, int stream,
		    const char *a, size_t alen, const char *b, size_t blen,
		    int cont, uint64_t now, uint64_t stamp);

/* Rank says nothing more on stream (it ended, or its stream is off the terminal). */
void		 collapse_rank_done(struct collapse *, uint32_t rank, int stream);

/* Hands on every group up to and including rank's last held piece (either stream). */
void		 collapse_flush_rank(struct collapse *, uint32_t rank);

/* Hands on the groups whose wait has ended at now. */
void		 collapse_expire(struct collapse *, uint64_t now);

/* Hands on every group. */
void		 collapse_flush(struct collapse *);

/* When the next group's wait ends (monotonic ms), or 0 when none is held. */
uint64_t	 collapse_deadline(const struct collapse *);

void		 collapse_free(struct collapse *);

#endif
