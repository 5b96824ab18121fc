/*
 * agent.c -- the per-host agent.
 *
 * It receives its host's share of the job from the launcher, checks every
 * command can run before starting any, starts each rank in its own process
 * group, and sends back output chunks and exit statuses. A rank is reported
 * finished only once it is reaped and what it wrote is read; output from
 * children that outlive it keeps flowing until the job's end, when the
 * agent (a child subreaper) kills whatever is left. If the link to the
 * launcher breaks, or goes silent past the launcher's heartbeat timeout,
 * it stops everything itself.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>


#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "common/dtlimits.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/link.h"
#include "common/log.h"
#include "proto/agentproto.h"
#include "common/envfile.h"
#include "common/environ.h"
#include "agent/errfile.h"
#include "agent/hostcheck.h"
#include "agent/keeper.h"
#include "common/iface.h"
#include "proto/phase.h"
#include "common/wire.h"
#include "agent/record.h"
#include "common/port.h"
#include "agent/procs.h"
#include "agent/progress.h"
#include "agent/rdzvrelay.h"
#include "agent/setup.h"
#include "agent/stacks.h"
#include "common/sys.h"

extern char **environ;

struct agent;
struct rank;

/* One of a rank's output pipes. */
struct src {
	struct agent	*a;
	struct rank	*r;
	int		 fd;		/* -1 once at EOF */
	uint8_t		 stream;
	struct event	*ev;
};

struct rank {
	uint32_t	 rank;
	uint32_t	 local_rank;
	char		**argv;
	char		**env;		/* merged for execve (environ.h) */
	char		*path;		/* resolved argv[0] */
	pid_t		 pid;		/* 0 until started */
	int		 reaped;
	struct src	 out, err;
};

struct agent {
	struct event_base *base;
	struct link	*link;
	char		 host[256];
	enum agent_phase phase;		/* where the conversation is: phase.h */
	struct ap_job	 job;		/* from AGP_JOB to AGP_RUNNING */
	struct ap_reasm	 reasm;		/* a JOB or RANK sent in parts */
	struct ap_rank	*msgs;		/* RANK messages as received */
	struct rank	*ranks;
	size_t		 nranks;
	size_t		 cap;		/* room in msgs and ranks */
	int		 ports_seen;	/* PORTS is taken once per attempt */
	int		 holding;	/* agent_flush_wb keeps a->wb for now */
	int		 start_asked;	/* START came while preparing (one
					   host): start once PREPARED is sent */
	struct dt_environ base_env;	/* environ + setup's + the job's env */
	struct setup	*setup;		/* the job's --setup, while it runs */
	char		**setup_env;	/* "K=V" it printed */
	size_t		 nsetup_env;
	char		*if_env[3];	/* "NCCL_SOCKET_IFNAME=eth1"...: our choice
					   (one per AP_IF_* bit) */
	size_t		 nif_env;
	int		 stopping;
	int		 link_down;
	int		 finishing;
	int		 bad_frame;	/* dtrun sent one: exit 70, not 0 */
	int		 exiting;	/* SIGTERM: exit after DONE, not wait */
	size_t		 live;		/* started, not yet reaped */
	int		 pipes_paused;
	int		 devnull;
	struct event	*ev_chld, *ev_term, *kill_timer, *recheck;
	struct event	*flush_ev;	/* sends what a->wb holds, from the loop */
	struct event	*ev_quit;
	struct stacks	*stk;		/* STACKS captures */
	struct hostcheck *chk;		/* dtrun --check's steps */
	int		 killed;	/* SIGKILL sent to everything */
	struct dt_wbuf	 wb;
	struct record	*rec;
	struct errfiles	*errf;		/* the ranks' error files (JOB's errfile) */
	struct rdzvrelay *relay;	/* the ranks' rendezvous, if we carry it */
	struct progress	*progress;	/* the steps ranks report, if dtrun
					   asked (DTRUN_PROGRESS=agent) */
	pid_t		 keeper;	/* our parent, see keeper.h; 0: none */
	uint64_t	 beat_ms;	/* the launcher's heartbeat timeout; 0: none yet */
	struct event	*keep_ev;	/* our beats to the keeper (keeper.h) */
};

static void	agent_check(struct agent *);
static int	agent_relay(struct agent *);
static int	agent_progress(struct agent *);
static void	agent_to(struct agent *, enum agent_phase);
static uint64_t	agent_grace(const struct agent *);
static int	agent_childless(void);
static void	agent_done(struct agent *);
static void	agent_resolve(struct agent *);
static void	agent_start(struct agent *);
static void	src_read(struct src *, int);

/*
 * Moves the conversation on. The phase is all the agent knows of where it
 * is: phase.c's table decides from it which frame comes next.
 */
static void
agent_to(struct agent *a, enum agent_phase ph)
{
	log_debug("%s: %s, then %s", a->host, agent_phase_name(a->phase),
	    agent_phase_name(ph));
	a->phase = ph;
}

/* The job's kill grace once its JOB is in; before, nothing waits. */
static uint64_t
agent_grace(const struct agent *a)
{
	if (a->phase < AGP_JOB || a->phase > AGP_RUNNING)
		return 0;
	return a->job.kill_grace_ms;
}

/* Sends what the encoders left in a->wb, then pauses rank pipes if the link is backed up. */
static void
agent_flush_wb(struct agent *a)
{
	size_t	i;

	if (a->holding)
		return;		/* agent_done sends it all with DONE */
	if (a->wb.len > 0 && !a->link_down)
		link_send(a->link, a->wb.p, a->wb.len);
	dt_wbuf_reset(&a->wb);
	if (a->link_down || a->pipes_paused || link_queued(a->link) <= DT_LINK_HIGH)
		return;
	a->pipes_paused = 1;
	for (i = 0; i < a->nranks; i++) {
		if (a->ranks[i].out.ev != NULL)
			event_del(a->ranks[i].out.ev);
		if (a->ranks[i].err.ev != NULL)
			event_del(a->ranks[i].err.ev);
	}
}

/* The link drained: read the rank pipes again. */
static void
agent_drain_cb(void *arg)
{
	struct agent	*a = arg;
	size_t		 i;

	if (!a->pipes_paused)
		return;
	a->pipes_paused = 0;
	for (i = 0; i < a->nranks; i++) {
		if (a->ranks[i].out.ev != NULL)
			event_add(a->ranks[i].out.ev, NULL);
		if (a->ranks[i].err.ev != NULL)
			event_add(a->ranks[i].err.ev, NULL);
	}
}

/* Sends an ERROR about rank (or AP_NORANK) with the status the launcher should exit with. */
static void
agent_error(struct agent *a, uint32_t rank, uint32_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
agent_error(struct agent *a, uint32_t rank, uint32_t code, const char *fmt, ...)
{
	struct ap_error	e;
	char		msg[DT_MSG_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	e.rank = rank;
	e.code = code;
	e.msg = msg;
	ap_put_error(&a->wb, &e);
	/* At once, with whatever waits before it: a cut may follow. */
	a->holding = 0;
	agent_flush_wb(a);
}

/* Ends the event loop; agent_run then flushes and exits. */
static void
agent_finish(struct agent *a)
{
	if (a->finishing)
		return;
	a->finishing = 1;
	event_base_loopbreak(a->base);
}

/* Closes one output pipe at EOF. */
static void
src_close(struct src *s)
{
	if (s->fd < 0)
		return;
	if (s->ev != NULL) {
		event_free(s->ev);
		s->ev = NULL;
	}
	close(s->fd);
	s->fd = -1;
}

/* Reads one chunk (drain = 0) or all that is there (drain = 1) from a pipe, and forwards it. */
static void
src_read(struct src *s, int drain)
{
	struct agent	*a = s->a;
	uint8_t		*p;
	size_t		 st;
	ssize_t		 n;

	while (s->fd >= 0) {
		p = ap_output_begin(&a->wb, s->r->rank, s->stream, AP_CHUNK,
		    &st);
		if (p == NULL) {
			dt_wbuf_reset(&a->wb);
			return;
		}
		n = read(s->fd, p, AP_CHUNK);
		if (n <= 0) {
			a->wb.len = st;
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				return;
			src_close(s);
			return;
		}
		ap_output_end(&a->wb, st, (size_t)n);
		agent_flush_wb(a);
		if (!drain)
			return;
	}
}

/* ARGSUSED */
static void
src_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct src	*s = arg;

	src_read(s, 0);
	if (s->fd < 0)
		agent_check(s->a);
}

/* Signals every rank's process group that is still ours, and all descendants. */
static void
agent_signal_all(struct agent *a, int sig, int descendants)
{
	size_t	i;

	for (i = 0; i < a->nranks; i++)
		if (a->ranks[i].pid > 0 && !a->ranks[i].reaped)
			kill(-a->ranks[i].pid, sig);
	if (descendants)
		spawn_kill_descendants(sig, NULL);
}

/* ARGSUSED */
static void
recheck_cb(evutil_socket_t fd, short what, void *arg)
{
	agent_check(arg);
}

/* ARGSUSED */
static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	agent_flush_wb(arg);
}

/* ARGSUSED */
static void
kill_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;
	struct timeval	 tv = { 0, 100 * 1000 };

	agent_signal_all(a, SIGKILL, 1);
	a->killed = 1;
	/*
	 * A killed grandchild is only reaped once its parent is; we are told
	 * of our own children, so look again now and then until all are gone.
	 */
	event_add(a->recheck, &tv);
	agent_check(a);
}

/* Sends sig now and SIGKILL after grace_ms to everything this agent started. */
static void
agent_stop(struct agent *a, int sig, uint64_t grace_ms)
{
	struct timeval	tv;

	a->stopping = 1;
	if (a->phase != AGP_RUNNING) {
		agent_check(a);
		return;
	}
	if (sig == SIGKILL || grace_ms == 0) {
		event_del(a->kill_timer);
		kill_timer_cb(-1, 0, a);
		return;
	}
	agent_signal_all(a, sig, 1);
	if (!event_pending(a->kill_timer, EV_TIMEOUT, NULL) && !a->killed) {
		tv.tv_sec = (time_t)(grace_ms / 1000);
		tv.tv_usec = (suseconds_t)(grace_ms % 1000) * 1000;
		event_add(a->kill_timer, &tv);
	}
}

/*
 * Called after anything that may end the job on this host: once every rank
 * is reaped, kill leftovers; once nothing is left, say DONE and finish.
 */
static void
agent_check(struct agent *a)
{
	size_t		i, left;
	pid_t		*pids;
	struct timeval	tv = { 0, 100 * 1000 };

	if (a->finishing)
		return;
	if (a->phase != AGP_RUNNING) {
		if (!a->stopping && !a->link_down)
			return;
		/* A setup still running, or what it left: nothing may stay. */
		if (setup_running(a->setup)) {
			setup_kill(a->setup);
			return;		/* its reaping calls us again */
		}
		left = spawn_kill_descendants(SIGKILL, NULL);
		if (left > 0 || !agent_childless()) {
			event_add(a->recheck, &tv);
			return;
		}
		agent_done(a);
		return;
	}
	if (a->live > 0)
		return;
	left = spawn_descendants(&pids);
	free(pids);
	if (left > 0) {
		/* The ranks are gone but something they started is not. */
		if (!a->stopping)
			agent_stop(a, SIGTERM, a->job.kill_grace_ms);
		else if (a->killed)
			event_add(a->recheck, &tv);
		return;
	}
	if (!agent_childless()) {
		/* Caught between parents: the next walk finds it. */
		event_add(a->recheck, &tv);
		return;
	}
	for (i = 0; i < a->nranks; i++) {
		src_read(&a->ranks[i].out, 1);
		src_close(&a->ranks[i].out);
		src_read(&a->ranks[i].err, 1);
		src_close(&a->ranks[i].err);
	}
	agent_done(a);
}

/*
 * True when the kernel says we have no child at all, alive or unreaped.
 * The walk of /proc's children lists can miss a process for a moment: one
 * whose parent (a rank) is exiting is on neither list while it is handed
 * to us, the subreaper. DONE then came with it alive, our record gone, and
 * dtrun-kill found "leftover processes" of a job that had said it was done.
 */
static int
agent_childless(void)
{
	siginfo_t	si;

	memset(&si, 0, sizeof(si));
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 &&
	    errno == ECHILD;
}

/* Reports a reaped rank: first everything it wrote, then how it ended. */
static void
rank_reaped(struct agent *a, struct rank *r, int status)
{
	struct ap_exit	x;

	r->reaped = 1;
	a->live--;
	src_read(&r->out, 1);
	src_read(&r->err, 1);
	x.rank = r->rank;
	if (WIFSIGNALED(status)) {
		x.how = AP_SIGNALED;
		x.code = WTERMSIG(status);
	} else {
		x.how = AP_EXITED;
		x.code = WEXITSTATUS(status);
	}
	/* What torch's @record wrote, before the EXIT it explains. */
	if (x.how != AP_EXITED || x.code != 0)
		errfiles_send(a->errf, r->rank, &a->wb);
	/* Sent with the rest this SIGCHLD brings (sigchld_cb): one write. */
	ap_put_exit(&a->wb, &x);
}

/* ARGSUSED */
static void
sigchld_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent	*a = arg;
	pid_t		 pid;
	size_t		 i;
	int		 status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (stacks_reaped(a->stk, pid, status) ||
		    setup_reaped(a->setup, pid, status) ||
		    hostcheck_reaped(a->chk, pid, status))
			continue;
		for (i = 0; i < a->nranks; i++) {
			if (a->ranks[i].pid == pid && !a->ranks[i].reaped) {
				rank_reaped(a, &a->ranks[i], status);
				break;
			}
		}
	}
	agent_check(a);
	agent_flush_wb(a);
}

/* ARGSUSED */
static void
sigterm_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent	*a = arg;

	/* The host is going down, or dtrun-kill: no next attempt here. */
	a->exiting = 1;
	/* Tell the launcher why, so it reports this and not a dying rank. */
	if (a->keeper > 0 && getppid() != a->keeper)
		agent_error(a, AP_NORANK, EXIT_LOST, "%s: the agent's keeper (pid %d) "
		    "was killed: stopping its ranks", a->host, (int)a->keeper);
	else
		agent_error(a, AP_NORANK, EXIT_AGENT_TERM, "%s: the agent got "
		    "SIGTERM (dtrun-kill, or the host is shutting down): "
		    "stopping its ranks", a->host);
	agent_stop(a, SIGTERM, agent_grace(a));
}

/*
 * SIGQUIT (dtrun-kill --stacks, or Ctrl-\ on dtrun's terminal): ask dtrun
 * to gather every host's stacks, so the report is one and merged.
 */
/* ARGSUSED */
static void
sigquit_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent	*a = arg;

	if (a->link_down || a->finishing)
		return;
	ap_put_empty(&a->wb, AP_STACKASK);
	agent_flush_wb(a);
}

/* One rank's stack captured (or, with AP_NORANK, all of them): send it. */
static void
agent_stack_done(void *arg, const struct ap_stack *k)
{
	struct agent	*a = arg;

	ap_put_stack(&a->wb, k);
	agent_flush_wb(a);
}

/* STACKS: capture every live rank's stack; the job goes on. */
static void
agent_stacks(struct agent *a)
{
	size_t	i;

	if (stacks_busy(a->stk))
		return;		/* its end answers this one too */
	for (i = 0; a->phase == AGP_RUNNING && i < a->nranks; i++)
		if (a->ranks[i].pid > 0 && !a->ranks[i].reaped)
			stacks_add(a->stk, a->ranks[i].rank, a->ranks[i].pid);
	stacks_run(a->stk);
}

/* A --check step's answers: send them. */
static void
agent_checked(void *arg, const struct ap_checked *c)
{
	struct agent	*a = arg;

	if (ap_put_checked(&a->wb, c) != 0) {
		agent_error(a, AP_NORANK, 70, "%s: --check: the answers do "
		    "not fit a frame", a->host);
		return;
	}
	agent_flush_wb(a);
}

/*
 * Builds a->base_env: environ, the setup's variables (with_setup), our
 * interface choice and the job's (dtrun's and -x) laid over it in that
 * order, then JOB's defaults where none set the name. Returns 0 or
 * DT_ERR_NOMEM.
 */
static int
agent_base_env(struct agent *a, int with_setup)
{
	struct dt_environ	*e = &a->base_env;

	dt_environ_free(e);
	if (dt_environ_merge(e, environ, DT_ENV_ALL) != 0 ||
	    (with_setup && dt_environ_merge(e, a->setup_env,
	    a->nsetup_env) != 0) ||
	    dt_environ_merge(e, a->if_env, a->nif_env) != 0 ||
	    dt_environ_merge(e, a->job.env, a->job.nenv) != 0 ||
	    dt_environ_defaults(e, a->job.defaults, a->job.ndefaults) != 0 ||
	    dt_environ_envp(e) == NULL)
		return DT_ERR_NOMEM;
	return 0;
}

/*
 * JOB's errfile: the ranks' error files' directory, unless -x (JOB's env)
 * names a file of the user's, which is then left alone.
 */
static void
agent_errfiles(struct agent *a)
{
	struct dt_err	e;

	if (!a->job.errfile || a->errf != NULL ||
	    dt_env_find(a->job.env, a->job.nenv, ERRFILE_VAR) != NULL)
		return;
	/* Reaches dtrun through our stderr. */
	if (errfiles_new(a->job.job_id, &a->errf, &e) != 0)
		log_warn("%s: %s", a->host, e.msg);
}

/*
 * Builds every rank's environment: the base, its error file's variable
 * (over dtrun's environment, which may be torchrun's), and its RANK's
 * variables over both. Returns 0 or DT_ERR_NOMEM.
 */
static int
agent_build_env(struct agent *a)
{
	struct dt_environ	 e;
	char			*ev;
	size_t			 i;
	int			 rc;

	if (agent_base_env(a, 1) != 0)
		return DT_ERR_NOMEM;
	if ((rc = agent_relay(a)) != 0 || (rc = agent_progress(a)) != 0)
		return rc;
	agent_errfiles(a);
	for (i = 0; i < a->nranks; i++) {
		if (dt_environ_copy(&e, &a->base_env) != 0)
			return DT_ERR_NOMEM;
		rc = 0;
		if (a->errf != NULL &&
		    (ev = errfiles_var(a->errf, a->msgs[i].rank)) != NULL) {
			rc = dt_environ_put(&e, ev);
			free(ev);
		}
		if (rc != 0 || dt_environ_merge(&e, a->msgs[i].env,
		    a->msgs[i].nenv) != 0 ||
		    (a->ranks[i].env = dt_environ_take(&e, NULL)) == NULL) {
			dt_environ_free(&e);
			return DT_ERR_NOMEM;
		}
	}
	return 0;
}

/* A line of the setup's stdout that is no NAME=VALUE: shown as this host's. */
static void
agent_setup_line(void *arg, const char *line, size_t len)
{
	struct agent	*a = arg;

	log_notice("%s: setup: %.*s", a->host, (int)len, line);
}

/* A rank's rendezvous bytes (or its end): to dtrun, on its channel. */
static void
agent_relay_send(void *arg, uint32_t chan, const void *p, size_t n)
{
	struct agent	*a = arg;

	if (a->link_down || a->finishing)
		return;
	ap_put_rdzv(&a->wb, chan, p, n);
	agent_flush_wb(a);
}

/* The relay is out of descriptors: the job cannot start; dtrun says why. */
static void
agent_relay_failed(void *arg, const char *msg)
{
	struct agent	*a = arg;

	agent_error(a, AP_NORANK, EXIT_RDZV, "%s: %s", a->host, msg);
}

/* The relay closed connections unheard: said here, with the count. */
static void
agent_relay_note(void *arg, const char *msg)
{
	struct agent	*a = arg;

	log_warn("%s: %s", a->host, msg);
}

/*
 * DTRUN_RDZV_ADDR=agent: dtrun wants its ranks' rendezvous through us.
 * Listen for them and point their DTRUN_RDZV_ADDR at our socket.
 */
static int
agent_relay(struct agent *a)
{
	struct rdzvrelay_cbs	 cb = { agent_relay_send,
				    agent_relay_failed, agent_relay_note, a };
	struct dt_err		 e;
	const char		*v;
	char			 addr[160];

	v = dt_environ_get(&a->base_env, "DTRUN_RDZV_ADDR");
	if (v == NULL || strcmp(v, "agent") != 0 || a->relay != NULL)
		return 0;
	if ((a->relay = rdzvrelay_new(a->base, a->job.job_id, &cb, addr,
	    sizeof(addr), &e)) == NULL) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: %s", a->host,
		    e.msg);
		return DT_ERR_SYS;	/* said */
	}
	return dt_environ_set(&a->base_env, "DTRUN_RDZV_ADDR", addr);
}

/* The ranks' steps of the last second, to dtrun. */
static void
agent_progress_send(void *arg, const struct ap_progress *v, uint32_t n)
{
	struct agent	*a = arg;

	if (a->link_down || a->finishing)
		return;
	ap_put_progress(&a->wb, v, n);
	agent_flush_wb(a);
}

/*
 * DTRUN_PROGRESS=agent: dtrun watches for stragglers. Listen for our
 * ranks' steps and point their DTRUN_PROGRESS at our socket.
 */
static int
agent_progress(struct agent *a)
{
	struct dt_err	 e;
	const char	*v;
	char		 addr[160];
	uint32_t	*ranks;
	size_t		 i;

	v = dt_environ_get(&a->base_env, "DTRUN_PROGRESS");
	if (v == NULL || strcmp(v, "agent") != 0 || a->progress != NULL)
		return 0;
	if ((ranks = calloc(a->nranks + 1, sizeof(*ranks))) == NULL)
		return DT_ERR_NOMEM;
	for (i = 0; i < a->nranks; i++)
		ranks[i] = a->ranks[i].rank;
	a->progress = progress_new(a->base, a->job.job_id, ranks, a->nranks,
	    agent_progress_send, a, addr, sizeof(addr), &e);
	free(ranks);
	if (a->progress == NULL) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: %s", a->host,
		    e.msg);
		return DT_ERR_SYS;	/* said */
	}
	return dt_environ_set(&a->base_env, "DTRUN_PROGRESS", addr);
}

/*
 * The ERROR for a failed setup: why, then each stderr line under the
 * host's name, as many of the last as fit in one ERROR. Malloc'd.
 */
static char *
agent_setup_msg(struct agent *a, const char *why, const char *p, size_t n)
{
	const char	*nl, *end = p + n, *q, *b, *start = end;
	char		*msg = NULL;
	size_t		 len = 0, room, line;
	FILE		*f;

	if ((f = open_memstream(&msg, &len)) == NULL)
		return NULL;
	fprintf(f, "%s: --setup %s, so no rank was started on any host%s",
	    a->host, why, n > 0 ? "; its stderr ends:" :
	    " (it wrote nothing on stderr)");
	fflush(f);
	/* Many short lines grow by their prefixes: keep the last that fit. */
	room = len < AP_ERRMSG_MAX ? AP_ERRMSG_MAX - len : 0;
	q = end > p && end[-1] == '\n' ? end - 1 : end;
	while (q > p) {
		for (b = q; b > p && b[-1] != '\n'; b--)
			;
		/* "\nHOST: setup: LINE" */
		line = (size_t)(q - b) + strlen(a->host) + 10;
		if (line > room)
			break;
		room -= line;
		start = b;
		q = b > p ? b - 1 : b;
	}
	for (p = start; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', end - p)) == NULL)
			nl = end;
		fprintf(f, "\n%s: setup: %.*s", a->host, (int)(nl - p), p);
	}
	if (fclose(f) != 0) {
		free(msg);
		return NULL;
	}
	return msg;
}

/*
 * The setup ended: on failure say so, with its stderr's last lines, and
 * stay unprepared (the launcher stops everything); else take its variables
 * and go on preparing.
 */
static void
agent_setup_done(void *arg)
{
	struct agent	*a = arg;
	struct ap_error	 e;
	struct dt_err	 err;
	const char	*p;
	char		*msg;
	size_t		 n;

	if (a->stopping || a->link_down || a->finishing)
		return;		/* killed by us: agent_check follows */
	p = setup_stderr(a->setup, &n);
	if (setup_result(a->setup, &err) != 0) {
		/* Its last 2 KiB, whole lines: a message, not a log. */
		p = envfile_tail(p, n, DT_SETUP_TAIL, SIZE_MAX, &n);
		msg = agent_setup_msg(a, err.msg, p, n);
		e.rank = AP_NORANK;
		e.code = EXIT_CONFIG;
		e.msg = msg != NULL ? msg : "--setup failed";
		ap_put_error(&a->wb, &e);
		agent_flush_wb(a);
		free(msg);
		return;
	}
	/* A setup's warnings are worth seeing even when it worked. */
	envfile_setup_output(p, n, NULL, NULL, agent_setup_line, a);
	p = setup_stdout(a->setup, &n);
	if (envfile_setup_output(p, n, &a->setup_env, &a->nsetup_env,
	    agent_setup_line, a) != 0) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory", a->host);
		return;
	}
	agent_resolve(a);
}

/* Starts the job's setup command with the job's variables; PREPARED waits for it. */
static void
agent_setup(struct agent *a)
{
	struct dt_err	e;

	if (agent_base_env(a, 0) != 0) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory", a->host);
		return;
	}
	a->setup = setup_start(a->base, a->job.setup, a->base_env.v, a->devnull,
	    agent_setup_done, a, &e);
	if (a->setup == NULL)
		agent_error(a, AP_NORANK, EXIT_CONFIG, "%s: cannot run --setup: %s",
		    a->host, e.msg);
}

/* Adds "name=value" to the variables our interface choice sets. */
static int
agent_if_var(struct agent *a, const char *name, const char *value)
{
	if (asprintf(&a->if_env[a->nif_env], "%s=%s", name, value) == -1) {
		a->if_env[a->nif_env] = NULL;
		return -1;
	}
	a->nif_env++;
	return 0;
}

/*
 * Chooses this host's own interface, when the launcher asks (JOB's iface
 * and rank0), and tells it with IFACE. Returns 0, or -1 when there is none
 * to use: the launcher then stops the job, and no rank is started.
 */
static int
agent_iface(struct agent *a)
{
	static const struct {
		uint8_t		 bit;
		const char	*name;
	} vars[] = {
		{ AP_IF_NCCL, "NCCL_SOCKET_IFNAME" },
		{ AP_IF_GLOO, "GLOO_SOCKET_IFNAME" },
		{ AP_IF_DMLC, "DMLC_INTERFACE" },
	};
	struct iface		*list;
	struct iface_choice	 ch;
	struct ap_iface		 f;
	struct dt_err		 e;
	size_t			 n, i;
	int			 rc;

	if (a->job.iface[0] == '\0' && a->job.rank0[0] == '\0')
		return 0;
	memset(&e, 0, sizeof(e));
	if ((rc = iface_list(&list, &n, &e)) == 0) {
		rc = iface_pick(list, n, a->job.iface, a->job.rank0, &ch, &e);
		free(list);
	}
	memset(&f, 0, sizeof(f));
	f.ok = rc == 0;
	f.name = rc == 0 ? ch.name : "";
	f.addr = rc == 0 ? ch.addr : "";
	f.why = rc == 0 ? ch.why : e.msg;
	for (i = 0; rc == 0 && i < sizeof(vars) / sizeof(vars[0]); i++) {
		if ((a->job.ifvars & vars[i].bit) == 0 ||
		    agent_if_var(a, vars[i].name, ch.name) == 0)
			continue;
		agent_error(a, AP_NORANK, 70, "%s: out of memory", a->host);
		return -1;
	}
	ap_put_iface(&a->wb, &f);
	agent_flush_wb(a);
	return rc == 0 ? 0 : -1;
}

/* PREPARE: check the directory and every command; start nothing. */
static void
agent_prepare(struct agent *a)
{
	if (a->nranks != a->job.nranks) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: protocol: PREPARE after %zu "
		    "of %u ranks", a->host, a->nranks, a->job.nranks);
		agent_finish(a);
		return;
	}
	/* First: a setup may want NCCL_SOCKET_IFNAME too. */
	if (agent_iface(a) != 0)
		return;
	if (a->job.cwd[0] != '\0' && chdir(a->job.cwd) == -1) {
		agent_error(a, AP_NORANK, EXIT_CONFIG, "%s: cannot use working directory "
		    "\"%s\": %s", a->host, a->job.cwd, strerror(errno));
		return;
	}
	if (a->job.setup[0] != '\0') {
		agent_setup(a);
		return;
	}
	agent_resolve(a);
}

/* The rest of PREPARE, once any setup is done: variables, then every command. */
static void
agent_resolve(struct agent *a)
{
	struct rank	*r;
	struct dt_err	 e;
	size_t		 i;
	int		 rc;

	if ((rc = agent_build_env(a)) != 0) {
		if (rc == DT_ERR_NOMEM)
			agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of "
			    "memory", a->host);
		return;
	}
	for (i = 0; i < a->nranks; i++) {
		r = &a->ranks[i];
		r->argv = a->msgs[i].argv;
		/* "@dtrun-agent": this agent's own binary (dtrun-kill -H). */
		if (strcmp(r->argv[0], AGENT_SELF) == 0) {
			r->path = strdup("/proc/self/exe");
			continue;
		}
		/* Ranks almost always share a command: resolve it once. */
		if (i > 0 && strcmp(r->argv[0], a->ranks[i - 1].argv[0]) == 0 &&
		    a->ranks[i - 1].path != NULL) {
			r->path = strdup(a->ranks[i - 1].path);
			continue;
		}
		rc = spawn_resolve(r->argv[0], dt_env_find(r->env, DT_ENV_ALL,
		    "PATH"), &r->path, &e);
		if (rc == 0)
			continue;
		agent_error(a, r->rank, rc == DT_ERR_NOMEM ? EXIT_INTERNAL :
		    EXIT_CONFIG, "%s: %s (on %s)", r->argv[0], e.msg, a->host);
		return;
	}
	agent_to(a, AGP_PREPARED);
	ap_put_empty(&a->wb, AP_PREPARED);
	/* START came with PREPARE: its STARTED frames follow in this write. */
	if (a->start_asked && !a->stopping) {
		agent_start(a);
		return;
	}
	agent_flush_wb(a);
}

/* Opens a non-blocking, close-on-exec pipe and its read event. */
static int
src_open(struct agent *a, struct rank *r, struct src *s, uint8_t stream,
    int *wfd)
{
	int	fds[2];

	s->a = a;
	s->r = r;
	s->stream = stream;
	s->fd = -1;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1)
		return -errno;
	/* The rank's end must block, as any program expects of stdout. */
	fcntl(fds[1], F_SETFL, 0);
	s->fd = fds[0];
	*wfd = fds[1];
	s->ev = event_new(a->base, s->fd, EV_READ | EV_PERSIST, src_read_cb, s);
	if (!a->pipes_paused)
		event_add(s->ev, NULL);
	return 0;
}

/* START: starts every rank; a rank that cannot start is reported as such. */
static void
agent_start(struct agent *a)
{
	struct rank	*r;
	struct ap_exit	 x;
	size_t		 i;
	pid_t		 pid = -1;
	struct dt_err	 err;
	int		 ofd = -1, efd = -1, e;

	agent_to(a, AGP_RUNNING);
	/* Reaches dtrun through our stderr, once per host and job. */
	if (record_open(a->job.job_id, a->host, a->keeper, &a->rec,
	    &err) != 0)
		log_warn("%s: %s", a->host, err.msg);
	/* Each rank's child then resets only the signals we changed. */
	spawn_batch_begin();
	for (i = 0; i < a->nranks && !a->stopping; i++) {
		r = &a->ranks[i];
		ofd = efd = -1;
		if ((e = src_open(a, r, &r->out, AP_STDOUT, &ofd)) == 0 &&
		    (e = src_open(a, r, &r->err, AP_STDERR, &efd)) == 0) {
			pid = spawn_rank(r->path, r->argv, r->env, a->devnull,
			    ofd, efd);
			e = pid < 0 ? (int)pid : 0;
		}
		if (ofd >= 0)
			close(ofd);
		if (efd >= 0)
			close(efd);
		if (e != 0) {
			src_close(&r->out);
			src_close(&r->err);
			r->reaped = 1;
			/* The launcher reports it, with the shell's 126/127. */
			x.rank = r->rank;
			x.how = AP_NOSTART;
			x.code = -e;
			ap_put_exit(&a->wb, &x);
			agent_flush_wb(a);
			continue;
		}
		r->pid = pid;
		a->live++;
		record_add(a->rec, r->rank, pid);
		progress_started(a->progress, r->rank, pid);
		ap_put_started(&a->wb, r->rank, pid);
		/* Batch STARTED frames: one write for many ranks. */
		if (a->wb.len > DT_WRITE_BATCH)
			agent_flush_wb(a);
	}
	spawn_batch_end();
	agent_flush_wb(a);
	record_commit(a->rec);
	agent_check(a);
}

/* PORTS: n TCP ports free here at once (TF_CONFIG's, one per rank). */
static void
agent_ports(struct agent *a, uint32_t n)
{
	int	*ports = calloc(n ? n : 1, sizeof(*ports));

	if (ports == NULL) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory",
		    a->host);
		return;
	}
	port_pick(ports, n);
	ap_put_portlist(&a->wb, ports, n);
	agent_flush_wb(a);
	free(ports);
}

/* Makes room for one more rank; returns 0 or -1 (out of memory). */
static int
agent_grow(struct agent *a)
{
	struct ap_rank	*m;
	struct rank	*r;
	size_t		 cap;

	if (a->nranks < a->cap)
		return 0;
	/* Grown as RANKs come, not sized by JOB's count: that is a claim. */
	cap = a->cap == 0 ? 16 : a->cap * 2;
	if (cap > a->job.nranks)
		cap = a->job.nranks;
	if ((m = reallocarray(a->msgs, cap, sizeof(*m))) == NULL)
		return -1;
	a->msgs = m;
	if ((r = reallocarray(a->ranks, cap, sizeof(*r))) == NULL)
		return -1;
	a->ranks = r;
	memset(a->msgs + a->cap, 0, (cap - a->cap) * sizeof(*m));
	memset(a->ranks + a->cap, 0, (cap - a->cap) * sizeof(*r));
	a->cap = cap;
	return 0;
}

/* JOB: what every rank here shares, and how many RANKs follow. */
static int
agent_job(struct agent *a, const uint8_t *p, size_t n)
{
	uint32_t	version;

	if (n < 4)
		return -1;
	/* First, so a JOB of another layout is refused by its version. */
	version = dt_be32(p);
	if (version != AP_VERSION) {
		agent_error(a, AP_NORANK, EXIT_CONFIG, "%s: agent speaks protocol %d, "
		    "launcher %u: use the same dtrun version on every host",
		    a->host, AP_VERSION, version);
		agent_finish(a);
		return 0;
	}
	if (ap_get_job(p, n, &a->job) != 0)
		return -1;
	agent_to(a, AGP_JOB);
	/* Each attempt's JOB says afresh whether this stream is worth packing. */
	link_pack(a->link, a->job.pack);
	hostcheck_close(a->chk);	/* a --preflight is over */
	return 0;
}

/* RANK: one rank's command and variables. */
static int
agent_rank(struct agent *a, const uint8_t *p, size_t n)
{
	struct rank	*r;

	if (agent_grow(a) != 0 || ap_get_rank(p, n, &a->msgs[a->nranks]) != 0)
		return -1;
	r = &a->ranks[a->nranks];
	r->rank = a->msgs[a->nranks].rank;
	r->local_rank = a->msgs[a->nranks].local_rank;
	r->out.fd = r->err.fd = -1;
	a->nranks++;
	return 0;
}

/*
 * Drops the link to the launcher without waiting for what is queued to go
 * (it may never), and stops every rank.
 */
static void
agent_cut(struct agent *a)
{
	link_free(a->link);
	a->link = NULL;
	a->link_down = 1;
	agent_stop(a, SIGTERM, agent_grace(a));
}

/* The launcher was silent for its heartbeat timeout (link_heartbeat). */
static void
agent_silent(void *arg)
{
	struct agent	*a = arg;

	/* Partitioned, or dtrun stopped: nobody will stop us. */
	log_warn("%s: heard nothing from dtrun for %.3g s (its "
	    "--heartbeat-timeout): stopping its ranks", a->host,
	    a->beat_ms / 1000.0);
	agent_cut(a);
}

/* Tells the keeper we live: it gives us up as dtrun does (keeper.h). */
/* ARGSUSED */
static void
agent_keep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent	*a = arg;

	keeper_beat(a->beat_ms);
}

/* Beats to the keeper, at the launcher's heartbeat timeout ms. */
static void
agent_keep_beat(struct agent *a, uint64_t ms)
{
	uint64_t	 period = link_beat_period_ms(ms) / 2;
	struct timeval	 tv;

	if (a->keeper <= 0 || ms == 0)
		return;
	period = period > 0 ? period : 1;
	tv.tv_sec = (time_t)(period / 1000);
	tv.tv_usec = (suseconds_t)(period % 1000) * 1000;
	if ((a->keep_ev = event_new(a->base, -1, EV_PERSIST, agent_keep_cb,
	    a)) == NULL || event_add(a->keep_ev, &tv) != 0) {
		log_warn("%s: out of memory: the keeper will not notice if "
		    "this agent stops", a->host);
		return;
	}
	keeper_beat(ms);
}

/*
 * HEARTBEAT: the first one turns our link's on, at the launcher's
 * timeout; the link sends ours and hears whether the launcher lives.
 */
static int
agent_heartbeat(struct agent *a, const uint8_t *p, size_t n)
{
	uint64_t	ms;
	int		rc;

	if (ap_get_heartbeat(p, n, &ms) != 0)
		return -1;
	if (a->beat_ms != 0)
		return 0;
	a->beat_ms = ms;
	agent_keep_beat(a, ms);
	ap_put_heartbeat(&a->wb, ms);
	rc = a->wb.oom ? DT_ERR_NOMEM : link_heartbeat(a->link, ms, a->wb.p,
	    a->wb.len, agent_silent, a);
	dt_wbuf_reset(&a->wb);
	if (rc != 0)
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: out of memory",
		    a->host);
	return 0;
}

/* Says HELLO: who we are, and a port free here now. */
static void
agent_hello(struct agent *a)
{
	struct ap_hello	h;
	int		port;

	h.version = AP_VERSION;
	h.hostname = a->host;
	h.pid = getpid();
	/* A port free here, for MASTER_PORT when rank 0 is on this host. */
	port_pick(&port, 1);
	h.free_port = port;
	ap_put_hello(&a->wb, &h);
	agent_flush_wb(a);
}

/*
 * Frees what one attempt built (ranks, their pipes, the job, the setup)
 * and forgets it, so the next JOB starts from nothing. The link, its
 * heartbeats and the keeper stay.
 */
static void
agent_forget(struct agent *a)
{
	size_t	i;

	for (i = 0; i < a->nranks; i++) {
		src_close(&a->ranks[i].out);
		src_close(&a->ranks[i].err);
		dt_strv_free(a->ranks[i].env);
		free(a->ranks[i].path);
		ap_rank_free(&a->msgs[i]);
	}
	free(a->ranks);
	free(a->msgs);
	dt_environ_free(&a->base_env);
	setup_free(a->setup);
	dt_strv_free(a->setup_env);
	rdzvrelay_free(a->relay);
	a->relay = NULL;
	progress_free(a->progress);
	a->progress = NULL;
	/* The next attempt chooses its interface again. */
	while (a->nif_env > 0)
		free(a->if_env[--a->nif_env]);
	ap_job_free(&a->job);
	ap_reasm_free(&a->reasm);
	ap_reasm_init(&a->reasm);
	a->ranks = NULL;
	a->msgs = NULL;
	a->setup = NULL;
	a->setup_env = NULL;
	a->nsetup_env = 0;
	memset(&a->job, 0, sizeof(a->job));
	a->nranks = a->cap = a->live = 0;
	a->ports_seen = a->stopping = a->killed = a->start_asked = 0;
	if (a->kill_timer != NULL)
		event_del(a->kill_timer);
	if (a->recheck != NULL)
		event_del(a->recheck);
}

/*
 * Everything this attempt started is gone: take our record down, say
 * DONE, and wait for the next attempt (AGAIN) or, with the launcher gone
 * or SIGTERM taken, exit.
 */
static void
agent_done(struct agent *a)
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
	if (a->link_down || a->exiting) {
		agent_finish(a);
		return;
	}
	agent_forget(a);
	agent_to(a, AGP_IDLE);
}

/*
 * One frame from the launcher. phase.c's table says whether it belongs in
 * our phase; a handler here checks only its payload, and the few counts
 * the table cannot (PORTS once, no RANK past JOB's count).
 */
static void
agent_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct agent	*a = arg;
	struct ap_stop	 st;
	struct ap_check	 ck;
	struct dt_err	 e;
	const uint8_t	*rd;
	size_t		 rdlen;
	uint32_t	 u;
	int		 rc, bad = 1;

	/* Finishing: the loop ends after this callback; hear nothing more. */
	if (a->finishing || a->link_down)
		return;
	switch (agent_frame_verdict(a->phase, type)) {
	case AP_TAKE:
		break;
	case AP_STALE:
		return;		/* sent before dtrun heard our DONE */
	case AP_ILLEGAL:
		bad = 0;
		goto refuse;
	}
	if ((rc = ap_reasm_feed(&a->reasm, type, &p, &n)) == 0)
		return;		/* a part of a longer JOB or RANK */
	if (rc < 0)
		goto refuse;
	switch (type) {
	case AP_JOB:
		if (agent_job(a, p, n) != 0)
			goto refuse;
		return;
	case AP_RANK:
		if (a->nranks >= a->job.nranks) {
			bad = 0;	/* one more than JOB said */
			goto refuse;
		}
		if (agent_rank(a, p, n) != 0)
			goto refuse;
		return;
	case AP_PREPARE:
		if (ap_get_empty(p, n) != 0)
			goto refuse;
		agent_to(a, AGP_PREPARING);
		/*
		 * PREPARED waits in a->wb for the loop's next turn: a START
		 * read with PREPARE (one host) sends its STARTED frames with
		 * it, one write. An ERROR sends it at once (agent_error).
		 */
		a->holding = 1;
		agent_prepare(a);
		a->holding = 0;
		if (a->wb.len > 0)
			event_active(a->flush_ev, EV_TIMEOUT, 0);
		return;
	case AP_START:
		if (ap_get_empty(p, n) != 0)
			goto refuse;
		if (a->start_asked) {
			bad = 0;	/* once per attempt */
			goto refuse;
		}
		/* Still preparing (a --setup runs): agent_resolve starts. */
		if (a->phase == AGP_PREPARING) {
			a->start_asked = 1;
			return;
		}
		agent_start(a);
		return;
	case AP_AGAIN:
		if (ap_get_empty(p, n) != 0)
			goto refuse;
		agent_to(a, AGP_WAITING);
		agent_hello(a);
		return;
	case AP_SIGNAL:
		if (ap_get_u32(p, n, &u) != 0 || u == 0 || u >= NSIG)
			goto refuse;
		agent_signal_all(a, u, 0);
		return;
	case AP_PORTS:
		if (a->ports_seen) {
			bad = 0;	/* what dtrun does, and no more */
			goto refuse;
		}
		if (ap_get_u32(p, n, &u) != 0 || u > AP_MAX_PORTS)
			goto refuse;
		a->ports_seen = 1;
		agent_ports(a, u);
		return;
	case AP_STOP:
		if (ap_get_stop(p, n, &st) != 0 || st.signo == 0 ||
		    st.signo >= NSIG)
			goto refuse;
		agent_stop(a, st.signo, st.grace_ms);
		return;
	case AP_HEARTBEAT:
		if (agent_heartbeat(a, p, n) != 0)
			goto refuse;
		return;
	case AP_STACKS:
		if (ap_get_empty(p, n) != 0)
			goto refuse;
		agent_stacks(a);
		return;
	case AP_RDZV:
		if (ap_get_rdzv(p, n, &u, &rd, &rdlen) != 0)
			goto refuse;
		if (a->relay != NULL)
			rdzvrelay_input(a->relay, u, rd, rdlen);
		return;
	case AP_CHECK:
		/* It starts no rank; stopping, there is nothing to check for. */
		if (a->stopping)
			return;
		if (ap_get_check(p, n, &ck) != 0)
			goto refuse;
		rc = hostcheck_run(a->chk, &ck);
		ap_check_free(&ck);
		if (rc != 0) {
			bad = 0;	/* one step at a time */
			goto refuse;
		}
		return;
	}
refuse:
	ap_frame_refused(&e, agent_phase_name(a->phase), type, bad);
	agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: protocol error: %s",
	    a->host, e.msg);
	a->bad_frame = 1;
	/* No more frames from this link, even those already read. */
	agent_cut(a);
}

/*
 * The launcher is gone, or sent a frame the link cannot take (a bad
 * PACKED one, say): then say so while the link still writes. Either way
 * stop everything, then exit.
 */
static void
agent_link_close(void *arg, int err, const char *why)
{
	struct agent	*a = arg;

	if (err == DT_ERR_PROTO && !a->link_down) {
		agent_error(a, AP_NORANK, EXIT_INTERNAL, "%s: protocol error: "
		    "%s (while %s)", a->host, why, agent_phase_name(a->phase));
		a->bad_frame = 1;
	}
	a->link_down = 1;
	if (a->phase == AGP_RUNNING && a->live > 0)
		log_debug("link to launcher %s: stopping ranks", why);
	agent_stop(a, SIGTERM, agent_grace(a));
}

/* Frees what the conversation built: ranks, their pipes, the job, timers. */
static void
agent_release(struct agent *a)
{
	agent_forget(a);
	ap_reasm_free(&a->reasm);
	dt_wbuf_free(&a->wb);
	event_free(a->kill_timer);
	event_free(a->recheck);
	event_free(a->flush_ev);
	stacks_free(a->stk);
	hostcheck_free(a->chk);
}

int
agent_run(int rfd, int wfd, pid_t keeper)
{
	struct agent	 a;
	struct link_cbs	 cbs;

	memset(&a, 0, sizeof(a));
	a.keeper = keeper;
	ap_reasm_init(&a.reasm);
	dt_raise_nofile();
	dt_malloc_steady();
	/* Orphans of our ranks come back to us, so we can kill them too. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	/*
	 * sbatch --signal=USR1@N without B: signals every process of the
	 * agents' step; the agent must not die of it (ranks start with every
	 * signal at its default).
	 */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	if (gethostname(a.host, sizeof(a.host) - 1) != 0)
		snprintf(a.host, sizeof(a.host), "localhost");
	if ((a.devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		log_error("/dev/null: %s", strerror(errno));
		return EXIT_INTERNAL;
	}
	/* Now, while few descriptors are open: see procs.c. */
	if (spawn_init(a.devnull) != 0)
		log_debug("%s: no CLOSE_RANGE_UNSHARE: ranks start by vfork",
		    a.host);
	if ((a.base = event_base_new()) == NULL) {
		log_error("cannot make an event base");
		return EXIT_INTERNAL;
	}
	cbs.frame = agent_frame;
	cbs.close = agent_link_close;
	cbs.drain = agent_drain_cb;
	cbs.arg = &a;
	if ((a.link = link_new(a.base, rfd, wfd, AP_FRAME_MAX, &cbs)) == NULL) {
		log_error("out of memory");
		return EXIT_INTERNAL;
	}
	link_watermarks(a.link, DT_LINK_LOW, DT_LINK_HIGH);
	a.ev_chld = evsignal_new(a.base, SIGCHLD, sigchld_cb, &a);
	a.ev_term = evsignal_new(a.base, SIGTERM, sigterm_cb, &a);
	a.kill_timer = evtimer_new(a.base, kill_timer_cb, &a);
	a.recheck = evtimer_new(a.base, recheck_cb, &a);
	a.flush_ev = evtimer_new(a.base, flush_cb, &a);
	a.ev_quit = evsignal_new(a.base, SIGQUIT, sigquit_cb, &a);
	if ((a.stk = stacks_new(a.base, agent_stack_done, &a)) == NULL ||
	    (a.chk = hostcheck_new(a.base, a.devnull, agent_checked,
	    &a)) == NULL) {
		log_error("out of memory");
		return EXIT_INTERNAL;
	}
	event_add(a.ev_chld, NULL);
	event_add(a.ev_term, NULL);
	event_add(a.ev_quit, NULL);

	agent_hello(&a);

	event_base_dispatch(a.base);
	/* Ending: the flush below may wait without beating. */
	keeper_beat(0);

	if (a.link != NULL) {
		/*
		 * What is queued is ranks' output the launcher has not taken
		 * yet (a slow reader pauses it): wait while the launcher
		 * lives. A dead one ends this through the closed socket, a
		 * silent one (a partition) after its heartbeat timeout.
		 */
		if (link_flush(a.link, a.beat_ms > 0 ? (int)a.beat_ms : -1) != 0)
			log_error("%s: heard nothing from dtrun for %g s (its "
			    "--heartbeat-timeout) with %zu bytes of output "
			    "still to send: giving up", a.host,
			    a.beat_ms / 1000.0, link_queued(a.link));
		link_free(a.link);
	}
	record_remove(a.rec);
	errfiles_free(a.errf);
	agent_release(&a);
	event_free(a.ev_chld);
	event_free(a.ev_term);
	event_free(a.ev_quit);
	if (a.keep_ev != NULL)
		event_free(a.keep_ev);
	event_base_free(a.base);
	close(a.devnull);
	return a.bad_frame ? EXIT_INTERNAL : 0;
}
