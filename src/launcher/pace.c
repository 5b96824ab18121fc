/*
 * pace.c -- each rank's pace and the ranks that fall behind (pace.h).
 *
 * A line's shape is hashed as its bytes go by, a run of digits counting as
 * one '#', so no line is copied or kept; the first shape a rank prints
 * PACE_LOCK times becomes its tick. Each rank keeps its last PACE_WINDOW
 * ticks' (step, time), made at its first tick: a rank that prints nothing
 * costs a few bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/pace.h"
#include "util/xmalloc.h"

#define PACE_CANDS	8	/* shapes a rank is seen printing, at once */
#define PACE_LOCK	4	/* times a shape is printed to be the tick */
#define PACE_RING	(PACE_WINDOW + 1)
#define PACE_FNV_INIT	0xcbf29ce484222325ULL
#define PACE_FNV_PRIME	0x100000001b3ULL

struct pace_sample {
	uint64_t	step;
	uint64_t	ms;
};

struct pace_rank {
	/* The line going by. */
	uint64_t		 hash;
	size_t			 len;
	int			 digit;		/* in a run of digits */
	char			 shape[PACE_SHAPE_MAX + 1];
	size_t			 slen;
	/* Shapes seen, until one is the tick. */
	struct {
		uint64_t	 hash;
		uint32_t	 count;
	}			 cand[PACE_CANDS];
	uint64_t		 tick;		/* the tick's shape; 0: none */
	char			 tick_shape[PACE_SHAPE_MAX + 1];
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
	for (i = 0; i < pc->nranks; i++)
		free(pc->r[i].ring);
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

/* A whole line of shape hash was printed by r. */
static void
pace_line(struct pace_rank *r, uint64_t hash, uint64_t now_ms)
{
	size_t	k, low = 0;

	if (r->tick != 0) {
		if (hash == r->tick)
			pace_sample(r, ++r->nticks, now_ms);
		return;
	}
	for (k = 0; k < PACE_CANDS; k++) {
		if (r->cand[k].hash == hash)
			break;
		if (r->cand[k].count < r->cand[low].count)
			low = k;
	}
	if (k == PACE_CANDS) {
		/* A new shape takes the place of the rarest. */
		k = low;
		r->cand[k].hash = hash;
		r->cand[k].count = 0;
	}
	if (++r->cand[k].count < PACE_LOCK)
		return;
	r->tick = hash;
	memcpy(r->tick_shape, r->shape, r->slen + 1);
	pace_sample(r, ++r->nticks, now_ms);
}

void
pace_output(struct pace *pc, size_t rank, const char *p, size_t n,
    uint64_t now_ms)
{
	struct pace_rank	*r;
	unsigned char		 c;
	size_t			 i;

	if (rank >= pc->nranks)
		return;
	r = &pc->r[rank];
	r->out_ms = now_ms;
	if (r->exact)
		return;
	for (i = 0; i < n; i++) {
		c = (unsigned char)p[i];
		if (c == '\n' || c == '\r') {
			/* tqdm redraws with '\r': each redraw is a line too. */
			if (r->len > 0)
				pace_line(r, r->hash < 2 ? 2 : r->hash, now_ms);
			r->hash = PACE_FNV_INIT;
			r->len = r->slen = 0;
			r->digit = 0;
			r->shape[0] = '\0';
			continue;
		}
		r->len++;
		if (c >= '0' && c <= '9') {
			if (r->digit)
				continue;
			r->digit = 1;
			c = '#';
		} else
			r->digit = 0;
		r->hash = (r->hash ^ c) * PACE_FNV_PRIME;
		if (r->slen < PACE_SHAPE_MAX) {
			r->shape[r->slen++] = (char)c;
			r->shape[r->slen] = '\0';
		}
	}
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
			memcpy(out[k].shape, r->tick_shape, sizeof(out[k].shape));
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
