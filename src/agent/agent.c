/*
 * agent.c -- the per-host agent.
 *
 * It receives its host's share of the job from the launcher, checks every
 * command can run before starting any (prepare.c), starts each rank in its
 * own process group, and sends back output chunks and exit statuses. A
 * rank is reported finished only once it is reaped and what it wrote is
 * read; output from children that outlive it keeps flowing until the
 * job's end, when the agent (a child subreaper) kills whatever is left.
 * If the link to the launcher breaks, or goes silent past the launcher's
 * heartbeat timeout, it stops everything itself (shutdown.c).
 */
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
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
#include "agent/agentint.h"
#include "agent/errfile.h"
#include "agent/hostcheck.h"
#include "agent/keeper.h"
#include "host/procs.h"
#include "agent/progress.h"
#include "agent/waits.h"
#include "agent/rdzvrelay.h"
#include "host/record.h"
#include "agent/setup.h"
#include "agent/stacks.h"
#include "common/dtlimits.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/link.h"
#include "common/log.h"
#include "common/port.h"
#include "common/sys.h"
#include "common/wire.h"
#include "proto/agentproto.h"
#include "proto/phase.h"

/*
 * Moves the conversation on. The phase is all the agent knows of where it
 * is: phase.c's table decides from it which frame comes next.
 */
void
agent_to(struct agent *a, enum agent_phase ph)
{
	log_debug("%s: %s, then %s", a->host, agent_phase_name(a->phase),
	    agent_phase_name(ph));
	a->phase = ph;
}

/* Sends what the encoders left in a->wb, then pauses rank pipes if the link is backed up. */
void
agent_flush_wb(struct agent *a)
{
	if (a->holding)
		return;		/* shut_done sends it all with DONE */
	if (a->wb.len > 0 && shut_linked(a))
		link_send(a->link, a->wb.p, a->wb.len);
	dt_wbuf_reset(&a->wb);
	if (!shut_linked(a) || a->pipes_paused || link_queued(a->link) <= a->link_high)
		return;
	a->pipes_paused = 1;
	if (a->pipes_ev != NULL)
		event_del(a->pipes_ev);
}

/* The link drained: read the rank pipes again. */
static void
agent_drain_cb(void *arg)
{
	struct agent	*a = arg;

	if (!a->pipes_paused)
		return;
	a->pipes_paused = 0;
	if (a->pipes_ev != NULL)
		event_add(a->pipes_ev, NULL);
}

/* Sends an ERROR about rank (or AP_NORANK) with the status the launcher should exit with. */
void
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

/* Closes one output pipe at EOF. */
void
src_close(struct src *s)
{
	if (s->fd < 0)
		return;
	if (s->a->pipes_ev != NULL)
		(void)epoll_ctl(s->a->pipes_ep, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	s->fd = -1;
}

/*
 * How much of the ranks' output the link may queue before their pipes
 * pause. A packed stream (ssh) needs the output in hand to pack it: a deep
 * queue (DT_LINK_HIGH) lets a fast reader never see a pause. Otherwise the
 * output is spliced (src_splice), which only works with nothing queued:
 * the pipes pause as soon as the stream is full, so the stream's buffer
 * and the pipes' are the queue and the agent never copies a byte.
 */
static void
agent_link_queue(struct agent *a)
{
	if (a->job.pack) {
		a->link_high = DT_LINK_HIGH;
		link_watermarks(a->link, DT_LINK_LOW, DT_LINK_HIGH);
	} else {
		a->link_high = 0;
		link_watermarks(a->link, 0, 0);
	}
}

/*
 * Forwards what waits in s's pipe, up to a chunk, spliced onto the link
 * (link_send_spliced): the agent never copies it. On the log path's
 * bench that was two of the four copies dtrun adds to a line's way.
 * Returns 1 when done; 0 when the link cannot now, or the pipe has
 * nothing (EOF or empty): the caller reads.
 */
static int
src_splice(struct src *s)
{
	struct agent	*a = s->a;
	size_t		 st, n;
	int		 avail, rc;

	if (a->holding || a->wb.len > 0 || !shut_linked(a) ||
	    ioctl(s->fd, FIONREAD, &avail) != 0 || avail <= 0)
		return 0;
	n = (size_t)avail < AP_CHUNK ? (size_t)avail : AP_CHUNK;
	if (ap_output_begin(&a->wb, s->r->rank, s->stream, 0, &st) == NULL ||
	    ap_output_end_head(&a->wb, st, n) != 0) {
		dt_wbuf_reset(&a->wb);
		return 0;
	}
	rc = link_send_spliced(a->link, a->wb.p, a->wb.len, s->fd, n);
	dt_wbuf_reset(&a->wb);
	if (rc <= 0)
		return 0;	/* declined (or the link is down): read it */
	dt_heap_fed(n);
	agent_flush_wb(a);	/* pauses the pipes if the link backed up */
	return 1;
}

/* Reads one chunk (drain = 0) or all that is there (drain = 1) from a pipe, and forwards it. */
void
src_read(struct src *s, int drain)
{
	struct agent	*a = s->a;
	uint8_t		*p;
	size_t		 st;
	ssize_t		 n;

	while (s->fd >= 0) {
		if (src_splice(s)) {
			if (!drain)
				return;
			continue;
		}
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
		dt_heap_fed((size_t)n);	/* a flood: the link's queue on huge pages */
		agent_flush_wb(a);
		if (!drain)
			return;
	}
}

/*
 * Some rank pipes are readable: a chunk from each (fair to all, as the
 * event loop was when each pipe had its own event), then, if one ended,
 * one look at whether the job is over here.
 */
/* ARGSUSED */
static void
pipes_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent		*a = arg;
	struct epoll_event	 ev[64];
	struct src		*s;
	int			 i, n, ended = 0;

	if ((n = epoll_wait(a->pipes_ep, ev, 64, 0)) <= 0)
		return;
	for (i = 0; i < n && !a->pipes_paused; i++) {
		s = ev[i].data.ptr;
		if (s->fd < 0)
			continue;
		src_read(s, 0);
		ended |= s->fd < 0;
	}
	if (ended)
		shut_check(a);
}

/* The epoll set of the ranks' pipes, and its one event on the loop. */
static int
pipes_init(struct agent *a)
{
	if (a->pipes_ev != NULL)
		return 0;
	if ((a->pipes_ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return -errno;
	a->pipes_ev = event_new(a->base, a->pipes_ep, EV_READ | EV_PERSIST,
	    pipes_cb, a);
	if (a->pipes_ev == NULL) {
		close(a->pipes_ep);
		return -ENOMEM;
	}
	if (!a->pipes_paused)
		event_add(a->pipes_ev, NULL);
	return 0;
}

/* Frees the pipes' epoll set (every pipe is closed by then). */
static void
pipes_free(struct agent *a)
{
	if (a->pipes_ev == NULL)
		return;
	event_free(a->pipes_ev);
	a->pipes_ev = NULL;
	close(a->pipes_ep);
}

/* Reports a reaped rank: first everything it wrote, then how it ended. */
static void
rank_reaped(struct agent *a, struct rank *r, int status)
{
	struct ap_exit	x;

	r->reaped = 1;
	a->live--;
	waits_started(a->waits, r->rank, 0);
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
	shut_check(a);
	agent_flush_wb(a);
}

/* ARGSUSED */
static void
flush_cb(evutil_socket_t fd, short what, void *arg)
{
	agent_flush_wb(arg);
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

	if (!shut_talking(a))
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

/* Opens a non-blocking, close-on-exec pipe and its read event. */
static int
src_open(struct agent *a, struct rank *r, struct src *s, uint8_t stream,
    int *wfd)
{
	struct epoll_event	ev;
	int			fds[2], rc;

	s->a = a;
	s->r = r;
	s->stream = stream;
	s->fd = -1;
	if ((rc = pipes_init(a)) != 0)
		return rc;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1)
		return -errno;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = s;
	if (epoll_ctl(a->pipes_ep, EPOLL_CTL_ADD, fds[0], &ev) == -1) {
		rc = -errno;
		close(fds[0]);
		close(fds[1]);
		return rc;
	}
	/* The rank's end must block, as any program expects of stdout. */
	fcntl(fds[1], F_SETFL, 0);
	s->fd = fds[0];
	*wfd = fds[1];
	return 0;
}

/* START: starts every rank; a rank that cannot start is reported as such. */
void
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
	for (i = 0; i < a->nranks && a->shut == SHUT_NONE; i++) {
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
		waits_started(a->waits, r->rank, pid);
		ap_put_started(&a->wb, r->rank, pid);
		/* Batch STARTED frames: one write for many ranks. */
		if (a->wb.len > DT_WRITE_BATCH)
			agent_flush_wb(a);
	}
	spawn_batch_end();
	agent_flush_wb(a);
	record_commit(a->rec);
	shut_check(a);
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
		shut_finish(a);
		return 0;
	}
	if (ap_get_job(p, n, &a->job) != 0)
		return -1;
	agent_to(a, AGP_JOB);
	/* Each attempt's JOB says afresh whether this stream is worth packing. */
	link_pack(a->link, a->job.pack);
	agent_link_queue(a);
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
	    a->wb.len, shut_silent, a);
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
void
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
	rdzvrelay_free(a->store);
	a->store = NULL;
	progress_free(a->progress);
	a->progress = NULL;
	waits_free(a->waits);
	a->waits = NULL;
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
	a->ports_seen = a->killed = a->start_asked = 0;
	if (a->kill_timer != NULL)
		event_del(a->kill_timer);
	if (a->recheck != NULL)
		event_del(a->recheck);
}

/*
 * PREPARE. PREPARED waits in a->wb for the loop's next turn: a START read
 * with PREPARE (one host) sends its STARTED frames with it, one write. An
 * ERROR sends it at once (agent_error).
 */
static void
agent_prepare(struct agent *a)
{
	agent_to(a, AGP_PREPARING);
	a->holding = 1;
	prepare_start(a);
	a->holding = 0;
	if (a->wb.len > 0)
		event_active(a->flush_ev, EV_TIMEOUT, 0);
}

/*
 * START: the ranks start now, or once prepared when it came early (a
 * --setup still runs). -1: a second START this attempt.
 */
static int
agent_on_start(struct agent *a)
{
	if (a->start_asked)
		return -1;
	if (a->phase == AGP_PREPARING) {
		a->start_asked = 1;	/* prepare.c starts */
		return 0;
	}
	agent_start(a);
	return 0;
}

/* RDZV or STORE: dtrun's bytes for a rank's channel. 0, or -1: malformed. */
static int
agent_chan_frame(struct agent *a, uint8_t type, const uint8_t *p, size_t n)
{
	struct rdzvrelay	*r = type == AP_RDZV ? a->relay : a->store;
	const uint8_t		*rd;
	size_t			 rdlen;
	uint32_t		 u;

	if (ap_get_rdzv(p, n, &u, &rd, &rdlen) != 0)
		return -1;
	if (r != NULL)
		rdzvrelay_input(r, u, rd, rdlen);
	return 0;
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
	uint32_t	 u;
	int		 rc, bad = 1;

	/*
	 * Finishing, its loop ends after this callback: the table finds all
	 * dtrun sends stale then. Once the link is down (cut, closed) it
	 * delivers nothing more (link.h).
	 */
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
		agent_prepare(a);
		return;
	case AP_START:
		if (ap_get_empty(p, n) != 0)
			goto refuse;
		if (agent_on_start(a) != 0) {
			bad = 0;	/* once per attempt */
			goto refuse;
		}
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
		shut_signal_all(a, u, 0);
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
		shut_stop(a, SHUT_BY_ATTEMPT, st.signo, st.grace_ms);
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
	case AP_STORE:
		if (agent_chan_frame(a, type, p, n) != 0)
			goto refuse;
		return;
	case AP_CHECK:
		/* It starts no rank; stopping, there is nothing to check for. */
		if (a->shut != SHUT_NONE)
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
	shut_cut(a);
}

/* Frees what the conversation built: ranks, their pipes, the job, timers. */
static void
agent_release(struct agent *a)
{
	agent_forget(a);
	pipes_free(a);
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
	cbs.close = shut_link_close;
	cbs.drain = agent_drain_cb;
	cbs.arg = &a;
	if ((a.link = link_new(a.base, rfd, wfd, AP_FRAME_MAX, &cbs)) == NULL) {
		log_error("out of memory");
		return EXIT_INTERNAL;
	}
	agent_link_queue(&a);
	a.ev_chld = evsignal_new(a.base, SIGCHLD, sigchld_cb, &a);
	a.ev_term = evsignal_new(a.base, SIGTERM, shut_sigterm_cb, &a);
	a.kill_timer = evtimer_new(a.base, shut_kill_timer_cb, &a);
	a.recheck = evtimer_new(a.base, shut_recheck_cb, &a);
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
