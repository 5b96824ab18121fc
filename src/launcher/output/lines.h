/*
 * lines.h -- split a rank's output stream into whole lines.
 *
 * Forwarded output is written a whole line at a time so lines of different
 * ranks never mix. A splitter keeps the unfinished tail of one rank's
 * stream between chunks; lines longer than LINES_MAX are cut there. A
 * segment ending in '\r' (a progress bar redrawing itself) is handed on at
 * once, '\r' included, as a piece of its own; "\r\n" still ends one line.
 * The splitters of a job may share a pool that counts the memory they hold,
 * so that their owner can bound it (lines_flush the largest).
 */
#ifndef DT_LINES_H
#define DT_LINES_H

#include <stddef.h>

#define LINES_MAX	(8 * 1024 * 1024)

/* What every splitter sharing it holds in buffers, in bytes. */
struct lines_pool {
	size_t	 held;
};

struct lines {
	char			*part;	/* unfinished line, no newline yet */
	size_t			 len;
	size_t			 cap;
	int			 cr;	/* the last piece handed on ended in '\r' */
	struct lines_pool	*pool;	/* counts cap; NULL: not counted */
};

/*
 * Called once per piece: a whole line with its '\n', a segment ending in
 * '\r', or a cut line with a '\n' added; in two parts, the saved tail (a)
 * and the new bytes (b). cont is 1 when the piece only finishes the one
 * before on the same line (the '\n' of a "\r\n" split between chunks): it
 * takes no prefix.
 */
typedef void	(*lines_cb)(void *arg, const char *a, size_t alen, const char *b,
		    size_t blen, int cont);

/*
 * Feeds n bytes; calls cb for every piece they complete. Returns 0, or
 * DT_ERR_NOMEM (the bytes are then passed on unsplit, never dropped).
 */
int	lines_feed(struct lines *, const char *p, size_t n, lines_cb, void *arg);

/* Emits an unfinished last line, adding the missing '\n', and frees the buffer. */
void	lines_flush(struct lines *, lines_cb, void *arg);

void	lines_free(struct lines *);

#endif
