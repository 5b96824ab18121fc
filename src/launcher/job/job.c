/*
 * job.c -- the job's core: start every host's agent, hand each its ranks,
 * start them all only once every host has checked its commands, forward
 * output, and stop everything at the first failure, signal or timeout.
 *
 * Each host moves through its phases (phase.h: reaching, connected,
 * prepared, done) by host_to alone, which keeps the counts the attempt's
 * own phases (enum job_phase) wait on; which frame a host may send in
 * which phase is the protocol's table, asked before any handler runs.
 *
 * The first cause wins the exit status: a failing rank's code (128+N for
 * signal N), 128+N when dtrun itself got signal N, 124 for --timeout, 2 for
 * a configuration error found on a host, 255 for a lost agent (its link
 * broke, or it went silent past --heartbeat-timeout), 141 when dtrun's
 * stdout lost its reader (as SIGPIPE ends a pipeline's writer), 123
 * when --hang-timeout found the job hung, 125 when ranks never joined the
 * rendezvous within --start-timeout (their stacks shown first).
 *
 * Room launcher/job/: the core: every host's agent and phase, the frames
 * they send (jobframe.c), fail-fast, the job's end and its root cause,
 * restarts. It includes only cli/ and plan/: the features above it live on
 * its hooks (hooks.h), and t0041 keeps it so.
 */

#include <string.h>

#include <event2/event.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "common/exitcodes.h"
#include "launcher/job/job.h"
#include "common/log.h"
#include "launcher/job/ranks.h"
#include "common/sys.h"
#include "util/strv.h"
#include "util/xmalloc.h"

#include "launcher/job/jobint.h"

/*
 * Moves h on to phase to (phases only move on) and keeps the attempt's
 * count of hosts in each: the only place a host's phase changes.
 */
void
host_to(struct job_host *h, enum host_phase to)
{
	struct job	*j = h->job;

	if (to <= h->at.phase)
		return;
	j->nat[h->at.phase]--;
	j->nat[to]++;
	h->at.phase = to;
	if (to == HP_CONNECTED)
		h->at.hello = 1;
}

/* True when no host is short of phase ph (a done host is past them all). */
static int
job_all_at(const struct job *j, enum host_phase ph)
{
	int	p;

	for (p = 0; p < (int)ph; p++)
		if (j->nat[p] > 0)
			return 0;
	return 1;
}

/* True once STOP went out: nothing new starts. */
int
job_stopping(const struct job *j)
{
	return j->phase == JP_STOPPING;
}

/* How many ranks a stop now would stop (ranks.h). */
size_t
job_live(const struct job *j)
{
	return ranks_live(j->run.ranks, j->started);
}

/* Queues what the encoders left in j->wb to h's agent (agents_send). */
static void
job_send(struct job_host *h)
{
	agents_send(h, &h->job->wb);
}

/* h is done for this attempt; the event loop ends once every host is. */
void
job_host_done(struct job_host *h)
{
	struct job	*j = h->job;

	host_to(h, HP_DONE);
	jobrdzv_host_gone(&j->run.rdzv, h);
	if (j->nat[HP_DONE] == j->plan->nhosts)
		event_base_loopbreak(j->base);
}

/* ARGSUSED */
static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;
	size_t		 h;

	for (h = 0; h < j->plan->nhosts; h++) {
		if (host_done(j->hosts[h]))
			continue;
		log_error("agent on %s did not finish stopping its ranks: "
		    "cutting it off", j->hosts[h]->ph->name);
		j->hosts[h]->be->kill(j->hosts[h]);
		job_host_done(j->hosts[h]);
	}
	jobend_exit(&j->je, EXIT_LOST);
}

/* Arms ev to fire in secs seconds. */
static void
timer_arm(struct event *ev, double secs)
{
	struct timeval	tv = dt_timeval(secs);

	event_add(ev, &tv);
}

/* Tells every agent to stop its ranks: sig now, SIGKILL after the grace. */
void
job_stop(struct job *j, int sig, double grace)
{
	struct ap_stop	 st;
	struct job_host	*h;
	size_t		 i;

	st.signo = sig;
	st.grace_ms = sig == SIGKILL ? 0 : (uint64_t)(grace * 1000);
	/* Workers blocked in a rendezvous wait hear of it, not hang. */
	if (!job_stopping(j))
		jobrdzv_abort(&j->run.rdzv, "the job is stopping");
	j->phase = JP_STOPPING;
	HOOKS_CALL(&j->run.hooks, stopping);
	for (i = 0; i < j->plan->nhosts; i++) {
		h = j->hosts[i];
		if (host_done(h))
			continue;
		if (!host_hello(h) && h->be->unreached != NULL &&
		    h->be->unreached(h)) {
			job_host_closed(h, DT_ERR_ABORTED, "stopped before its "
			    "agent connected");
			continue;
		}
		ap_put_stop(&j->wb, &st);
		job_send(h);
	}
	/* Agents kill after the grace; this only catches an agent that hangs. */
	if (!event_pending(j->ev_watchdog, EV_TIMEOUT, NULL) || sig == SIGKILL)
		timer_arm(j->ev_watchdog, (double)(time_t)grace + 5);
}

/* Stops the job with SIGTERM and the grace, unless it is stopping already. */
void
job_fail(struct job *j, int code)
{
	jobend_exit(&j->je, code);
	if (!job_stopping(j))
		job_stop(j, SIGTERM, j->o->kill_grace);
}

/* Every agent said HELLO (and sent ports if asked): hand each its part of the job. */
static void
job_send_all(struct job *j)
{
	size_t	h;
	int	rc;

	/* MASTER_PORT must be free on rank 0's host: its agent found one. */
	if (j->hosts[0]->at.free_port != 0 &&
	    j->hosts[0]->at.free_port != j->att->prev_port)
		j->run.env.master_port = j->hosts[0]->at.free_port;
	for (h = 0; h < j->plan->nhosts && !job_stopping(j); h++) {
		if ((rc = jobmsg_put(&j->run.msg, j->hosts[h], &j->wb)) != 0) {
			job_fail(j, rc);
			continue;
		}
		/*
		 * One host: no other has to be prepared first, so START goes
		 * with PREPARE, in the same write, and the agent starts once
		 * it has sent PREPARED, a round trip sooner. It starts
		 * nothing if it sends ERROR instead, or STOP comes first.
		 */
		if (j->plan->nhosts == 1) {
			ap_put_empty(&j->wb, AP_START);
			j->start_sent = 1;
		}
		job_send(j->hosts[h]);
	}
}

/* What a feature may ask (hooks.h). */
int
job_ctl_stopping(const struct job *j)
{
	return job_stopping(j);
}

void
job_ctl_fail(struct job *j, int code)
{
	job_fail(j, code);
}

void
job_ctl_stop(struct job *j, int code)
{
	if (job_stopping(j))
		return;
	if (code != 0)
		jobend_exit(&j->je, code);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

struct jobend *
job_ctl_end(struct job *j)
{
	return &j->je;
}

void
job_ctl_hold(struct job *j, enum job_gate g)
{
	j->held[g]++;
}

void
job_ctl_release(struct job *j, enum job_gate g)
{
	if (j->held[g] > 0)
		j->held[g]--;
	job_advance(j);
}

void
job_ctl_quiet(struct job *j)
{
	HOOKS_CALL(&j->run.hooks, quiet);
}

void *
job_feature_state(const struct job *j, const struct job_feature *f)
{
	return hooks_state(&j->run.hooks, f);
}

/*
 * Every host has checked its commands: start all ranks everywhere (a
 * lone host's START went with its PREPARE: job_send_all).
 */
static void
job_start_all(struct job *j)
{
	char	note[256];
	size_t	h;

	j->started = 1;
	for (h = 0; h < j->plan->nhosts && !j->start_sent; h++) {
		ap_put_empty(&j->wb, AP_START);
		job_send(j->hosts[h]);
	}
	HOOKS_CALL(&j->run.hooks, started);
	jobrdzv_started(&j->run.rdzv);
	/* The id once on a terminal, for dtrun top; each attempt at -v. */
	if (log_level > 0 || (log_level == 0 && j->att->n == 0 &&
	    isatty(STDERR_FILENO)))
		log_notice("started %zu rank%s on %zu host%s (job %s%s)",
		    j->plan->nranks, j->plan->nranks == 1 ? "" : "s",
		    j->plan->nnodes, j->plan->nnodes == 1 ? "" : "s", j->id,
		    hooks_note(&j->run.hooks, note, sizeof(note)));
}

/*
 * Moves the attempt on once its phase's wait is over: every HELLO (and
 * what holds JG_CONNECT: the sync), then what holds JG_CHECK (the check's
 * answers), then every PORTLIST where asked, then every PREPARED. Call it after anything that may end a
 * wait. What it sends can bring replies handled before it returns (ssh),
 * which call it again: each phase is entered before its messages go out,
 * so none is entered twice.
 */
void
job_advance(struct job *j)
{
	for (;;) {
		switch (j->phase) {
		case JP_CONNECTING:
			if (!job_all_at(j, HP_CONNECTED) ||
			    j->held[JG_CONNECT] > 0)
				return;
			j->phase = JP_CHECKING;
			HOOKS_CALL(&j->run.hooks, all_connected);
			break;
		case JP_CHECKING:
			if (j->held[JG_CHECK] > 0)
				return;
			j->phase = JP_PORTS;
			jobmsg_ask_ports(&j->run.msg, j->hosts, &j->wb,
			    &j->nports_pending);
			break;
		case JP_PORTS:
			if (j->nports_pending > 0)
				return;
			j->phase = JP_PREPARING;
			job_send_all(j);
			break;
		case JP_PREPARING:
			if (!job_all_at(j, HP_PREPARED))
				return;
			j->phase = JP_RUNNING;
			job_start_all(j);
			return;
		case JP_RUNNING:
		case JP_STOPPING:
			return;
		}
	}
}

/*
 * h's agent died without cleaning up (SIGKILL, OOM): its ranks are gone or
 * going. Its keeper (src/agent/keeper.h), the ranks' nearest subreaper
 * then, kills whatever they left; we signal nothing here, since a dead
 * rank's group id may already belong to another process. Count them ended;
 * returns how many were running.
 */
static size_t
job_ranks_orphaned(struct job_host *h)
{
	struct job	*j = h->job;
	size_t		 n = 0;
	int		 i, r;

	for (i = 0; i < h->ph->nranks; i++) {
		r = h->ph->ranks[i];
		if (ranks_running(j->run.ranks, r)) {
			ranks_ended(j->run.ranks, r, job_stopping(j));
			n++;
		}
	}
	return n;
}

void
job_host_closed(struct job_host *h, int err, const char *why)
{
	struct job	*j = h->job;
	struct summary *end;
	size_t		 lost;

	h->down = 1;
	h->idle = 0;
	/*
	 * A spare's agent (a host with no rank: done once started) is checked
	 * as the others are: its loss costs the job nothing now, but the pool
	 * is smaller, and a restart must not count on it.
	 */
	if (j != NULL && host_done(h) && h->ph->nranks == 0 &&
	    err != DT_ERR_ABORTED && !job_stopping(j) && !h->at.lost) {
		h->at.lost = 1;
		log_warn("spare %s: lost its agent (%s): a restart will not "
		    "count on it", h->ph->name, why);
	}
	if (j == NULL || host_done(h))
		return;
	job_host_done(h);
	if ((end = jobend_begin(&j->je, END_LOST)) != NULL) {
		end->host = h->ph->name;
		end->reached = host_hello(h);
	}
	if (err != DT_ERR_ABORTED && (host_hello(h) || !job_stopping(j)))
		h->at.lost = 1;
	jobend_cause(&j->je, JC_LOST);
	if (err == DT_ERR_ABORTED || (!host_hello(h) && job_stopping(j)))
		;		/* the job was already stopping: no news */
	else if (!host_hello(h))	/* never got as far as its agent */
		log_error("%s: %s", h->ph->name, why);
	else if (!job_stopping(j) || j->started)
		log_error("lost the agent on %s (%s)%s", h->ph->name, why,
		    job_stopping(j) ? "" : ": stopping the job");
	HOOKS_CALL(&j->run.hooks, host_lost, (size_t)h->index);
	lost = job_ranks_orphaned(h);
	if (end != NULL)
		end->rank = (int)lost;
	job_fail(j, EXIT_LOST);
}

/*
 * h's agent was silent for --heartbeat-timeout (its link's heartbeats):
 * the host is down or cut off. In an attempt it is lost; between attempts
 * it is cut off, and the next attempt connects again.
 */
void
job_host_silent(void *arg)
{
	struct job_host	*h = arg;
	char		 why[128];

	if (h->job == NULL)
		log_warn("%s: its agent went silent between attempts: "
		    "connecting again", h->name);
	snprintf(why, sizeof(why), "heard nothing from it for %g s "
	    "(--heartbeat-timeout): host down or cut off",
	    h->o->heartbeat_timeout);
	h->be->kill(h);
	job_host_closed(h, DT_ERR_TIMEOUT, why);
}

void
job_ctl_pause(struct job *j, int on)
{
	agents_pause(j->scope, on);
}

/* The reader's loss is fatal to the job only on stdout (jobend_pipe). */
void
job_ctl_stream_lost(struct job *j, int stream)
{
	int		 over = j->nat[HP_DONE] == j->plan->nhosts;

	/* Messages to a closed stderr are lost anyway. */
	if (stream == 1 && jobend_pipe(&j->je, j->o->output_dir,
	    ranks_nrunning(j->run.ranks), over) != 0 && !over)
		job_stop(j, SIGTERM, j->o->kill_grace);
}

/* The signals' callbacks (signals.h). A child exited: whose is it? */
static void
job_reaped(void *arg, pid_t pid, int status)
{
	struct job	*j = arg;

	if (!hooks_reaped(&j->run.hooks, pid, status))
		agents_reaped(j->scope, pid, status);
}

static void
job_quit(void *arg)
{
	struct job	*j = arg;

	HOOKS_CALL(&j->run.hooks, quit);
}

/* Passes sig to every rank on every host (--forward-signals); the job goes on. */
static void
job_forward(void *arg, int sig)
{
	struct job	*j = arg;
	size_t		 h, n = job_live(j);

	if (job_stopping(j) || n == 0 || !j->started) {
		log_warn("got SIG%s %s: not passed on", sigabbrev_np(sig),
		    job_stopping(j) ? "while stopping" : "before any rank started");
		return;
	}
	log_notice("got SIG%s: passing it to %zu rank%s", sigabbrev_np(sig),
	    n, n == 1 ? "" : "s");
	for (h = 0; h < j->plan->nhosts; h++) {
		ap_put_signal(&j->wb, sig);
		job_send(j->hosts[h]);
	}
}

/* A stop signal: the first stops the job, the second kills every rank. */
static void
job_signaled(void *arg, int sig)
{
	struct job	*j = arg;

	sig = jobend_signal(&j->je, sig, job_live(j), job_stopping(j));
	job_stop(j, sig, sig == SIGKILL ? 0 : j->o->kill_grace);
}

/* ARGSUSED */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;

	if (!job_stopping(j))
		job_fail(j, jobend_timeout(&j->je, j->o->timeout, job_live(j)));
}

/*
 * The rendezvous' callbacks (jobrdzv.h). Some rank joined, and not all
 * did within --start-timeout: a feature may show the stacks of those that
 * did not (where they are stuck) and stop the job then; else it stops now.
 */
static void
job_rdzv_timeout(void *arg, const char *msg)
{
	struct job	*j = arg;
	uint8_t		*missing;
	int		 n;

	if (job_stopping(j))
		return;
	missing = jobrdzv_missing(&j->run.rdzv, j->plan->nranks, &n);
	jobend_start(&j->je, msg, j->o->start_timeout, n);
	if (hooks_start_timeout(&j->run.hooks, missing))
		j->start_report = 1;
	else
		job_stop(j, SIGTERM, j->o->kill_grace);
}

/* The rendezvous cannot take more ranks (out of descriptors): stop now. */
static void
job_rdzv_error(void *arg, const char *msg)
{
	struct job	*j = arg;

	if (job_stopping(j))
		return;
	job_fail(j, jobend_rdzv(&j->je, msg));
}

static void
job_rdzv_join(void *arg, int rank)
{
	struct job	*j = arg;

	HOOKS_CALL(&j->run.hooks, rank_joined, (size_t)rank);
}

static void
job_rdzv_alive(void *arg, int rank)
{
	struct job	*j = arg;

	HOOKS_CALL(&j->run.hooks, rank_alive, (size_t)rank);
}

/* The attempt's results beyond its end's: the hosts lost, the port used. */
static void
job_attempt_result(struct job *j)
{
	struct job_attempt	*a = j->att;
	size_t			 h;

	a->master_port = j->run.env.master_port;
	for (h = 0; h < j->plan->nhosts; h++) {
		if (!j->hosts[h]->at.lost)
			continue;
		strs_push(&a->lost, &a->nlost,
		    xstrdup(j->hosts[h]->ph->name));
	}
}

/*
 * Reaches every host's agent: a kept one is asked to start over (AGAIN,
 * it answers HELLO), a new one is started by the backend. If one cannot
 * be, the job stops before anything ran.
 */
static void
job_hosts_start(struct job *j)
{
	struct job_host	*h;
	struct dt_err	 e;
	char		 msg[1024];
	size_t		 i;

	for (i = 0; i < j->plan->nhosts && !job_stopping(j); i++) {
		h = j->hosts[i];
		if (agents_reach(h, &e) == 0)
			continue;
		log_error("%s: %s", h->ph->name, dt_err_str(&e, msg,
		    sizeof(msg)));
		/* Nothing ran yet: the started agents get STOP, reply DONE. */
		job_host_done(h);
		job_fail(j, EXIT_CONFIG);
	}
	for (; i < j->plan->nhosts; i++)
		job_host_done(j->hosts[i]);
}

/* The attempt is over: its summary and results, then free what it made. */
static void
job_finish(struct job *j)
{
	size_t	started, stopped;

	/*
	 * Hold the stop signals for the restart loop; one caught just now
	 * is handled here, so it still counts for this attempt.
	 */
	signals_hold(1);
	event_base_loop(j->base, EVLOOP_NONBLOCK);
	attempt_drain(&j->run);
	ranks_counts(j->run.ranks, &started, &stopped);
	jobend_report(&j->je, j->att, started, stopped);
	job_attempt_result(j);
	agents_detach(j->scope);
	attempt_close(&j->run);
	dt_wbuf_free(&j->wb);
	event_free(j->ev_timeout);
	event_free(j->ev_watchdog);
}

/* The signals' and the rendezvous' calls back into the core (attempt.h). */
static const struct attempt_cbs job_cbs = {
	.sig = { job_reaped, job_quit, job_forward, job_signaled, NULL },
	.rdzv = { job_rdzv_timeout, job_rdzv_error, job_rdzv_join,
	    job_rdzv_alive, NULL },
};

int
job_run(struct job_scope *sc, const struct opts *o, const struct plan *p,
    const char *id, struct job_attempt *a)
{
	struct attempt_cbs	cb = job_cbs;
	struct job		j;

	memset(&j, 0, sizeof(j));
	j.o = o;
	j.plan = p;
	j.id = id;
	j.att = a;
	j.scope = sc;
	j.base = agents_base(sc);
	j.nat[HP_REACHING] = p->nhosts;
	j.ev_timeout = evtimer_new(j.base, timeout_cb, &j);
	j.ev_watchdog = evtimer_new(j.base, watchdog_cb, &j);
	j.hosts = agents_attach(sc, &j, p);
	cb.sig.arg = cb.rdzv.arg = &j;
	if ((j.je.exit_code = attempt_open(&j.run, j.base, o, p, j.hosts, id,
	    a, &j, &cb)) == 0) {
		job_hosts_start(&j);
		if (a->timeout > 0)
			timer_arm(j.ev_timeout, a->timeout);
		if (j.nat[HP_DONE] < p->nhosts)
			event_base_dispatch(j.base);
	}
	job_finish(&j);
	return j.je.exit_code;
}
