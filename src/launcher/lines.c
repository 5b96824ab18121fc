/* lines.c -- line splitting for forwarded output. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "lines.h"

/* Saves p[0..n) after the tail; returns 0 or DT_ERR_NOMEM. */
static int
lines_keep(struct lines *l, const char *p, size_t n)
{
	size_t	 cap;
	char	*np;

	if (l->len + n > l->cap) {
		cap = l->cap ? l->cap : 256;
		while (cap < l->len + n)
			cap *= 2;
		if ((np = realloc(l->part, cap)) == NULL)
			return DT_ERR_NOMEM;
		l->part = np;
		l->cap = cap;
	}
	memcpy(l->part + l->len, p, n);
	l->len += n;
	return 0;
}

/* Hands the tail on as one line ('\n' added) and empties it. */
static void
lines_cut(struct lines *l, lines_cb cb, void *arg)
{
	cb(arg, l->part, l->len, "\n", 1);
	l->len = 0;
	/* A huge line should not pin its buffer for the rest of the job. */
	if (l->cap > 64 * 1024) {
		free(l->part);
		l->part = NULL;
		l->cap = 0;
	}
}

int
lines_feed(struct lines *l, const char *p, size_t n, lines_cb cb, void *arg)
{
	const char	*nl;
	size_t		 seg, room;

	while (n > 0) {
		if ((nl = memchr(p, '\n', n)) == NULL) {
			room = LINES_MAX - l->len;
			if (n < room)
				return lines_keep(l, p, n) == 0 ? 0 :
				    (cb(arg, p, n, "", 0), DT_ERR_NOMEM);
			if (lines_keep(l, p, room) != 0) {
				cb(arg, p, n, "", 0);
				return DT_ERR_NOMEM;
			}
			lines_cut(l, cb, arg);
			p += room;
			n -= room;
			continue;
		}
		seg = nl - p + 1;
		if (l->len > 0) {
			cb(arg, l->part, l->len, p, seg);
			l->len = 0;
		} else
			cb(arg, "", 0, p, seg);
		p += seg;
		n -= seg;
	}
	return 0;
}

void
lines_flush(struct lines *l, lines_cb cb, void *arg)
{
	if (l->len > 0)
		lines_cut(l, cb, arg);
}

void
lines_free(struct lines *l)
{
	free(l->part);
	memset(l, 0, sizeof(*l));
}
