/*
 * lines.c -- line splitting for forwarded output. The usual chunk is whole
 * lines: they are handed on straight from it, with nothing copied or
 * allocated; only an unfinished tail is kept.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "launcher/output/lines.h"

/* A buffer bigger than this is freed once its line is done: a huge line must not pin it. */
#define LINES_KEEP	(64 * 1024)

/* Makes p (cap bytes, or NULL and 0) l's buffer, keeping the pool's count. */
static void
lines_hold(struct lines *l, char *p, size_t cap)
{
	if (l->pool != NULL)
		l->pool->held = l->pool->held - l->cap + cap;
	l->part = p;
	l->cap = cap;
}

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
		lines_hold(l, np, cap);
	}
	memcpy(l->part + l->len, p, n);
	l->len += n;
	return 0;
}

/* The tail was handed on: empty it, and free a big buffer. */
static void
lines_done(struct lines *l, size_t keep)
{
	l->len = 0;
	if (l->cap > keep) {
		free(l->part);
		lines_hold(l, NULL, 0);
	}
}

/* Hands the tail on as one line ('\n' added) and empties it. */
static void
lines_cut(struct lines *l, lines_cb cb, void *arg, size_t keep)
{
	cb(arg, l->part, l->len, "\n", 1, 0);
	lines_done(l, keep);
}

/*
 * Where the piece starting at p ends (its last byte), or NULL if it does
 * not end before end: at the first '\n', or at a '\r' before it that is
 * not the start of "\r\n". *cr caches the next '\r' at or after p.
 */
static const char *
lines_end(const char *p, const char *end, const char **cr)
{
	const char	*nl;

	if (*cr != NULL && *cr < p)
		*cr = memchr(p, '\r', end - p);
	nl = memchr(p, '\n', end - p);
	while (*cr != NULL && (nl == NULL || *cr < nl)) {
		if (*cr + 1 == end || (*cr)[1] != '\n')
			return *cr;
		/* "\r\n": one line end; look for a '\r' after it. */
		*cr = memchr(*cr + 1, '\r', end - *cr - 1);
	}
	return nl;
}

int
lines_feed(struct lines *l, const char *p, size_t n, lines_cb cb, void *arg)
{
	const char	*end = p + n, *e, *cr;
	size_t		 seg, room;

	if (n > 0 && l->cr && *p == '\n') {
		/* The "\r\n" of a CRLF line, split between chunks. */
		cb(arg, "", 0, p, 1, 1);
		p++;
	}
	if (n > 0)
		l->cr = 0;
	cr = memchr(p, '\r', end - p);
	while (p < end) {
		if ((e = lines_end(p, end, &cr)) == NULL) {
			n = end - p;
			room = LINES_MAX - l->len;
			if (n < room)
				return lines_keep(l, p, n) == 0 ? 0 :
				    (cb(arg, p, n, "", 0, 0), DT_ERR_NOMEM);
			if (lines_keep(l, p, room) != 0) {
				cb(arg, p, n, "", 0, 0);
				return DT_ERR_NOMEM;
			}
			lines_cut(l, cb, arg, LINES_KEEP);
			p += room;
			continue;
		}
		seg = e - p + 1;
		if (l->len > 0) {
			cb(arg, l->part, l->len, p, seg, 0);
			lines_done(l, LINES_KEEP);
		} else
			cb(arg, "", 0, p, seg, 0);
		p += seg;
		l->cr = *e == '\r';
	}
	return 0;
}

void
lines_flush(struct lines *l, lines_cb cb, void *arg)
{
	if (l->len > 0)
		lines_cut(l, cb, arg, 0);
	else
		lines_done(l, 0);
}

void
lines_free(struct lines *l)
{
	free(l->part);
	lines_hold(l, NULL, 0);
	memset(l, 0, sizeof(*l));
}
