/*
 * stacks.c -- capture ranks' stacks with eu-stack or gdb (see stacks.h).
 *
 * A capture goes through up to two stages per rank, each one tool run as
 * a child with its output on a pipe: native frames (eu-stack, else gdb's
 * bt), then for a Python rank gdb reading the interpreter's frames. A stage ends when the tool is
 * reaped and its pipe is at EOF, or when its time bound fires (the tool is
 * killed). The text of both stages goes back under "--- native (TOOL)" and
 * "--- python (gdb)" headers, which dtrun's merge reads.
 *
 * A rank is often a wrapper (a shell script, sh -c, strace, conda run)
 * whose child does the work, or a Python process with workers of its own:
 * so every process of the rank is captured, the rank's own first, then its
 * descendants breadth first and the rest of its process group, at most
 * STK_PROCS. Each goes under a "== process PID, parent PPID, state S: CMD"
 * line; dtrun (src/launcher/stacks/stackrep.c) picks the one doing the work.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/evfd.h"
#include "common/sys.h"
#include "common/wire.h"
#include "proto/agentproto.h"
#include "host/procs.h"
#include "agent/stacks.h"

extern char **environ;

#define STK_PARALLEL	8	/* tools running at once, at most ... */
#define STK_PROCS	16	/* processes of one rank captured, at most */
#define STK_CMD		256	/* bytes of a command line shown */
/*
 * No process of a rank is started after STK_RANK_S: with the last tool's
 * STK_BOUND_S the rank's reply comes before dtrun gives up on the agent
 * (250 s without a word).
 */
#define STK_RANK_S	100
/*
 * A tool run that used no CPU for STK_IDLE_S is stuck (in ptrace, on a
 * process in D state) and killed; one that works, only slowly on a busy
 * host (gdb loads symbols), runs on to STK_BOUND_S.
 */
#define STK_IDLE_S	20
#define STK_BOUND_S	120
#define STR(x)		XSTR(x)
#define XSTR(x)		#x

/*
 * Python frames, read by gdb from the interpreter's own data: every
 * thread state's frame chain (_PyRuntime -> interpreters -> threads ->
 * cframe->current_frame -> previous), named and numbered by the classes of
 * the interpreter's gdb extension (PyFramePtr, from python3.X-dbg). Unlike
 * py-bt it needs no unwinding through native frames, so gdb loads no
 * library's symbols (libtorch's take long) and a thread blocked deep in
 * C++ still shows where its Python code is. Printed as py-bt would.
 */
static const char py_walk[] = "python exec('"
"def _dt_frames(ts):\\n"
"    try:\\n"
"        cf = ts[\"cframe\"]\\n"
"        f = cf[\"current_frame\"] if int(cf) != 0 else 0\\n"
"    except gdb.error:\\n"
"        f = ts[\"current_frame\"]\\n"
"    n = 0\\n"
"    while int(f) != 0 and n < 512:\\n"
"        fp = PyFramePtr(f)\\n"
"        if not fp.is_optimized_out():\\n"
"            q = chr(34)\\n"
"            print(\"  File %s%s%s, line %s, in %s\" % (q, fp.filename(), q,\\n"
"                fp.current_line_num(), fp.co_name.proxyval(set())))\\n"
"        f = f[\"previous\"]\\n"
"        n += 1\\n"
"def _dt_walk():\\n"
"    interp = gdb.parse_and_eval(\"_PyRuntime\")[\"interpreters\"][\"head\"]\\n"
"    while int(interp) != 0:\\n"
"        ts = interp[\"threads\"][\"head\"]\\n"
"        while int(ts) != 0:\\n"
"            try:\\n"
"                tid = int(ts[\"native_thread_id\"])\\n"
"            except gdb.error:\\n"
"                tid = int(ts[\"thread_id\"])\\n"
"            print(\"Thread (LWP %d):\" % tid)\\n"
"            print(\"Traceback (most recent call first):\")\\n"
"            _dt_frames(ts)\\n"
"            ts = ts[\"next\"]\\n"
"        interp = interp[\"next\"]\\n"
"try:\\n"
"    _dt_walk()\\n"
"except Exception as e:\\n"
"    print(\"[no Python frames (%s): install python3-dbg on this host]\" % e)\\n"
"')";

struct stacks;

/* One process of a rank, as /proc showed it when the capture began. */
struct sproc {
	pid_t			 pid, ppid;
	unsigned long long	 start;		/* pins pid for SIGCONT */
	unsigned long long	 cpu;		/* its CPU ticks then */
	char			 state;
	int			 python;
	size_t			 end;		/* its share of the reply ends */
};

struct item {
	struct stacks		*s;
	uint32_t		 rank;
	pid_t			 pid;		/* the rank's own process */
	struct sproc		 procs[STK_PROCS];
	size_t			 nprocs;
	size_t			 cur;		/* the one being captured */
	time_t			 began;		/* CLOCK_MONOTONIC seconds */
	size_t			 lim;		/* its stage's text ends here */
	int			 clipped;	/* lim was hit in this stage */
	int			 cut;		/* its tool timed out */
	int			 stage;		/* 0 native, 1 python */
	pid_t			 tool;		/* 0: none running */
	unsigned long long	 tool_cpu;	/* its CPU ticks at the last look */
	int			 tool_looks;	/* STK_IDLE_S periods it ran */
	int			 fd;		/* the tool's output; -1 at EOF */
	int			 timed_out;
	struct event		*ev_read, *ev_timer;
	struct dt_wbuf		 text;		/* what the tools printed */
	char			 tools[32];	/* "eu-stack", "eu-stack+gdb" */
};

struct stacks {
	struct event_base	*base;
	stacks_done_fn		 done;
	void			*arg;
	int			 devnull;
	struct item		*items;
	size_t			 n, cap;
	size_t			 next;		/* first item not started */
	size_t			 running, finished;
	int			 busy;
	size_t			 parallel;	/* ... and at most one a CPU:
						   more only stretch each one's
						   time towards its bound */
	char			*eu, *gdb;	/* tools found, or NULL */
};

static void	item_next(struct item *);

struct stacks *
stacks_new(struct event_base *base, stacks_done_fn done, void *arg)
{
	struct stacks	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->base = base;
	s->done = done;
	s->arg = arg;
	if ((s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		free(s);
		return NULL;
	}
	return s;
}

void
stacks_add(struct stacks *s, uint32_t rank, pid_t pid)
{
	struct item	*v;
	size_t		 cap;

	if (s->busy)
		return;
	if (s->n == s->cap) {
		cap = s->cap ? s->cap * 2 : 16;
		if ((v = reallocarray(s->items, cap, sizeof(*v))) == NULL)
			return;
		s->items = v;
		s->cap = cap;
	}
	memset(&s->items[s->n], 0, sizeof(s->items[0]));
	s->items[s->n].s = s;
	s->items[s->n].rank = rank;
	s->items[s->n].pid = pid;
	s->items[s->n].fd = -1;
	s->n++;
}

int
stacks_busy(const struct stacks *s)
{
	return s->busy;
}

/* Appends text to it's buffer, up to lim (at most what one STACK carries). */
static void
item_put(struct item *it, const char *p, size_t n, size_t lim)
{
	if (lim > AP_STACK_MAX)
		lim = AP_STACK_MAX;
	if (it->text.len >= lim)
		return;
	if (n > lim - it->text.len)
		n = lim - it->text.len;
	if (n > 0)
		dt_wbuf_text(&it->text, p, n);
}

/* Appends a note of ours (a header, why a tool stopped): never clipped. */
static void
item_append(struct item *it, const char *p, size_t n)
{
	item_put(it, p, n, AP_STACK_MAX);
}

/* Appends a tool's output, up to the current stage's share. */
static void
item_output(struct item *it, const char *p, size_t n)
{
	static const char clip[] = "\n[cut here: this process's share of "
	    "the reply is full]\n";

	if (it->text.len + n > it->lim && !it->clipped) {
		it->clipped = 1;
		item_put(it, p, it->text.len < it->lim ?
		    it->lim - it->text.len : 0, it->lim);
		item_append(it, clip, sizeof(clip) - 1);
		return;
	}
	item_put(it, p, n, it->lim);
}

/* Finds a tool in PATH, then in the usual places (ssh gives a short PATH). */
static char *
stacks_find(const char *name)
{
	char	*p;

	if (spawn_resolve(name, getenv("PATH"), &p, NULL) != 0)
		(void)spawn_resolve(name, "/usr/bin:/bin:/usr/local/bin", &p,
		    NULL);
	return p;
}

/* True if pid runs a Python interpreter (its executable is python*). */
static int
is_python(pid_t pid)
{
	char	path[64], exe[PATH_MAX], *b;
	ssize_t	n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) <= 0)
		return 0;
	exe[n] = '\0';
	b = strrchr(exe, '/');
	return strncmp(b != NULL ? b + 1 : exe, "python", 6) == 0;
}

/* Closes the tool's pipe. */
static void
item_close(struct item *it)
{
	dt_event_close(&it->ev_read, &it->fd);
}

/* ARGSUSED */
static void
item_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct item	*it = arg;
	char		 buf[16384];
	ssize_t		 n;

	n = read(it->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		item_close(it);
		item_next(it);
		return;
	}
	item_output(it, buf, n);
}

/* ARGSUSED */
static void
item_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct item		*it = arg;
	struct proc_info	 pi;
	struct timeval		 tv = { STK_IDLE_S, 0 };
	char			 note[96];

	if (it->tool <= 0)
		return;
	if (++it->tool_looks * STK_IDLE_S < STK_BOUND_S &&
	    proc_info(it->tool, &pi) == 0 && pi.cpu > it->tool_cpu) {
		it->tool_cpu = pi.cpu;
		event_add(it->ev_timer, &tv);
		return;
	}
	/* Its own process group (spawn_rank): whatever it started goes too. */
	kill(-it->tool, SIGKILL);
	it->timed_out = 1;
	it->cut = 1;
	item_close(it);
	snprintf(note, sizeof(note), "\n[timed out after %d s%s: killed]\n",
	    it->tool_looks * STK_IDLE_S, it->tool_looks * STK_IDLE_S <
	    STK_BOUND_S ? ", the last " STR(STK_IDLE_S) " s without using "
	    "the CPU" : "");
	item_append(it, note, strlen(note));
}

/* Seconds on the monotonic clock. */
static time_t
mono_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Reads pid's command line into buf, arguments joined by spaces. */
static void
proc_cmdline(pid_t pid, char *buf, size_t len)
{
	char	path[64];
	ssize_t	n, i;
	int	fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ? -1 :
	    read(fd, buf, len - 1);
	if (fd != -1)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	for (; n > 0 && buf[n - 1] == '\0'; n--)
		;
	for (i = 0; i < n; i++)
		if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
			buf[i] = ' ';
	buf[n] = '\0';
}

/* The pid tracing pid (strace, a debugger), or 0. */
static pid_t
proc_tracer(pid_t pid)
{
	char	path[64], line[128];
	FILE	*f;
	int	tracer = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

/*
 * Starts the capture of it's current process: its header line (the state
 * "R" when it ran at either look: spinning, not waiting), then its share
 * of the reply, the rest shared among the processes still to go.
 */
static void
item_head(struct item *it)
{
	struct sproc		*p = &it->procs[it->cur];
	struct proc_info	 pi;
	char			 cmd[STK_CMD], head[STK_CMD + 96];
	char			 state = p->state;
	size_t			 share;
	pid_t			 tracer;

	if (proc_info(p->pid, &pi) == 0 && (pi.state == 'R' ||
	    pi.cpu > p->cpu))
		state = 'R';
	proc_cmdline(p->pid, cmd, sizeof(cmd));
	snprintf(head, sizeof(head), "%s== process %d, parent %d, state %c: "
	    "%s\n", it->text.len ? "\n" : "", (int)p->pid, (int)p->ppid, state,
	    cmd);
	item_append(it, head, strlen(head));
	if ((tracer = proc_tracer(p->pid)) > 0) {
		snprintf(head, sizeof(head), "[traced by pid %d already (strace,"
		    " a debugger): no stack tool can attach]\n", (int)tracer);
		item_append(it, head, strlen(head));
	}
	share = it->text.len < AP_STACK_MAX ? (AP_STACK_MAX - it->text.len) /
	    (it->nprocs - it->cur) : 0;
	p->end = it->text.len + share;
	/* Native frames leave a quarter of the share to Python's. */
	it->lim = it->text.len + (p->python ? share / 4 * 3 : share);
}

/* Adds name to the tools it used ("eu-stack+gdb-python"), once. */
static void
item_tool(struct item *it, const char *name)
{
	const char	*p;
	size_t		 n = strlen(name), len = strlen(it->tools);

	for (p = it->tools; (p = strstr(p, name)) != NULL; p += n)
		if ((p == it->tools || p[-1] == '+') &&
		    (p[n] == '\0' || p[n] == '+'))
			return;
	snprintf(it->tools + len, sizeof(it->tools) - len, "%s%s",
	    len ? "+" : "", name);
}

/* Starts the tool of it's current stage; -1 if there is none to run. */
static int
item_spawn(struct item *it)
{
	struct stacks	*s = it->s;
	struct timeval	 tv = { STK_IDLE_S, 0 };
	char		 pid[16], head[64], *path;
	const char	*name;
	char		*argv[16];
	int		 fds[2], i = 0;
	pid_t		 tool;

	if (it->stage == 0)
		item_head(it);
	else
		it->lim = it->procs[it->cur].end;
	it->clipped = 0;
	snprintf(pid, sizeof(pid), "%d", (int)it->procs[it->cur].pid);
	if (it->stage == 0 && s->eu != NULL) {
		path = s->eu;
		name = "eu-stack";
		argv[i++] = "eu-stack";
		argv[i++] = "-p";
		argv[i++] = pid;
	} else if (s->gdb != NULL) {
		path = s->gdb;
		name = "gdb";
		argv[i++] = "gdb";
		argv[i++] = "-nx";
		argv[i++] = "-batch";
		argv[i++] = "-iex";
		argv[i++] = "set debuginfod enabled off";
		if (it->stage == 1) {
			/* py_walk needs only the interpreter's symbols: fast. */
			argv[i++] = "-iex";
			argv[i++] = "set auto-solib-add off";
		}
		argv[i++] = "-p";
		argv[i++] = pid;
		argv[i++] = "-ex";
		argv[i++] = it->stage == 0 ? "thread apply all bt" :
		    (char *)py_walk;
	} else
		return -1;
	argv[i] = NULL;
	snprintf(head, sizeof(head), "%s--- %s (%s)\n", it->stage ? "\n" : "",
	    it->stage == 0 ? "native" : "python", name);
	item_append(it, head, strlen(head));
	item_tool(it, it->stage == 0 ? name : "gdb-python");
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	fcntl(fds[1], F_SETFL, 0);
	tool = spawn_rank(path, argv, environ, s->devnull, fds[1], fds[1]);
	close(fds[1]);
	if (tool < 0) {
		close(fds[0]);
		snprintf(head, sizeof(head), "[cannot run %s: %s]\n", name,
		    strerror((int)-tool));
		item_append(it, head, strlen(head));
		return -1;
	}
	it->tool = tool;
	it->tool_cpu = 0;
	it->tool_looks = 0;
	it->fd = fds[0];
	it->ev_read = event_new(s->base, it->fd, EV_READ | EV_PERSIST,
	    item_read_cb, it);
	if (it->ev_timer == NULL)
		it->ev_timer = evtimer_new(s->base, item_timer_cb, it);
	event_add(it->ev_read, NULL);
	event_add(it->ev_timer, &tv);
	return 0;
}

/*
 * Lists the processes of it's rank to capture: the rank's own, its
 * descendants, the rest of its group (proc_tree), at most STK_PROCS; a
 * line before the first says how many more were left out.
 */
static void
item_list(struct item *it)
{
	struct proc_info	 pi;
	struct sproc		*p;
	pid_t			*v;
	size_t			 n, i;
	char			 note[128];

	it->began = mono_s();
	n = proc_tree(it->pid, &v);
	for (i = 0; i < n && it->nprocs < STK_PROCS; i++) {
		if (proc_info(v[i], &pi) != 0)
			continue;
		p = &it->procs[it->nprocs++];
		p->pid = v[i];
		p->ppid = pi.ppid;
		p->start = pi.start;
		p->cpu = pi.cpu;
		p->state = pi.state;
		p->python = is_python(v[i]);
	}
	free(v);
	if (n > it->nprocs) {
		snprintf(note, sizeof(note), "[the rank has %zu processes: "
		    "the first %zu are captured]\n", n, it->nprocs);
		item_append(it, note, strlen(note));
	}
	/* Gone already: the tools say so. */
	if (it->nprocs == 0) {
		it->procs[0].pid = it->pid;
		it->procs[0].state = '?';
		it->nprocs = 1;
	}
}

/* Starts queued items while there is room. */
static void
stacks_fill(struct stacks *s)
{
	struct item	*it;

	while (s->running < s->parallel && s->next < s->n) {
		it = &s->items[s->next++];
		s->running++;
		item_list(it);
		if (item_spawn(it) != 0)
			item_next(it);
	}
}

/* Reports it and frees what it holds. */
static void
item_finish(struct item *it)
{
	struct stacks	*s = it->s;
	struct ap_stack	 k;

	if (it->ev_timer != NULL) {
		event_free(it->ev_timer);
		it->ev_timer = NULL;
	}
	k.rank = it->rank;
	k.pid = it->pid;
	k.status = it->timed_out ? AP_STK_TIMEDOUT : it->text.len == 0 ?
	    AP_STK_FAILED : AP_STK_OK;
	k.tool = it->tools;
	k.text = it->text.p != NULL ? (char *)it->text.p : "";
	s->done(s->arg, &k);
	dt_wbuf_free(&it->text);
	s->running--;
	s->finished++;
}

/*
 * Starts it's next tool: the Python stage of the current process, else the
 * next process's native one. Returns 0 if one runs, -1 when none is left.
 */
static int
item_advance(struct item *it)
{
	static const char pyhint[] = "\n[no Python frames: install gdb and "
	    "python3-dbg on this host]\n";
	char			 note[128];

	for (;;) {
		if (it->stage == 0 && it->procs[it->cur].python && !it->cut) {
			it->stage = 1;
			if (it->s->gdb == NULL)
				item_append(it, pyhint, sizeof(pyhint) - 1);
			else if (item_spawn(it) == 0)
				return 0;
		}
		if (it->cur + 1 >= it->nprocs)
			return -1;
		if (mono_s() - it->began > STK_RANK_S) {
			snprintf(note, sizeof(note), "\n[%zu more processes not "
			    "captured: the rank's capture ran past %d s]\n",
			    it->nprocs - it->cur - 1, STK_RANK_S);
			item_append(it, note, strlen(note));
			return -1;
		}
		it->cur++;
		it->stage = 0;
		it->cut = 0;
		if (item_spawn(it) == 0)
			return 0;
	}
}

/*
 * The current stage of it may have ended: once the tool is reaped and its
 * pipe closed, start the next stage or process, or report the rank.
 */
static void
item_next(struct item *it)
{
	struct stacks	*s = it->s;
	struct ap_stack	 k;

	if (it->tool > 0 || it->fd >= 0)
		return;
	if (it->ev_timer != NULL)
		event_del(it->ev_timer);
	if (item_advance(it) == 0)
		return;
	item_finish(it);
	if (s->finished < s->n) {
		stacks_fill(s);
		return;
	}
	/* All done: the end marker, then ready for the next request. */
	s->busy = 0;
	s->n = s->next = s->finished = 0;
	memset(&k, 0, sizeof(k));
	k.rank = AP_NORANK;
	k.tool = "";
	k.text = "";
	s->done(s->arg, &k);
}

int
stacks_run(struct stacks *s)
{
	struct ap_stack	 k;
	size_t		 i;
	const char	*tool;
	char		 host[256] = "this host", note[512];
	long		 ncpu;

	if (s->busy)
		return -1;
	free(s->eu);
	free(s->gdb);
	/* DTRUN_STACK_TOOL=gdb: for hosts where eu-stack misbehaves. */
	tool = getenv("DTRUN_STACK_TOOL");
	s->eu = tool != NULL && strcmp(tool, "gdb") == 0 ? NULL :
	    stacks_find("eu-stack");
	s->gdb = stacks_find("gdb");
	memset(&k, 0, sizeof(k));
	k.rank = AP_NORANK;
	k.tool = "";
	k.text = "";
	if (s->eu == NULL && s->gdb == NULL) {
		gethostname(host, sizeof(host) - 1);
		snprintf(note, sizeof(note), "no stack tool on %s: install gdb "
		    "(and python3-dbg for Python frames) or elfutils "
		    "(eu-stack)", host);
		for (i = 0; i < s->n; i++) {
			k.rank = s->items[i].rank;
			k.pid = s->items[i].pid;
			k.status = AP_STK_NOTOOL;
			k.text = note;
			s->done(s->arg, &k);
		}
		k.rank = AP_NORANK;
		k.pid = 0;
		k.status = AP_STK_NOTOOL;
		s->n = 0;
		s->done(s->arg, &k);
		return 0;
	}
	if (s->n == 0) {
		s->done(s->arg, &k);
		return 0;
	}
	s->busy = 1;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	s->parallel = ncpu < 1 ? 1 : ncpu < STK_PARALLEL ? (size_t)ncpu :
	    STK_PARALLEL;
	stacks_fill(s);
	return 0;
}

int
stacks_reaped(struct stacks *s, pid_t pid, int status)
{
	struct item	*it;
	size_t		 i;

	for (i = 0; s != NULL && i < s->n; i++) {
		it = &s->items[i];
		if (it->tool != pid)
			continue;
		it->tool = 0;
		/* Traced when the tool died: the kernel detached; resume it. */
		proc_signal(it->procs[it->cur].pid, it->procs[it->cur].start,
		    SIGCONT);
		if (!it->timed_out && WIFSIGNALED(status) &&
		    WTERMSIG(status) != SIGPIPE) {
			char	note[64];

			snprintf(note, sizeof(note), "\n[the tool was killed "
			    "by signal %d]\n", WTERMSIG(status));
			item_append(it, note, strlen(note));
		}
		item_next(it);
		return 1;
	}
	return 0;
}

void
stacks_free(struct stacks *s)
{
	struct item	*it;
	size_t		 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++) {
		it = &s->items[i];
		if (it->tool > 0) {
			dt_kill_reap(it->tool, NULL);
			proc_signal(it->procs[it->cur].pid,
			    it->procs[it->cur].start, SIGCONT);
		}
		item_close(it);
		if (it->ev_timer != NULL)
			event_free(it->ev_timer);
		dt_wbuf_free(&it->text);
	}
	free(s->items);
	free(s->eu);
	free(s->gdb);
	close(s->devnull);
	free(s);
}
