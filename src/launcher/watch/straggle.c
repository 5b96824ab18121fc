/*
 * straggle.c -- the running job's stragglers (straggle.h): pace.c keeps
 * the paces; this file gives it the clock, judges on a timer, and says
 * what it found. A rank is named once per attempt:
 *
 *	dtrun: straggler: rank 5 on gpu07: 1.19 s/step vs median 1.02 s (last 60 steps)
 *
 * and a host all of whose ranks are named at once, once for them all.
 *
 * Room launcher/watch/: the running job seen from outside: pace,
 * stragglers, dtrun top. It includes only cli/, plan/, job/ and stacks/
 * (t0041's rooms).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/sys.h"
#include "proto/agentproto.h"
#include "launcher/cli/opts.h"
#include "launcher/watch/lockstep.h"
#include "launcher/watch/pace.h"
#include "launcher/watch/peerwait.h"
#include "launcher/plan/plan.h"
#include "launcher/stacks/stackask.h"
#include "launcher/stacks/stackrep.h"
#include "launcher/watch/straggle.h"
#include "util/xmalloc.h"

struct straggle {
	const struct opts	*o;
	const struct plan	*p;
	struct stackask		*stk;
	struct straggle_cbs	 cb;
	struct pace		*pace;
	struct event		*timer;
	struct pace_slow	*out;		/* a judgement's names */
	size_t			*named;		/* per host, in a judgement */
	struct lockstep		*ls;		/* NCCL's collectives */
	struct peerwait		*pw;		/* where the ranks wait */
	uint64_t		 stacks_ms;	/* a verdict's stacks last asked */
	uint64_t		 quiet_ms;	/* samples unheard until then */
	int			 off_said;	/* a rank unseen was said */
	int			 stopped;
};

static uint64_t
straggle_now(void)
{
	return dt_clock_ms(CLOCK_MONOTONIC);
}

/* "1.19 s/step vs median 1.02 s (last 60 steps)", or per line. */
static void
straggle_evidence(const struct pace_slow *s, char *buf, size_t len)
{
	char	shape[2 * PACE_SHAPE_MAX + 8];

	if (s->exact) {
		snprintf(buf, len, "%.3g s/step vs median %.3g s (last %zu "
		    "steps)", s->secs, s->median, s->steps);
		return;
	}
	log_escape(shape, sizeof(shape), s->shape);
	snprintf(buf, len, "%.3g s per \"%s\" line vs median %.3g s (last %zu "
	    "lines)", s->secs, shape, s->median, s->steps);
}

/*
 * Stacks were asked: the ranks stop a moment to give them, which their
 * samples would read as waiting. The lock-step watch starts over after.
 */
static void
straggle_quiet(struct straggle *st)
{
	peerwait_forget(st->pw);
	st->quiet_ms = straggle_now() + STRAGGLE_STACKS_MS;
}

/* What --on-straggler asks, for who (its ranks in only, taken). */
static void
straggle_act(struct straggle *st, const char *who, uint8_t *only)
{
	char	why[256];

	if (st->o->on_straggler == STRAGGLE_STACK) {
		snprintf(why, sizeof(why), "straggler %s", who);
		stackask_ask(st->stk, why, STK_THEN_NONE, only);
		straggle_quiet(st);
		return;
	}
	free(only);
	if (st->o->on_straggler == STRAGGLE_STOP && !st->stopped) {
		st->stopped = 1;
		st->cb.stop(st->cb.arg, who);
	}
}

static int
straggle_cmp_u32(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Host h, every one of whose ranks is among the n named: once for all. */
static void
straggle_host(struct straggle *st, size_t h, size_t n)
{
	const struct plan	*p = st->p;
	const struct pace_slow	*first = NULL;
	uint32_t		*v = xcalloc(n + 1, sizeof(*v));
	uint8_t			*only = xcalloc(p->nranks + 1, 1);
	size_t			 i, k = 0;
	char			 ev[512], who[512], ranks[256];

	for (i = 0; i < n; i++) {
		if ((size_t)p->ranks[st->out[i].rank].host != h)
			continue;
		if (first == NULL)
			first = &st->out[i];
		v[k++] = st->out[i].rank;
		only[st->out[i].rank] = 1;
	}
	qsort(v, k, sizeof(*v), straggle_cmp_u32);
	stk_ranges(ranks, sizeof(ranks), v, k);
	straggle_evidence(first, ev, sizeof(ev));
	snprintf(who, sizeof(who), "host %s (ranks %s)", p->hosts[h].name,
	    ranks);
	log_notice("straggler: %s: all its ranks; rank %zu: %s", who,
	    first->rank, ev);
	free(v);
	straggle_act(st, who, only);
}

/* Names the n ranks of one judgement: a whole host once, else each. */
static void
straggle_say(struct straggle *st, size_t n)
{
	const struct plan	*p = st->p;
	size_t			 i, h;
	uint8_t			*only;
	char			 ev[512], who[512];

	memset(st->named, 0, p->nhosts * sizeof(*st->named));
	for (i = 0; i < n; i++)
		st->named[p->ranks[st->out[i].rank].host]++;
	for (h = 0; h < p->nhosts; h++) {
		if (st->named[h] < 2 || st->named[h] != (size_t)p->hosts[h].nranks)
			continue;
		straggle_host(st, h, n);
		st->named[h] = SIZE_MAX;	/* said */
	}
	for (i = 0; i < n; i++) {
		if (st->named[p->ranks[st->out[i].rank].host] == SIZE_MAX)
			continue;
		straggle_evidence(&st->out[i], ev, sizeof(ev));
		snprintf(who, sizeof(who), "rank %zu on %s", st->out[i].rank,
		    p->hosts[p->ranks[st->out[i].rank].host].name);
		log_notice("straggler: %s: %s", who, ev);
		only = xcalloc(p->nranks + 1, 1);
		only[st->out[i].rank] = 1;
		straggle_act(st, who, only);
	}
}

/*
 * A lock-step verdict: the suspect's stack and one waiting peer's go with
 * it (what each was doing), unless --on-straggler says otherwise; asked
 * no more often than STRAGGLE_STACKS_MS.
 */
static void
straggle_confirm(struct straggle *st, const char *who, size_t rank,
    size_t peer)
{
	uint8_t		*only = xcalloc(st->p->nranks + 1, 1);
	uint64_t	 now = straggle_now();
	char		 why[640];

	only[rank] = 1;
	if (st->o->on_straggler == STRAGGLE_STOP) {
		straggle_act(st, who, only);
		return;
	}
	if (st->stacks_ms != 0 && now - st->stacks_ms < STRAGGLE_STACKS_MS) {
		free(only);
		return;
	}
	st->stacks_ms = now;
	only[peer] = 1;
	snprintf(why, sizeof(why), "straggler %s, and a rank that waits for "
	    "it", who);
	stackask_ask(st->stk, why, STK_THEN_NONE, only);
	straggle_quiet(st);
}

/* "it is computing (CPU 98%)": what the suspect's samples say. */
static void
straggle_why(const struct peerwait_verdict *v, char *buf, size_t len)
{
	if (v->why == PW_INPUT)
		snprintf(buf, len, "it waits on its own input (%s)",
		    v->what[0] != '\0' ? v->what : "unknown");
	else if (v->why == PW_CPU)
		snprintf(buf, len, "it is short of CPU (runnable but not "
		    "running %.0f%% of the time)", 100 * v->delay);
	else
		snprintf(buf, len, "it is computing (CPU %.0f%%)",
		    100 * v->cpu);
}

/* The lock-step verdict from the samples of where ranks wait. */
static void
straggle_judge_waits(struct straggle *st)
{
	struct peerwait_verdict	 v;
	char			 who[512], why[256];

	if (!peerwait_judge(st->pw, st->o->straggler_threshold, &v))
		return;
	snprintf(who, sizeof(who), "rank %zu on %s", v.rank,
	    st->p->hosts[st->p->ranks[v.rank].host].name);
	straggle_why(&v, why, sizeof(why));
	log_notice("straggler: %s: the other %zu rank%s wait for it %.0f%% of "
	    "each step (it waits %.0f%%); %s", who, v.others,
	    v.others == 1 ? "" : "s", 100 * v.their_wait, 100 * v.its_wait,
	    why);
	straggle_confirm(st, who, v.rank, v.peer);
}

/* ARGSUSED */
static void
straggle_judge_cb(evutil_socket_t fd, short what, void *arg)
{
	struct straggle	*st = arg;
	size_t		 n;

	if (st->stopped)
		return;
	if ((n = pace_judge(st->pace, straggle_now(), st->out,
	    st->p->nranks)) > 0)
		straggle_say(st, n);
	straggle_judge_waits(st);
}

struct straggle *
straggle_new(struct event_base *base, const struct opts *o,
    const struct plan *p, struct stackask *stk, const struct straggle_cbs *cb)
{
	struct straggle	*st;

	if (o->straggler_threshold <= 0)
		return NULL;
	st = xcalloc(1, sizeof(*st));
	st->o = o;
	st->p = p;
	st->stk = stk;
	st->cb = *cb;
	st->pace = pace_new(p->nranks, o->straggler_threshold);
	st->out = xcalloc(p->nranks + 1, sizeof(*st->out));
	st->named = xcalloc(p->nhosts + 1, sizeof(*st->named));
	st->timer = event_new(base, -1, EV_PERSIST, straggle_judge_cb, st);
	st->ls = lockstep_new(p->nranks, p->nhosts);
	st->pw = peerwait_new(p->nranks);
	return st;
}

/* -v: each rank's peer-wait share at the end (the first 64 ranks). */
static void
straggle_said_waits(struct straggle *st)
{
	struct peerwait_now	 w;
	char			 buf[1024];
	size_t			 i, o = 0;

	for (i = 0; i < st->p->nranks && i < 64 && o < sizeof(buf) - 32; i++) {
		peerwait_peek(st->pw, i, &w);
		if (w.known)
			o += snprintf(buf + o, sizeof(buf) - o, " %zu:%.0f%%", i,
			    100 * w.wait);
	}
	if (o > 0)
		log_info("straggler watch: waiting on peers, per rank (the last "
		    "%d s):%s", PEERWAIT_WINDOW, buf);
}

void
straggle_free(struct straggle *st)
{
	size_t	seen, arrivals;

	if (st == NULL)
		return;
	if (st->timer != NULL)
		event_free(st->timer);
	pace_free(st->pace);
	if ((seen = lockstep_seen(st->ls, &arrivals)) > 0 || arrivals > 0)
		log_info("straggler watch: %zu arrivals at NCCL collectives, "
		    "%zu collectives complete (dtrun's profiler plugin)",
		    arrivals, seen);
	lockstep_free(st->ls);
	straggle_said_waits(st);
	peerwait_free(st->pw);
	free(st->out);
	free(st->named);
	free(st);
}

void
straggle_colls(struct straggle *st, size_t host, uint64_t agent_ns,
    const struct ap_coll *v, size_t n)
{
	struct lockstep_verdict	 w;
	uint8_t			*only;
	char			 who[512];

	if (st == NULL || st->stopped)
		return;
	lockstep_take(st->ls, host, agent_ns, dt_clock_ns(CLOCK_REALTIME), v,
	    n);
	if (!lockstep_judge(st->ls, st->o->straggler_threshold, &w))
		return;
	snprintf(who, sizeof(who), "rank %zu on %s", w.rank,
	    st->p->hosts[st->p->ranks[w.rank].host].name);
	log_notice("straggler: %s: last into %zu of the last %zu NCCL "
	    "collectives, %.3g ms after the first rank on average (%.3g ms "
	    "between collectives): the others wait for it", who, w.last, w.of,
	    w.late_ms, w.gap_ms);
	only = xcalloc(st->p->nranks + 1, 1);
	only[w.rank] = 1;
	straggle_act(st, who, only);
}

void
straggle_waits(struct straggle *st, size_t host, const struct ap_wait *v,
    size_t n)
{
	long	off;

	if (st == NULL || straggle_now() < st->quiet_ms)
		return;
	peerwait_take(st->pw, v, n, &off);
	/*
	 * A rank the agent cannot look at (another user's, hidepid): once a
	 * job, not once a rank (a thousand would say the same).
	 */
	if (off >= 0 && !st->off_said) {
		st->off_said = 1;
		log_warn("straggler watch: where rank %u on %s waits is "
		    "unknown (%s): the lock-step watch leaves out it and any "
		    "rank like it", v[off].rank, st->p->hosts[host].name,
		    v[off].what);
	}
}

void
straggle_peek_wait(struct straggle *st, size_t rank, struct peerwait_now *o)
{
	if (st == NULL) {
		memset(o, 0, sizeof(*o));
		return;
	}
	peerwait_peek(st->pw, rank, o);
}

void
straggle_started(struct straggle *st)
{
	struct timeval	tv = { STRAGGLE_JUDGE_MS / 1000,
			    STRAGGLE_JUDGE_MS % 1000 * 1000 };

	if (st != NULL && st->timer != NULL)
		event_add(st->timer, &tv);
}

void
straggle_output(struct straggle *st, size_t rank, const char *p, size_t n)
{
	if (st != NULL)
		pace_output(st->pace, rank, p, n, straggle_now());
}

void
straggle_step(struct straggle *st, size_t rank, uint64_t step,
    uint64_t age_ms)
{
	uint64_t	now;

	if (st == NULL)
		return;
	now = straggle_now();
	pace_step(st->pace, rank, step, now > age_ms ? now - age_ms : 0);
}

void
straggle_peek(struct straggle *st, size_t rank, int live,
    struct pace_now *pn)
{
	if (st == NULL) {
		memset(pn, 0, sizeof(*pn));
		return;
	}
	pace_peek(st->pace, rank, live ? straggle_now() : 0, pn);
}
