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
 */
#include <sys/types.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "proto/agentproto.h"
#include "launcher/agents.h"
#include "launcher/attempt.h"
#include "launcher/cli.h"
#include "launcher/netplan.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/hostframe.h"
#include "launcher/job.h"
#include "common/link.h"
#include "common/log.h"
#include "launcher/output.h"
#include "launcher/plan.h"
#include "launcher/ranks.h"
#include "launcher/rootcause.h"
#include "launcher/status.h"
#include "launcher/topsrv.h"
#include "launcher/topview.h"
#include "launcher/sync.h"
#include "common/sys.h"
#include "common/wire.h"
#include "util/xmalloc.h"

/*
 * Where an attempt is. Each phase waits for every host's reply to what
 * the one before sent; job_advance moves on once it is in. A stop (a
 * failure, a signal, a timeout) can come in any phase and is the last.
 */
enum job_phase {
	JP_CONNECTING,		/* agents starting: every HELLO, and the sync */
	JP_CHECKING,		/* --check, --preflight: every CHECKED */
	JP_PORTS,		/* PORTS sent where needed: every PORTLIST */
	JP_PREPARING,		/* JOB, RANKs, PREPARE sent: every PREPARED */
	JP_RUNNING,		/* START sent: ranks run until they end */
	JP_STOPPING		/* STOP sent: every DONE (or link lost) */
};

struct job {
	struct event_base	*base;
	const struct opts	*o;
	const struct plan	*plan;
	const char		*id;
	struct job_scope	*scope;
	struct job_host		**hosts;	/* the plan's, in its order */
	struct attempt		 run;		/* what it set up around the agents */
	struct dt_wbuf		 wb;
	struct jobend		 je;		/* how it ends: exit status, summary */
	enum job_phase		 phase;
	size_t			 nat[HP_NPHASES]; /* hosts in each phase (host_to) */
	size_t			 nports_pending; /* PORTLIST replies owed */
	int			 started;	/* all PREPARED, START sent (and maybe
						   stopped since) */
	int			 start_sent;	/* START went with PREPARE (one host) */
	struct event		*ev_timeout;
	struct event		*ev_watchdog;
	int			 synced;	/* run.sync's copies are done */
	int			 checked;	/* run.chk's answers are in */
	struct job_attempt	*att;		/* this attempt, for restarts */
};

static void	job_advance(struct job *);
static void	job_host_silent(void *);

/*
 * Moves h on to phase to (phases only move on) and keeps the attempt's
 * count of hosts in each: the only place a host's phase changes.
 */
static void
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
static int
job_stopping(const struct job *j)
{
	return j->phase == JP_STOPPING;
}

/* How many ranks a stop now would stop (ranks.h). */
static size_t
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
static void
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
static void
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
	sync_stop(j->run.sync);
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
static void
job_fail(struct job *j, int code)
{
	jobend_exit(&j->je, code);
	if (!job_stopping(j))
		job_stop(j, SIGTERM, j->o->kill_grace);
}

/* EXIT: one of h's ranks ended; the first failure stops the job. */
static void
job_rank_exit(struct job_host *h, const struct ap_exit *x)
{
	struct job	*j = h->job;
	struct rootcause *rc = ranks_errfile_take(j->run.ranks, x->rank);
	pid_t		 pid = ranks_pid(j->run.ranks, x->rank);
	char		*tail = NULL;
	size_t		 tlen;

	ranks_ended(j->run.ranks, x->rank, job_stopping(j));
	output_rank_end(j->run.out, x->rank);
	if (x->how == AP_EXITED && x->code == 0)
		goto out;
	if (job_stopping(j) || stackask_pending(j->run.stk) == STK_THEN_START)
		goto out;	/* stopped by us, or after the first failure;
				   or ending, once the missing ranks' stacks
				   are in (their peers were told to abort) */
	tail = ranks_stderr_tail(j->run.ranks, x->rank, &tlen);
	jobend_exit(&j->je, jobend_rank(&j->je, j->o, x, h->ph->name,
	    j->plan->ranks[x->rank].local_rank, pid, &rc, tail, job_live(j)));
	job_stop(j, SIGTERM, j->o->kill_grace);
out:
	free(tail);
	rootcause_free(rc);
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

/* The check's callbacks (check.h). */
static void
job_check_done(void *arg, int code)
{
	struct job	*j = arg;

	j->checked = 1;
	if (job_stopping(j))
		return;
	if (code == 0 && !j->o->check) {
		job_advance(j);
		return;
	}
	if (code != 0)
		jobend_exit(&j->je, code);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

static void
job_check_quiet(void *arg)
{
	struct job	*j = arg;

	status_done(j->run.st);
}

/* The --sync-dst-dir copies are done (code 0) or one failed. */
static void
job_synced(void *arg, int code)
{
	struct job	*j = arg;

	j->synced = 1;
	if (code != 0)
		job_fail(j, code);
	job_advance(j);
}

/*
 * Every host has checked its commands: start all ranks everywhere (a
 * lone host's START went with its PREPARE: job_send_all).
 */
static void
job_start_all(struct job *j)
{
	size_t	h;

	j->started = 1;
	for (h = 0; h < j->plan->nhosts && !j->start_sent; h++) {
		ap_put_empty(&j->wb, AP_START);
		job_send(j->hosts[h]);
	}
	stackask_started(j->run.stk);
	straggle_started(j->run.strag);
	jobrdzv_started(&j->run.rdzv);
	/* The id once on a terminal, for dtrun top; each attempt at -v. */
	if (log_level > 0 || (log_level == 0 && j->att->n == 0 &&
	    isatty(STDERR_FILENO)))
		log_notice("started %zu rank%s on %zu host%s (job %s%s)",
		    j->plan->nranks, j->plan->nranks == 1 ? "" : "s",
		    j->plan->nnodes, j->plan->nnodes == 1 ? "" : "s", j->id,
		    j->att->top != NULL ? "; dtrun top shows it" : "");
}

/*
 * Moves the attempt on once its phase's wait is over: every HELLO (and the
 * sync), then every CHECKED (--check, --preflight), then every PORTLIST
 * where asked, then every PREPARED. Call it after anything that may end a
 * wait. What it sends can bring replies handled before it returns (ssh),
 * which call it again: each phase is entered before its messages go out,
 * so none is entered twice.
 */
static void
job_advance(struct job *j)
{
	for (;;) {
		switch (j->phase) {
		case JP_CONNECTING:
			if (!job_all_at(j, HP_CONNECTED) ||
			    (j->run.sync != NULL && !j->synced))
				return;
			j->phase = JP_CHECKING;
			if (j->run.chk != NULL)
				check_begin(j->run.chk, j->hosts);
			break;
		case JP_CHECKING:
			if (j->run.chk != NULL && !j->checked)
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

/* HELLO: h's agent is up (first, or again after AGAIN). */
static enum hf_rc
job_on_hello(struct job_host *h, struct ap_hello *hello)
{
	struct job	*j = h->job;
	struct link	*l;

	host_to(h, HP_CONNECTED);
	if (h->be->news != NULL)
		h->be->news(h, JN_HELLO);
	free(h->agent_host);
	h->agent_host = hello->hostname;
	h->agent_pid = (pid_t)hello->pid;
	h->at.free_port = hello->free_port;
	status_connected(j->run.st, h->ph->name, hello->hostname, hello->pid);
	if (hello->version != AP_VERSION) {
		log_error("%s: agent speaks protocol %u, dtrun %d: install the "
		    "same dtrun version there", h->ph->name, hello->version,
		    AP_VERSION);
		job_fail(j, EXIT_CONFIG);
		return HF_OK;
	}
	/*
	 * From now on it hears from us, and we expect to hear from it. The
	 * first beat and what job_advance sends h now (a lone host's whole
	 * job) go in one write.
	 */
	l = h->link;
	link_hold(l, 1);
	agents_beat(h, job_host_silent);
	job_advance(j);
	if (h->link == l)
		link_hold(l, 0);
	return HF_OK;
}

/* PORTLIST: the ports h's agent found for its workers (TF_CONFIG). */
static enum hf_rc
job_on_portlist(struct job_host *h, const int *ports, uint32_t n)
{
	struct job	*j = h->job;

	if (h->at.got_ports || n != (uint32_t)h->ph->nworkers)
		return HF_BAD;
	h->at.got_ports = 1;
	jobmsg_ports(&j->run.msg, &j->run.env, h, ports, n);
	if (j->nports_pending > 0)
		j->nports_pending--;
	job_advance(j);
	return HF_OK;
}

/* CHECKED: the check's (--check, --preflight). */
static enum hf_rc
job_on_checked(struct job_host *h, const uint8_t *p, size_t n)
{
	if (h->job->run.chk == NULL)
		return HF_BAD;
	return hostframe_rc(check_frame(h->job->run.chk, h, p, n));
}

/* IFACE: the interface h's agent chose for its ranks, or why none. */
static enum hf_rc
job_on_iface(struct job_host *h, const struct ap_iface *fi)
{
	if (env_host_chose(&h->job->run.env, h->index, fi) != 0)
		job_fail(h->job, EXIT_CONFIG);
	return HF_OK;
}

/* PREPARED: h checked its commands (job_advance). */
static enum hf_rc
job_on_prepared(struct job_host *h)
{
	host_to(h, HP_PREPARED);
	status_add(h->job->run.st, ST_READY);
	job_advance(h->job);
	return HF_OK;
}

/* STARTED: one of h's ranks runs. */
static enum hf_rc
job_on_started(struct job_host *h, uint32_t rank, uint32_t pid)
{
	struct job	*j = h->job;

	if (rank >= j->plan->nranks)
		return HF_BAD;
	if (ranks_started(j->run.ranks, rank, (pid_t)pid))
		status_add(j->run.st, ST_STARTED);
	return HF_OK;
}

/* OUTPUT: a chunk of what a rank wrote. */
static enum hf_rc
job_on_output(struct job_host *h, const struct ap_output *out)
{
	struct job	*j = h->job;

	if (out->rank >= j->plan->nranks)
		return HF_BAD;
	status_done(j->run.st);
	stackask_alive(j->run.stk);
	output_feed(j->run.out, out->rank, out->stream, out->data, out->len);
	straggle_output(j->run.strag, out->rank, (const char *)out->data,
	    out->len);
	/* A crash loop is told by the end of a failed rank's stderr. */
	if (out->stream == 2 && j->o->max_restarts > 0)
		ranks_stderr(j->run.ranks, out->rank, out->data, out->len);
	return HF_OK;
}

/* ERRFILE: what a rank's torch @record wrote; kept for its EXIT, next. */
static enum hf_rc
job_on_errfile(struct job_host *h, const struct ap_errfile *f)
{
	struct job		*j = h->job;
	struct rootcause	*rc;

	if (f->rank >= j->plan->nranks ||
	    j->plan->ranks[f->rank].host != h->index)
		return HF_BAD;
	rc = rootcause_new(f);
	if (j->att->output_dir != NULL &&
	    rootcause_keep(rc, j->att->output_dir, f->rank) != 0)
		log_warn("rank %u: cannot copy its error file into %s: %s",
		    f->rank, j->att->output_dir, strerror(errno));
	ranks_errfile(j->run.ranks, f->rank, rc);
	return HF_OK;
}

/* EXIT: a rank of h's ended (one of another host's is ignored). */
static enum hf_rc
job_on_exit(struct job_host *h, const struct ap_exit *x)
{
	struct job	*j = h->job;

	if (x->rank < j->plan->nranks && j->plan->ranks[x->rank].host == h->index)
		job_rank_exit(h, x);
	return HF_OK;
}

/* ERROR: h's agent could not go on; a host going down counts as lost. */
static enum hf_rc
job_on_error(struct job_host *h, const struct ap_error *e)
{
	struct job	*j = h->job;
	char		*lead = NULL;

	if (h->be->news != NULL)
		h->be->news(h, JN_ERROR);
	if (!job_stopping(j) || !j->started) {
		/* Its lines (a setup's stderr) each start with its name. */
		if (h->agent_host != NULL)
			xasprintf(&lead, "%s: ", h->agent_host);
		log_error_lines(e->msg, lead);
		free(lead);
	}
	/* 143: the agent got SIGTERM (a host going down); 255: its keeper died. */
	if (e->rank == AP_NORANK && (e->code == EXIT_AGENT_TERM ||
	    e->code == EXIT_LOST)) {
		h->at.lost = 1;
		jobend_cause(&j->je, JC_LOST);
		if (j->att->what[0] == '\0')
			snprintf(j->att->what, sizeof(j->att->what), "%s",
			    e->msg);
	}
	/* 125: its rendezvous relay ran out of descriptors (said above). */
	if (e->rank == AP_NORANK && e->code == EXIT_RDZV)
		jobend_begin(&j->je, END_RDZV);
	job_fail(j, e->code);
	return HF_OK;
}

/* STACK: a rank's stack for the report, or the end of h's. */
static enum hf_rc
job_on_stack(struct job_host *h, const struct ap_stack *k)
{
	stackask_stack(h->job->run.stk, (size_t)h->index, k);
	return HF_OK;
}

/* STACKASK: h's agent got SIGQUIT (dtrun-kill --stacks). */
static enum hf_rc
job_on_stackask(struct job_host *h)
{
	stackask_agent(h->job->run.stk);
	return HF_OK;
}

/* DONE: h's part is over; its agent waits for AGAIN. */
static enum hf_rc
job_on_done(struct job_host *h)
{
	uint64_t	got, frames;

	link_counts(h->link, &got, &frames);
	log_debug("%s: done; its frames, %llu bytes so far, came in %llu "
	    "bytes%s", h->ph->name, (unsigned long long)frames,
	    (unsigned long long)got, got < frames ? " (packed)" : "");
	h->idle = !h->at.lost;
	job_host_done(h);
	return HF_OK;
}

/* RDZV: a rank's rendezvous bytes, through h's agent, to the server. */
static enum hf_rc
job_on_rdzv(struct job_host *h, uint32_t chan, const uint8_t *p, size_t n)
{
	jobrdzv_chan_input(&h->job->run.rdzv, h, chan, p, n);
	return HF_OK;
}

/* PROGRESS: h's ranks' steps (the straggler watch) and usage (dtrun top). */
static enum hf_rc
job_on_progress(struct job_host *h, const struct ap_progress *v, uint32_t n)
{
	struct job	*j = h->job;
	uint64_t	 now = dt_clock_ms(CLOCK_MONOTONIC);
	uint32_t	 i;

	for (i = 0; i < n; i++) {
		/* Only the ranks placed on h: a step is no way to touch others. */
		if (v[i].rank >= j->plan->nranks ||
		    j->plan->ranks[v[i].rank].host != h->index)
			return HF_BAD;
		if (v[i].flags & AP_PROG_STEP)
			straggle_step(j->run.strag, v[i].rank, v[i].step,
			    v[i].age_ms);
		if (v[i].flags & AP_PROG_USAGE)
			topview_usage(j->run.top, v[i].rank, v[i].cpu_ms,
			    v[i].rss_kb, now);
	}
	return HF_OK;
}

static const struct hostframe_ops job_frame_ops = {
	job_on_hello, job_on_portlist, job_on_checked, job_on_iface,
	job_on_prepared, job_on_started, job_on_output, job_on_errfile,
	job_on_exit, job_on_error, job_on_stack, job_on_stackask, job_on_done,
	job_on_rdzv, job_on_progress
};

void
job_host_frame(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	struct dt_err	e;
	int		rc;

	/* Between attempts too: the table says a kept agent only beats. */
	if ((rc = hostframe_take(&job_frame_ops, h, type, p, n, &e)) == 0)
		return;
	if (rc == DT_ERR_NOMEM) {
		log_error("%s: %s", h->name, e.msg);
		exit(EXIT_INTERNAL);
	}
	log_error("%s: protocol error from its agent: %s: cutting it off",
	    h->name, e.msg);
	h->be->kill(h);
	job_host_closed(h, DT_ERR_PROTO, "protocol error");
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
	struct status_end *end;
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
	stackask_host_gone(j->run.stk, (size_t)h->index);
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
static void
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

/* Output is backing up: stop (1) or resume (0) reading every agent. */
static void
job_pressure(void *arg, int on)
{
	agents_pause(((struct job *)arg)->scope, on);
}

/* dtrun's stdout (1) or stderr (2) lost its reader (jobend_pipe). */
static void
job_output_closed(void *arg, int stream)
{
	struct job	*j = arg;
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

	if (!sync_reaped(j->run.sync, pid, status))
		agents_reaped(j->scope, pid, status);
}

static void
job_quit(void *arg)
{
	struct job	*j = arg;

	stackask_ask(j->run.stk, "got SIGQUIT", STK_THEN_NONE, NULL);
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
 * did within --start-timeout: show the stacks of those that did not
 * (where they are stuck), then stop.
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
	stackask_ask(j->run.stk, "start timeout", STK_THEN_START, missing);
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

/* ARGSUSED */
static void
job_rdzv_join(void *arg, int rank)
{
	struct job	*j = arg;

	status_add(j->run.st, ST_JOINED);
}

/* ARGSUSED */
static void
job_rdzv_alive(void *arg, int rank)
{
	struct job	*j = arg;

	stackask_alive(j->run.stk);
}

/* The stack reports' callbacks (stackask.h). */
static int
job_stk_stopping(void *arg)
{
	return job_stopping(arg);
}

/* A report for a hang or a start timeout is in: stop the job. */
static void
job_stk_then(void *arg, enum stk_then then)
{
	struct job	*j = arg;

	if (job_stopping(j) || (then == STK_THEN_HANG && j->o->on_hang_report))
		return;
	if (then == STK_THEN_HANG)
		jobend_hang(&j->je, j->o->hang_timeout);
	/* STK_THEN_START: its cause and 125 were set when it timed out. */
	job_stop(j, SIGTERM, j->o->kill_grace);
}

/* --on-straggler stop: who was too slow. */
static void
job_straggler_stop(void *arg, const char *who)
{
	struct job	*j = arg;

	if (job_stopping(j))
		return;
	jobend_straggler(&j->je, who);
	job_stop(j, SIGTERM, j->o->kill_grace);
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
		a->lost = xreallocarray(a->lost, a->nlost + 1, sizeof(char *));
		a->lost[a->nlost++] = xstrdup(j->hosts[h]->ph->name);
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

/* Each module's calls back into the core (attempt.h). */
static const struct attempt_cbs job_cbs = {
	.sig = { job_reaped, job_quit, job_forward, job_signaled, NULL },
	.stk = { job_stk_stopping, job_stk_then, NULL },
	.strag = { job_straggler_stop, NULL },
	.rdzv = { job_rdzv_timeout, job_rdzv_error, job_rdzv_join,
	    job_rdzv_alive, NULL },
	.chk = { job_check_done, job_check_quiet, NULL },
	.synced = job_synced,
	.pressure = job_pressure,
	.closed = job_output_closed,
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
	cb.sig.arg = cb.stk.arg = cb.strag.arg = cb.rdzv.arg = cb.chk.arg =
	    cb.arg = &j;
	if ((j.je.exit_code = attempt_open(&j.run, j.base, o, p, j.hosts, id,
	    a, &cb)) == 0) {
		topsrv_attach(a->top, j.run.top);
		job_hosts_start(&j);
		if (a->timeout > 0)
			timer_arm(j.ev_timeout, a->timeout);
		if (j.nat[HP_DONE] < p->nhosts)
			event_base_dispatch(j.base);
	}
	topsrv_attach(a->top, NULL);
	job_finish(&j);
	return j.je.exit_code;
}
