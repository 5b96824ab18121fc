/*
 * stackask.c -- the job's stack reports and its hang watch (stackask.h).
 *
 * One report at a time: every agent that runs a rank it covers is asked
 * (STACKS), each answers a STACK per live rank and one with AP_NORANK at
 * its end. A report waits STK_WAIT_S for agents while no stack comes; a
 * host that does not answer in time, or is lost, has its running ranks
 * marked missing.
 *
 * Room launcher/stacks/: stack reports: asking the agents, picking and
 * merging the stacks, their signatures. It includes only cli/, plan/ and
 * job/ (t0041's rooms).
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "proto/agentproto.h"
#include "launcher/job/agents.h"
#include "launcher/cli/cli.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "launcher/job/ranks.h"
#include "launcher/stacks/stackask.h"
#include "launcher/stacks/stackrep.h"
#include "common/sys.h"
#include "common/wire.h"
#include "util/xmalloc.h"

#define STK_WAIT_S	250		/* a report waits for agents at most
					   this long without a stack coming:
					   a rank's capture takes an agent
					   at most 2 x 120 s (stacks.c); a
					   dead agent is lost sooner, by its
					   heartbeat */
#define STK_AGAIN_MS	1000		/* an agent's ask this soon after a
					   report is the same Ctrl-\ */

struct stackask {
	struct stackask_cbs	 cb;
	const struct opts	*o;
	const struct plan	*plan;
	const struct ranks	*ranks;
	struct job_host		**hosts;	/* the plan's, in its order */
	struct dt_wbuf		 wb;		/* STACKS, on its way */
	const char		*id;
	int			 attempt;
	const char		*dir;		/* --output-dir's, or NULL */
	struct stk_report	*stk;		/* the report being gathered */
	uint8_t			*waiting;	/* per host: its stacks are owed */
	size_t			 pending;	/* hosts whose stacks are owed */
	enum stk_then		 then;		/* what to do once it is in */
	uint8_t			*only;		/* NULL, or the ranks it covers */
	/*
	 * An ask for ranks the report under way leaves out (it was for a
	 * straggler's two): made once that one is in.
	 */
	int			 again;
	uint8_t			*again_only;	/* NULL: every rank */
	enum stk_then		 again_then;
	char			 again_why[256];
	int			 last_all;	/* the last report had every rank */
	int			 seq;		/* reports so far */
	uint64_t		 end_ms;	/* when the last one ended */
	uint64_t		 life_ms;	/* a rank last wrote or beat */
	struct event		*ev_wait;	/* bounds pending's wait */
	struct event		*ev_hang;	/* --hang-timeout */
};

static void	stackask_done(struct stackask *);
static void	stackask_again(struct stackask *);

/* Milliseconds on the monotonic clock. */
static uint64_t
now_ms(void)
{
	return dt_clock_ms(CLOCK_MONOTONIC);
}

/* Arms ev to fire in secs seconds. */
static void
timer_arm(struct event *ev, double secs)
{
	struct timeval	tv = dt_timeval(secs);

	event_add(ev, &tv);
}

/* Where the full stacks of report seq go: --output-dir's stacks/, else $TMPDIR. */
static void
stackask_path(const struct stackask *sa, char *buf, size_t len)
{
	const char	*tmp = getenv("TMPDIR");

	if (tmp == NULL || tmp[0] != '/')
		tmp = "/tmp";
	if (sa->dir != NULL) {
		snprintf(buf, len, "%s/stacks", sa->dir);
		(void)mkdir(buf, 0755);
		snprintf(buf, len, "%s/stacks/stacks-%d.txt", sa->dir, sa->seq);
	} else if (sa->attempt > 0)
		snprintf(buf, len, "%s/dtrun-%s-attempt%d-stacks-%d.txt", tmp,
		    sa->id, sa->attempt, sa->seq);
	else
		snprintf(buf, len, "%s/dtrun-%s-stacks-%d.txt", tmp, sa->id,
		    sa->seq);
}

/* A report is in, or could not be asked: hand back what it was for. */
static void
stackask_then(struct stackask *sa)
{
	enum stk_then	then = sa->then;

	sa->then = STK_THEN_NONE;
	free(sa->only);
	sa->only = NULL;
	if (then != STK_THEN_NONE)
		sa->cb.then(sa->cb.arg, then);
}

/* True if the report being gathered covers rank. */
static int
stackask_covers(const struct stackask *sa, uint32_t rank)
{
	return sa->only == NULL || sa->only[rank];
}

/* True if the report being gathered covers any of host's ranks. */
static int
stackask_covers_host(const struct stackask *sa, size_t host)
{
	const struct plan_host	*ph = &sa->plan->hosts[host];
	int			 k;

	for (k = 0; k < ph->nranks; k++)
		if (stackask_covers(sa, ph->ranks[k]))
			return 1;
	return 0;
}

/* The hosts still owed mark their running ranks missing. */
static void
stackask_missing(struct stackask *sa)
{
	const struct plan_host	*ph;
	size_t			 h;
	int			 k, r;

	for (h = 0; h < sa->plan->nhosts; h++) {
		if (!sa->waiting[h])
			continue;
		sa->waiting[h] = 0;
		ph = &sa->plan->hosts[h];
		for (k = 0; k < ph->nranks; k++) {
			r = ph->ranks[k];
			if (ranks_running(sa->ranks, r) &&
			    stackask_covers(sa, r))
				stk_report_missing(sa->stk, r, "no reply from "
				    "the agent in time");
		}
	}
	sa->pending = 0;
}

/* Every host answered, or the wait ran out: print the report, write the stacks. */
static void
stackask_done(struct stackask *sa)
{
	char		 path[4096], **lines;
	size_t		 i, n;

	event_del(sa->ev_wait);
	stackask_missing(sa);
	sa->seq++;
	stackask_path(sa, path, sizeof(path));
	if ((lines = stk_report_lines(sa->stk, &n)) == NULL)
		log_error("stacks: out of memory");
	else {
		log_error("stacks of %zu rank%s in %zu group%s, outliers first:",
		    stk_report_count(sa->stk), stk_report_count(sa->stk) == 1 ?
		    "" : "s", n, n == 1 ? "" : "s");
		for (i = 0; i < n; i++) {
			log_error("  %s", lines[i]);
			free(lines[i]);
		}
		free(lines);
	}
	if (stk_report_write(sa->stk, path) == 0)
		log_error("full stacks of every rank: %s", path);
	else
		log_error("cannot write the full stacks to %s: %s", path,
		    strerror(errno));
	stk_report_free(sa->stk);
	sa->stk = NULL;
	sa->end_ms = now_ms();
	sa->last_all = sa->only == NULL;
	stackask_then(sa);
	stackask_again(sa);
}

/* True if the report under way covers every rank only asks for. */
static int
stackask_covers_ask(const struct stackask *sa, const uint8_t *only)
{
	size_t	r;

	if (sa->only == NULL)
		return 1;
	if (only == NULL)
		return 0;
	for (r = 0; r < sa->plan->nranks; r++)
		if (only[r] && !sa->only[r])
			return 0;
	return 1;
}

/* Keeps an ask the report under way does not cover, for after it. */
static void
stackask_defer(struct stackask *sa, const char *why, enum stk_then then,
    uint8_t *only)
{
	size_t	r;

	if (!sa->again) {
		sa->again = 1;
		sa->again_only = only;
		sa->again_then = then;
		snprintf(sa->again_why, sizeof(sa->again_why), "%s", why);
		return;
	}
	/* Two deferred: one report for both. */
	if (only == NULL || sa->again_only == NULL) {
		free(sa->again_only);
		sa->again_only = NULL;
	} else
		for (r = 0; r < sa->plan->nranks; r++)
			sa->again_only[r] |= only[r];
	free(only);
	if (then != STK_THEN_NONE)
		sa->again_then = then;
}

/* The deferred ask, now that the report before it is in. */
static void
stackask_again(struct stackask *sa)
{
	if (!sa->again)
		return;
	sa->again = 0;
	stackask_ask(sa, sa->again_why, sa->again_then, sa->again_only);
	sa->again_only = NULL;
}

void
stackask_ask(struct stackask *sa, const char *why, enum stk_then then,
    uint8_t *only)
{
	size_t	h;

	if (sa->stk != NULL && !stackask_covers_ask(sa, only)) {
		stackask_defer(sa, why, then, only);
		return;
	}
	if (then != STK_THEN_NONE)
		sa->then = then;
	if (sa->stk != NULL) {
		free(only);		/* the report under way covers it */
		return;
	}
	sa->only = only;
	if (sa->cb.stopping(sa->cb.arg) || ranks_nrunning(sa->ranks) == 0) {
		log_warn("%s: no rank is running: no stacks to show", why);
		stackask_then(sa);
		return;
	}
	if ((sa->stk = stk_report_new(sa->plan->nranks)) == NULL) {
		log_error("stacks: out of memory");
		stackask_then(sa);
		return;
	}
	if (sa->then == STK_THEN_NONE)
		log_notice("%s: asking every agent for its ranks' stacks (the "
		    "job goes on)", why);
	/*
	 * Count what is owed before asking: an ssh host's answer can be read
	 * and handled while the next host is asked.
	 */
	for (h = 0; h < sa->plan->nhosts; h++) {
		sa->waiting[h] = host_hello(sa->hosts[h]) &&
		    !host_done(sa->hosts[h]) &&
		    stackask_covers_host(sa, h);
		sa->pending += sa->waiting[h];
	}
	if (sa->pending == 0) {
		stackask_done(sa);
		return;
	}
	for (h = 0; h < sa->plan->nhosts && sa->stk != NULL; h++) {
		if (!sa->waiting[h])
			continue;
		ap_put_empty(&sa->wb, AP_STACKS);
		agents_send(sa->hosts[h], &sa->wb);
	}
	if (sa->stk != NULL)
		timer_arm(sa->ev_wait, STK_WAIT_S);
}

void
stackask_agent(struct stackask *sa)
{
	/* A report of some ranks (a straggler's) is no answer to it. */
	if (sa->stk == NULL && sa->last_all &&
	    now_ms() - sa->end_ms <= STK_AGAIN_MS)
		return;
	stackask_ask(sa, "an agent got SIGQUIT (dtrun-kill --stacks)",
	    STK_THEN_NONE, NULL);
}

void
stackask_stack(struct stackask *sa, size_t host, const struct ap_stack *k)
{
	if (sa->stk == NULL || !sa->waiting[host])
		return;		/* late, after the report was made */
	if (k->rank == AP_NORANK) {
		stackask_host_gone(sa, host);
		return;
	}
	if (k->rank >= sa->plan->nranks ||
	    sa->plan->ranks[k->rank].host != (int)host ||
	    !stackask_covers(sa, k->rank))
		return;
	stk_report_rank(sa->stk, k->rank, sa->plan->hosts[host].name,
	    (pid_t)k->pid, k->status, k->tool, k->text);
	/* Many ranks on slow tools: wait while stacks keep coming. */
	timer_arm(sa->ev_wait, STK_WAIT_S);
}

void
stackask_host_gone(struct stackask *sa, size_t host)
{
	if (sa->stk == NULL || !sa->waiting[host])
		return;
	sa->waiting[host] = 0;
	if (--sa->pending == 0)
		stackask_done(sa);
}

enum stk_then
stackask_pending(const struct stackask *sa)
{
	return sa->then;
}

/* ARGSUSED */
static void
stackask_wait_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stackask	*sa = arg;

	if (sa->stk != NULL)
		stackask_done(sa);
}

/*
 * --hang-timeout: no rank wrote a line (or beat) for that long. Ask for
 * the stacks; the job stops once they are in unless --on-hang report.
 */
/* ARGSUSED */
static void
stackask_hang_cb(evutil_socket_t fd, short what, void *arg)
{
	struct stackask	*sa = arg;
	uint64_t	 idle = now_ms() - sa->life_ms;
	uint64_t	 limit = (uint64_t)(sa->o->hang_timeout * 1000);

	if (sa->cb.stopping(sa->cb.arg))
		return;
	if (idle < limit || sa->stk != NULL || ranks_nrunning(sa->ranks) == 0) {
		timer_arm(sa->ev_hang, idle < limit ? (limit - idle) / 1000.0 :
		    sa->o->hang_timeout);
		return;
	}
	log_error("no rank has written a line for %g s (--hang-timeout)%s",
	    sa->o->hang_timeout, sa->o->on_hang_report ? "" :
	    ": stopping the job once its stacks are in");
	/* Report mode: the next report after another quiet period. */
	sa->life_ms = now_ms();
	timer_arm(sa->ev_hang, sa->o->hang_timeout);
	stackask_ask(sa, "hang", STK_THEN_HANG, NULL);
}

void
stackask_started(struct stackask *sa)
{
	sa->life_ms = now_ms();
	if (sa->o->hang_timeout > 0)
		timer_arm(sa->ev_hang, sa->o->hang_timeout);
}

void
stackask_alive(struct stackask *sa)
{
	sa->life_ms = now_ms();
}

struct stackask *
stackask_new(struct event_base *base, const struct opts *o,
    const struct plan *p, struct job_host **hosts, const struct ranks *rk,
    const char *job_id,
    int attempt, const char *dir, const struct stackask_cbs *cb)
{
	struct stackask	*sa = xcalloc(1, sizeof(*sa));

	sa->cb = *cb;
	sa->o = o;
	sa->plan = p;
	sa->ranks = rk;
	sa->hosts = hosts;
	dt_wbuf_init(&sa->wb);
	sa->id = job_id;
	sa->attempt = attempt;
	sa->dir = dir;
	sa->waiting = xcalloc(p->nhosts ? p->nhosts : 1, 1);
	sa->ev_wait = evtimer_new(base, stackask_wait_cb, sa);
	sa->ev_hang = evtimer_new(base, stackask_hang_cb, sa);
	return sa;
}

void
stackask_free(struct stackask *sa)
{
	if (sa == NULL)
		return;
	event_free(sa->ev_wait);
	event_free(sa->ev_hang);
	stk_report_free(sa->stk);
	free(sa->only);
	free(sa->again_only);
	free(sa->waiting);
	dt_wbuf_free(&sa->wb);
	free(sa);
}
