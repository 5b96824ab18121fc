/*
 * peerwait.c -- who the others wait for, from where each rank waited
 * (peerwait.h).
 *
 * Each rank keeps a ring of its last PEERWAIT_WINDOW seconds of counts,
 * as its agent sent them. A judgement sums each rank's ring; the rank
 * that waits least on its peers is the suspect, and it is named when the
 * gap to the others' median is a slowdown past the threshold, the same
 * rank PEERWAIT_SUSTAIN times in a row (one noisy window names nobody).
 * The reason is its own samples against the others': more time waiting
 * on its input than theirs by half that gap; else a CPU that serves it
 * so much worse than theirs that it explains at least half its lag (see
 * pw_short_of_cpu); else it computes. Not its run-queue time against the
 * wall clock: a rank that computes longer is runnable longer and queues
 * longer for it, even where it is served better than the others
 * (measured: 8 ranks on 2 cores, the slow one ran 32% of its runnable
 * time, the others 21%).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/watch/peerwait.h"
#include "proto/agentproto.h"
#include "util/xmalloc.h"

struct pw_sec {
	uint32_t	samples, peer, input;
	uint32_t	wall_ms, cpu_ms, delay_ms;
};

struct pw_rank {
	struct pw_sec	 ring[PEERWAIT_WINDOW];
	size_t		 head, n;
	char		 what[AP_WAIT_WHAT_MAX];	/* its latest input */
	int		 off_said, named;
};

/* A rank's window, summed. */
struct pw_sum {
	size_t		 rank;
	double		 wait, input, cpu, delay;
	double		 starve;	/* of its runnable time, not running */
};

struct peerwait {
	size_t		 nranks;
	struct pw_rank	*r;
	struct pw_sum	*sum;
	double		*scratch;
	size_t		 suspect, streak;	/* SIZE_MAX: none */
};

struct peerwait *
peerwait_new(size_t nranks)
{
	struct peerwait	*pw = xcalloc(1, sizeof(*pw));

	pw->nranks = nranks;
	pw->r = xcalloc(nranks + 1, sizeof(*pw->r));
	pw->sum = xcalloc(nranks + 1, sizeof(*pw->sum));
	pw->scratch = xcalloc(nranks + 1, sizeof(*pw->scratch));
	pw->suspect = SIZE_MAX;
	return pw;
}

void
peerwait_free(struct peerwait *pw)
{
	if (pw == NULL)
		return;
	free(pw->r);
	free(pw->sum);
	free(pw->scratch);
	free(pw);
}

void
peerwait_take(struct peerwait *pw, const struct ap_wait *v, size_t n,
    long *off)
{
	struct pw_rank	*r;
	struct pw_sec	*s;
	size_t		 i;

	*off = -1;
	for (i = 0; i < n; i++) {
		if (v[i].rank >= pw->nranks)
			continue;
		r = &pw->r[v[i].rank];
		if (v[i].samples == 0 && v[i].what != NULL &&
		    v[i].what[0] != '\0') {
			if (!r->off_said && *off < 0) {
				r->off_said = 1;
				*off = (long)i;
			}
			continue;
		}
		s = &r->ring[r->head];
		r->head = (r->head + 1) % PEERWAIT_WINDOW;
		if (r->n < PEERWAIT_WINDOW)
			r->n++;
		s->samples = v[i].samples;
		s->peer = v[i].peer;
		s->input = v[i].input;
		s->wall_ms = v[i].wall_ms;
		s->cpu_ms = v[i].cpu_ms;
		s->delay_ms = v[i].delay_ms;
		if (v[i].what != NULL && v[i].what[0] != '\0')
			snprintf(r->what, sizeof(r->what), "%s", v[i].what);
	}
}

/* Rank r's seconds in the window, added up. */
static void
pw_total(const struct pw_rank *r, struct pw_sec *t)
{
	size_t	k;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < r->n; k++) {
		t->samples += r->ring[k].samples;
		t->peer += r->ring[k].peer;
		t->input += r->ring[k].input;
		t->wall_ms += r->ring[k].wall_ms;
		t->cpu_ms += r->ring[k].cpu_ms;
		t->delay_ms += r->ring[k].delay_ms;
	}
}

/* Rank i's window into *o; 0 if it has too few samples to judge. */
static int
pw_sum_rank(const struct pw_rank *r, size_t i, struct pw_sum *o)
{
	struct pw_sec	t;

	pw_total(r, &t);
	if (t.samples < PEERWAIT_MIN_SAMPLES || t.wall_ms == 0)
		return 0;
	o->rank = i;
	o->wait = (double)t.peer / (double)t.samples;
	o->input = (double)t.input / (double)t.samples;
	o->cpu = (double)t.cpu_ms / (double)t.wall_ms;
	o->delay = (double)t.delay_ms / (double)t.wall_ms;
	o->starve = t.cpu_ms + t.delay_ms > 0 ? (double)t.delay_ms /
	    ((double)t.cpu_ms + t.delay_ms) : 0;
	return 1;
}

static int
pw_cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of field off of the n sums but skip (a double's offset). */
static double
pw_median(struct peerwait *pw, size_t n, size_t skip, size_t off)
{
	size_t	i, k = 0;

	for (i = 0; i < n; i++)
		if (i != skip)
			memcpy(&pw->scratch[k++], (const char *)&pw->sum[i] + off,
			    sizeof(double));
	qsort(pw->scratch, k, sizeof(double), pw_cmp_double);
	return k % 2 ? pw->scratch[k / 2] :
	    (pw->scratch[k / 2 - 1] + pw->scratch[k / 2]) / 2;
}

/*
 * Whether the suspect's CPU explains at least half its lag. Served is the
 * share of its runnable time a rank runs; a rank served s against the
 * others' o needs o/s times as long for the same work. Its lag is how
 * much longer its step is than theirs: 1/(1 - gap in peer-wait shares).
 * Half, as factors: (o/s)^2 >= lag. Not a difference of shares: on a busy
 * host every rank queues, and a straggler short of CPU was served 25% of
 * its runnable time against the others' 30% -- 5 points, yet 1.2 times as
 * long for each step, near all of its 1.25.
 */
static int
pw_short_of_cpu(const struct pw_sum *x, double starve, double gap)
{
	double	served = 1 - x->starve, theirs = 1 - starve;

	if (served <= 0)	/* it never ran when it could */
		return theirs > 0;
	if (gap >= 1)		/* the others only wait: no lag to weigh */
		return 0;
	return theirs * theirs >= served * served / (1 - gap);
}

int
peerwait_judge(struct peerwait *pw, double threshold,
    struct peerwait_verdict *v)
{
	size_t		 i, n = 0, s = 0, most = 0;
	double		 gap = threshold / (1 + threshold), others, input,
			 starve;
	struct pw_sum	*x;

	for (i = 0; i < pw->nranks; i++)
		if (pw_sum_rank(&pw->r[i], i, &pw->sum[n]))
			n++;
	if (n < 2 || threshold <= 0)
		return 0;
	for (i = 1; i < n; i++) {
		if (pw->sum[i].wait < pw->sum[s].wait)
			s = i;
		if (pw->sum[i].wait > pw->sum[most].wait)
			most = i;
	}
	x = &pw->sum[s];
	others = pw_median(pw, n, s, offsetof(struct pw_sum, wait));
	if (others - x->wait < gap || pw->r[x->rank].named) {
		pw->suspect = SIZE_MAX;
		pw->streak = 0;
		return 0;
	}
	if (pw->suspect != x->rank) {
		pw->suspect = x->rank;
		pw->streak = 0;
	}
	if (++pw->streak < PEERWAIT_SUSTAIN)
		return 0;
	input = pw_median(pw, n, s, offsetof(struct pw_sum, input));
	starve = pw_median(pw, n, s, offsetof(struct pw_sum, starve));
	memset(v, 0, sizeof(*v));
	v->rank = x->rank;
	v->others = n - 1;
	v->peer = pw->sum[most].rank;
	v->their_wait = others;
	v->its_wait = x->wait;
	v->cpu = x->cpu;
	v->delay = x->delay;
	v->what = pw->r[x->rank].what;
	if (x->input - input >= gap / 2)
		v->why = PW_INPUT;
	else if (pw_short_of_cpu(x, starve, others - x->wait))
		v->why = PW_CPU;
	else
		v->why = PW_COMPUTE;
	pw->r[x->rank].named = 1;
	pw->suspect = SIZE_MAX;
	pw->streak = 0;
	return 1;
}

void
peerwait_forget(struct peerwait *pw)
{
	size_t	i;

	for (i = 0; i < pw->nranks; i++)
		pw->r[i].n = pw->r[i].head = 0;
	pw->suspect = SIZE_MAX;
	pw->streak = 0;
}

void
peerwait_peek(const struct peerwait *pw, size_t rank, struct peerwait_now *o)
{
	const struct pw_rank	*r;
	struct pw_sec		 t;

	memset(o, 0, sizeof(*o));
	if (pw == NULL || rank >= pw->nranks)
		return;
	/* top shows a share as soon as there is one, judged or not. */
	r = &pw->r[rank];
	pw_total(r, &t);
	if (t.samples > 0) {
		o->known = 1;
		o->wait = (double)t.peer / (double)t.samples;
	}
	o->named = r->named;
	o->suspect = !r->named && pw->suspect == rank;
}
