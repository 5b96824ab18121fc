/*
 * lockstep.c -- who the others wait for, from arrivals at collectives
 * (lockstep.h).
 *
 * Pending collectives sit in a hash table by (communicator, sequence
 * number) until every rank of the communicator arrived: then only its
 * last rank and how late it came stay, in a ring of the latest complete
 * ones. A collective some rank never reaches (it died, or NCCL skipped
 * it) is dropped after LOCKSTEP_STALE_NS or when the table is full.
 */
#include <stdlib.h>
#include <string.h>

#include "launcher/watch/lockstep.h"
#include "proto/agentproto.h"
#include "util/xmalloc.h"

#define LS_BUCKETS	4096		/* a power of two */
#define LS_COMMS	64		/* communicators followed */

struct ls_pending {
	uint64_t		 comm, seq;
	int64_t			 first, last;	/* aligned ns */
	uint32_t		 nranks, seen;
	uint32_t		 last_rank;
	struct ls_pending	*next;
};

/* One complete collective, in the ring. */
struct ls_done {
	uint32_t	rank;		/* the last to arrive */
	int64_t		late;		/* after the first, ns */
	int64_t		gap;		/* since its comm's previous, ns; -1 none */
};

struct ls_comm {
	uint64_t	id;
	int64_t		prev_first;	/* the last complete one's first */
	int		used;
};

struct lockstep {
	size_t			 nranks, nhosts;
	int64_t			*offset;	/* per host: add to its clock */
	uint8_t			*aligned;	/* per host: offset known */
	uint8_t			*named;		/* per rank */
	struct ls_pending	*bucket[LS_BUCKETS];
	size_t			 npending;
	int64_t			 newest;	/* latest arrival, aligned */
	struct ls_done		 ring[LOCKSTEP_WINDOW];
	size_t			 nring, head, seen, arrivals;
	struct ls_comm		 comm[LS_COMMS];
};

static size_t
ls_hash(uint64_t comm, uint64_t seq)
{
	uint64_t	h = comm * 0x9E3779B97F4A7C15ULL ^ (seq + 0x632BE59BD9B4E019ULL);

	h ^= h >> 29;
	return (size_t)(h & (LS_BUCKETS - 1));
}

struct lockstep *
lockstep_new(size_t nranks, size_t nhosts)
{
	struct lockstep	*ls = xcalloc(1, sizeof(*ls));

	ls->nranks = nranks;
	ls->nhosts = nhosts;
	ls->offset = xcalloc(nhosts + 1, sizeof(*ls->offset));
	ls->aligned = xcalloc(nhosts + 1, 1);
	ls->named = xcalloc(nranks + 1, 1);
	return ls;
}

/* Unlinks and frees what *pp points at; *pp moves to the next. */
static void
ls_unlink(struct lockstep *ls, struct ls_pending **pp)
{
	struct ls_pending	*e = *pp;

	*pp = e->next;
	free(e);
	ls->npending--;
}

void
lockstep_free(struct lockstep *ls)
{
	size_t	i;

	if (ls == NULL)
		return;
	for (i = 0; i < LS_BUCKETS; i++)
		while (ls->bucket[i] != NULL)
			ls_unlink(ls, &ls->bucket[i]);
	free(ls->offset);
	free(ls->aligned);
	free(ls->named);
	free(ls);
}

/* Drops the pending collectives older than the stale bound. */
static void
ls_sweep(struct lockstep *ls)
{
	struct ls_pending	**pp;
	size_t			  i;

	for (i = 0; i < LS_BUCKETS; i++)
		for (pp = &ls->bucket[i]; *pp != NULL; )
			if (ls->newest - (*pp)->first > (int64_t)LOCKSTEP_STALE_NS)
				ls_unlink(ls, pp);
			else
				pp = &(*pp)->next;
}

/* The gap since comm's previous complete collective (-1: its first). */
static int64_t
ls_gap(struct lockstep *ls, uint64_t comm, int64_t first)
{
	size_t	i, free_i = LS_COMMS;
	int64_t	gap;

	for (i = 0; i < LS_COMMS; i++) {
		if (!ls->comm[i].used) {
			if (free_i == LS_COMMS)
				free_i = i;
			continue;
		}
		if (ls->comm[i].id != comm)
			continue;
		gap = first - ls->comm[i].prev_first;
		ls->comm[i].prev_first = first;
		return gap > 0 ? gap : -1;
	}
	if (free_i < LS_COMMS) {
		ls->comm[free_i].used = 1;
		ls->comm[free_i].id = comm;
		ls->comm[free_i].prev_first = first;
	}
	return -1;
}

/* e is complete: its last rank goes into the ring. */
static void
ls_complete(struct lockstep *ls, const struct ls_pending *e)
{
	struct ls_done	*d = &ls->ring[ls->head];

	d->rank = e->last_rank;
	d->late = e->last - e->first;
	d->gap = ls_gap(ls, e->comm, e->first);
	ls->head = (ls->head + 1) % LOCKSTEP_WINDOW;
	if (ls->nring < LOCKSTEP_WINDOW)
		ls->nring++;
	ls->seen++;
}

/* One arrival, its time aligned. */
static void
ls_arrive(struct lockstep *ls, const struct ap_coll *c, int64_t t)
{
	struct ls_pending	**pp, *e;
	size_t			  b = ls_hash(c->comm, c->seq);

	ls->arrivals++;
	if (t > ls->newest)
		ls->newest = t;
	for (pp = &ls->bucket[b]; (e = *pp) != NULL; pp = &e->next)
		if (e->comm == c->comm && e->seq == c->seq)
			break;
	if (e == NULL) {
		if (c->nranks < 2)
			return;		/* nobody to wait for */
		if (ls->npending >= LOCKSTEP_PENDING_MAX)
			ls_sweep(ls);
		if (ls->npending >= LOCKSTEP_PENDING_MAX)
			return;
		e = xcalloc(1, sizeof(*e));
		e->comm = c->comm;
		e->seq = c->seq;
		e->nranks = c->nranks;
		e->first = e->last = t;
		e->last_rank = c->rank;
		e->next = ls->bucket[b];
		ls->bucket[b] = e;
		ls->npending++;
		pp = &ls->bucket[b];
	}
	if (t < e->first)
		e->first = t;
	if (t >= e->last) {
		e->last = t;
		e->last_rank = c->rank;
	}
	if (++e->seen >= e->nranks) {
		ls_complete(ls, e);
		ls_unlink(ls, pp);
	}
}

void
lockstep_take(struct lockstep *ls, size_t host, uint64_t agent_ns,
    uint64_t now_ns, const struct ap_coll *v, size_t n)
{
	int64_t	off = (int64_t)(now_ns - agent_ns);
	size_t	i;

	if (host >= ls->nhosts)
		return;
	/* The smallest difference is the clocks' plus the least delay. */
	if (!ls->aligned[host] || off < ls->offset[host]) {
		ls->offset[host] = off;
		ls->aligned[host] = 1;
	}
	for (i = 0; i < n; i++)
		if (v[i].rank < ls->nranks)
			ls_arrive(ls, &v[i], (int64_t)v[i].ns +
			    ls->offset[host]);
}

int
lockstep_judge(struct lockstep *ls, double threshold,
    struct lockstep_verdict *v)
{
	size_t	*count, i, best = 0, ngap = 0;
	double	 late = 0, gap = 0;
	int	 found = 0;

	if (ls->nring < LOCKSTEP_MIN)
		return 0;
	count = xcalloc(ls->nranks + 1, sizeof(*count));
	for (i = 0; i < ls->nring; i++)
		if (++count[ls->ring[i].rank] > count[best])
			best = ls->ring[i].rank;
	for (i = 0; i < ls->nring; i++) {
		if (ls->ring[i].gap >= 0) {
			gap += (double)ls->ring[i].gap;
			ngap++;
		}
		if (ls->ring[i].rank == best)
			late += (double)ls->ring[i].late;
	}
	if (count[best] > 0)
		late /= (double)count[best];
	if (ngap > 0)
		gap /= (double)ngap;
	if (!ls->named[best] && ngap > 0 &&
	    (double)count[best] >= LOCKSTEP_SHARE * (double)ls->nring &&
	    late >= threshold * gap) {
		ls->named[best] = 1;
		v->rank = best;
		v->last = count[best];
		v->of = ls->nring;
		v->late_ms = late / 1e6;
		v->gap_ms = gap / 1e6;
		v->seen = ls->seen;
		found = 1;
	}
	free(count);
	return found;
}

size_t
lockstep_seen(const struct lockstep *ls, size_t *arrivals)
{
	if (arrivals != NULL)
		*arrivals = ls->arrivals;
	return ls->seen;
}
