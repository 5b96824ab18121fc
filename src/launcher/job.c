/*
 * job.c -- the job: start every host's agent, hand each its ranks, start
 * them all only once every host has checked its commands, forward output,
 * and stop everything at the first failure, signal or timeout.
 *
 * The first cause wins the exit status: a failing rank's code (128+N for
 * signal N), 128+N when dtrun itself got signal N, 124 for --timeout, 2 for
 * a configuration error found on a host, 255 for a lost agent (its link
 * broke, or it went silent past --heartbeat-timeout), 141 when dtrun's
 * stdout lost its reader (as SIGPIPE ends a pipeline's writer), 123
 * when --hang-timeout found the job hung.
 *
 * SIGQUIT (Ctrl-\\), an agent's STACKASK (dtrun-kill --stacks) and a hang
 * ask every agent for its ranks' stacks; the merged report (stackrep.h)
 * goes to stderr, the full stacks to a file. The job goes on. Ranks that
 * never join the rendezvous within --start-timeout get their stacks shown
 * too, before the job stops with 125.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "check.h"
#include "cli.h"
#include "dtlimits.h"
#include "netplan.h"
#include "rankenv.h"
#include "err.h"
#include "exitcodes.h"
#include "job.h"
#include "link.h"
#include "log.h"
#include "output.h"
#include "plan.h"
#include "port.h"
#include "rootcause.h"
#include "auth.h"
#include "agentproto.h"
#include "server.h"
#include "stackrep.h"
#include "status.h"
#include "strv.h"
#include "sync.h"
#include "sys.h"
#include "wire.h"
#include "xmalloc.h"


/* Every plan's ranks fit what an agent takes for one host. */
_Static_assert(AP_MAX_RANKS >= HF_RANKS_MAX, "AP_MAX_RANKS < HF_RANKS_MAX");
#define STK_WAIT_S	250		/* a report waits for agents at most
					   this long without a stack coming:
					   a rank's capture takes an agent
					   at most 2 x 120 s (stacks.c); a
					   dead agent is lost sooner, by its
					   heartbeat */

enum rank_state { R_WAITING, R_RUNNING, R_EXITED };

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

/* What a stack report ends in. */
enum stk_then {
	STK_THEN_NONE,			/* the job goes on */
	STK_THEN_HANG,			/* --hang-timeout: stop, 123 */
	STK_THEN_START			/* --start-timeout: stop, 125 */
};

struct job_rank {
	enum rank_state	 state;
	pid_t		 pid;
	struct rootcause *rc;		/* its ERRFILE, until its EXIT */
};

struct job {
	struct event_base	*base;
	const struct opts	*o;
	const struct plan	*plan;
	const char		*id;
	struct job_scope	*scope;
	struct job_host		**hosts;	/* the plan's, in its order */
	struct job_rank		*ranks;
	struct output		*out;
	struct dt_wbuf		 wb;
	struct env_ctx		 env;		/* what the ranks' variables are made of */
	struct status		*st;		/* the terminal's status line */
	struct status_end	 end;		/* how it failed, for the summary */
	struct rootcause	*root;		/* the first failure's error file */
	struct rootcause_who	 root_who;
	struct rdzv_server	*rdzv;
	char			 rdzv_addr[300];
	char			 rdzv_token[2 * RDZV_SECRET_LEN + 1];
	enum job_phase		 phase;
	size_t			 nhello;
	size_t			 nports_pending; /* PORTLIST replies owed */
	size_t			 nprepared;
	size_t			 ndone;
	size_t			 nrunning;
	size_t			 nexited;
	size_t			 nstarted;	/* ranks that ever ran */
	size_t			 nstopped;	/* ran, and ended once we stopped */
	int			 started;	/* START sent (and maybe stopped since) */
	int			 exit_set;
	int			 exit_code;
	int			 signals;	/* how many stop signals dtrun got */
	struct event		*ev_sig[64];	/* stop, QUIT, CHLD and forwarded */
	size_t			 nev_sig;
	struct event		*ev_timeout;
	struct stk_report	*stk;		/* a stack report being gathered */
	size_t			 stk_pending;	/* hosts whose stacks are owed */
	enum stk_then		 stk_then;	/* what to do once it is in */
	uint8_t			*stk_only;	/* NULL, or the ranks it covers */
	int			 stk_seq;	/* reports so far */
	uint64_t		 stk_end_ms;	/* when the last one ended */
	struct event		*ev_stk;	/* bounds stk_pending's wait */
	struct event		*ev_hang;	/* --hang-timeout */
	uint64_t		 life_ms;	/* a rank last wrote or beat */
	struct event		*ev_watchdog;
	struct sync		*sync;		/* --sync-dst-dir */
	int			 synced;
	struct check		*chk;		/* --check, --preflight */
	int			 checked;	/* its answers are in */
	struct job_attempt	*att;		/* this attempt, for restarts */
	enum job_cause		 cause;		/* what ended it first */
};

/* What outlives an attempt (job.h). */
struct job_scope {
	struct event_base	*base;
	const struct opts	*o;
	struct job_host		**all;		/* every host met, by name */
	size_t			 nall;
};

static void	job_advance(struct job *);
static void	job_host_silent(void *);

/* The signals dtrun handles; job_hold_signals holds those that act. */
static const int job_sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2,
    SIGCHLD, SIGQUIT };
/* The other --forward-signals of the last job_run: held between attempts too. */
static uint64_t job_fwd_mask;

void
job_hold_signals(int on)
{
	sigset_t	set;
	size_t		i;

	sigemptyset(&set);
	for (i = 0; i < sizeof(job_sigs) / sizeof(job_sigs[0]); i++)
		if (job_sigs[i] != SIGCHLD)
			sigaddset(&set, job_sigs[i]);
	for (i = 1; i < 64 && i < NSIG; i++)
		if (job_fwd_mask & (1ULL << i))
			sigaddset(&set, (int)i);
	sigprocmask(on ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

struct event_base *
job_base(struct job_host *h)
{
	return h->scope->base;
}

struct job_host **
job_hosts(struct job_host *h, size_t *n)
{
	*n = h->job->plan->nhosts;
	return h->job->hosts;
}

void
job_make_id(char *buf, size_t len)
{
	unsigned char	r[6];
	int		fd;
	size_t		i, n;

	/* Time first, so ids sort by start; then randomness against clashes. */
	n = snprintf(buf, len, "%lx-", (unsigned long)time(NULL));
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd == -1 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		for (i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(getpid() >> (i * 3) ^ clock());
	}
	if (fd != -1)
		close(fd);
	for (i = 0; i < sizeof(r) && n + 2 < len; i++, n += 2)
		snprintf(buf + n, len - n, "%02x", r[i]);
}

/* --heartbeat-timeout in milliseconds, as HEARTBEAT carries it. */
static uint64_t
job_beat_ms(const struct opts *o)
{
	return (uint64_t)(o->heartbeat_timeout * 1000 + 0.5);
}

/*
 * Notes what ends the job for --max-restarts, if it is the first cause:
 * call it before job_set_exit.
 */
static void
job_cause(struct job *j, enum job_cause c)
{
	if (!j->exit_set && j->cause == JC_NONE)
		j->cause = c;
}

/* True once STOP went out: nothing new starts. */
static int
job_stopping(const struct job *j)
{
	return j->phase == JP_STOPPING;
}

/* The first cause of the job's end sets the exit status. */
static void
job_set_exit(struct job *j, int code)
{
	if (!j->exit_set) {
		j->exit_set = 1;
		j->exit_code = code;
	}
}

/*
 * Records the first cause of a failed job's end for its summary; call it
 * before job_set_exit. Returns NULL if the job's end already had a cause.
 */
static struct status_end *
job_end(struct job *j, int cause)
{
	if (j->exit_set || j->end.cause != END_NONE)
		return NULL;
	j->end.cause = cause;
	return &j->end;
}

/*
 * How many ranks a stop now would stop: those running, and once START is
 * out, those another host may have started but not reported yet.
 */
static size_t
job_live(const struct job *j)
{
	return j->nrunning + (j->started ? j->plan->nranks - j->nexited -
	    j->nrunning : 0);
}

/*
 * Marks r ended. A rank that ran and ends once the job is stopping counts
 * as stopped: the summary says how many were, not how many might have
 * been.
 */
static void
job_rank_ended(struct job *j, struct job_rank *r)
{
	if (r->state == R_RUNNING) {
		j->nrunning--;
		if (job_stopping(j))
			j->nstopped++;
	}
	if (r->state != R_EXITED)
		j->nexited++;
	r->state = R_EXITED;
}

/* Queues what the encoders left in j->wb to h's agent. */
static void
job_send(struct job_host *h)
{
	struct job	*j = h->job;
	struct dt_wbuf	 wb;

	/* The small encoders fail only so; JOB and RANK are checked apart. */
	if (j->wb.oom) {
		log_error("out of memory");
		exit(EXIT_INTERNAL);
	}
	if (j->wb.len == 0 || h->done || h->link == NULL) {
		dt_wbuf_reset(&j->wb);
		return;
	}
	/*
	 * Sending to an ssh host can read and handle other hosts' frames
	 * before it returns, and those handlers encode into j->wb and send:
	 * this host's bytes go from a buffer of their own, so no host is
	 * ever sent another's frames.
	 */
	wb = j->wb;
	dt_wbuf_init(&j->wb);
	link_send(h->link, wb.p, wb.len);
	if (j->wb.cap == 0) {
		j->wb = wb;		/* keep the allocation */
		dt_wbuf_reset(&j->wb);
	} else
		dt_wbuf_free(&wb);
}

/* Ends the event loop once every host is done. */
static void
job_check_done(struct job *j)
{
	if (j->ndone == j->plan->nhosts)
		event_base_loopbreak(j->base);
}

/* ARGSUSED */
static void
watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;
	size_t		 h;

	for (h = 0; h < j->plan->nhosts; h++) {
		if (j->hosts[h]->done)
			continue;
		log_error("agent on %s did not finish stopping its ranks: "
		    "cutting it off", j->hosts[h]->ph->name);
		j->hosts[h]->be->kill(j->hosts[h]);
		j->hosts[h]->done = 1;
		j->ndone++;
	}
	job_set_exit(j, EXIT_LOST);
	job_check_done(j);
}

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
	struct timeval	tv;

	tv.tv_sec = (time_t)secs;
	tv.tv_usec = (suseconds_t)((secs - (double)tv.tv_sec) * 1e6);
	event_add(ev, &tv);
}

/* Tells every agent to stop its ranks: sig now, SIGKILL after the grace. */
static void
job_stop(struct job *j, int sig, double grace)
{
	struct ap_stop	st;
	struct timeval	tv;
	size_t		h;

	st.signo = sig;
	st.grace_ms = sig == SIGKILL ? 0 : (uint64_t)(grace * 1000);
	/* Workers blocked in a rendezvous wait hear of it, not hang. */
	if (!job_stopping(j) && j->rdzv != NULL)
		rdzv_server_abort(j->rdzv, "the job is stopping");
	j->phase = JP_STOPPING;
	sync_stop(j->sync);
	for (h = 0; h < j->plan->nhosts; h++) {
		if (j->hosts[h]->done)
			continue;
		if (!j->hosts[h]->hello && j->hosts[h]->be->unreached != NULL &&
		    j->hosts[h]->be->unreached(j->hosts[h])) {
			job_host_closed(j->hosts[h], DT_ERR_ABORTED, "stopped "
			    "before its agent connected");
			continue;
		}
		ap_put_stop(&j->wb, &st);
		job_send(j->hosts[h]);
	}
	/* Agents kill after the grace; this only catches an agent that hangs. */
	if (!event_pending(j->ev_watchdog, EV_TIMEOUT, NULL) || sig == SIGKILL) {
		tv.tv_sec = (time_t)grace + 5;
		tv.tv_usec = 0;
		event_add(j->ev_watchdog, &tv);
	}
}

/* Where the full stacks of report seq go: --output-dir's stacks/, else $TMPDIR. */
static void
job_stacks_path(struct job *j, char *buf, size_t len)
{
	const char	*tmp = getenv("TMPDIR");
	const char	*dir = j->att->output_dir;

	if (dir != NULL) {
		snprintf(buf, len, "%s/stacks", dir);
		(void)mkdir(buf, 0755);
		snprintf(buf, len, "%s/stacks/stacks-%d.txt", dir, j->stk_seq);
		return;
	}
	if (j->att->n > 0)
		snprintf(buf, len, "%s/dtrun-%s-attempt%d-stacks-%d.txt", tmp !=
		    NULL && tmp[0] == '/' ? tmp : "/tmp", j->id, j->att->n,
		    j->stk_seq);
	else
		snprintf(buf, len, "%s/dtrun-%s-stacks-%d.txt", tmp != NULL &&
		    tmp[0] == '/' ? tmp : "/tmp", j->id, j->stk_seq);
}

/* A stack report is in, or could not be asked: act on what it was for. */
static void
job_stacks_then(struct job *j)
{
	struct status_end	*end;
	enum stk_then		 then = j->stk_then;

	j->stk_then = STK_THEN_NONE;
	if (then == STK_THEN_NONE || job_stopping(j))
		return;
	if (then == STK_THEN_HANG) {
		if (j->o->on_hang_report)
			return;
		if ((end = job_end(j, END_HANG)) != NULL)
			end->timeout = j->o->hang_timeout;
		job_cause(j, JC_HANG);
		job_set_exit(j, EXIT_HANG);
	}
	/* STK_THEN_START: its cause and 125 were set when it timed out. */
	job_stop(j, SIGTERM, j->o->kill_grace);
}

/* True if the report being gathered covers rank. */
static int
job_stacks_cover(const struct job *j, uint32_t rank)
{
	return j->stk_only == NULL || j->stk_only[rank];
}

/*
 * Every host answered, or the wait ran out: print the merged report, write
 * the full stacks, and for a hang (not --on-hang report) stop the job.
 */
static void
job_stacks_done(struct job *j)
{
	char		 path[4096], **lines;
	size_t		 h, i, n;
	int		 r, k;

	event_del(j->ev_stk);
	for (h = 0; h < j->plan->nhosts; h++) {
		if (!j->hosts[h]->stk_waiting)
			continue;
		j->hosts[h]->stk_waiting = 0;
		for (k = 0; k < j->hosts[h]->ph->nranks; k++) {
			r = j->hosts[h]->ph->ranks[k];
			if (j->ranks[r].state == R_RUNNING &&
			    job_stacks_cover(j, r))
				stk_report_missing(j->stk, r, "no reply from "
				    "the agent in time");
		}
	}
	j->stk_pending = 0;
	j->stk_seq++;
	job_stacks_path(j, path, sizeof(path));
	if ((lines = stk_report_lines(j->stk, &n)) == NULL)
		log_error("stacks: out of memory");
	else {
		log_error("stacks of %zu rank%s in %zu group%s, outliers first:",
		    stk_report_count(j->stk), stk_report_count(j->stk) == 1 ?
		    "" : "s", n, n == 1 ? "" : "s");
		for (i = 0; i < n; i++) {
			log_error("  %s", lines[i]);
			free(lines[i]);
		}
		free(lines);
	}
	if (stk_report_write(j->stk, path) == 0)
		log_error("full stacks of every rank: %s", path);
	else
		log_error("cannot write the full stacks to %s: %s", path,
		    strerror(errno));
	stk_report_free(j->stk);
	j->stk = NULL;
	free(j->stk_only);
	j->stk_only = NULL;
	j->stk_end_ms = now_ms();
	job_stacks_then(j);
}

/* True if the report being gathered covers any of h's ranks. */
static int
job_stacks_host(const struct job *j, const struct job_host *h)
{
	int	k;

	for (k = 0; k < h->ph->nranks; k++)
		if (job_stacks_cover(j, h->ph->ranks[k]))
			return 1;
	return 0;
}

/*
 * Asks the agents for their ranks' stacks (why: what asked, for the user):
 * every agent, or with j->stk_only those running a rank it names. A report
 * already being gathered answers this ask too. Whatever the report is for
 * (j->stk_then) happens once it is in, or now if none can be asked.
 */
static void
job_stacks_ask(struct job *j, const char *why)
{
	size_t	h;

	if (j->stk != NULL)
		return;
	if (!j->started || j->nrunning == 0 || job_stopping(j)) {
		log_warn("%s: no rank is running: no stacks to show", why);
		free(j->stk_only);
		j->stk_only = NULL;
		job_stacks_then(j);
		return;
	}
	if ((j->stk = stk_report_new(j->plan->nranks)) == NULL) {
		log_error("stacks: out of memory");
		job_stacks_then(j);
		return;
	}
	if (j->stk_then == STK_THEN_NONE)
		log_notice("%s: asking every agent for its ranks' stacks (the "
		    "job goes on)", why);
	for (h = 0; h < j->plan->nhosts; h++) {
		if (j->hosts[h]->done || !j->hosts[h]->hello ||
		    !job_stacks_host(j, j->hosts[h]))
			continue;
		ap_put_empty(&j->wb, AP_STACKS);
		j->hosts[h]->stk_waiting = 1;
		j->stk_pending++;
		job_send(j->hosts[h]);
	}
	if (j->stk_pending == 0) {
		job_stacks_done(j);
		return;
	}
	timer_arm(j->ev_stk, STK_WAIT_S);
}

/* ARGSUSED */
static void
stk_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;

	if (j->stk != NULL)
		job_stacks_done(j);
}

/* One STACK from h's agent: a rank's stack, or (AP_NORANK) the end of them. */
static void
job_host_stack(struct job_host *h, const struct ap_stack *k)
{
	struct job	*j = h->job;

	if (j->stk == NULL || !h->stk_waiting)
		return;		/* late, after the report was made */
	if (k->rank == AP_NORANK) {
		h->stk_waiting = 0;
		if (--j->stk_pending == 0)
			job_stacks_done(j);
		return;
	}
	if (k->rank >= j->plan->nranks ||
	    j->plan->ranks[k->rank].host != h->index ||
	    !job_stacks_cover(j, k->rank))
		return;
	stk_report_rank(j->stk, k->rank, h->ph->name, (pid_t)k->pid,
	    k->status, k->tool, k->text);
	/* Many ranks on slow tools: wait while stacks keep coming. */
	timer_arm(j->ev_stk, STK_WAIT_S);
}

/*
 * Rank shows it is alive without printing (a heartbeat): it counts as a
 * line written for --hang-timeout.
 */
static void
job_rank_alive(struct job *j, int rank)
{
	j->life_ms = now_ms();
}

/*
 * --hang-timeout: no rank wrote a line (or beat) for that long. Ask for
 * the stacks; job_stacks_done then stops the job unless --on-hang report.
 */
/* ARGSUSED */
static void
hang_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;
	uint64_t	 idle = now_ms() - j->life_ms;
	uint64_t	 limit = (uint64_t)(j->o->hang_timeout * 1000);

	if (job_stopping(j))
		return;
	if (idle < limit || j->stk != NULL || j->nrunning == 0) {
		timer_arm(j->ev_hang, idle < limit ? (limit - idle) / 1000.0 :
		    j->o->hang_timeout);
		return;
	}
	log_error("no rank has written a line for %g s (--hang-timeout)%s",
	    j->o->hang_timeout, j->o->on_hang_report ? "" :
	    ": stopping the job once its stacks are in");
	j->stk_then = STK_THEN_HANG;
	/* Report mode: the next report after another quiet period. */
	j->life_ms = now_ms();
	timer_arm(j->ev_hang, j->o->hang_timeout);
	job_stacks_ask(j, "hang");
}

/* Describes how a rank ended ("exited with code 3", "was killed by signal 9 (Killed)"). */
static void
describe_end(char *buf, size_t len, const struct ap_exit *x)
{
	if (x->how == AP_SIGNALED)
		snprintf(buf, len, "was killed by signal %u (%s)", x->code,
		    strsignal(x->code));
	else if (x->how == AP_NOSTART)
		snprintf(buf, len, "could not start: %s", strerror(x->code));
	else
		snprintf(buf, len, "exited with code %u", x->code);
}

/* The first failure's error file (taken over), for the summary. */
static void
job_root(struct job *j, struct job_host *h, const struct ap_exit *x,
    struct rootcause *rc)
{
	struct rootcause_who	*w = &j->root_who;

	if (rc == NULL)
		return;
	j->root = rc;
	w->rank = x->rank;
	w->local_rank = j->plan->ranks[x->rank].local_rank;
	w->host = h->ph->name;
	w->pid = (int)j->ranks[x->rank].pid;
	w->exitcode = x->how == AP_SIGNALED ? -(int)x->code : (int)x->code;
	w->name = rootcause_name(j->o->cmd, j->o->ncmd);
}

/* A rank ended: the first failure stops the job. */
static void
job_rank_exit(struct job_host *h, const struct ap_exit *x)
{
	struct job	*j = h->job;
	struct job_rank	*r;
	struct rootcause *rc;
	struct status_end *end;
	char		 how[128];
	size_t		 left;
	int		 code;

	if (x->rank >= j->plan->nranks ||
	    j->plan->ranks[x->rank].host != h->index)
		return;
	r = &j->ranks[x->rank];
	rc = r->rc;
	r->rc = NULL;
	job_rank_ended(j, r);
	output_rank_end(j->out, x->rank);
	if (x->how == AP_EXITED && x->code == 0)
		goto out;
	if (x->how == AP_SIGNALED)
		code = EXIT_SIGNAL(x->code);
	else if (x->how == AP_NOSTART)
		code = x->code == ENOEXEC || x->code == EACCES ? EXIT_NOEXEC :
		    EXIT_NOTFOUND;
	else
		code = x->code;
	if (job_stopping(j) || j->stk_then == STK_THEN_START)
		goto out;	/* stopped by us, or after the first failure;
				   or ending, once the missing ranks' stacks
				   are in (their peers were told to abort) */
	describe_end(how, sizeof(how), x);
	left = job_live(j);
	if (r->pid > 0)
		log_error("rank %u on %s (pid %d) %s; stopping %zu other "
		    "rank%s", x->rank, h->ph->name, (int)r->pid, how, left,
		    left == 1 ? "" : "s");
	else
		log_error("rank %u on %s %s; stopping %zu other rank%s",
		    x->rank, h->ph->name, how, left, left == 1 ? "" : "s");
	if ((end = job_end(j, END_RANK)) != NULL) {
		end->rank = x->rank;
		end->host = h->ph->name;
		snprintf(end->how, sizeof(end->how), "%s", how);
		job_root(j, h, x, rc);
		rc = NULL;
	}
	job_cause(j, JC_RANK);
	job_set_exit(j, code);
	job_stop(j, SIGTERM, j->o->kill_grace);
out:
	rootcause_free(rc);
}

/*
 * A JOB or RANK for h could not be encoded (rc): say which limit it broke,
 * for rank (-1: the variables every rank shares), and stop the job.
 */
static void
job_put_failed(struct job_host *h, int rc, int rank)
{
	struct job	*j = h->job;
	char		 what[64];

	if (rank < 0)
		snprintf(what, sizeof(what), "the variables (and --setup) for "
		    "%s", h->ph->name);
	else
		snprintf(what, sizeof(what), "rank %d's command line and "
		    "variables", rank);
	if (rc == DT_ERR_TOOBIG) {
		log_error("%s are too big to carry: at most %d strings of %d "
		    "KiB each, %d MiB in all (execve takes less: see ARG_MAX)",
		    what, AP_MAX_STRS, AP_MAX_STR / 1024, AP_MSG_MAX >> 20);
		job_set_exit(j, EXIT_CONFIG);
	} else {
		log_error("%s: out of memory", what);
		job_set_exit(j, EXIT_INTERNAL);
	}
	dt_wbuf_reset(&j->wb);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

/*
 * Logs an agent's message one line at a time (a failed --setup sends its
 * stderr's last lines): each line escaped and marked as ours, so none can
 * pose as another.
 */
static void
job_log_lines(const char *msg)
{
	const char	*nl;

	while ((nl = strchr(msg, '\n')) != NULL) {
		log_error("%.*s", (int)(nl - msg), msg);
		msg = nl + 1;
	}
	if (*msg != '\0')
		log_error("%s", msg);
}

/* Sends h the job, the host's ranks, and PREPARE. */
static void
job_host_hello(struct job_host *h)
{
	struct job		*j = h->job;
	const struct plan	*p = j->plan;
	const struct plan_host	*ph = h->ph;
	struct strv		 env = { 0 }, renv = { 0 }, defs = { 0 };
	struct ap_job		 aj;
	struct ap_rank		 ar;
	char			 cwd[4096], ifc[AP_IFACE_MAX];
	int			 i, r, rc;

	env_host(&j->env, h->index, &env);
	env_defaults(&j->env, h->index, &defs);

	memset(&aj, 0, sizeof(aj));
	aj.version = AP_VERSION;
	aj.job_id = (char *)j->id;
	/* Locally the agent inherits our directory; remote ones are told. */
	aj.cwd = p->local || getcwd(cwd, sizeof(cwd)) == NULL ? "" : cwd;
	if (j->o->sync_dst != NULL)
		aj.cwd = (char *)sync_dir(j->o, ph, p->local, cwd, sizeof(cwd));
	aj.kill_grace_ms = (uint64_t)(j->o->kill_grace * 1000);
	aj.nranks = ph->nranks;
	aj.env = env.v;
	aj.nenv = env.n;
	aj.setup = (char *)(j->o->setup != NULL ? j->o->setup : "");
	/* Over hosts, each agent chooses its own interface (env.h). */
	aj.ifvars = env_host_iface(&j->env, h->index, ifc, sizeof(ifc));
	aj.iface = ifc;
	aj.rank0 = j->env.per_host ? j->env.rank0_addr : "";
	aj.pack = (uint8_t)h->be->pack;
	aj.defaults = defs.v;
	aj.ndefaults = defs.n;
	/* torch's @record writes the exception there: the summary shows it. */
	aj.errfile = (j->env.frameworks & FW_PYTORCH) != 0;
	rc = ap_put_job(&j->wb, &aj);
	strv_free(&env);
	strv_free(&defs);
	if (rc != 0) {
		job_put_failed(h, rc, -1);
		return;
	}
	job_send(h);

	for (i = 0; i < ph->nranks; i++) {
		r = ph->ranks[i];
		env_rank(&j->env, r, &renv);
		ar.rank = r;
		ar.local_rank = p->ranks[r].local_rank;
		ar.argv = j->o->cmd;
		ar.argc = j->o->ncmd;
		ar.env = renv.v;
		ar.nenv = renv.n;
		rc = ap_put_rank(&j->wb, &ar);
		strv_free(&renv);
		if (rc != 0) {
			job_put_failed(h, rc, r);
			return;
		}
		if (j->wb.len > DT_WRITE_BATCH)
			job_send(h);
	}
	ap_put_empty(&j->wb, AP_PREPARE);
	job_send(h);
}

/*
 * TF_CONFIG names a port for every worker, free on that worker's host:
 * for hosts that are not this machine, ask their agents. Returns the
 * number of hosts asked (0: nothing to wait for).
 */
static size_t
job_ask_ports(struct job *j)
{
	size_t	h, asked = 0;

	if (j->env.worker_ports == NULL || plan_on_loopback(j->plan))
		return 0;
	/*
	 * Count the replies owed before asking: an ssh host's reply can be
	 * read and handled inside job_send, before the next host is asked.
	 */
	for (h = 0; h < j->plan->nhosts; h++)
		if (j->hosts[h]->ph->nworkers > 0)
			asked++;
	j->nports_pending = asked;
	for (h = 0; h < j->plan->nhosts; h++) {
		if (j->hosts[h]->ph->nworkers == 0)
			continue;
		ap_put_ports(&j->wb, j->hosts[h]->ph->nworkers);
		job_send(j->hosts[h]);
	}
	return asked;
}

/* h's agent sent the ports its workers are to use. */
static void
job_host_ports(struct job_host *h, const int *ports, uint32_t n)
{
	struct job	*j = h->job;
	uint32_t	 k = 0;
	int		 i, r;

	for (i = 0; i < h->ph->nranks && k < n; i++) {
		r = h->ph->ranks[i];
		if (j->plan->ranks[r].role == HF_ROLE_WORKER)
			j->env.worker_ports[r] = ports[k++];
	}
	log_info("%s: its agent chose %u free port%s for TF_CONFIG",
	    h->ph->name, n, n == 1 ? "" : "s");
}

/* Every agent said HELLO (and sent ports if asked): hand each its part of the job. */
static void
job_send_all(struct job *j)
{
	size_t	h;

	/* MASTER_PORT must be free on rank 0's host: its agent found one. */
	if (j->hosts[0]->free_port != 0 &&
	    (int)j->hosts[0]->free_port != j->att->prev_port)
		j->env.master_port = j->hosts[0]->free_port;
	for (h = 0; h < j->plan->nhosts && !job_stopping(j); h++)
		job_host_hello(j->hosts[h]);
}

void
job_host_send(struct job_host *h, struct dt_wbuf *b)
{
	dt_wbuf_put(&h->job->wb, b->p, b->len);
	dt_wbuf_reset(b);
	job_send(h);
}

void
job_checked(struct job *j, int code)
{
	j->checked = 1;
	if (job_stopping(j))
		return;
	if (code == 0 && !j->o->check) {
		job_advance(j);
		return;
	}
	if (code != 0)
		job_set_exit(j, code);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

void
job_status_done(struct job *j)
{
	status_done(j->st);
}

/* The --sync-dst-dir copies are done (code 0) or one failed. */
static void
job_synced(void *arg, int code)
{
	struct job	*j = arg;

	j->synced = 1;
	if (code != 0) {
		job_set_exit(j, code);
		if (!job_stopping(j))
			job_stop(j, SIGTERM, j->o->kill_grace);
	}
	job_advance(j);
}

/* Every host has checked its commands: start all ranks everywhere. */
static void
job_start_all(struct job *j)
{
	size_t	h;

	j->started = 1;
	for (h = 0; h < j->plan->nhosts; h++) {
		ap_put_empty(&j->wb, AP_START);
		job_send(j->hosts[h]);
	}
	j->life_ms = now_ms();
	if (j->o->hang_timeout > 0)
		timer_arm(j->ev_hang, j->o->hang_timeout);
	log_info("started %zu rank%s on %zu host%s (job %s)", j->plan->nranks,
	    j->plan->nranks == 1 ? "" : "s", j->plan->nhosts,
	    j->plan->nhosts == 1 ? "" : "s", j->id);
}

/*
 * Moves the attempt on once its phase's wait is over: every HELLO (and the
 * sync), then every CHECKED (--check, --preflight), then every PORTLIST
 * where asked, then every PREPARED. Call it
 * after anything that may end a wait. What it sends can bring replies
 * handled before it returns (ssh), which call it again: each phase is
 * entered before its messages go out, so none is entered twice.
 */
static void
job_advance(struct job *j)
{
	size_t	n = j->plan->nhosts;

	for (;;) {
		switch (j->phase) {
		case JP_CONNECTING:
			if (j->nhello < n || (j->sync != NULL && !j->synced))
				return;
			j->phase = JP_CHECKING;
			if (j->chk != NULL)
				check_begin(j->chk, j->hosts);
			break;
		case JP_CHECKING:
			if (j->chk != NULL && !j->checked)
				return;
			j->phase = JP_PORTS;
			job_ask_ports(j);
			break;
		case JP_PORTS:
			if (j->nports_pending > 0)
				return;
			j->phase = JP_PREPARING;
			job_send_all(j);
			break;
		case JP_PREPARING:
			if (j->nprepared < n)
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

/* PORTLIST: the ports h's agent found for its workers (TF_CONFIG). */
static int
job_on_portlist(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	uint32_t	 nports;
	int		*ports;

	if (h->got_ports || ap_get_portlist(p, n, &ports, &nports) != 0)
		return -1;
	if (nports != (uint32_t)h->ph->nworkers) {
		free(ports);
		return -1;
	}
	h->got_ports = 1;
	job_host_ports(h, ports, nports);
	free(ports);
	if (j->nports_pending > 0)
		j->nports_pending--;
	job_advance(j);
	return 0;
}

/* HELLO: h's agent is up (first, or again after AGAIN). */
static int
job_on_hello(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	struct ap_hello	 hello;

	if (h->hello || ap_get_hello(p, n, &hello) != 0)
		return -1;
	h->hello = 1;
	if (h->be->news != NULL)
		h->be->news(h, JN_HELLO);
	free(h->agent_host);
	h->agent_host = hello.hostname;
	h->agent_pid = (pid_t)hello.pid;
	h->free_port = hello.free_port;
	status_connected(j->st, h->ph->name, hello.hostname, hello.pid);
	if (hello.version != AP_VERSION) {
		log_error("%s: agent speaks protocol %u, dtrun %d: install the "
		    "same dtrun version there", h->ph->name, hello.version,
		    AP_VERSION);
		job_set_exit(j, EXIT_CONFIG);
		job_stop(j, SIGTERM, j->o->kill_grace);
		return 0;
	}
	/*
	 * From now on it hears from us, and we expect to hear from it: the
	 * link beats for us (on across attempts, as long as the agent is
	 * kept); this first HEARTBEAT tells the agent the timeout.
	 */
	if (j->o->heartbeat_timeout > 0) {
		ap_put_heartbeat(&j->wb, job_beat_ms(j->o));
		if (link_heartbeat(h->link, job_beat_ms(j->o), j->wb.p, j->wb.len,
		    job_host_silent, h) != 0) {
			log_error("out of memory");
			exit(EXIT_INTERNAL);
		}
		job_send(h);
	}
	j->nhello++;
	job_advance(j);
	return 0;
}

/* STARTED: one of h's ranks runs. */
static int
job_on_started(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	uint32_t	 rank, pid;

	if (ap_get_started(p, n, &rank, &pid) != 0 || rank >= j->plan->nranks)
		return -1;
	j->ranks[rank].pid = pid;
	if (j->ranks[rank].state == R_WAITING) {
		j->ranks[rank].state = R_RUNNING;
		j->nrunning++;
		j->nstarted++;
		status_add(j->st, ST_STARTED);
	}
	return 0;
}

/* ERROR: h's agent could not go on; a host going down counts as lost. */
static int
job_on_error(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	struct ap_error	 e;

	if (ap_get_error(p, n, &e) != 0)
		return -1;
	if (h->be->news != NULL)
		h->be->news(h, JN_ERROR);
	if (!job_stopping(j) || !j->started)
		job_log_lines(e.msg);
	/* 143: the agent got SIGTERM (a host going down); 255: its keeper died. */
	if (e.rank == AP_NORANK && (e.code == EXIT_AGENT_TERM ||
	    e.code == EXIT_LOST)) {
		h->lost = 1;
		job_cause(j, JC_LOST);
		if (j->att != NULL && j->att->what[0] == '\0')
			snprintf(j->att->what, sizeof(j->att->what), "%s",
			    e.msg);
	}
	job_set_exit(j, e.code);
	ap_error_free(&e);
	if (!job_stopping(j))
		job_stop(j, SIGTERM, j->o->kill_grace);
	return 0;
}

/* IFACE: the interface h's agent chose for its ranks, or why none. */
static int
job_on_iface(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	struct ap_iface	 fi;
	int		 rc;

	if (h->prepared || ap_get_iface(p, n, &fi) != 0)
		return -1;
	rc = env_host_chose(&j->env, h->index, &fi);
	ap_iface_free(&fi);
	if (rc != 0) {
		job_set_exit(j, EXIT_CONFIG);
		if (!job_stopping(j))
			job_stop(j, SIGTERM, j->o->kill_grace);
	}
	return 0;
}

/* STACK, STACKASK: a rank's stack for the report, or an agent asking for one. */
static int
job_on_stack(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	struct ap_stack	 stk;

	if (type == AP_STACK) {
		if (ap_get_stack(p, n, &stk) != 0)
			return -1;
		job_host_stack(h, &stk);
		ap_stack_free(&stk);
		return 0;
	}
	if (ap_get_empty(p, n) != 0)
		return -1;
	/* Ctrl-\ reaches dtrun and a local agent: one report. */
	if (j->stk == NULL && now_ms() - j->stk_end_ms > 1000)
		job_stacks_ask(j, "an agent got SIGQUIT (dtrun-kill --stacks)");
	return 0;
}

/* ERRFILE: what a rank's torch @record wrote; kept for its EXIT, next. */
static int
job_on_errfile(struct job_host *h, const uint8_t *p, size_t n)
{
	struct job		*j = h->job;
	struct ap_errfile	 f;
	struct job_rank		*r;

	if (ap_get_errfile(p, n, &f) != 0)
		return -1;
	if (f.rank >= j->plan->nranks ||
	    j->plan->ranks[f.rank].host != h->index) {
		ap_errfile_free(&f);
		return -1;
	}
	r = &j->ranks[f.rank];
	rootcause_free(r->rc);
	r->rc = rootcause_new(&f);
	ap_errfile_free(&f);
	return 0;
}

/* PREPARED, DONE: one of the phases' replies (job_advance), or the end of h's part. */
static int
job_on_empty(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	uint64_t	 got, frames;

	if (ap_get_empty(p, n) != 0)
		return -1;
	if (type == AP_PREPARED) {
		if (h->prepared)
			return -1;
		h->prepared = 1;
		status_add(j->st, ST_READY);
		j->nprepared++;
		job_advance(j);
		return 0;
	}
	if (h->done)
		return -1;
	h->done = 1;
	link_counts(h->link, &got, &frames);
	log_debug("%s: done; its frames, %llu bytes so far, came in %llu "
	    "bytes%s", h->ph->name, (unsigned long long)frames,
	    (unsigned long long)got, got < frames ? " (packed)" : "");
	/* Its ranks and what they left are gone; it waits for AGAIN. */
	h->idle = !h->lost;
	j->ndone++;
	job_check_done(j);
	return 0;
}

/* One frame of h's attempt; -1 if it is malformed or out of place. */
static int
job_on_frame(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	struct job	*j = h->job;
	struct ap_output out;
	struct ap_exit	 x;
	uint64_t	 ms;

	switch (type) {
	case AP_PORTLIST:
		return job_on_portlist(h, p, n);
	case AP_HELLO:
		return job_on_hello(h, p, n);
	case AP_STARTED:
		return job_on_started(h, p, n);
	case AP_OUTPUT:
		if (ap_get_output(p, n, &out) != 0 || out.rank >= j->plan->nranks)
			return -1;
		status_done(j->st);
		j->life_ms = now_ms();
		output_feed(j->out, out.rank, out.stream, out.data, out.len);
		return 0;
	case AP_EXIT:
		if (ap_get_exit(p, n, &x) != 0)
			return -1;
		job_rank_exit(h, &x);
		return 0;
	case AP_ERROR:
		return job_on_error(h, p, n);
	case AP_IFACE:
		return job_on_iface(h, p, n);
	case AP_ERRFILE:
		return job_on_errfile(h, p, n);
	case AP_CHECKED:
		return j->chk == NULL ? -1 : check_frame(j->chk, h, p, n);
	case AP_HEARTBEAT:
		return ap_get_heartbeat(p, n, &ms) != 0 ? -1 : 0;
	case AP_STACK:
	case AP_STACKASK:
		return job_on_stack(h, type, p, n);
	case AP_PREPARED:
	case AP_DONE:
		return job_on_empty(h, type, p, n);
	}
	return -1;
}

void
job_host_frame(struct job_host *h, uint8_t type, const uint8_t *p, size_t n)
{
	/* Between attempts an idle agent only beats; the rest is stale. */
	if (h->job == NULL || job_on_frame(h, type, p, n) == 0)
		return;
	log_error("%s: agent sent a bad %s message: cutting it off",
	    h->ph->name, ap_type_name(type));
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
		if (j->ranks[r].state == R_RUNNING) {
			job_rank_ended(j, &j->ranks[r]);
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
	if (j == NULL || h->done)
		return;
	h->done = 1;
	j->ndone++;
	if ((end = job_end(j, END_LOST)) != NULL)
		end->host = h->ph->name;
	if (err != DT_ERR_ABORTED && (h->hello || !job_stopping(j)))
		h->lost = 1;
	job_cause(j, JC_LOST);
	if (err == DT_ERR_ABORTED || (!h->hello && job_stopping(j)))
		;		/* the job was already stopping: no news */
	else if (!h->hello)	/* never got as far as its agent */
		log_error("%s: %s", h->ph->name, why);
	else if (!job_stopping(j) || j->started)
		log_error("lost the agent on %s (%s)%s", h->ph->name, why,
		    job_stopping(j) ? "" : ": stopping the job");
	job_set_exit(j, EXIT_LOST);
	if (h->stk_waiting) {
		h->stk_waiting = 0;
		if (--j->stk_pending == 0)
			job_stacks_done(j);
	}
	lost = job_ranks_orphaned(h);
	if (end != NULL)
		end->rank = (int)lost;
	if (!job_stopping(j))
		job_stop(j, SIGTERM, j->o->kill_grace);
	job_check_done(j);
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
	struct job	*j = arg;
	size_t		 h;

	for (h = 0; h < j->plan->nhosts; h++)
		if (!j->hosts[h]->done && j->hosts[h]->link != NULL)
			link_pause(j->hosts[h]->link, on);
}

/*
 * dtrun's stdout (1) or stderr (2) lost its reader. Without --output-dir
 * that output has nowhere to go: stop the job as SIGPIPE stops the writer
 * of a pipeline. With it, the files still get everything: go on.
 */
static void
job_output_closed(void *arg, int stream)
{
	struct job	*j = arg;

	if (stream != 1)
		return;		/* messages to a closed stderr are lost anyway */
	if (j->o->output_dir != NULL) {
		log_warn("stdout was closed (its reader went away): the job "
		    "goes on, its output is still written to %s",
		    j->o->output_dir);
		return;
	}
	if (j->exit_set)
		return;		/* something else ended it first */
	job_set_exit(j, EXIT_PIPE);
	if (j->hosts == NULL || j->ndone == j->plan->nhosts) {
		log_error("stdout was closed (its reader went away) before "
		    "all output was written (exit %d, as SIGPIPE would)",
		    EXIT_PIPE);
		return;
	}
	log_error("stdout was closed (its reader went away): stopping %zu "
	    "rank%s, as SIGPIPE would (exit %d)", j->nrunning,
	    j->nrunning == 1 ? "" : "s", EXIT_PIPE);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

/* Passes sig to every rank on every host (--forward-signals); the job goes on. */
static void
job_forward_signal(struct job *j, int sig)
{
	size_t	h, n = job_live(j);

	if (job_stopping(j) || n == 0 || !j->started) {
		log_warn("got SIG%s %s: not passed on", sigabbrev_np(sig),
		    job_stopping(j) ? "while stopping" : "before any rank started");
		return;
	}
	log_notice("got SIG%s: passing it to %zu rank%s", sigabbrev_np(sig),
	    n, n == 1 ? "" : "s");
	for (h = 0; h < j->plan->nhosts; h++) {
		if (j->hosts[h]->done)
			continue;
		ap_put_signal(&j->wb, sig);
		job_send(j->hosts[h]);
	}
}

/* ARGSUSED */
static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct job	*j = arg;
	struct status_end *end;
	pid_t		 pid;
	size_t		 h, n;
	int		 status;

	switch (sig) {
	case SIGCHLD:
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (sync_reaped(j->sync, pid, status))
				continue;
			for (h = 0; h < j->plan->nhosts; h++)
				j->hosts[h]->be->reaped(j->hosts[h], pid,
				    status);
		}
		return;
	case SIGQUIT:
		job_stacks_ask(j, "got SIGQUIT");
		return;
	}
	if (sig < 64 && (j->o->fwd_signals & (1ULL << sig))) {
		job_forward_signal(j, sig);
		return;
	}
	if (sig == SIGUSR1 || sig == SIGUSR2) {
		/* Caught all the same: its default would kill dtrun blind. */
		log_warn("got SIG%s: not in --forward-signals, ignored",
		    sigabbrev_np(sig));
		return;
	}
	if (++j->signals == 1) {
		n = job_live(j);
		if (!job_stopping(j) && n == 0)
			log_warn("got SIG%s before any rank started: stopping "
			    "(again to kill at once)", sigabbrev_np(sig));
		else if (!job_stopping(j))
			log_warn("got SIG%s: stopping %zu rank%s (again to "
			    "kill at once)", sigabbrev_np(sig), n,
			    n == 1 ? "" : "s");
		if ((end = job_end(j, END_SIGNAL)) != NULL)
			end->signo = sig;
		job_set_exit(j, EXIT_SIGNAL(sig));
		job_stop(j, sig, j->o->kill_grace);
	} else {
		log_warn("got SIG%s again: killing every rank now",
		    sigabbrev_np(sig));
		job_set_exit(j, EXIT_SIGNAL(sig));
		job_stop(j, SIGKILL, 0);
	}
}

/* ARGSUSED */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct job	*j = arg;
	struct status_end *end;
	size_t		 n = job_live(j);

	if (job_stopping(j))
		return;
	if ((end = job_end(j, END_TIMEOUT)) != NULL)
		end->timeout = j->o->timeout;
	if (n == 0)
		log_error("job timed out after %g s (--timeout) before any "
		    "rank started", j->o->timeout);
	else
		log_error("job timed out after %g s (--timeout): stopping %zu "
		    "rank%s", j->o->timeout, n, n == 1 ? "" : "s");
	job_set_exit(j, EXIT_TIMEOUT);
	job_stop(j, SIGTERM, j->o->kill_grace);
}

/*
 * Some rank joined the rendezvous, and not all did within --start-timeout:
 * show the stacks of those that did not (where they are stuck), then stop.
 */
static void
rdzv_timeout_cb(void *arg, const char *msg)
{
	struct job		*j = arg;
	struct status_end	*end;
	int			 r, n = 0;

	if (job_stopping(j))
		return;
	log_error("%s (--start-timeout %g)", msg, j->o->start_timeout);
	for (r = 0; r < j->plan->nworkers; r++)
		n += !rdzv_server_joined(j->rdzv, r);
	if ((end = job_end(j, END_START)) != NULL) {
		end->rank = n;
		end->timeout = j->o->start_timeout;
	}
	job_set_exit(j, EXIT_RDZV);
	j->stk_then = STK_THEN_START;
	if (j->stk != NULL)
		return;		/* a report of every rank is under way */
	j->stk_only = xcalloc(j->plan->nranks, 1);
	for (r = 0; r < j->plan->nworkers; r++)
		j->stk_only[r] = !rdzv_server_joined(j->rdzv, r);
	job_stacks_ask(j, "start timeout");
}

/* A joined rank called dtcomm_heartbeat(): it is alive (--hang-timeout). */
static void
rdzv_alive_cb(void *arg, int rank)
{
	job_rank_alive(arg, rank);
}

/* ARGSUSED */
static void
rdzv_join_cb(void *arg, int rank, int njoined)
{
	struct job	*j = arg;

	status_add(j->st, ST_JOINED);
}

/* ARGSUSED */
static void
rdzv_joined_cb(void *arg)
{
	struct job	*j = arg;

	log_info("all %d workers joined the rendezvous", j->plan->nworkers);
}

/*
 * Starts the job's rendezvous on our event base: a fresh secret, the
 * plan's ranks, and an address every host can reach. Returns 0 or an error.
 */
static int
job_rdzv_start(struct job *j, struct dt_err *e)
{
	const struct plan	*p = j->plan;
	struct rdzv_server_cfg	 cfg;
	struct rdzv_rank_info	*ri;
	uint8_t			 secret[RDZV_SECRET_LEN];
	char			 host[256];
	int			 r, rc, local = plan_on_loopback(p);

	if ((rc = rdzv_auth_random(secret, sizeof(secret), e)) != 0)
		return rc;
	rdzv_hex_encode(secret, sizeof(secret), j->rdzv_token,
	    sizeof(j->rdzv_token));
	j->env.rdzv_token = j->rdzv_token;
	j->env.rdzv_addr = j->rdzv_addr;
	ri = xcalloc(p->nworkers, sizeof(*ri));
	for (r = 0; r < p->nworkers; r++) {
		ri[r].rank = r;
		ri[r].local_rank = p->ranks[r].local_rank;
		ri[r].local_world = p->hosts[p->ranks[r].host].nworkers;
		ri[r].node_rank = p->ranks[r].host;
		ri[r].host = p->hosts[p->ranks[r].host].name;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.bind_addr = local ? "127.0.0.1" : NULL;
	cfg.secret = secret;
	cfg.secret_len = sizeof(secret);
	cfg.world = p->nworkers;
	cfg.nnodes = p->nhosts;
	cfg.ranks = ri;
	cfg.start_timeout = j->o->start_timeout;
	cfg.start_on_first_join = 1;
	cfg.on_timeout = rdzv_timeout_cb;
	cfg.on_all_joined = rdzv_joined_cb;
	cfg.on_join = rdzv_join_cb;
	cfg.on_alive = rdzv_alive_cb;
	cfg.arg = j;
	rc = rdzv_server_new(j->base, &cfg, &j->rdzv, e);
	free(ri);
	explicit_bzero(secret, sizeof(secret));
	if (rc != 0)
		return rc;
	/*
	 * Remote hosts reach us at the address of the chosen interface
	 * (--iface or automatic). Not our host name: Debian maps it to
	 * 127.0.1.1, which on another host is that host itself.
	 */
	if (local)
		snprintf(host, sizeof(host), "127.0.0.1");
	else if (j->env.ifaddr[0] != '\0')
		snprintf(host, sizeof(host), "%s", j->env.ifaddr);
	else if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	snprintf(j->rdzv_addr, sizeof(j->rdzv_addr), "%s:%d", host,
	    rdzv_server_port(j->rdzv));
	log_debug("rendezvous at %s", j->rdzv_addr);
	return 0;
}

/*
 * A fresh MASTER_PORT (and MXNet's root port) for a restart: the last
 * attempt's may linger in TIME_WAIT, or still be held by what it left.
 */
static void
job_fresh_ports(struct job *j)
{
	int	ports[2], tries;

	for (tries = 0; tries < 8 && j->env.master_port == j->att->prev_port;
	    tries++) {
		port_pick(ports, 2);
		j->env.master_port = ports[0] != j->att->prev_port ? ports[0] :
		    ports[1];
	}
	j->att->master_port = j->env.master_port;
}

/* Fills the attempt's results from how the job ended. */
static void
job_attempt_result(struct job *j, const char *summary)
{
	struct job_attempt	*a = j->att;
	size_t			 h;

	a->cause = j->cause;
	a->signaled = j->signals > 0;
	if (summary != NULL)
		snprintf(a->what, sizeof(a->what), "%s", summary);
	else if (a->what[0] == '\0' && j->exit_code == 0)
		snprintf(a->what, sizeof(a->what), "every rank exited 0");
	else if (a->what[0] == '\0')
		snprintf(a->what, sizeof(a->what), "exit %d", j->exit_code);
	if (j->end.host != NULL)
		snprintf(a->host, sizeof(a->host), "%s", j->end.host);
	a->master_port = j->env.master_port;
	for (h = 0; j->hosts != NULL && h < j->plan->nhosts; h++) {
		if (!j->hosts[h]->lost)
			continue;
		a->lost = xreallocarray(a->lost, a->nlost + 1, sizeof(char *));
		a->lost[a->nlost++] = xstrdup(j->hosts[h]->ph->name);
	}
}

void
job_attempt_free(struct job_attempt *a)
{
	size_t	i;

	for (i = 0; i < a->nlost; i++)
		free(a->lost[i]);
	free(a->lost);
	a->lost = NULL;
	a->nlost = 0;
}

/* The host named name in scope, made (not yet connected) if it is new. */
static struct job_host *
job_scope_host(struct job_scope *sc, const char *name)
{
	struct job_host	*h;
	size_t		 i;

	for (i = 0; i < sc->nall; i++)
		if (strcmp(sc->all[i]->name, name) == 0)
			return sc->all[i];
	h = xcalloc(1, sizeof(*h));
	h->scope = sc;
	h->o = sc->o;
	h->name = xstrdup(name);
	h->be = sc->o->launcher == LAUNCH_SSH ? &backend_ssh :
	    sc->o->launcher == LAUNCH_SLURM ? &backend_slurm : &backend_local;
	sc->all = xreallocarray(sc->all, sc->nall + 1, sizeof(*sc->all));
	sc->all[sc->nall++] = h;
	return h;
}

/* Closes h's connection (its agent exits) and forgets the agent. */
static void
job_host_disconnect(struct job_host *h)
{
	if (h->priv != NULL)
		h->be->free(h);
	h->priv = NULL;
	h->link = NULL;
	h->idle = h->down = 0;
	free(h->agent_host);
	h->agent_host = NULL;
	h->agent_pid = 0;
}

/*
 * Gives the attempt its hosts, in the plan's order: the scope's, their
 * agents kept where still up, their per-attempt state fresh. Hosts the
 * plan dropped are disconnected.
 */
static void
job_attach(struct job *j)
{
	struct job_scope	*sc = j->scope;
	struct job_host		*h;
	size_t			 i;
	int			 all = 1;

	/* Hear of links that closed while no attempt ran, before choosing. */
	event_base_loop(sc->base, EVLOOP_NONBLOCK);
	for (i = 0; i < sc->nall; i++)
		sc->all[i]->index = -1;
	j->hosts = xcalloc(j->plan->nhosts, sizeof(*j->hosts));
	for (i = 0; i < j->plan->nhosts; i++) {
		h = j->hosts[i] = job_scope_host(sc, j->plan->hosts[i].name);
		h->job = j;
		h->index = (int)i;
		h->ph = &j->plan->hosts[i];
		h->hello = h->got_ports = h->prepared = h->done = 0;
		h->stk_waiting = h->lost = 0;
		h->free_port = 0;
		/* Only an agent that said DONE, on a link still up, is kept. */
		if (h->priv != NULL && (!h->idle || h->down))
			job_host_disconnect(h);
		if (h->priv == NULL)
			all = 0;
	}
	for (i = 0; i < sc->nall; i++) {
		if (sc->all[i]->index >= 0)
			continue;
		if (sc->all[i]->priv != NULL)
			all = 0;
		job_host_disconnect(sc->all[i]);
	}
	/* Agents that share one srun step are kept all together, or none. */
	for (i = 0; !all && i < j->plan->nhosts; i++)
		if (j->hosts[i]->be->reuse == BE_REUSE_ALL)
			job_host_disconnect(j->hosts[i]);
}

/* True if h's agent can serve the next attempt: it said DONE, its link is up. */
static int
job_host_reusable(const struct job_host *h)
{
	return h->idle && !h->down && !h->lost && h->be->reuse != BE_REUSE_NONE;
}

/*
 * The attempt is over: its hosts go back to the scope. An agent that
 * said DONE stays for the next attempt where its backend allows; any
 * other is disconnected now, so that nothing of this attempt runs on.
 */
static void
job_detach(struct job *j)
{
	struct job_host	*h;
	size_t		 i;
	int		 all = 1;

	for (i = 0; j->hosts != NULL && i < j->plan->nhosts; i++)
		all &= job_host_reusable(j->hosts[i]);
	for (i = 0; j->hosts != NULL && i < j->plan->nhosts; i++) {
		h = j->hosts[i];
		h->job = NULL;
		/* Agents that share one srun step are kept all together, or none. */
		if (!job_host_reusable(h) ||
		    (h->be->reuse == BE_REUSE_ALL && !all))
			job_host_disconnect(h);
		h->ph = NULL;
	}
	free(j->hosts);
	j->hosts = NULL;
}

struct job_scope *
job_scope_new(const struct opts *o)
{
	struct job_scope	*sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	sc->o = o;
	if ((sc->base = event_base_new()) == NULL) {
		free(sc);
		return NULL;
	}
	return sc;
}

double
job_scope_tick(struct job_scope *sc)
{
	/* The links' heartbeat timers fire here, if due (job_host_silent). */
	event_base_loop(sc->base, EVLOOP_NONBLOCK);
	if (sc->o->heartbeat_timeout <= 0)
		return 1;
	/* Often enough that a look is never more than a quarter late. */
	return link_beat_period_ms(job_beat_ms(sc->o)) / 4000.0;
}

void
job_scope_free(struct job_scope *sc)
{
	size_t	i;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->nall; i++) {
		job_host_disconnect(sc->all[i]);
		free(sc->all[i]->name);
		free(sc->all[i]);
	}
	free(sc->all);
	event_base_free(sc->base);
	free(sc);
}

/* The attempt's signal handlers and timers, on the scope's base. */
static void
job_events_new(struct job *j)
{
	char	msg[1024];
	size_t	i;
	int	sig;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < sizeof(job_sigs) / sizeof(job_sigs[0]); i++)
		j->ev_sig[j->nev_sig++] = evsignal_new(j->base, job_sigs[i],
		    signal_cb, j);
	/* --forward-signals beyond USR1 and USR2 (cli.c allows no others of sigs). */
	job_fwd_mask = j->o->fwd_signals & ~((1ULL << SIGUSR1) |
	    (1ULL << SIGUSR2));
	for (sig = 1; sig < 64 && sig < NSIG; sig++)
		if (job_fwd_mask & (1ULL << sig))
			j->ev_sig[j->nev_sig++] = evsignal_new(j->base, sig,
			    signal_cb, j);
	for (i = 0; i < j->nev_sig; i++)
		event_add(j->ev_sig[i], NULL);
	/* Signals held since the last attempt now reach the handlers above. */
	job_hold_signals(0);
	log_info("signals passed to the ranks (--forward-signals): %s",
	    cli_signals_str(j->o->fwd_signals, msg, sizeof(msg)));
	j->ev_timeout = evtimer_new(j->base, timeout_cb, j);
	j->ev_watchdog = evtimer_new(j->base, watchdog_cb, j);
	j->ev_stk = evtimer_new(j->base, stk_timer_cb, j);
	j->ev_hang = evtimer_new(j->base, hang_cb, j);
}

/* Frees what job_events_new made. */
static void
job_events_free(struct job *j)
{
	size_t	i;

	for (i = 0; i < j->nev_sig; i++)
		event_free(j->ev_sig[i]);
	event_free(j->ev_timeout);
	event_free(j->ev_watchdog);
	event_free(j->ev_stk);
	event_free(j->ev_hang);
}

/* The attempt's output: prefixes, files, back-pressure. 0, or EXIT_CONFIG. */
static int
job_output_new(struct job *j)
{
	const struct plan	*p = j->plan;
	struct output_cfg	 oc;
	struct dt_err		 e;
	char			 msg[1024];
	size_t			 i;

	memset(&oc, 0, sizeof(oc));
	oc.prefix = j->o->prefix;
	oc.dir = j->att->output_dir;
	oc.attempt = j->att->n;
	oc.timestamp = j->o->timestamp;
	oc.escape = j->o->escape_output;
	oc.color[0] = status_color_ok(STDOUT_FILENO);
	oc.color[1] = status_color_ok(STDERR_FILENO);
	oc.pressure = job_pressure;
	oc.closed = job_output_closed;
	oc.arg = j;
	j->out = output_new(j->base, &oc, p->nranks);
	for (i = 0; i < p->nranks; i++) {
		if (output_rank(j->out, i, p->ranks[i].local_rank,
		    p->hosts[p->ranks[i].host].name, &e) != 0) {
			log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
			return EXIT_CONFIG;
		}
	}
	return 0;
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
		if (h->priv != NULL) {
			ap_put_empty(&j->wb, AP_AGAIN);
			job_send(h);
			continue;
		}
		if (h->be->start(h, &e) == 0)
			continue;
		log_error("%s: %s", h->ph->name, dt_err_str(&e, msg,
		    sizeof(msg)));
		/* Nothing ran yet: the started agents get STOP, reply DONE. */
		h->done = 1;
		j->ndone++;
		job_set_exit(j, EXIT_CONFIG);
		job_stop(j, SIGTERM, j->o->kill_grace);
	}
	for (; i < j->plan->nhosts; i++) {
		j->hosts[i]->done = 1;
		j->ndone++;
	}
}

/* Sets up the attempt's environment, ports and rendezvous. 0, or EXIT_CONFIG. */
static int
job_prepare(struct job *j)
{
	struct dt_err	e;
	char		msg[1024];

	if (env_prepare(&j->env, j->o, j->plan, j->id, &e) != 0) {
		log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	j->env.attempt = j->att->n;
	j->env.max_restarts = j->att->max;
	job_fresh_ports(j);
	if (job_rdzv_start(j, &e) != 0) {
		log_error("rendezvous: %s", dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	/* --check; --preflight before a job of more than one host. */
	if (j->o->check || (j->o->preflight && j->plan->nhosts > 1))
		j->chk = check_new(j, j->o, j->plan, !j->o->check,
		    j->env.per_host ? j->env.rank0_addr : NULL);
	/* Agents connect while the sync runs; the job goes out after both. */
	if (j->o->sync_dst != NULL && !j->o->check &&
	    (j->sync = sync_start(j->base, j->o,
	    j->plan, job_synced, j, &e)) == NULL) {
		log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	return 0;
}

/* Runs the attempt's event loop until every host is done. */
static void
job_loop(struct job *j)
{
	if (j->att->timeout > 0)
		timer_arm(j->ev_timeout, j->att->timeout);
	if (j->ndone < j->plan->nhosts)
		event_base_dispatch(j->base);
}

/*
 * torchrun's Root Cause block, when the first failure left an error file;
 * frees every rank's error file.
 */
static void
job_root_show(struct job *j)
{
	struct strv	lines = { 0 };
	size_t		i;

	if (j->root != NULL) {
		rootcause_lines(j->root, &j->root_who, &lines);
		for (i = 0; i < lines.n; i++)
			log_error("%s", lines.v[i]);
		strv_free(&lines);
	}
	rootcause_free(j->root);
	j->root = NULL;
	for (i = 0; i < j->plan->nranks; i++) {
		rootcause_free(j->ranks[i].rc);
		j->ranks[i].rc = NULL;
	}
}

/* The attempt is over: its summary and results, then free what it made. */
static void
job_finish(struct job *j)
{
	char	msg[1024];

	/*
	 * Hold the stop signals for the restart loop; one caught just now
	 * is handled here, so it still counts for this attempt.
	 */
	job_hold_signals(1);
	event_base_loop(j->base, EVLOOP_NONBLOCK);
	status_free(j->st);
	sync_free(j->sync);
	/* Wait for a slow reader as long as it lives: nothing is dropped. */
	output_finish(j->out, -1);
	j->end.started = j->nstarted;
	j->end.stopped = j->nstopped;
	job_root_show(j);
	if (status_summary(&j->end, msg, sizeof(msg)) != NULL) {
		log_error("%s", msg);
		job_attempt_result(j, msg);
	} else
		job_attempt_result(j, NULL);
	job_detach(j);
	output_free(j->out);
	check_free(j->chk);
	if (j->rdzv != NULL)
		rdzv_server_free(j->rdzv);
	free(j->ranks);
	dt_wbuf_free(&j->wb);
	env_release(&j->env);
	explicit_bzero(j->rdzv_token, sizeof(j->rdzv_token));
	job_events_free(j);
	stk_report_free(j->stk);
}

int
job_run(struct job_scope *sc, const struct opts *o, const struct plan *p,
    const char *id, struct job_attempt *a)
{
	struct job	j;

	memset(&j, 0, sizeof(j));
	j.o = o;
	j.plan = p;
	j.id = id;
	j.att = a;
	j.scope = sc;
	j.base = sc->base;
	job_events_new(&j);
	j.ranks = xcalloc(p->nranks, sizeof(*j.ranks));
	job_attach(&j);
	if ((j.exit_code = job_output_new(&j)) == 0 &&
	    (j.exit_code = job_prepare(&j)) == 0) {
		j.st = status_new(!o->quiet, p->nhosts, p->nranks);
		job_hosts_start(&j);
		job_loop(&j);
	}
	job_finish(&j);
	return j.exit_code;
}
