/*
 * shutdown.c -- how the agent stops: its ranks first (the signal, then
 * SIGKILL after the job's grace), then whatever they left, then DONE;
 * after which it waits for the next attempt or, with SIGTERM taken or its
 * link to dtrun down, finishes and exits.
 *
 * Where its end is, is one phase (agentint.h's enum shut_phase: none,
 * stopping, finishing) and why, one cause (an attempt's end, SIGTERM, the
 * link down), each moved only by the transitions here. Finishing is also
 * the conversation's last phase, AGP_FINISHING, so phase.c's table judges
 * what dtrun still sends then, as in every other phase.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agentint.h"
#include "agent/errfile.h"
#include "host/procs.h"
#include "agent/progress.h"
#include "host/record.h"
#include "agent/setup.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/link.h"
#include "common/log.h"

/* How often leftovers are looked for again once killed. */
static const struct timeval shut_recheck_tv = { 0, 100 * 1000 };

/* The link is up unless lost or cut: what is sent goes. */
int
shut_linked(const struct agent *a)
{
	return a->cause != SHUT_BY_LINK;
}

/* dtrun is still to hear news (STACKASK, RDZV, PROGRESS). */
int
shut_talking(const struct agent *a)
{
	return shut_linked(a) && a->shut != SHUT_FINISHING;
}

/* True when DONE ends the agent, not the attempt: SIGTERM, or no link. */
static int
shut_leaving(const struct agent *a)
{
	return a->cause >= SHUT_BY_TERM;
}

/* Transition: stopping, for cause (the gravest cause is kept). */
static void
shut_to_stopping(struct agent *a, enum shut_cause cause)
{
	if (cause > a->cause)
		a->cause = cause;
	if (a->shut == SHUT_NONE)
		a->shut = SHUT_STOPPING;
}

/* Transition: an attempt's stop is over with its DONE; AGAIN may follow. */
static void
shut_to_none(struct agent *a)
{
	a->shut = SHUT_NONE;
	a->cause = SHUT_NOCAUSE;
}

/* Transition: finishing, the conversation's last phase; the loop ends. */
void
shut_finish(struct agent *a)
{
	if (a->shut == SHUT_FINISHING)
		return;
	a->shut = SHUT_FINISHING;
	agent_to(a, AGP_FINISHING);
	event_base_loopbreak(a->base);
}

/* The job's kill grace once its JOB is in; before, nothing waits. */
static uint64_t
shut_grace(const struct agent *a)
{
	if (a->phase < AGP_JOB || a->phase > AGP_RUNNING)
		return 0;
	return a->job.kill_grace_ms;
}

/* Signals every rank's process group still ours, and all descendants. */
void
shut_signal_all(struct agent *a, int sig, int descendants)
{
	size_t	i;

	for (i = 0; i < a->nranks; i++)
		if (a->ranks[i].pid > 0 && !a->ranks[i].reaped)
			kill(-a->ranks[i].pid, sig);
	if (descendants)
		spawn_kill_descendants(sig, NULL);
}

/* Looks for leftovers again. */
/* ARGSUSED */
void
shut_recheck_cb(evutil_socket_t fd, short what, void *arg)
{
	shut_check(arg);
}

/* The kill grace is over: SIGKILL to everything. */
/* ARGSUSED */
void
shut_kill_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;

	shut_signal_all(a, SIGKILL, 1);
	a->killed = 1;
	/*
	 * A killed grandchild is only reaped once its parent is; we are told
	 * of our own children, so look again now and then until all are gone.
	 */
	event_add(a->recheck, &shut_recheck_tv);
	shut_check(a);
}

/* Stopping for cause: sig now, SIGKILL after grace_ms, to all it started. */
void
shut_stop(struct agent *a, enum shut_cause cause, int sig, uint64_t grace_ms)
{
	struct timeval	tv;

	shut_to_stopping(a, cause);
	if (a->phase != AGP_RUNNING) {
		shut_check(a);
		return;
	}
	if (sig == SIGKILL || grace_ms == 0) {
		event_del(a->kill_timer);
		shut_kill_timer_cb(-1, 0, a);
		return;
	}
	shut_signal_all(a, sig, 1);
	if (!event_pending(a->kill_timer, EV_TIMEOUT, NULL) && !a->killed) {
		tv.tv_sec = (time_t)(grace_ms / 1000);
		tv.tv_usec = (suseconds_t)(grace_ms % 1000) * 1000;
		event_add(a->kill_timer, &tv);
	}
}

/*
 * True when the kernel says we have no child at all, alive or unreaped.
 * The walk of /proc's children lists can miss a process for a moment: one
 * whose parent (a rank) is exiting is on neither list while it is handed
 * to us, the subreaper. DONE then came with it alive, our record gone, and
 * dtrun-kill found "leftover processes" of a job that had said it was done.
 */
static int
shut_childless(void)
{
	siginfo_t	si;

	memset(&si, 0, sizeof(si));
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 &&
	    errno == ECHILD;
}

/*
 * Everything this attempt started is gone: take our record down, say
 * DONE, and wait for the next attempt (AGAIN) or, leaving (SIGTERM, the
 * link down), finish.
 */
static void
shut_done(struct agent *a)
{
	record_remove(a->rec);
	a->rec = NULL;
	errfiles_free(a->errf);
	a->errf = NULL;
	/* The last EXITs, the last steps and DONE: one write, one wake-up. */
	a->holding = 1;
	progress_flush(a->progress);
	a->holding = 0;
	ap_put_empty(&a->wb, AP_DONE);
	agent_flush_wb(a);
	if (shut_leaving(a)) {
		shut_finish(a);
		return;
	}
	agent_forget(a);
	shut_to_none(a);
	agent_to(a, AGP_IDLE);
}

/* Not running ranks, and stopping: a setup, or what it left, must go. */
static void
shut_check_unstarted(struct agent *a)
{
	size_t	left;

	if (setup_running(a->setup)) {
		setup_kill(a->setup);
		return;		/* its reaping calls us again */
	}
	left = spawn_kill_descendants(SIGKILL, NULL);
	if (left > 0 || !shut_childless()) {
		event_add(a->recheck, &shut_recheck_tv);
		return;
	}
	shut_done(a);
}

/*
 * Called after anything that may end the job on this host: once every rank
 * is reaped, kill leftovers; once nothing is left, say DONE.
 */
void
shut_check(struct agent *a)
{
	size_t		i, left;
	pid_t		*pids;

	if (a->shut == SHUT_FINISHING)
		return;
	if (a->phase != AGP_RUNNING) {
		if (a->shut == SHUT_STOPPING)
			shut_check_unstarted(a);
		return;
	}
	if (a->live > 0)
		return;
	left = spawn_descendants(&pids);
	free(pids);
	if (left > 0) {
		/* The ranks are gone but something they started is not. */
		if (a->shut == SHUT_NONE)
			shut_stop(a, SHUT_BY_ATTEMPT, SIGTERM,
			    a->job.kill_grace_ms);
		else if (a->killed)
			event_add(a->recheck, &shut_recheck_tv);
		return;
	}
	if (!shut_childless()) {
		/* Caught between parents: the next walk finds it. */
		event_add(a->recheck, &shut_recheck_tv);
		return;
	}
	for (i = 0; i < a->nranks; i++) {
		src_read(&a->ranks[i].out, 1);
		src_close(&a->ranks[i].out);
		src_read(&a->ranks[i].err, 1);
		src_close(&a->ranks[i].err);
	}
	shut_done(a);
}

/* SIGTERM: say why, stop, then exit after DONE. */
/* ARGSUSED */
void
shut_sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent	*a = arg;

	/* Tell the launcher why, so it reports this and not a dying rank. */
	if (a->keeper > 0 && getppid() != a->keeper)
		agent_error(a, AP_NORANK, EXIT_LOST, "%s: the agent's keeper "
		    "(pid %d) was killed: stopping its ranks", a->host,
		    (int)a->keeper);
	else
		agent_error(a, AP_NORANK, EXIT_AGENT_TERM, "%s: the agent got "
		    "SIGTERM (dtrun-kill, or the host is shutting down): "
		    "stopping its ranks", a->host);
	/* The host is going down, or dtrun-kill: no next attempt here. */
	shut_stop(a, SHUT_BY_TERM, SIGTERM, shut_grace(a));
}

/* Drops the link without waiting for what is queued (it may never go), and stops all. */
void
shut_cut(struct agent *a)
{
	link_free(a->link);
	a->link = NULL;
	shut_stop(a, SHUT_BY_LINK, SIGTERM, shut_grace(a));
}

/* dtrun was silent past its heartbeat timeout (link_heartbeat). */
void
shut_silent(void *arg)
{
	struct agent	*a = arg;

	/* Partitioned, or dtrun stopped: nobody will stop us. */
	log_warn("%s: heard nothing from dtrun for %.3g s (its "
	    "--heartbeat-timeout): stopping its ranks", a->host,
	    a->beat_ms / 1000.0);
	shut_cut(a);
}

/*
 * The launcher is gone, or sent a frame the link cannot take (a bad
 * PACKED one, say): then say so while the link still writes. Either way
 * stop everything, then exit.
 */
void
shut_link_close(void *arg, int err, const char *why)
{
	struct agent	*a = arg;

	if (err == DT_ERR_PROTO && shut_linked(a)) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: protocol error: "
		    "%s (while %s)", a->host, why, agent_phase_name(a->phase));
		a->bad_frame = 1;
	}
	if (a->phase == AGP_RUNNING && a->live > 0)
		log_debug("link to launcher %s: stopping ranks", why);
	shut_stop(a, SHUT_BY_LINK, SIGTERM, shut_grace(a));
}
