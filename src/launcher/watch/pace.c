/*
 * pace.c -- each rank's pace and the ranks that fall behind (pace.h).
 *
 * The log path pays for this watch, so a rank's lines are looked at only
 * while they may still hold its pace. Looking, a line's shape is hashed as
 * its bytes go by, a run of digits counting as one '#'; the first shape a
 * rank prints at PACE_LOCK moments (PACE_TICK_GAP_MS apart) becomes its
 * tick. None in PACE_LOOK_LINES lines: the rank's lines are passed by,
 * unread but for their last line end, for PACE_RELOOK_MS. Once a rank has
 * a tick, each line is compared with it only up to its first byte that
 * differs, and once a read's tick is counted, the rest of it is passed by.
 * No line is copied: the tick's shape is drawn once, from the line that
 * made it (and what a rank's earlier reads held of that line, kept while
 * it looks). Each rank keeps its last PACE_WINDOW ticks' (step, time),
 * made at its first tick: a rank that prints nothing costs a few bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/watch/pace.h"
#include "util/xmalloc.h"

#define PACE_CANDS	8	/* shapes a rank is seen printing, at once */
#define PACE_RING	(PACE_WINDOW + 1)
#define PACE_FNV_INIT	0xcbf29ce484222325ULL
#define PACE_FNV_PRIME	0x100000001b3ULL

struct pace_sample {
	uint64_t	step;
	uint64_t	ms;
};

/* What a rank's lines are looked at for. */
enum pace_mode {
	PACE_LOOK,		/* their shapes: is one its tick? */
	PACE_TICK,		/* its tick */
	PACE_OFF,		/* nothing, until look_ms */
};

struct pace_rank {
	/* The line going by, across reads. */
	enum pace_mode		 mode;
	int			 mid;		/* begun in an earlier read */
	int			 pass;		/* it cannot count: pass it by */
	int			 digit;		/* in a run of digits */
	uint64_t		 hash;		/* looking: its shape's so far */
	size_t			 slen;		/* its shape's bytes so far */
	char			*carry;		/* looking: its shape, earlier reads */
	size_t			 clen;
	/* Looking for the tick. */
	size_t			 looked;	/* lines, this time */
	uint64_t		 look_ms;	/* off: when to look again */
	struct {
		uint64_t	 hash;
		uint64_t	 ms;		/* when last counted */
		uint32_t	 count;
	}			 cand[PACE_CANDS];
	/* The tick. */
	uint64_t		 tick;		/* its shape's hash; 0: none */
	char			*tick_shape;	/* PACE_TICK_MAX + 1 */
	size_t			 tlen;
	uint64_t		 tick_ms;	/* the last one counted */
	uint64_t		 nticks;
	int			 exact;		/* steps are reported */
	/* The window. */
	struct pace_sample	*ring;		/* PACE_RING, at the first tick */
	size_t			 head, n;
	uint64_t		 slow_since;	/* 0: not slow */
	int			 named;
	uint64_t		 out_ms;	/* its last output */
};

struct pace {
	struct pace_rank	*r;
	size_t			 nranks;
	double			 threshold;
};

/* One rank's pace for the judge. */
struct pace_cur {
	uint64_t	key;		/* the tick's shape (never 0 or 1); 1: exact steps */
	double		secs;
	size_t		rank;
	size_t		steps;
};

struct pace *
pace_new(size_t nranks, double threshold)
{
	struct pace	*pc = xcalloc(1, sizeof(*pc));
	size_t		 i;

	pc->r = xcalloc(nranks + 1, sizeof(*pc->r));
	pc->nranks = nranks;
	pc->threshold = threshold;
	for (i = 0; i < nranks; i++)
		pc->r[i].hash = PACE_FNV_INIT;
	return pc;
}

void
pace_free(struct pace *pc)
{
	size_t	i;

	if (pc == NULL)
		return;
	for (i = 0; i < pc->nranks; i++) {
		free(pc->r[i].ring);
		free(pc->r[i].carry);
		free(pc->r[i].tick_shape);
	}
	free(pc->r);
	free(pc);
}

/* Adds a sample to rank r's window. */
static void
pace_sample(struct pace_rank *r, uint64_t step, uint64_t ms)
{
	if (r->ring == NULL)
		r->ring = xcalloc(PACE_RING, sizeof(*r->ring));
	r->ring[r->head] = (struct pace_sample){ step, ms };
	r->head = (r->head + 1) % PACE_RING;
	if (r->n < PACE_RING)
		r->n++;
}

void
pace_step(struct pace *pc, size_t rank, uint64_t step, uint64_t now_ms)
{
	struct pace_rank	*r;

	if (rank >= pc->nranks)
		return;
	r = &pc->r[rank];
	/* Reported steps win over lines: the window starts over with them. */
	if (!r->exact) {
		r->exact = 1;
		r->n = r->head = 0;
		r->slow_since = 0;
	}
	/* A step that goes back (a new epoch counting from 0): start over. */
	if (r->n > 0 && step < r->ring[(r->head + PACE_RING - 1) %
	    PACE_RING].step)
		r->n = r->head = 0;
	pace_sample(r, step, now_ms);
}

/* c's byte of a shape, or -1 when it is one more digit of a run. */
static inline int
pace_shape_c(unsigned char c, int *digit)
{
	if (c >= '0' && c <= '9') {
		if (*digit)
			return -1;
		*digit = 1;
		return '#';
	}
	*digit = 0;
	return c;
}

/* Appends the shape of p[0..n) to s at *len; digit: p continues a run. */
static void
pace_draw(char *s, size_t *len, const char *p, size_t n, int digit)
{
	size_t	i;
	int	c;

	for (i = 0; i < n; i++) {
		if ((c = pace_shape_c((unsigned char)p[i], &digit)) >= 0 &&
		    *len < PACE_TICK_MAX)
			s[(*len)++] = (char)c;
	}
	s[*len] = '\0';
}

/* The first line end ('\n', or '\r': tqdm redraws) in q..end, or NULL. */
static const char *
pace_eol(const char *q, const char *end)
{
	const char	*nl = memchr(q, '\n', end - q);
	const char	*cr = memchr(q, '\r', (nl != NULL ? nl : end) - q);

	return cr != NULL ? cr : nl;
}

/* The next line of r begins. */
static void
pace_newline(struct pace_rank *r)
{
	r->mid = r->pass = r->digit = 0;
	r->hash = PACE_FNV_INIT;
	r->slen = r->clen = 0;
}

/*
 * p[0..n), the rest of a read, is passed by: only where its last line
 * ends is looked for, and the line it ends in is passed by too.
 */
static void
pace_tail(struct pace_rank *r, const char *p, size_t n)
{
	const char	*nl, *cr, *from;

	if (n == 0)
		return;
	nl = memrchr(p, '\n', n);
	from = nl != NULL ? nl + 1 : p;
	if ((cr = memrchr(from, '\r', p + n - from)) != NULL)
		nl = cr;
	if (nl != NULL)
		pace_newline(r);
	if (nl != p + n - 1)
		r->mid = r->pass = 1;
}

/* r stops looking: none of its shapes is a tick yet. */
static void
pace_off(struct pace_rank *r, uint64_t now_ms)
{
	r->mode = PACE_OFF;
	r->look_ms = now_ms + PACE_RELOOK_MS;
}

/*
 * A line of r's, looked at, ends at q; this read holds it from line (its
 * shape continuing a digit run: digit). Returns 1 when the rest of the
 * read is passed by: r's tick is found, or it stops looking.
 */
static int
pace_looked(struct pace_rank *r, const char *line, const char *q, int digit,
    uint64_t now_ms)
{
	uint64_t	hash = r->hash < 2 ? 2 : r->hash;
	size_t		k, low = 0;

	for (k = 0; k < PACE_CANDS; k++) {
		if (r->cand[k].hash == hash)
			break;
		if (r->cand[k].count < r->cand[low].count ||
		    (r->cand[k].count == r->cand[low].count &&
		    r->cand[k].ms < r->cand[low].ms))
			low = k;
	}
	if (k == PACE_CANDS) {
		/* A new shape takes the place of the rarest, the oldest of them. */
		k = low;
		r->cand[k].hash = hash;
		r->cand[k].count = 0;
	}
	/* The lines of one moment (a burst, a flood) are one sighting. */
	if (r->cand[k].count == 0 || now_ms - r->cand[k].ms >= PACE_TICK_GAP_MS) {
		r->cand[k].count++;
		r->cand[k].ms = now_ms;
	}
	if (r->cand[k].count >= PACE_LOCK) {
		r->mode = PACE_TICK;
		r->tick = hash;
		r->tick_shape = xmalloc(PACE_TICK_MAX + 1);
		memcpy(r->tick_shape, r->carry != NULL ? r->carry : "", r->clen);
		r->tlen = r->clen;
		pace_draw(r->tick_shape, &r->tlen, line, q - line, digit);
		free(r->carry);
		r->carry = NULL;
		r->tick_ms = now_ms;
		pace_sample(r, ++r->nticks, now_ms);
		return 1;
	}
	if (++r->looked < PACE_LOOK_LINES)
		return 0;
	pace_off(r, now_ms);
	return 1;
}

/*
 * A line of r's ends at q (from line in this read, continuing a digit run:
 * digit). Returns 1 when the rest of the read is passed by.
 */
static int
pace_eol_at(struct pace_rank *r, const char *line, const char *q, int digit,
    uint64_t now_ms)
{
	if (r->pass || r->slen == 0) {
		/* Too long a shape counts as a line looked at; empty, not. */
		if (r->pass && r->mode == PACE_LOOK &&
		    ++r->looked >= PACE_LOOK_LINES) {
			pace_off(r, now_ms);
			return 1;
		}
		return 0;
	}
	if (r->mode == PACE_LOOK)
		return pace_looked(r, line, q, digit, now_ms);
	if (r->slen != r->tlen)
		return 0;
	r->tick_ms = now_ms;
	pace_sample(r, ++r->nticks, now_ms);
	return 1;
}

/* Looks at the read p[0..n) of r's, looking or ticking. */
static void
pace_scan(struct pace_rank *r, const char *p, size_t n, uint64_t now_ms)
{
	const char	*q = p, *end = p + n, *line = p, *e;
	int		 ldigit = r->mid ? r->digit : 0, c;

	while (q < end) {
		if (r->pass) {
			/* Not a tick: its bytes need not be looked at. */
			if ((e = pace_eol(q, end)) == NULL)
				break;
			q = e;
		}
		if (*q == '\n' || *q == '\r') {
			if (pace_eol_at(r, line, q, ldigit, now_ms)) {
				pace_newline(r);
				pace_tail(r, q + 1, end - q - 1);
				return;
			}
			pace_newline(r);
			line = ++q;
			ldigit = 0;
			continue;
		}
		if ((c = pace_shape_c((unsigned char)*q++, &r->digit)) < 0)
			continue;
		if (r->mode == PACE_LOOK) {
			if (r->slen == PACE_TICK_MAX)
				r->pass = 1;
			else {
				r->hash = (r->hash ^ (unsigned)c) * PACE_FNV_PRIME;
				r->slen++;
			}
		} else if (r->slen < r->tlen && r->tick_shape[r->slen] == c)
			r->slen++;
		else
			r->pass = 1;
	}
	if (line == end)
		return;		/* at a line end */
	/* The read ends in a line: what looking needs of it is kept. */
	r->mid = 1;
	if (r->mode == PACE_LOOK && !r->pass) {
		if (r->carry == NULL)
			r->carry = xmalloc(PACE_TICK_MAX + 1);
		pace_draw(r->carry, &r->clen, line, end - line, ldigit);
	}
}

void
pace_output(struct pace *pc, size_t rank, const char *p, size_t n,
    uint64_t now_ms)
{
	struct pace_rank	*r;

	if (rank >= pc->nranks)
		return;
	r = &pc->r[rank];
	r->out_ms = now_ms;
	if (r->exact || n == 0)
		return;
	if (r->mode == PACE_OFF && now_ms >= r->look_ms) {
		r->mode = PACE_LOOK;
		r->looked = 0;
		memset(r->cand, 0, sizeof(r->cand));
	}
	/* Off, or a tick counted this moment: pass the read by. */
	if (r->mode == PACE_OFF || (r->mode == PACE_TICK &&
	    now_ms - r->tick_ms < PACE_TICK_GAP_MS)) {
		pace_tail(r, p, n);
		return;
	}
	pace_scan(r, p, n, now_ms);
}

/*
 * r's seconds per step over its window, up to now: a rank overdue for its
 * next step is slower than its last steps say. 0 while too few.
 */
static double
pace_secs(const struct pace_rank *r, uint64_t now_ms, size_t *steps)
{
	const struct pace_sample	*last, *first;
	size_t				 k, back;
	uint64_t			 span, st, seen;
	double				 secs;

	if (r->n < 2)
		return 0;
	last = &r->ring[(r->head + PACE_RING - 1) % PACE_RING];
	/* The oldest sample within PACE_WINDOW steps of the last. */
	first = last;
	for (back = 2; back <= r->n; back++) {
		k = (r->head + PACE_RING - back) % PACE_RING;
		if (last->step - r->ring[k].step > PACE_WINDOW)
			break;
		first = &r->ring[k];
	}
	st = last->step - first->step;
	span = last->ms - first->ms;
	if (st < PACE_MIN_STEPS || span < PACE_MIN_MS)
		return 0;
	*steps = st;
	secs = span / 1000.0 / st;
	/*
	 * No step since last up to seen (less what may still be on its way):
	 * its next one takes at least that long. Reported steps come once a
	 * second, so the last second of them is not seen yet.
	 */
	seen = now_ms - (r->exact ? PACE_UNSEEN_EXACT_MS : PACE_UNSEEN_LINE_MS);
	if (now_ms > (r->exact ? PACE_UNSEEN_EXACT_MS : PACE_UNSEEN_LINE_MS) &&
	    seen > last->ms && (seen - first->ms) / 1000.0 / (st + 1) > secs)
		secs = (seen - first->ms) / 1000.0 / (st + 1);
	return secs;
}

static int
pace_cmp(const void *a, const void *b)
{
	const struct pace_cur	*x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->secs < y->secs ? -1 : x->secs > y->secs;
}

/* Judges the group g[0..n): its median is the healthy side's. */
static size_t
pace_group(struct pace *pc, const struct pace_cur *g, size_t n,
    uint64_t now_ms, struct pace_slow *out, size_t max)
{
	struct pace_rank	*r;
	double			 median = g[(n - 1) / 2].secs;
	uint64_t		 sustain = median * PACE_SUSTAIN_STEPS * 1000;
	size_t			 i, k = 0;

	if (sustain < PACE_SUSTAIN_MS)
		sustain = PACE_SUSTAIN_MS;

	for (i = 0; i < n; i++) {
		r = &pc->r[g[i].rank];
		if (g[i].secs < median * (1 + pc->threshold)) {
			r->slow_since = 0;
			continue;
		}
		if (r->slow_since == 0)
			r->slow_since = now_ms;
		if (r->named || now_ms - r->slow_since < sustain ||
		    k >= max)
			continue;
		r->named = 1;
		out[k] = (struct pace_slow){ g[i].rank, g[i].secs, median,
		    g[i].steps, r->exact, "" };
		if (!r->exact)
			snprintf(out[k].shape, sizeof(out[k].shape), "%s",
			    r->tick_shape);
		k++;
	}
	return k;
}

size_t
pace_judge(struct pace *pc, uint64_t now_ms, struct pace_slow *out,
    size_t max)
{
	struct pace_cur	*cur = xcalloc(pc->nranks + 1, sizeof(*cur));
	struct pace_rank *r;
	size_t		 i, j, n = 0, k = 0, steps;
	double		 secs;

	for (i = 0; i < pc->nranks; i++) {
		r = &pc->r[i];
		if ((secs = pace_secs(r, now_ms, &steps)) <= 0)
			continue;
		cur[n++] = (struct pace_cur){ r->exact ? 1 : r->tick, secs, i,
		    steps };
	}
	qsort(cur, n, sizeof(*cur), pace_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && cur[j].key == cur[i].key; j++)
			;
		if (j - i >= PACE_MIN_GROUP)
			k += pace_group(pc, cur + i, j - i, now_ms, out + k,
			    max - k);
	}
	free(cur);
	return k;
}

void
pace_peek(struct pace *pc, size_t rank, uint64_t now_ms, struct pace_now *pn)
{
	const struct pace_rank	*r;
	size_t			 steps = 0;

	memset(pn, 0, sizeof(*pn));
	if (pc == NULL || rank >= pc->nranks)
		return;
	r = &pc->r[rank];
	if (r->n > 0)
		pn->step = r->ring[(r->head + PACE_RING - 1) % PACE_RING].step;
	pn->secs = pace_secs(r, now_ms, &steps);
	pn->line_ms = r->out_ms;
	pn->exact = r->exact;
	pn->named = r->named;
}
