/*
 * collapse.c -- the table of held lines behind --collapse (collapse.h).
 *
 * Each stream's held groups form a list, the order they go out in; ord
 * rises along it (numbers with gaps, so a group can be put between two;
 * renumbered when a gap runs out). Each rank remembers, per stream, its
 * last held group. Every rank's groups stand in the list in the order it
 * said them, because a line joins a group after the rank's last one (the
 * first such: its k-th saying meets the k-th group), or moves a group or
 * its own lone lines only where no rank's order changes (collapse_how),
 * and a new group goes right after the rank's last one. So going out from
 * the head keeps every rank's order, whatever waits behind. Putting a new
 * group as early as that, rather than at the end, is what lets a rank that
 * said a line of its own still join the shared lines others said after it.
 *
 * Groups of one rank only are ordered by nothing but that rank's order,
 * which is the order they were made in (id): of a run of them at the head,
 * the oldest goes first, so lines of their own go out in the order they
 * came even where they were put in the list the other way round.
 *
 * A list per stream, because stdout and stderr are two fds with queues of
 * their own, never ordered against each other: in one list, a warning on
 * stderr waiting for a late rank would hold back every rank's stdout.
 *
 * Each rank's count of pieces per stream says who is behind (collapse_soft);
 * the fewest any rank said is kept up to date without a scan per piece.
 *
 * A rank that floods lines of its own is let through unheld for a while
 * (COLLAPSE_ALONE_MAX): its lines are not hashed or copied.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/output/collapse.h"
#include "launcher/output/seqtree.h"
#include "util/xmalloc.h"

/* A power of two; as many as groups may be held, so that a chain (each
   group on it a cache miss in a flood) is short. */
#define COLLAPSE_BUCKETS	COLLAPSE_GROUPS_MAX
/* Rank lists or bitmaps up to this many words are kept in the group. */
#define COLLAPSE_INRANKS	2
#define COLLAPSE_GAP		(1ULL << 40)
/* A group put after its rank's last takes at most this much of the gap
   before the next: each rank's lines keep coming right after its own, and
   halving one gap each time ran it out every 20 lines, renumbering the
   whole list (4 ranks x 250k lines: 3.9x the time without --collapse). */
#define COLLAPSE_STEP		(1ULL << 20)
#define COLLAPSE_ORD_TOP	(1ULL << 62)
/*
 * How far along a run of one-rank groups a pop looks for the oldest (and
 * how far back a pull looks). A pop asks the stream's seqtree, not the
 * list, so this no longer bounds its cost, only what it picks.
 */
#define COLLAPSE_RUN_LOOK	1024

/* How a line joins a group (collapse_how). */
enum { JOIN_AS_IS, JOIN_MOVE_IT, JOIN_PULL_BACK };

struct cgroup {
	struct cgroup	*prev, *next;	/* the list: the order they go out */
	/* The list again, as a tree: collapse_next, collapse_oldest. */
	struct seqnode	 node;
	struct cgroup	*hnext;		/* hash chain, of lines that may join */
	uint64_t	 ord;		/* rises along the list */
	uint64_t	 id;		/* rises with birth */
	uint64_t	 pos;		/* how many pieces its earliest rank said before it */
	uint64_t	 born;		/* when its first piece came (ms) */
	uint64_t	 last;		/* when its latest rank joined */
	uint64_t	 stamp;
	uint32_t	*ranks;		/* a list, in the order they said it, or: */
	uint32_t	 inranks[COLLAPSE_INRANKS];	/* ranks while cap fits */
	uint32_t	 nranks;
	uint32_t	 cap;		/* words of ranks */
	uint32_t	 hash;
	uint32_t	 len;
	uint8_t		 stream;
	uint8_t		 solo;		/* a '\r' segment or long line: no joins */
	uint8_t		 bits;		/* ranks is a bitmap of c->words words */
	char		 line[];	/* len bytes, + 1 for a cont */
};

struct crank {
	struct cgroup	*last[2];	/* per stream: its last held group */
	uint64_t	 said[2];	/* pieces said per stream; UINT64_MAX: done */
	uint32_t	 alone;		/* its groups out alone in a row */
	uint64_t	 unheld;	/* its lines not held until then */
};

struct collapse {
	struct cgroup	*head[2];	/* per stream: the list */
	struct cgroup	*tail[2];
	struct seqtree	 tree[2];	/* per stream: the list, keyed by id */
	struct cgroup	*bucket[COLLAPSE_BUCKETS];
	struct crank	*rank;
	uint64_t	 least[2];	/* per stream: the fewest pieces a rank said */
	uint64_t	 start[2];	/* per stream: when its first piece came + 1 */
	size_t		 nleast[2];	/* how many ranks said that few */
	uint64_t	 ids;
	size_t		 words;		/* of a bitmap of every rank */
	size_t		 ngroups;
	size_t		 bytes;		/* groups, lines and rank lists held */
	size_t		 nranks;
	collapse_cb	 cb;
	void		*arg;
};

struct collapse *
collapse_new(size_t nranks, collapse_cb cb, void *arg)
{
	struct collapse	*c = xcalloc(1, sizeof(*c));

	c->rank = xcalloc(nranks ? nranks : 1, sizeof(*c->rank));
	c->nranks = nranks;
	c->words = (nranks + 31) / 32;
	c->nleast[0] = c->nleast[1] = nranks;
	c->cb = cb;
	c->arg = arg;
	return c;
}

/* Mixes p[0..n) into h, 8 bytes at a time (a multiply and a shift each). */
static uint64_t
collapse_mix(uint64_t h, const char *p, size_t n)
{
	uint64_t	w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, p, n);
	h = (h ^ w ^ n) * 0x9e3779b97f4a7c15ULL;
	return h ^ h >> 29;
}

/*
 * A hash of the stream and the line, whole (at most COLLAPSE_LINE_MAX):
 * the same wherever the line was split into its two parts. FNV byte by
 * byte cost a flood of held lines as much as the rest of holding them.
 */
static uint32_t
collapse_hash(int stream, const char *a, size_t alen, const char *b,
    size_t blen)
{
	char	buf[COLLAPSE_LINE_MAX];

	if (alen > 0) {
		memcpy(buf, a, alen);
		memcpy(buf + alen, b, blen);
		b = buf;
		blen += alen;
	}
	return (uint32_t)collapse_mix((uint64_t)stream + 1, b, blen);
}

/*
 * Whether g may move later in the list: it is the last held group of each
 * of its ranks, so nothing must come after it. Only small groups are
 * looked at (a list, not a bitmap): big ones are not worth the time.
 */
static int
collapse_movable(const struct collapse *c, const struct cgroup *g)
{
	size_t	i;

	if (g->bits)
		return 0;
	for (i = 0; i < g->nranks; i++)
		if (c->rank[g->ranks[i]].last[g->stream] != g)
			return 0;
	return 1;
}

/* Whether rank is one of g's. */
static int
collapse_has(const struct collapse *c, const struct cgroup *g, uint32_t rank)
{
	size_t	i;

	if (g->bits)
		return (g->ranks[rank / 32] >> (rank % 32)) & 1;
	for (i = 0; i < g->nranks; i++)
		if (g->ranks[i] == rank)
			return 1;
	return 0;
}

/*
 * Whether rank's held groups on g's stream after g, up to its last, are
 * all of it alone (and few): nothing then keeps them from moving to just
 * before g.
 */
static int
collapse_pullable(const struct collapse *c, const struct cgroup *g,
    uint32_t rank, const struct cgroup *last)
{
	const struct cgroup	*x;
	size_t			 n = 0;

	for (x = last; x != g; x = x->prev)
		if (x == NULL || ++n > COLLAPSE_RUN_LOOK ||
		    (x->stream == g->stream && x->nranks > 1 &&
		    collapse_has(c, x, rank)))
			return 0;
	return 1;
}

/* How a rank whose last held group is last may join g, or -1: it may not. */
static int
collapse_how(const struct collapse *c, const struct cgroup *g, uint32_t rank,
    const struct cgroup *last)
{
	if (last == NULL || g->ord > last->ord)
		return JOIN_AS_IS;
	if (g == last || collapse_has(c, g, rank))
		return -1;
	if (collapse_movable(c, g))
		return JOIN_MOVE_IT;
	if (collapse_pullable(c, g, rank, last))
		return JOIN_PULL_BACK;
	return -1;
}

/*
 * The group a rank's line joins: of the groups holding it, the first in
 * the list the rank may join (*how says how), so that its k-th saying of
 * a line meets the k-th group of it; NULL when none.
 */
static struct cgroup *
collapse_find(struct collapse *c, uint32_t h, int stream, const char *a,
    size_t alen, const char *b, size_t blen, uint32_t rank, int *how)
{
	struct cgroup	*g, *best = NULL, *last = c->rank[rank].last[stream];
	int		 k;

	for (g = c->bucket[h & (COLLAPSE_BUCKETS - 1)]; g; g = g->hnext) {
		if (g->hash != h || g->stream != stream ||
		    (best != NULL && g->ord > best->ord) ||
		    g->len != alen + blen || memcmp(g->line, a, alen) != 0 ||
		    memcmp(g->line + alen, b, blen) != 0 ||
		    (k = collapse_how(c, g, rank, last)) < 0)
			continue;
		best = g;
		*how = k;
	}
	return best;
}

/* Takes g out of the hash, where it is unless solo. */
static void
collapse_unhash(struct collapse *c, struct cgroup *g)
{
	struct cgroup	**pp;

	if (g->solo)
		return;
	for (pp = &c->bucket[g->hash & (COLLAPSE_BUCKETS - 1)]; *pp != g;
	    pp = &(*pp)->hnext)
		;
	*pp = g->hnext;
}

/*
 * When g's wait ends: its ranks' pace sets it; a line several ranks said
 * also waits for ranks that have not said as many pieces yet (they started
 * late), up to COLLAPSE_BEHIND_MS, and so does a line of one rank in the
 * stream's first COLLAPSE_BEHIND_MS (later, it is likely its own: rank 0
 * alone logging must not lag); never past COLLAPSE_HOLD_MAX_MS.
 */
static uint64_t
collapse_soft(const struct collapse *c, const struct cgroup *g)
{
	uint64_t	w = COLLAPSE_WINDOW_MS, gap, t;

	if (g->nranks > 1) {
		gap = (g->last - g->born) / (g->nranks - 1);
		if (gap * 4 > w)
			w = gap * 4;
	}
	t = g->last + w;
	if (c->least[g->stream] <= g->pos && g->nranks > 1 &&
	    t < g->born + COLLAPSE_BEHIND_MS)
		t = g->born + COLLAPSE_BEHIND_MS;
	else if (c->least[g->stream] <= g->pos && !g->solo &&
	    t < c->start[g->stream] - 1 + COLLAPSE_BEHIND_MS)
		t = c->start[g->stream] - 1 + COLLAPSE_BEHIND_MS;
	return t < g->born + COLLAPSE_HOLD_MAX_MS ? t :
	    g->born + COLLAPSE_HOLD_MAX_MS;
}

/* The group whose tree node n is (NULL for NULL). */
static struct cgroup *
collapse_of(const struct seqnode *n)
{
	return n != NULL ? (struct cgroup *)((char *)n -
	    offsetof(struct cgroup, node)) : NULL;
}

/*
 * The group of stream s to go out next: the head, or the oldest of a run
 * of one-rank groups there (the first COLLAPSE_RUN_LOOK of it); NULL when
 * none is held. O(log n): a flood of one rank's lines makes the run long.
 */
static struct cgroup *
collapse_next(const struct collapse *c, int s)
{
	return collapse_of(seq_least_of_run(&c->tree[s], COLLAPSE_RUN_LOOK));
}

/* The group held longest (the least id of both trees), or NULL: for COLLAPSE_HOLD_MAX_MS. */
static struct cgroup *
collapse_oldest(const struct collapse *c)
{
	struct cgroup	*o = collapse_of(c->tree[0].root ? c->tree[0].root->least :
			    NULL), *e = collapse_of(c->tree[1].root ?
			    c->tree[1].root->least : NULL);

	return o == NULL || (e != NULL && e->id < o->id) ? e : o;
}

/* Orders ranks for the callback. */
static int
collapse_cmp(const void *x, const void *y)
{
	uint32_t	a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* g's ranks, sorted: its list, or a new array from its bitmap. */
static uint32_t *
collapse_members(struct collapse *c, struct cgroup *g)
{
	uint32_t	*m;
	size_t		 w, n = 0;
	int		 i;

	if (!g->bits) {
		if (g->nranks > 1)
			qsort(g->ranks, g->nranks, sizeof(*g->ranks),
			    collapse_cmp);
		return g->ranks;
	}
	m = xreallocarray(NULL, g->nranks, sizeof(*m));
	for (w = 0; w < c->words; w++)
		for (i = 0; i < 32; i++)
			if (g->ranks[w] & (1u << i))
				m[n++] = w * 32 + i;
	return m;
}

/* g goes out: its lone rank's count of lines out alone rises, else resets. */
static void
collapse_count(struct collapse *c, const struct cgroup *g, const uint32_t *m)
{
	size_t	i;

	if (g->nranks > 1) {
		for (i = 0; i < g->nranks; i++)
			c->rank[m[i]].alone = 0;
		return;
	}
	if (++c->rank[m[0]].alone < COLLAPSE_ALONE_MAX)
		return;
	c->rank[m[0]].alone = 0;
	c->rank[m[0]].unheld = g->born + COLLAPSE_RELOOK_MS;
}

/* Frees g and its ranks. */
static void
collapse_free_group(struct cgroup *g)
{
	if (g->ranks != g->inranks)
		free(g->ranks);
	free(g);
}

/* What g costs, for COLLAPSE_BYTES_MAX. */
static size_t
collapse_size(const struct cgroup *g)
{
	return sizeof(*g) + g->len + g->cap * sizeof(*g->ranks);
}

/* Takes g out of the list. */
static void
collapse_out(struct collapse *c, struct cgroup *g)
{
	seq_remove(&c->tree[g->stream], &g->node);
	*(g->prev ? &g->prev->next : &c->head[g->stream]) = g->next;
	*(g->next ? &g->next->prev : &c->tail[g->stream]) = g->prev;
}

/* Takes g out of the list, the birth order and the hash. */
static void
collapse_unlink(struct collapse *c, struct cgroup *g)
{
	collapse_out(c, g);
	collapse_unhash(c, g);
	c->ngroups--;
	c->bytes -= collapse_size(g);
}

/*
 * Hands on g, which has nothing of its ranks before it. It is off the
 * table before the callback runs, so a callback that flushes (a message of
 * dtrun's) finds the table whole.
 */
static void
collapse_pop(struct collapse *c, struct cgroup *g)
{
	uint32_t	*m;
	size_t		 i;

	collapse_unlink(c, g);
	m = collapse_members(c, g);
	for (i = 0; i < g->nranks; i++)
		if (c->rank[m[i]].last[g->stream] == g)
			c->rank[m[i]].last[g->stream] = NULL;
	collapse_count(c, g, m);
	c->cb(c->arg, g->stream, m, g->nranks, g->line, g->len, g->stamp);
	if (m != g->ranks)
		free(m);
	collapse_free_group(g);
}

/* Hands on every group of g's stream up to and including g. */
static void
collapse_through(struct collapse *c, const struct cgroup *g)
{
	uint64_t	ord = g->ord;
	int		s = g->stream;

	while (c->head[s] != NULL && c->head[s]->ord <= ord)
		collapse_pop(c, collapse_next(c, s));
}

/* The older of the two streams' next groups, or NULL when none is held. */
static struct cgroup *
collapse_next2(const struct collapse *c)
{
	struct cgroup	*o = collapse_next(c, 0), *e = collapse_next(c, 1);

	return o == NULL || (e != NULL && e->id < o->id) ? e : o;
}

/* Spreads the ords of stream s's list COLLAPSE_GAP apart again. */
static void
collapse_renumber(struct collapse *c, int s)
{
	struct cgroup	*g;
	uint64_t	 ord = 0;

	for (g = c->head[s]; g != NULL; g = g->next)
		g->ord = ord += COLLAPSE_GAP;
}

/* Puts g in its stream's list right after prev (NULL: first), with an ord between. */
static void
collapse_place(struct collapse *c, struct cgroup *g, struct cgroup *prev)
{
	struct cgroup	*next = prev ? prev->next : c->head[g->stream];
	uint64_t	 base, half;

	if ((next != NULL && next->ord - (prev ? prev->ord : 0) < 2) ||
	    (next == NULL && prev != NULL && prev->ord > COLLAPSE_ORD_TOP))
		collapse_renumber(c, g->stream);
	base = prev ? prev->ord : 0;
	half = next != NULL ? (next->ord - base) / 2 : COLLAPSE_GAP;
	g->ord = base + (next != NULL && half > COLLAPSE_STEP ? COLLAPSE_STEP :
	    half);
	g->prev = prev;
	g->next = next;
	*(prev ? &prev->next : &c->head[g->stream]) = g;
	*(next ? &next->prev : &c->tail[g->stream]) = g;
	g->node.key = g->id;
	g->node.stop = g->nranks > 1;
	seq_insert(&c->tree[g->stream], prev ? &prev->node : NULL, &g->node);
}

/* Moves rank's groups on g's stream after g, up to last, to just before g (collapse_pullable). */
static void
collapse_pull(struct collapse *c, struct cgroup *g, uint32_t rank,
    struct cgroup *last)
{
	struct cgroup	*x, *next;
	int		 done;

	for (x = g->next, done = 0; !done; x = next) {
		next = x->next;
		done = x == last;
		if (x->stream == g->stream && collapse_has(c, x, rank)) {
			collapse_out(c, x);
			collapse_place(c, x, g->prev);
		}
	}
}

/* A new group for the piece, right after the rank's last held one. */
static struct cgroup *
collapse_group(struct collapse *c, uint32_t rank, uint32_t h, int stream,
    const char *a, size_t alen, const char *b, size_t blen, int solo,
    uint64_t now, uint64_t stamp)
{
	/* One allocation: + 1, a cont may come. */
	struct cgroup	*g = xmalloc(sizeof(*g) + alen + blen + 1);
	size_t		 i = h & (COLLAPSE_BUCKETS - 1);

	memset(g, 0, sizeof(*g));
	g->ranks = g->inranks;
	memcpy(g->line, a, alen);
	memcpy(g->line + alen, b, blen);
	g->len = alen + blen;
	g->hash = h;
	g->stream = stream;
	g->solo = solo;
	g->id = ++c->ids;
	g->born = g->last = now;
	g->pos = UINT64_MAX;
	g->stamp = stamp;
	if (!solo) {
		g->hnext = c->bucket[i];
		c->bucket[i] = g;
	}
	collapse_place(c, g, c->rank[rank].last[stream]);
	c->ngroups++;
	c->bytes += collapse_size(g);
	return g;
}

/* Room for n words of ranks: in the group while they fit. */
static uint32_t *
collapse_words(struct cgroup *g, size_t n)
{
	return n <= COLLAPSE_INRANKS ? g->inranks :
	    xreallocarray(NULL, n, sizeof(*g->ranks));
}

/* Adds rank to g: to its list, or its bitmap once a list would be bigger. */
static void
collapse_join(struct collapse *c, struct cgroup *g, uint32_t rank,
    uint64_t now)
{
	uint32_t	 list[COLLAPSE_INRANKS], *old = g->ranks, *m;
	size_t		 i, cap;

	if (!g->bits && g->nranks == g->cap && g->cap < c->words) {
		cap = g->cap ? g->cap * 2 : 1;
		cap = cap < c->words ? cap : c->words;
		if ((m = collapse_words(g, cap)) != old) {
			memcpy(m, old, g->nranks * sizeof(*m));
			if (old != g->inranks)
				free(old);
			g->ranks = m;
		}
		c->bytes += (cap - g->cap) * sizeof(*g->ranks);
		g->cap = cap;
	} else if (!g->bits && g->nranks == g->cap) {
		if (old == g->inranks)	/* the bitmap may take its place */
			old = memcpy(list, old, sizeof(list));
		m = collapse_words(g, c->words);
		memset(m, 0, c->words * sizeof(*m));
		for (i = 0; i < g->nranks; i++)
			m[old[i] / 32] |= 1u << (old[i] % 32);
		if (old != list && old != g->inranks)
			free(old);
		g->ranks = m;
		c->bytes += (c->words - g->cap) * sizeof(*g->ranks);
		g->cap = c->words;
		g->bits = 1;
	}
	if (g->bits)
		g->ranks[rank / 32] |= 1u << (rank % 32);
	else
		g->ranks[g->nranks] = rank;
	g->nranks++;
	seq_set_stop(&c->tree[g->stream], &g->node, g->nranks > 1);
	g->last = now;
	if (c->rank[rank].said[g->stream] - 1 < g->pos)
		g->pos = c->rank[rank].said[g->stream] - 1;
	c->rank[rank].last[g->stream] = g;
}

/* A cont: the '\n' of a split "\r\n" finishes the rank's held '\r' segment. */
static int
collapse_finish(struct collapse *c, struct cgroup *g, const char *a,
    size_t alen, const char *b, size_t blen)
{
	if (g == NULL || !g->solo || g->len == 0 || g->line[g->len - 1] != '\r' ||
	    alen + blen != 1)
		return -1;
	g->line[g->len++] = alen ? *a : *b;
	c->bytes++;
	return 0;
}

/* Sets rank's count of pieces on stream s to n, keeping the fewest any rank said. */
static void
collapse_said(struct collapse *c, uint32_t rank, int s, uint64_t n)
{
	uint64_t	*said = &c->rank[rank].said[s];
	size_t		 i;

	if (*said == n || *said == UINT64_MAX)
		return;
	if (*said == c->least[s] && --c->nleast[s] == 0) {
		*said = n;
		c->least[s] = UINT64_MAX;
		for (i = 0; i < c->nranks; i++)
			if (c->rank[i].said[s] < c->least[s])
				c->least[s] = c->rank[i].said[s];
		for (i = 0; i < c->nranks; i++)
			c->nleast[s] += c->rank[i].said[s] == c->least[s];
		return;
	}
	*said = n;
}

void
collapse_rank_done(struct collapse *c, uint32_t rank, int stream)
{
	if (rank < c->nranks && (stream == 0 || stream == 1))
		collapse_said(c, rank, stream, UINT64_MAX);
}

int
collapse_add(struct collapse *c, uint32_t rank, int stream, const char *a,
    size_t alen, const char *b, size_t blen, int cont, uint64_t now,
    uint64_t stamp)
{
	struct cgroup	*g = NULL, *last;
	size_t		 len = alen + blen;
	uint32_t	 h = 0;
	int		 whole, how = JOIN_AS_IS;

	if (rank >= c->nranks || (stream != 0 && stream != 1))
		return -1;
	if (!cont)
		collapse_said(c, rank, stream, c->rank[rank].said[stream] + 1);
	if (c->start[stream] == 0)
		c->start[stream] = now + 1;
	if (now < c->rank[rank].unheld)
		return -1;
	last = c->rank[rank].last[stream];
	if (cont)
		return collapse_finish(c, last, a, alen, b, blen);
	whole = len > 0 && len <= COLLAPSE_LINE_MAX &&
	    (blen > 0 ? b[blen - 1] : a[alen - 1]) == '\n';
	if (len == 0 || len > COLLAPSE_SOLO_MAX)
		return -1;
	if (whole) {
		h = collapse_hash(stream, a, alen, b, blen);
		g = collapse_find(c, h, stream, a, alen, b, blen, rank, &how);
	}
	if (g != NULL && how == JOIN_MOVE_IT) {
		collapse_out(c, g);	/* nothing follows it: it may go later */
		collapse_place(c, g, last);
	} else if (g != NULL && how == JOIN_PULL_BACK)
		collapse_pull(c, g, rank, last);
	else if (g == NULL)
		g = collapse_group(c, rank, h, stream, a, alen, b, blen, !whole,
		    now, stamp);
	collapse_join(c, g, rank, now);
	if (g->nranks == c->nranks)
		collapse_through(c, g);	/* every rank said it */
	while (c->ngroups > COLLAPSE_GROUPS_MAX || c->bytes > COLLAPSE_BYTES_MAX)
		collapse_pop(c, collapse_next2(c));
	return 0;
}

void
collapse_flush_rank(struct collapse *c, uint32_t rank)
{
	int	s;

	if (rank >= c->nranks)
		return;
	for (s = 0; s < 2; s++)
		if (c->rank[rank].last[s] != NULL)
			collapse_through(c, c->rank[rank].last[s]);
}

void
collapse_expire(struct collapse *c, uint64_t now)
{
	struct cgroup	*g;
	int		 s;

	while ((g = collapse_oldest(c)) != NULL &&
	    g->born + COLLAPSE_HOLD_MAX_MS <= now)
		collapse_through(c, g);
	for (s = 0; s < 2; s++)
		while ((g = collapse_next(c, s)) != NULL &&
		    collapse_soft(c, g) <= now)
			collapse_pop(c, g);
}

void
collapse_flush(struct collapse *c)
{
	struct cgroup	*g;

	while ((g = collapse_next2(c)) != NULL)
		collapse_pop(c, g);
}

uint64_t
collapse_deadline(const struct collapse *c)
{
	struct cgroup	*g;
	uint64_t	 d, e;
	int		 s;

	if ((g = collapse_oldest(c)) == NULL)
		return 0;
	d = g->born + COLLAPSE_HOLD_MAX_MS;
	for (s = 0; s < 2; s++)
		if (c->head[s] != NULL &&
		    (e = collapse_soft(c, collapse_next(c, s))) < d)
			d = e;
	return d;
}

void
collapse_free(struct collapse *c)
{
	struct cgroup	*g;
	int		 s;

	if (c == NULL)
		return;
	for (s = 0; s < 2; s++)
		while ((g = c->head[s]) != NULL) {
			c->head[s] = g->next;
			collapse_free_group(g);
		}
	free(c->rank);
	free(c);
}
