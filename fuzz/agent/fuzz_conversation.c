/*
 * fuzz_conversation.c -- libFuzzer target for whole conversations with the
 * agent: the input is a stream of frames, as dtrun would send them (JOB,
 * CONT parts, RANK..., PREPARE, START, STOP...), handed one by one to the
 * agent's real frame handler (agent.c, prepare.c and shutdown.c are
 * compiled in here). Frame types
 * 0xf0 and up are not messages but things that happen to an agent: a rank
 * is reaped, the kill timer fires, SIGTERM, the output link backs up or
 * drains, the --setup command ends. Every input ends with the link
 * closing, as a real one does.
 *
 * Nothing real is started or killed: spawning, kill(), chdir(), the link
 * and the job record are stubs below. Ranks get pids above any pid_max.
 * Everything the agent sends must be whole frames that the launcher's
 * decoders accept.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before the agent's files: their calls of these reach the stubs. */
static int	fuzz_kill(pid_t, int);
static int	fuzz_chdir(const char *);
#define kill(p, s)	fuzz_kill(p, s)
#define chdir(d)	fuzz_chdir(d)

#include "agent/agent.c"
#include "agent/prepare.c"
#include "agent/shutdown.c"

#undef kill
#undef chdir

#define EV_REAP		0xf0	/* u8 rank index, u8 status: that rank was reaped */
#define EV_KILLTIMER	0xf1	/* the SIGKILL timer fires */
#define EV_SIGTERM	0xf2	/* the agent gets SIGTERM */
#define EV_BACKED_UP	0xf3	/* the link has over 4 MiB queued */
#define EV_DRAINED	0xf4	/* and drained again */
#define EV_RECHECK	0xf5	/* the recheck timer fires */
#define EV_CLOSE	0xf6	/* the link closes */
#define EV_SETUP	0xf7	/* u8 exit code, stdout...: the --setup ended */

#define FAKE_PID	0x40000000	/* above any pid_max (2^22) */

static size_t	queued;			/* what link_queued says */
static pid_t	next_pid;
static int	link_dummy;
static size_t	sent_bytes;		/* all link_send was given */

/* Never signal anything real. */
static int
fuzz_kill(pid_t pid, int sig)
{
	if (pid > -FAKE_PID && pid < FAKE_PID)
		abort();		/* a real process group or pid */
	errno = ESRCH;
	return -1;
}

/* Stay where the fuzzer runs: it writes its corpus by relative paths. */
static int
fuzz_chdir(const char *dir)
{
	if (strcmp(dir, "/") == 0)
		return 0;
	errno = ENOENT;
	return -1;
}

/* Checks that buf holds whole frames the launcher's decoders accept. */
static void
check_sent(const uint8_t *p, size_t n)
{
	const uint8_t	*pl;
	size_t		 plen, used;
	uint8_t		 type;
	struct ap_hello	 h;
	struct ap_output o;
	struct ap_exit	 x;
	struct ap_error	 e;
	struct ap_checked k;
	struct ap_iface	 f;
	struct ap_stack	 sk;
	struct ap_errfile ef;
	struct ap_progress *pv;
	uint64_t	 ms;
	uint32_t	 a, b;
	int		*ports;
	int		 rc;

	while (n > 0) {
		if (dt_frame_parse(p, n, AP_FRAME_MAX, &type, &pl, &plen,
		    &used) != 0)
			abort();		/* half a frame, or too big */
		switch (type) {
		case AP_HELLO:
			if ((rc = ap_get_hello(pl, plen, &h)) == 0)
				ap_hello_free(&h);
			break;
		case AP_PREPARED:
		case AP_DONE:
			rc = ap_get_empty(pl, plen);
			break;
		case AP_STARTED:
			rc = ap_get_started(pl, plen, &a, &b);
			break;
		case AP_OUTPUT:
			rc = ap_get_output(pl, plen, &o);
			break;
		case AP_EXIT:
			rc = ap_get_exit(pl, plen, &x);
			break;
		case AP_ERROR:
			if ((rc = ap_get_error(pl, plen, &e)) == 0)
				ap_error_free(&e);
			break;
		case AP_PROGRESS:
			if ((rc = ap_get_progress(pl, plen, &pv, &a)) == 0)
				free(pv);
			break;
		case AP_PORTLIST:
			if ((rc = ap_get_portlist(pl, plen, &ports, &a)) == 0)
				free(ports);
			break;
		case AP_CHECKED:
			if ((rc = ap_get_checked(pl, plen, &k)) == 0)
				ap_checked_free(&k);
			break;
		case AP_IFACE:
			if ((rc = ap_get_iface(pl, plen, &f)) == 0)
				ap_iface_free(&f);
			break;
		case AP_HEARTBEAT:
			rc = ap_get_heartbeat(pl, plen, &ms);
			break;
		case AP_STACK:
			if ((rc = ap_get_stack(pl, plen, &sk)) == 0)
				ap_stack_free(&sk);
			break;
		case AP_ERRFILE:
			if ((rc = ap_get_errfile(pl, plen, &ef)) == 0)
				ap_errfile_free(&ef);
			break;
		default:
			rc = -1;
		}
		if (rc != 0)
			abort();
		p += used;
		n -= used;
	}
}

/* The link: what the agent sends is checked, then dropped. */
int
link_send(struct link *l, const void *p, size_t n)
{
	if (l != (struct link *)&link_dummy)
		abort();
	check_sent(p, n);
	sent_bytes += n;
	return 0;
}

/* Never spliced here: the agent reads its pipes, and its frames are checked. */
int
link_send_spliced(struct link *l, const void *hdr, size_t hlen, int fd,
    size_t n)
{
	return 0;
}

size_t
link_queued(const struct link *l)
{
	return queued;
}

void
link_free(struct link *l)
{
}

struct link *
link_new(struct event_base *b, int rfd, int wfd, size_t max,
    const struct link_cbs *cbs)
{
	return NULL;
}

void
link_watermarks(struct link *l, size_t low, size_t high)
{
}

/* Packing is the link's: what the agent hands it is checked unpacked. */
void
link_pack(struct link *l, int on)
{
	if (l != (struct link *)&link_dummy)
		abort();
}

int
link_flush(struct link *l, int ms)
{
	return 0;
}

/* Heartbeats: the timer never fires here; the frame is checked as sent. */
int
link_heartbeat(struct link *l, uint64_t timeout_ms, const void *beat,
    size_t len, link_silent_cb silent, void *arg)
{
	if (l != (struct link *)&link_dummy)
		abort();
	if (timeout_ms > 0)
		check_sent(beat, len);
	return 0;
}

/* The agent's wall clock on a COLLS frame: fixed, for a run that repeats. */
uint64_t
dt_clock_ns(clockid_t c)
{
	return 1764300000ULL * 1000000000ULL;
}

/* The beat's period: any value will do, the timer never fires here. */
uint64_t
link_beat_period_ms(uint64_t timeout_ms)
{
	return timeout_ms > 0 ? timeout_ms : 1;
}

/* No keeper process here: the agent's beats to it go nowhere. */
void
keeper_beat(uint64_t timeout_ms)
{
}

/*
 * The ranks' rendezvous relay: no socket; dtrun's RDZV bytes for a
 * channel are taken and dropped, as for a rank that left.
 */
static int	relay_dummy;

struct rdzvrelay *
rdzvrelay_new(struct event_base *base, enum relay_kind kind,
    const char *job_id, const struct rdzvrelay_cbs *cb, char *addr,
    size_t addrlen, struct dt_err *e)
{
	snprintf(addr, addrlen, kind == RELAY_STORE ? "127.0.0.1:1" :
	    "unix:@fuzz");
	return (struct rdzvrelay *)&relay_dummy;
}

void
rdzvrelay_input(struct rdzvrelay *r, uint32_t chan, const void *p, size_t n)
{
	if (r != (struct rdzvrelay *)&relay_dummy)
		abort();
}

void
rdzvrelay_free(struct rdzvrelay *r)
{
	if (r != NULL && r != (struct rdzvrelay *)&relay_dummy)
		abort();
}

/*
 * The ranks' progress socket: none; no rank reports, so the flush at the
 * end sends one step for each of the first ranks, to check its frame.
 */
static int	progress_dummy;
static progress_send_fn progress_fn;
static progress_colls_fn progress_colls;
static void	*progress_arg;

struct progress *
progress_new(struct event_base *base, const char *job_id,
    const uint32_t *ranks, size_t n, progress_send_fn send, void *arg,
    char *addr, size_t addrlen, struct dt_err *e)
{
	snprintf(addr, addrlen, "unix:@fuzz-progress");
	progress_fn = send;
	progress_arg = arg;
	return (struct progress *)&progress_dummy;
}

void
progress_on_colls(struct progress *pg, progress_colls_fn fn)
{
	progress_colls = fn;
}

void
progress_started(struct progress *pg, uint32_t rank, pid_t pid)
{
	if (pg != NULL && pg != (struct progress *)&progress_dummy)
		abort();
}

void
progress_flush(struct progress *pg)
{
	struct ap_progress	v[2] = { { 0, 1, 7, 12, 100, 2048 },
				    { 1, 0, 9, 0, 0, 0 } };
	struct ap_coll		c[1] = { { 0, 2, 5, 1, 1000 } };

	if (pg == NULL)
		return;
	if (pg != (struct progress *)&progress_dummy)
		abort();
	progress_fn(progress_arg, v, 2);
	if (progress_colls != NULL)
		progress_colls(progress_arg, c, 1);
}

void
progress_free(struct progress *pg)
{
	if (pg != NULL && pg != (struct progress *)&progress_dummy)
		abort();
}

/*
 * Where the ranks wait: nothing is sampled; a rank said started sends one
 * second of made-up samples at once, to check the frame.
 */
static int		waits_dummy;
static waits_send_fn	waits_fn;
static void		*waits_arg;

struct waits *
waits_new(struct event_base *base, const uint32_t *ranks, size_t n,
    waits_send_fn send, void *arg)
{
	waits_fn = send;
	waits_arg = arg;
	return (struct waits *)&waits_dummy;
}

void
waits_started(struct waits *w, uint32_t rank, pid_t pid)
{
	struct ap_wait	v = { rank, 1000, 20, 10, 8, 2, 500, 10,
			    "poll on a pipe" };

	if (w == NULL)
		return;
	if (w != (struct waits *)&waits_dummy)
		abort();
	if (pid > 0)
		waits_fn(waits_arg, &v, 1);
}

void
waits_free(struct waits *w)
{
	if (w != NULL && w != (struct waits *)&waits_dummy)
		abort();
}

/* No descriptor slots to reserve: nothing is really spawned. */
int
spawn_init(int devnull)
{
	return -1;
}

/* Nothing is really spawned: a batch of it is nothing either. */
void
spawn_batch_begin(void)
{
}

void
spawn_batch_end(void)
{
}

/* Spawning: a pid nothing has, or the error a name asks for. */
pid_t
spawn_rank(const char *path, char *const argv[], char *const envp[],
    int devnull, int outfd, int errfd)
{
	if (path[0] == 'n')
		return -ENOEXEC;
	return FAKE_PID + next_pid++;
}

int
spawn_resolve(const char *argv0, const char *path_env, char **path,
    struct dt_err *e)
{
	*path = NULL;
	switch (argv0[0]) {
	case 'x':
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "is not executable");
	case 'd':
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "is a directory");
	case 'm':
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "not found");
	}
	return (*path = strdup(argv0)) == NULL ? DT_ERR_NOMEM : 0;
}

size_t
spawn_descendants(pid_t **pids)
{
	*pids = NULL;
	return 0;
}

size_t
spawn_kill_descendants(int sig, size_t *sent)
{
	if (sent != NULL)
		*sent = 0;
	return 0;
}

int
record_open(const char *job_id, const char *host, pid_t keeper,
    struct record **rp, struct dt_err *e)
{
	*rp = NULL;		/* no record, and nothing worth a warning */
	return 0;
}

void
record_add(struct record *r, uint32_t rank, pid_t pid)
{
}

void
record_commit(struct record *r)
{
}

void
record_remove(struct record *r)
{
}

/* Error files touch no disk here: each rank gets the variable, no file. */
int
errfiles_new(const char *job_id, struct errfiles **efp, struct dt_err *e)
{
	static char	dummy;

	*efp = (struct errfiles *)&dummy;
	return 0;
}

char *
errfiles_var(struct errfiles *ef, uint32_t rank)
{
	return strdup(ERRFILE_VAR "=/nowhere");
}

int
errfiles_send(struct errfiles *ef, uint32_t rank, struct dt_wbuf *b)
{
	return 0;
}

void
errfiles_free(struct errfiles *ef)
{
}

/* Stack captures run no tool here: STACKS is only decoded. */
struct stacks *
stacks_new(struct event_base *base, stacks_done_fn done, void *arg)
{
	return NULL;
}

void
stacks_add(struct stacks *s, uint32_t rank, pid_t pid)
{
}

int
stacks_run(struct stacks *s)
{
	return 0;
}

int
stacks_busy(const struct stacks *s)
{
	return 0;
}

int
stacks_reaped(struct stacks *s, pid_t pid, int status)
{
	return 0;
}

void
stacks_free(struct stacks *s)
{
}

/* A --check looks at nothing real here: every step is answered at once. */
struct hostcheck {
	hostcheck_done_fn	 done;
	void			*arg;
};
static struct hostcheck	fuzz_hostcheck;

struct hostcheck *
hostcheck_new(struct event_base *base, int devnull, hostcheck_done_fn done,
    void *arg)
{
	fuzz_hostcheck.done = done;
	fuzz_hostcheck.arg = arg;
	return &fuzz_hostcheck;
}

int
hostcheck_run(struct hostcheck *hc, const struct ap_check *c)
{
	char			*kv[] = { "version=fuzz", "cmd_err=stub", NULL };
	struct ap_checked	 k = { c->step, 0, 0, kv, 2 };

	hc->done(hc->arg, &k);
	return 0;
}

int
hostcheck_reaped(struct hostcheck *hc, pid_t pid, int status)
{
	return 0;
}

void
hostcheck_close(struct hostcheck *hc)
{
}

void
hostcheck_free(struct hostcheck *hc)
{
}

/* A --setup runs nothing here: EV_SETUP ends it with what the event carries. */
struct setup {
	int		 running;
	int		 status;
	char		 out[4096];
	size_t		 olen;
	setup_done_fn	 done;
	void		*arg;
};
static struct setup	fuzz_setup;

struct setup *
setup_start(struct event_base *base, const char *cmd, char *const env[],
    int devnull, setup_done_fn done, void *arg, struct dt_err *e)
{
	if (cmd[0] == 'n') {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "%s", strerror(ENOENT));
		return NULL;
	}
	memset(&fuzz_setup, 0, sizeof(fuzz_setup));
	fuzz_setup.running = 1;
	fuzz_setup.done = done;
	fuzz_setup.arg = arg;
	return &fuzz_setup;
}

int
setup_reaped(struct setup *s, pid_t pid, int status)
{
	return 0;
}

int
setup_running(const struct setup *s)
{
	return s != NULL && s->running;
}

void
setup_kill(struct setup *s)
{
}

int
setup_result(const struct setup *s, struct dt_err *e)
{
	if (s->status == 0)
		return 0;
	return dt_errf(e, NULL, 0, 0, DT_ERR_ABORTED, "exited with %d",
	    s->status >> 8);
}

const char *
setup_stdout(const struct setup *s, size_t *len)
{
	*len = s->olen;
	return s->out;
}

const char *
setup_stderr(const struct setup *s, size_t *len)
{
	*len = s->olen;
	return s->out;
}

void
setup_free(struct setup *s)
{
}

void
port_pick(int *ports, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		ports[i] = 20000 + i;
}

void
dt_raise_nofile(void)
{
}

void
dt_malloc_steady(void)
{
}

void
dt_heap_fed(size_t n)
{
}

/* Logging: formatted (format bugs show), not printed. */
static void
fuzz_log(const char *fmt, va_list ap)
{
	char	buf[2048];

	vsnprintf(buf, sizeof(buf), fmt, ap);
}

#define FUZZ_LOG(name)							\
void									\
name(const char *fmt, ...)						\
{									\
	va_list	ap;							\
									\
	va_start(ap, fmt);						\
	fuzz_log(fmt, ap);						\
	va_end(ap);							\
}
FUZZ_LOG(log_error)
FUZZ_LOG(log_warn)
FUZZ_LOG(log_notice)
FUZZ_LOG(log_info)
FUZZ_LOG(log_debug)

/* One harness event (a frame type from 0xf0). */
static void
fuzz_event(struct agent *a, uint8_t type, const uint8_t *p, size_t n)
{
	size_t	i;

	switch (type) {
	case EV_REAP:
		if (n < 2 || a->nranks == 0)
			return;
		i = p[0] % a->nranks;
		/* As sigchld_cb: only a started rank not yet reaped. */
		if (a->ranks[i].pid > 0 && !a->ranks[i].reaped) {
			rank_reaped(a, &a->ranks[i], p[1] << 8);
			shut_check(a);
		}
		return;
	case EV_KILLTIMER:
		if (a->phase == AGP_RUNNING && event_pending(a->kill_timer, EV_TIMEOUT,
		    NULL)) {
			event_del(a->kill_timer);
			shut_kill_timer_cb(-1, EV_TIMEOUT, a);
		}
		return;
	case EV_SIGTERM:
		shut_sigterm_cb(SIGTERM, EV_SIGNAL, a);
		return;
	case EV_BACKED_UP:
		queued = 8 << 20;
		return;
	case EV_DRAINED:
		queued = 0;
		agent_drain_cb(a);
		return;
	case EV_RECHECK:
		if (event_pending(a->recheck, EV_TIMEOUT, NULL)) {
			event_del(a->recheck);
			shut_recheck_cb(-1, EV_TIMEOUT, a);
		}
		return;
	case EV_CLOSE:
		if (shut_linked(a))
			shut_link_close(a, 0, "closed");
		return;
	case EV_SETUP:
		/* As sigchld_cb when the setup's shell is reaped. */
		if (n < 1 || !setup_running(a->setup))
			return;
		fuzz_setup.running = 0;
		fuzz_setup.status = p[0] << 8;
		fuzz_setup.olen = n - 1 < sizeof(fuzz_setup.out) ? n - 1 :
		    sizeof(fuzz_setup.out);
		memcpy(fuzz_setup.out, p + 1, fuzz_setup.olen);
		fuzz_setup.done(fuzz_setup.arg);
		shut_check(a);
		return;
	}
}

/*
 * Whether the agent may move from one phase to another: the conversation
 * of agentproto.h, forwards only (PREPARE may go through to PREPARED at
 * once), with DONE (idle) and the end (finishing) reachable from any
 * phase, AGAIN the only way back, to the wait, and none out of the end.
 */
static int
phase_move_ok(enum agent_phase from, enum agent_phase to)
{
	if (from == AGP_FINISHING)
		return to == AGP_FINISHING;
	if (to == AGP_IDLE || to == AGP_FINISHING)
		return 1;
	if (from == AGP_IDLE)
		return to == AGP_WAITING;
	return to >= from;
}

/*
 * One frame, handed to agent_frame, and what phase.c's table says of it
 * checked against what the agent did: an illegal frame cuts the link, a
 * stale one changes nothing and sends nothing, and the phase only moves
 * along the conversation.
 */
static void
fuzz_frame(struct agent *a, uint8_t type, const uint8_t *p, size_t n)
{
	enum agent_phase	was = a->phase;
	enum ap_verdict		v = agent_frame_verdict(was, type);
	size_t			sent = sent_bytes;

	agent_frame(a, type, p, n);
	if (v == AP_ILLEGAL && shut_linked(a))
		abort();
	if (v == AP_STALE && (a->phase != was || sent_bytes != sent))
		abort();
	if (!phase_move_ok(was, a->phase))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct event_base *base;
	static int		  devnull = -1;
	struct agent		  a;
	const uint8_t		 *pl;
	size_t			  plen, used;
	uint8_t			  type;
	enum agent_phase	  was;

	if (base == NULL && (base = event_base_new()) == NULL)
		abort();
	if (devnull == -1 && (devnull = open("/dev/null", O_RDWR)) == -1)
		abort();
	memset(&a, 0, sizeof(a));
	ap_reasm_init(&a.reasm);
	snprintf(a.host, sizeof(a.host), "fuzz");
	a.base = base;
	a.link = (struct link *)&link_dummy;
	a.devnull = devnull;
	a.kill_timer = evtimer_new(base, shut_kill_timer_cb, &a);
	a.recheck = evtimer_new(base, shut_recheck_cb, &a);
	a.flush_ev = evtimer_new(base, flush_cb, &a);
	a.chk = hostcheck_new(base, devnull, agent_checked, &a);
	queued = 0;
	next_pid = 0;

	/*
	 * Finishing, the loop is over and nothing more happens to the agent,
	 * but the frames of the read that ended it are still delivered (and
	 * judged by the table, in AGP_FINISHING).
	 */
	while (dt_frame_parse(data, size, AP_FRAME_MAX, &type, &pl, &plen,
	    &used) == 0) {
		if (type >= EV_REAP && a.shut == SHUT_FINISHING)
			break;
		if (type >= EV_REAP) {
			was = a.phase;
			fuzz_event(&a, type, pl, plen);
			if (!phase_move_ok(was, a.phase))
				abort();
		}
		else if (shut_linked(&a))
			fuzz_frame(&a, type, pl, plen);
		/* The loop's next turn: what PREPARE left to send goes. */
		if (event_pending(a.flush_ev, EV_TIMEOUT, NULL)) {
			event_del(a.flush_ev);
			flush_cb(-1, EV_TIMEOUT, &a);
		}
		data += used;
		size -= used;
	}
	fuzz_event(&a, EV_CLOSE, NULL, 0);
	agent_release(&a);
	return 0;
}
