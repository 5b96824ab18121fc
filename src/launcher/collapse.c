/*
 * collapse.c -- the table of held lines behind --collapse (collapse.h).
 *
 * Groups are a FIFO in the order they were made (seq rises along it) and
 * a hash of (stream, text) that finds the newest group of each line.
 * Each rank remembers, per stream, the seq of the group holding its last
 * line; a line joins the newest group with its text only when that group
 * is newer, or else starts a new one. So a rank's groups rise in seq as
 * its lines were said, and handing groups on only from the FIFO's head
 * keeps every rank's order, whatever else goes out first. Per stream,
 * because stdout and stderr are two fds with queues of their own, never
 * ordered against each other: tracked together, a warning on stderr
 * between two rank's loss lines on stdout would never collapse.
 *
 * A rank that floods lines of its own is let through unheld for a while
 * (COLLAPSE_ALONE_MAX): its lines are not hashed or copied.
 */
#include <stdlib.h>
#include <string.h>

#include "launcher/collapse.h"
#include "util/xmalloc.h"

/* Bounds on what is held: past either, the oldest groups go out early. */
#define COLLAPSE_GROUPS_MAX	1024
#define COLLAPSE_BYTES_MAX	(1024 * 1024)
#define COLLAPSE_BUCKETS	1024	/* a power of two */

struct cgroup {
	struct cgroup	*next;		/* the next newer group */
	struct cgroup	*hnext;		/* hash chain */
	int		 hashed;	/* the newest of its text: in the hash */
	uint64_t	 seq;
	uint64_t	 born;		/* when its first line came (ms) */
	uint64_t	 stamp;
	uint32_t	 hash;
	int		 stream;
	uint32_t	*ranks;		/* in the order they said it */
	size_t		 nranks;
	size_t		 cap;
	size_t		 len;
	char		 line[];
};

struct collapse {
	struct cgroup	*head;		/* oldest */
	struct cgroup	*tail;
	struct cgroup	*bucket[COLLAPSE_BUCKETS];
	uint64_t	*last;		/* per rank and stream: seq of its last line */
	uint32_t	*alone;		/* per rank: its lines out alone in a row */
	uint64_t	*unheld;	/* per rank: its lines not held until then */
	uint64_t	 seq;		/* the newest group's */
	size_t		 ngroups;
	size_t		 bytes;		/* lines and rank lists held */
	size_t		 nranks;
	collapse_cb	 cb;
	void		*arg;
};

struct collapse *
collapse_new(size_t nranks, collapse_cb cb, void *arg)
{
	struct collapse	*c = xcalloc(1, sizeof(*c));

	c->last = xcalloc(nranks ? nranks * 2 : 1, sizeof(*c->last));
	c->alone = xcalloc(nranks ? nranks : 1, sizeof(*c->alone));
	c->unheld = xcalloc(nranks ? nranks : 1, sizeof(*c->unheld));
	c->nranks = nranks;
	c->cb = cb;
	c->arg = arg;
	return c;
}

/* FNV-1a over the stream and both parts of the line. */
static uint32_t
collapse_hash(int stream, const char *a, size_t alen, const char *b,
    size_t blen)
{
	uint32_t	h = 2166136261u ^ (uint32_t)stream;
	size_t		i;

	for (i = 0; i < alen; i++)
		h = (h ^ (unsigned char)a[i]) * 16777619u;
	for (i = 0; i < blen; i++)
		h = (h ^ (unsigned char)b[i]) * 16777619u;
	return h;
}

/* The newest group holding this line, or NULL. */
static struct cgroup *
collapse_find(struct collapse *c, uint32_t h, int stream, const char *a,
    size_t alen, const char *b, size_t blen)
{
	struct cgroup	*g;

	for (g = c->bucket[h & (COLLAPSE_BUCKETS - 1)]; g; g = g->hnext)
		if (g->hash == h && g->stream == stream &&
		    g->len == alen + blen && memcmp(g->line, a, alen) == 0 &&
		    memcmp(g->line + alen, b, blen) == 0)
			return g;
	return NULL;
}

/* Takes g out of the hash: a newer group of its text replaces it, or it went out. */
static void
collapse_unhash(struct collapse *c, struct cgroup *g)
{
	struct cgroup	**pp;

	if (!g->hashed)
		return;
	for (pp = &c->bucket[g->hash & (COLLAPSE_BUCKETS - 1)]; *pp != g;
	    pp = &(*pp)->hnext)
		;
	*pp = g->hnext;
	g->hashed = 0;
}

/* Orders ranks for the callback. */
static int
collapse_cmp(const void *x, const void *y)
{
	uint32_t	a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* g goes out: its lone rank's count of lines out alone rises, else resets. */
static void
collapse_count(struct collapse *c, const struct cgroup *g)
{
	size_t	i;

	if (g->nranks > 1) {
		for (i = 0; i < g->nranks; i++)
			c->alone[g->ranks[i]] = 0;
		return;
	}
	if (++c->alone[g->ranks[0]] < COLLAPSE_ALONE_MAX)
		return;
	c->alone[g->ranks[0]] = 0;
	c->unheld[g->ranks[0]] = g->born + COLLAPSE_RELOOK_MS;
}

/*
 * Hands on the oldest group. It is off the table before the callback
 * runs, so a callback that flushes (a message of dtrun's) finds the table
 * whole.
 */
static void
collapse_pop(struct collapse *c)
{
	struct cgroup	*g = c->head;

	c->head = g->next;
	if (c->head == NULL)
		c->tail = NULL;
	collapse_unhash(c, g);
	c->ngroups--;
	c->bytes -= g->len + g->cap * sizeof(*g->ranks);
	qsort(g->ranks, g->nranks, sizeof(*g->ranks), collapse_cmp);
	collapse_count(c, g);
	c->cb(c->arg, g->stream, g->ranks, g->nranks, g->line, g->len,
	    g->stamp);
	free(g->ranks);
	free(g);
}

/* Hands on every group up to and including seq. */
static void
collapse_through(struct collapse *c, uint64_t seq)
{
	while (c->head != NULL && c->head->seq <= seq)
		collapse_pop(c);
}

/* A new group for the line, newest in the FIFO and in the hash. */
static struct cgroup *
collapse_group(struct collapse *c, uint32_t h, int stream, const char *a,
    size_t alen, const char *b, size_t blen, uint64_t now, uint64_t stamp)
{
	struct cgroup	*g = xcalloc(1, sizeof(*g) + alen + blen);
	size_t		 i = h & (COLLAPSE_BUCKETS - 1);

	memcpy(g->line, a, alen);
	memcpy(g->line + alen, b, blen);
	g->len = alen + blen;
	g->hash = h;
	g->stream = stream;
	g->seq = ++c->seq;
	g->born = now;
	g->stamp = stamp;
	g->hnext = c->bucket[i];
	g->hashed = 1;
	c->bucket[i] = g;
	if (c->tail != NULL)
		c->tail->next = g;
	else
		c->head = g;
	c->tail = g;
	c->ngroups++;
	c->bytes += g->len;
	return g;
}

/* Adds rank to g's list. */
static void
collapse_join(struct collapse *c, struct cgroup *g, uint32_t rank)
{
	size_t	cap;

	if (g->nranks == g->cap) {
		cap = g->cap ? g->cap * 2 : 4;
		g->ranks = xreallocarray(g->ranks, cap, sizeof(*g->ranks));
		c->bytes += (cap - g->cap) * sizeof(*g->ranks);
		g->cap = cap;
	}
	g->ranks[g->nranks++] = rank;
	c->last[rank * 2 + g->stream] = g->seq;
}

int
collapse_add(struct collapse *c, uint32_t rank, int stream, const char *a,
    size_t alen, const char *b, size_t blen, uint64_t now, uint64_t stamp)
{
	struct cgroup	*g, *old;
	uint32_t	 h;

	if (rank >= c->nranks || (stream != 0 && stream != 1) ||
	    alen + blen > COLLAPSE_LINE_MAX || now < c->unheld[rank])
		return -1;
	h = collapse_hash(stream, a, alen, b, blen);
	old = g = collapse_find(c, h, stream, a, alen, b, blen);
	/* Joining a group older than the rank's last line would reorder it. */
	if (g == NULL || g->seq <= c->last[rank * 2 + stream]) {
		if (old != NULL)
			collapse_unhash(c, old);
		g = collapse_group(c, h, stream, a, alen, b, blen, now, stamp);
	}
	collapse_join(c, g, rank);
	if (g->nranks == c->nranks)
		collapse_through(c, g->seq);	/* every rank said it */
	while (c->head != NULL && (c->ngroups > COLLAPSE_GROUPS_MAX ||
	    c->bytes > COLLAPSE_BYTES_MAX))
		collapse_pop(c);
	return 0;
}

void
collapse_flush_rank(struct collapse *c, uint32_t rank)
{
	uint64_t	out, err;

	if (rank >= c->nranks)
		return;
	out = c->last[rank * 2];
	err = c->last[rank * 2 + 1];
	collapse_through(c, out > err ? out : err);
}

void
collapse_expire(struct collapse *c, uint64_t now)
{
	while (c->head != NULL && c->head->born + COLLAPSE_WINDOW_MS <= now)
		collapse_pop(c);
}

void
collapse_flush(struct collapse *c)
{
	while (c->head != NULL)
		collapse_pop(c);
}

uint64_t
collapse_deadline(const struct collapse *c)
{
	return c->head != NULL ? c->head->born + COLLAPSE_WINDOW_MS : 0;
}

void
collapse_free(struct collapse *c)
{
	struct cgroup	*g;

	if (c == NULL)
		return;
	while ((g = c->head) != NULL) {
		c->head = g->next;
		free(g->ranks);
		free(g);
	}
	free(c->last);
	free(c->alone);
	free(c->unheld);
	free(c);
}
