/*
 * lines.h -- split a rank's output stream into whole lines.
 *
 * Forwarded output is written a whole line at a time so lines of different
 * ranks never mix. A splitter keeps the unfinished tail of one rank's
 * stream between chunks; lines longer than LINES_MAX are cut there (the
 * only place a line is ever split).
 */
#ifndef DT_LINES_H
#define DT_LINES_H

#include <stddef.h>

#define LINES_MAX	(8 * 1024 * 1024)

struct lines {
	char	*part;		/* unfinished line, no newline yet */
	size_t	 len;
	size_t	 cap;
};

/* Called once per whole line; line includes its '\n'. Two pieces: the saved tail and the new bytes. */
typedef void	(*lines_cb)(void *arg, const char *a, size_t alen, const char *b,
		    size_t blen);

/*
 * Feeds n bytes; calls cb for every line they complete. Returns 0, or
 * DT_ERR_NOMEM (the bytes are then passed on unsplit, never dropped).
 */
int	lines_feed(struct lines *, const char *p, size_t n, lines_cb, void *arg);

/* Emits an unfinished last line, adding the missing '\n'. */
void	lines_flush(struct lines *, lines_cb, void *arg);

void	lines_free(struct lines *);

#endif
