/*
 * restart.c -- the job's attempts (see restart.h): run one, decide whether
 * to run another, wait the delay with the stop signals held (a signal
 * then ends the job at once, cleanly), drop lost hosts, and say at the end
 * what each attempt did.
 *
 * While restarts are on, dtrun keeps a job record of its own (record.h,
 * with a "launcher" line) so that dtrun-kill stops dtrun first, with
 * SIGTERM: it then stops every host's ranks and starts nothing again,
 * whether an attempt is running, starting or waiting its delay.
 */
#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/job/agents.h"
#include "launcher/cli/cli.h"
#include "launcher/job/crashsig.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/job/hooks.h"
#include "launcher/job/job.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "host/record.h"
#include "launcher/job/restart.h"
#include "launcher/job/signals.h"
#include "common/sys.h"
#include "util/xmalloc.h"

/* What the summary says of one attempt. */
struct restart_log {
	time_t		 start;
	double		 secs;
	int		 rc;
	char		 what[512];
	char		 dropped[256];	/* hosts dropped after it */
	char		 swapped[512];	/* "gpu03 was lost; spare gpu09 took
					   its place" */
	struct crashsig	 sig;		/* a failed rank's signature, or none */
};

/* The wait before restart k (1, 2, ...) for a first delay of secs. */
static double
restart_backoff(double secs, int k)
{
	double	cap = secs > RESTART_DELAY_CAP ? secs : RESTART_DELAY_CAP;
	/* 2^(k-1) by a shift: ldexp alone would make dtrun load libm. */
	double	d = secs * (double)(1UL << (k < 1 ? 0 : k > 30 ? 30 : k - 1));

	return d < cap ? d : cap;
}

/*
 * Waits secs with the signals held (signals_hold), keeping the idle
 * agents' links alive (job_scope_tick). Returns the stop signal (INT,
 * TERM, HUP) that came, or 0 when the time is up; others (USR1, QUIT:
 * about running ranks, and none runs) are taken and dropped.
 */
static int
restart_wait(struct job_scope *sc, double secs)
{
	sigset_t	set;
	struct timespec	ts;
	double		end, left, tick;
	int		sig;

	end = dt_clock_s(CLOCK_MONOTONIC) + secs;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGQUIT);
	for (;;) {
		tick = job_scope_tick(sc);
		left = end - dt_clock_s(CLOCK_MONOTONIC);
		/* Even with no time left, a stop signal already here counts. */
		if (left < 0)
			left = 0;
		if (left > tick)
			left = tick;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
		sig = sigtimedwait(&set, NULL, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			return sig;
		if (sig == -1 && errno != EINTR && errno != EAGAIN)
			return 0;
		if (dt_clock_s(CLOCK_MONOTONIC) >= end)
			return 0;
	}
}

/* True if attempt a (exit rc) may be followed by another, budget aside. */
static int
restart_cause_ok(const struct job_attempt *a, int rc)
{
	return rc != 0 && !a->signaled && a->cause != JC_NONE;
}

/* Names of a's lost hosts, comma-separated, into buf. */
static void
restart_names(char *buf, size_t len, char *const *v, size_t n)
{
	size_t	i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
		    v[i]);
}

/* True if plan_drop gave lost host name a spare's place. */
static int
restart_swapped(const struct plan *p, const char *name)
{
	size_t	i;

	for (i = 0; i < p->nswaps; i++)
		if (strcmp(p->swaps[i].lost, name) == 0)
			return 1;
	return 0;
}

/*
 * After plan_drop: says which spare took which lost host's place (into
 * l->swapped too), and which lost hosts were dropped for want of one.
 */
static void
restart_say_drop(const struct opts *o, const struct plan *p,
    const struct job_attempt *a, struct restart_log *l, int before)
{
	char	*gone[64];
	char	 names[256] = "", runs[128];
	size_t	 i, n = 0, off = 0;

	for (i = 0; i < p->nswaps; i++) {
		log_warn("spare %s takes the place of lost host %s (its ranks "
		    "and NODE_RANK)", p->swaps[i].spare, p->swaps[i].lost);
		if (off < sizeof(l->swapped))
			off += snprintf(l->swapped + off, sizeof(l->swapped) -
			    off, "%s%s was lost; spare %s took its place",
			    i ? "; " : "", p->swaps[i].lost, p->swaps[i].spare);
	}
	for (i = 0; i < a->nlost && n < 64; i++)
		if (!restart_swapped(p, a->lost[i]))
			gone[n++] = a->lost[i];
	snprintf(runs, sizeof(runs), "the next attempt runs %d rank%s on %zu "
	    "host%s%s", p->nworkers, p->nworkers == 1 ? "" : "s", p->nnodes,
	    p->nnodes == 1 ? "" : "s", p->nworkers < before ?
	    " (--min-np)" : "");
	if (n == 0) {
		log_warn("%s", runs);
		return;
	}
	restart_names(names, sizeof(names), gone, n);
	snprintf(l->dropped, sizeof(l->dropped), "%s", names);
	log_warn("dropped lost host%s %s%s: %s", n == 1 ? "" : "s", names,
	    o->spares > 0 && p->nspare == 0 ? " (no spare left)" : "", runs);
}

/*
 * Gives a's lost hosts' places to spares, or drops them when the others
 * still take the job; says what changed (into l too), or why they are kept.
 */
static void
restart_drop(const struct opts *o, struct plan *p,
    const struct job_attempt *a, struct restart_log *l)
{
	struct dt_err	e;
	char		names[256], msg[512];
	int		before = p->nworkers;

	if (a->nlost == 0 || (p->nhosts == 1 && p->local))
		return;
	restart_names(names, sizeof(names), a->lost, a->nlost);
	if (plan_drop(p, a->lost, a->nlost, o->min_np, &e) != 0) {
		log_warn("keeping lost host%s %s for the next attempt: without "
		    "%s %s (give --min-np to run with fewer ranks)",
		    a->nlost == 1 ? "" : "s", names, a->nlost == 1 ? "it" :
		    "them", dt_err_str(&e, msg, sizeof(msg)));
		return;
	}
	restart_say_drop(o, p, a, l, before);
}

/*
 * Prints every attempt: when, how long, how it ended, the traceback's end
 * of a failed rank, what was dropped.
 */
static void
restart_summary(const struct restart_log *l, int n, int rc)
{
	void	(*say)(const char *, ...) = rc == 0 ? log_notice : log_error;
	char	when[32];
	int	i;

	say("%d attempts (%d restart%s):", n, n - 1, n == 2 ? "" : "s");
	for (i = 0; i < n; i++) {
		/* What changed before it: the spares it runs on. */
		if (i > 0 && l[i - 1].swapped[0] != '\0')
			say("  attempt %d: %s", i, l[i - 1].swapped);
		strftime(when, sizeof(when), "%H:%M:%S",
		    localtime(&l[i].start));
		say("  attempt %d at %s, %.1f s, exit %d: %s%s%s%s%s%s%s", i,
		    when, l[i].secs, l[i].rc, l[i].what, l[i].sig.tb[0] ?
		    " (" : "", l[i].sig.tb, l[i].sig.tb[0] ? ")" : "",
		    l[i].dropped[0] ? " (dropped " : "", l[i].dropped,
		    l[i].dropped[0] ? ")" : "");
	}
}

/* The attempt's own --output-dir: DIR for the first, DIR/attempt.K after. */
static char *
restart_dir(const struct opts *o, int k)
{
	char	*d;

	if (o->output_dir == NULL)
		return NULL;
	if (k == 0)
		return xstrdup(o->output_dir);
	(void)mkdir(o->output_dir, 0777);
	xasprintf(&d, "%s/attempt.%d", o->output_dir, k);
	return d;
}

/* dtrun's own job record, so dtrun-kill stops it first (NULL: none). */
static struct record *
restart_record(const char *id)
{
	struct record	*r;
	struct dt_err	 e;
	char		 host[256];

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	if (record_open(id, host, 0, &r, &e) != 0) {
		log_warn("%s", e.msg);
		return NULL;
	}
	record_launcher(r);
	record_commit(r);
	return r;
}

/*
 * True, and says so, when attempt k failed as the one before it did
 * (prev: its signature, or NULL for the first): it would only fail again.
 * Only a rank's own failure has a signature, so a lost host, a hang, the
 * timeout or a signal to dtrun is never the same failure.
 */
static int
restart_same(const struct opts *o, const struct crashsig *prev,
    const struct job_attempt *a, int k)
{
	const struct crashsig	*s = &a->sig;

	if (o->restart_same || prev == NULL || !crashsig_same(prev, s))
		return 0;
	log_error("the same failure twice (%s%s%s): not restarting; "
	    "--max-restarts budget left: %d (--restart-on-same-failure "
	    "restarts anyway)", s->what, s->tb[0] ? "; " : "", s->tb,
	    o->max_restarts - k);
	return 1;
}

/*
 * Decides after attempt k (exit rc) whether another runs: the cause, the
 * budget, a failure the same as the last one (prev), what is left of
 * --timeout. Returns the delay before it, or -1 for none.
 */
static double
restart_next(const struct opts *o, const struct job_attempt *a, int k,
    const struct crashsig *prev, double deadline, int rc)
{
	double	delay;

	if (!restart_cause_ok(a, rc) || o->max_restarts <= 0)
		return -1;
	if (k >= o->max_restarts) {
		log_error("no restart left (--max-restarts %d): exit %d",
		    o->max_restarts, rc);
		return -1;
	}
	if (restart_same(o, prev, a, k))
		return -1;
	delay = restart_backoff(o->restart_delay, k + 1);
	if (deadline > 0 && dt_clock_s(CLOCK_MONOTONIC) + delay >= deadline) {
		log_error("no time left of --timeout %g s for a restart: exit %d",
		    o->timeout, rc);
		return -1;
	}
	log_warn("restarting the job (restart %d of %d) in %g s", k + 1,
	    o->max_restarts, delay);
	return delay;
}

/* Waits delay before the next attempt; 0, or 128+N after signal N. */
static int
restart_pause(struct job_scope *sc, double delay)
{
	int	sig;

	if ((sig = restart_wait(sc, delay)) == 0)
		return 0;
	log_warn("got SIG%s while waiting to restart: stopping",
	    sigabbrev_np(sig));
	return EXIT_SIGNAL(sig);
}

int
restart_run(const struct opts *o, struct plan *p, const char *id,
    const struct job_feature *const *list)
{
	struct job_attempt	 a;
	struct restart_log	*l = NULL;
	struct record		*rec = NULL;
	struct job_scope	*sc;
	struct features		*fs;
	double			 t0, deadline = 0, delay;
	int			 k, rc, port = 0, stop;

	if ((sc = job_scope_new(o)) == NULL) {
		log_error("cannot make an event base");
		return EXIT_INTERNAL;
	}
	if (o->max_restarts > 0)
		rec = restart_record(id);
	fs = features_new(list, agents_base(sc), o, id);
	if (o->timeout > 0)
		deadline = dt_clock_s(CLOCK_MONOTONIC) + o->timeout;
	signals_hold(1);
	for (k = 0;; k++) {
		memset(&a, 0, sizeof(a));
		a.n = k;
		a.max = o->max_restarts > 0 ? o->max_restarts : 0;
		a.prev_port = port;
		a.features = fs;
		a.output_dir = restart_dir(o, k);
		/* Spent already (a tiny --timeout): it still ends the job. */
		if (deadline > 0 &&
		    (a.timeout = deadline - dt_clock_s(CLOCK_MONOTONIC)) <= 0)
			a.timeout = 1e-9;
		l = xreallocarray(l, k + 1, sizeof(*l));
		memset(&l[k], 0, sizeof(l[k]));
		l[k].start = time(NULL);
		t0 = dt_clock_s(CLOCK_MONOTONIC);
		rc = job_run(sc, o, p, id, &a);
		l[k].secs = dt_clock_s(CLOCK_MONOTONIC) - t0;
		l[k].rc = rc;
		snprintf(l[k].what, sizeof(l[k].what), "%.500s", strncmp(a.what,
		    "job failed: ", 12) == 0 ? a.what + 12 : a.what);
		port = a.master_port;
		l[k].sig = a.sig;
		delay = restart_next(o, &a, k, k > 0 ? &l[k - 1].sig : NULL,
		    deadline, rc);
		if (delay >= 0)
			restart_drop(o, p, &a, &l[k]);
		free((char *)a.output_dir);
		job_attempt_free(&a);
		if (delay < 0)
			break;
		if ((stop = restart_pause(sc, delay)) != 0) {
			rc = stop;
			break;
		}
	}
	/* The agents exit as their links close. */
	features_free(fs);
	job_scope_free(sc);
	if (k > 0)
		restart_summary(l, k + 1, rc);
	free(l);
	record_remove(rec);
	return rc;
}
