/*
 * waits.c -- sampling where this host's ranks wait (waits.h).
 *
 * A look costs two small reads of /proc (stat, then syscall when the
 * thread sleeps), a readlink for a call on a descriptor, and the other
 * threads' stat only when it sleeps in a futex: some 20-40 us, twenty
 * times a second, well under the 0.2% of a core a rank may cost
 * (bench/straggle/overhead.sh). Looks are spaced at random around
 * WAITS_SAMPLE_MS so a loop of the same period cannot hide from them.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/waitclass.h"
#include "agent/waits.h"
#include "common/sys.h"
#include "proto/agentproto.h"

#define WAITS_WHATS	4	/* input places counted per second */
#define WAITS_DEPTH	4	/* wrappers followed down, at most */

struct waits_what {
	char		 s[AP_WAIT_WHAT_MAX];
	unsigned	 n;
};

struct waits_rank {
	uint32_t		 rank;
	pid_t			 pid;		/* the rank's root; 0 none */
	pid_t			 main;		/* the process looked at */
	int			 off;		/* its /proc unreadable: said */
	uint16_t		 n[4];		/* per enum wc_class */
	uint16_t		 samples;
	uint64_t		 cpu_ns, delay_ns; /* schedstat at the last send */
	int			 have_sched;
	struct waits_what	 what[WAITS_WHATS];
	char			 why[AP_WAIT_WHAT_MAX]; /* off: why, unsent */
	char			 sent[AP_WAIT_WHAT_MAX]; /* what goes now */
};

struct waits {
	struct event		*tick;
	struct waits_rank	*r;
	size_t			 n;
	struct ap_wait		*out;
	uint64_t		 sent_at;	/* CLOCK_MONOTONIC ms */
	waits_send_fn		 send;
	void			*arg;
	unsigned		 seed;
};

/* Reads /proc/PID/[task/TID/]NAME into buf; its length, or -1 (errno). */
static ssize_t
waits_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t len)
{
	char	path[96];
	ssize_t	n;
	int	fd, e;

	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid,
		    (int)tid, name);
	else
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	errno = e;
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* The state letter of a stat line ("PID (comm) S ..."), or 0. */
static char
waits_state_of(const char *stat)
{
	const char	*p = strrchr(stat, ')');

	return p != NULL && p[1] == ' ' ? p[2] : 0;
}

/* Whether a thread of pid other than itself is running or runnable. */
static int
waits_others_running(pid_t pid)
{
	char		 path[64], buf[512];
	struct dirent	*d;
	DIR		*dir;
	long		 tid;
	int		 k = 0, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return 0;
	while (!r && k < WAITS_THREADS_MAX && (d = readdir(dir)) != NULL) {
		if ((tid = strtol(d->d_name, NULL, 10)) <= 0 || tid == pid)
			continue;
		k++;
		if (waits_read(pid, (pid_t)tid, "stat", buf, sizeof(buf)) > 0 &&
		    waits_state_of(buf) == 'R')
			r = 1;
	}
	closedir(dir);
	return r;
}

/* Reads len bytes at addr in pid (it is our child's: we may). */
static int
waits_peek(pid_t pid, unsigned long addr, void *dst, size_t len)
{
	struct iovec	l = { dst, len }, r = { (void *)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * A socket of pid's is a network one (WC_FD_SOCKET) or a unix one: asked
 * of the socket itself, through a copy of its descriptor (pidfd_getfd,
 * Linux 5.6; the agent may, as it may read the rank's memory). Unknown:
 * WC_FD_OTHER.
 */
static enum wc_fd
waits_socket(pid_t pid, long fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
	socklen_t	len = sizeof(int);
	int		pfd, s, dom = -1;

	if ((pfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0)
		return WC_FD_OTHER;
	s = (int)syscall(SYS_pidfd_getfd, pfd, (int)fd, 0);
	close(pfd);
	if (s < 0)
		return WC_FD_OTHER;
	if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0)
		dom = -1;
	close(s);
	if (dom == AF_UNIX)
		return WC_FD_UNIX;
	return dom == AF_INET || dom == AF_INET6 ? WC_FD_SOCKET : WC_FD_OTHER;
#else
	return WC_FD_OTHER;
#endif
}

/* The first descriptor a poll (pollfd array) or select (fd_set) waits on. */
static long
waits_poll_fd(pid_t pid, long nr, const unsigned long *a)
{
	struct pollfd	 p;
	unsigned char	 set[128];
	size_t		 i, n;

	if (wc_call_of(nr) != WC_CALL_POLL)
		return -1;
	if (nr == SYS_ppoll
#ifdef SYS_poll
	    || nr == SYS_poll
#endif
	    )
		return a[1] > 0 && waits_peek(pid, a[0], &p, sizeof(p)) == 0 ?
		    p.fd : -1;
	/* select: nfds, then the read set. */
	n = a[0] > 8 * sizeof(set) ? sizeof(set) : (a[0] + 7) / 8;
	if (a[1] == 0 || n == 0 || waits_peek(pid, a[1], set, n) != 0)
		return -1;
	for (i = 0; i < 8 * n; i++)
		if (set[i / 8] & (1U << (i % 8)))
			return (long)i;
	return -1;
}

/* Counts place as an input this rank waited on. */
static void
waits_note(struct waits_rank *r, const char *place)
{
	struct waits_what	*w, *least = &r->what[0];
	size_t			 i;

	for (i = 0; i < WAITS_WHATS; i++) {
		w = &r->what[i];
		if (w->n > 0 && strcmp(w->s, place) == 0) {
			w->n++;
			return;
		}
		if (w->n < least->n)
			least = w;
	}
	if (least->n > 1)
		return;		/* the four seen more often stay */
	strncpy(least->s, place, sizeof(least->s) - 1);
	least->s[sizeof(least->s) - 1] = '\0';
	least->n = 1;
}

/*
 * "read on /data/x", "poll on a pipe", "sleep": the input a sample found.
 * A long path keeps its end (the file's name).
 */
static void
waits_place(char *buf, size_t len, enum wc_call call, enum wc_fd fd,
    const char *link)
{
	size_t	n = strlen(link);

	if (call == WC_CALL_SLEEP)
		snprintf(buf, len, "sleep");
	else if (fd == WC_FD_PIPE)
		snprintf(buf, len, "%s on a pipe", wc_call_name(call));
	else if (fd == WC_FD_UNIX)
		snprintf(buf, len, "%s on a unix socket", wc_call_name(call));
	else if (fd == WC_FD_FILE)
		snprintf(buf, len, "%s on %s%s", wc_call_name(call),
		    n > 64 ? "..." : "", n > 64 ? link + n - 64 : link);
	else
		snprintf(buf, len, "disk");
}

/*
 * One look at rank r's main thread. A wrapper waiting on its child is
 * followed to the child, which is looked at from then on.
 */
static void
waits_look(struct waits_rank *r)
{
	struct wc_sample	 s = { 0 };
	unsigned long		 a[6] = { 0 };
	char			 buf[512], path[64], link[256];
	char			 place[AP_WAIT_WHAT_MAX];
	long			 nr, fd = -1, child;
	ssize_t			 k;
	int			 depth, hidden;
	enum wc_class		 c;

	for (depth = 0; ; depth++) {
		k = waits_read(r->main, 0, "stat", buf, sizeof(buf));
		hidden = k < 0 && errno == ENOENT;
		if (k <= 0 || (s.state = waits_state_of(buf)) == 'Z' ||
		    s.state == 0) {
			/*
			 * Not reaped yet, so /proc has it, even dead: not
			 * there is /proc mounted with hidepid.
			 */
			if (r->main == r->pid && hidden) {
				snprintf(r->why, sizeof(r->why), "/proc/%d is "
				    "hidden (hidepid)", (int)r->pid);
				r->off = 1;
			}
			if (r->main == r->pid)
				return;		/* ended: its EXIT comes */
			r->main = r->pid;	/* the child ended: look again */
			continue;
		}
		if (s.state == 'R')
			break;
		if (waits_read(r->main, 0, "syscall", buf, sizeof(buf)) < 0) {
			if (!r->off && (errno == EACCES || errno == EPERM))
				snprintf(r->why, sizeof(r->why), "cannot read "
				    "/proc/%d/syscall: %s", (int)r->main,
				    strerror(errno));
			r->off = 1;
			return;
		}
		if (strncmp(buf, "running", 7) == 0) {
			s.state = 'R';
			break;
		}
		if (sscanf(buf, "%ld %lx %lx %lx %lx %lx %lx", &nr, &a[0], &a[1],
		    &a[2], &a[3], &a[4], &a[5]) < 2 || nr < 0) {
			s.call = WC_CALL_NONE;
			break;
		}
		s.call = wc_call_of(nr);
		if (s.call != WC_CALL_WAIT || depth >= WAITS_DEPTH)
			break;
		snprintf(path, sizeof(path), "task/%d/children", (int)r->main);
		if (waits_read(r->main, 0, path, buf, sizeof(buf)) <= 0 ||
		    (child = strtol(buf, NULL, 10)) <= 0)
			break;
		r->main = (pid_t)child;
	}
	if (s.call == WC_CALL_READ)
		fd = (long)a[0];
	else if (s.call == WC_CALL_POLL)
		fd = waits_poll_fd(r->main, nr, a);
	link[0] = '\0';
	if (fd >= 0) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)r->main, fd);
		if ((k = readlink(path, link, sizeof(link) - 1)) > 0) {
			link[k] = '\0';
			s.fd = wc_fd_of(link);
			if (s.fd == WC_FD_SOCKET)
				s.fd = waits_socket(r->main, fd);
		} else
			s.fd = WC_FD_OTHER;
	}
	if (s.call == WC_CALL_FUTEX)
		s.others_running = waits_others_running(r->main);
	c = wc_classify(&s);
	r->n[c]++;
	r->samples++;
	if (c == WC_INPUT) {
		waits_place(place, sizeof(place), s.call, s.fd, link);
		waits_note(r, place);
	}
}

/* The main thread's CPU and run-queue ns (schedstat); -1 if unread. */
static int
waits_sched(pid_t pid, uint64_t *cpu, uint64_t *delay)
{
	char			buf[128];
	unsigned long long	c, d;

	if (waits_read(pid, 0, "schedstat", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%llu %llu", &c, &d) != 2)
		return -1;
	*cpu = c;
	*delay = d;
	return 0;
}

/* Rank r's counts since the last send, into *o; resets them. */
static void
waits_fill(struct waits_rank *r, uint64_t wall_ms, struct ap_wait *o)
{
	uint64_t	cpu = 0, delay = 0;
	size_t		i, best = 0;

	memset(o, 0, sizeof(*o));
	o->rank = r->rank;
	o->wall_ms = wall_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)wall_ms;
	o->what = r->sent;
	if (r->off) {
		/* samples 0: why none (said once). */
		memcpy(r->sent, r->why, sizeof(r->sent));
		r->why[0] = '\0';
		return;
	}
	o->samples = r->samples;
	o->work = r->n[WC_WORK];
	o->peer = r->n[WC_PEER];
	o->input = r->n[WC_INPUT];
	if (waits_sched(r->main, &cpu, &delay) == 0) {
		if (r->have_sched && cpu >= r->cpu_ns && delay >= r->delay_ns) {
			o->cpu_ms = (uint32_t)((cpu - r->cpu_ns) / 1000000);
			o->delay_ms = (uint32_t)((delay - r->delay_ns) / 1000000);
		}
		r->cpu_ns = cpu;
		r->delay_ns = delay;
		r->have_sched = 1;
	}
	for (i = 1; i < WAITS_WHATS; i++)
		if (r->what[i].n > r->what[best].n)
			best = i;
	memcpy(r->sent, r->what[best].n > 0 ? r->what[best].s : "",
	    r->what[best].n > 0 ? sizeof(r->sent) : 1);
	memset(r->what, 0, sizeof(r->what));
	memset(r->n, 0, sizeof(r->n));
	r->samples = 0;
}

static void
waits_send(struct waits *w, uint64_t now)
{
	struct waits_rank	*r;
	uint32_t		 k = 0;
	size_t			 i;

	for (i = 0; i < w->n; i++) {
		r = &w->r[i];
		if (r->pid <= 0 || (r->off && r->why[0] == '\0'))
			continue;
		waits_fill(r, now - w->sent_at, &w->out[k++]);
	}
	w->sent_at = now;
	if (k > 0)
		w->send(w->arg, w->out, k);
}

static void
waits_arm(struct waits *w)
{
	/* WAITS_SAMPLE_MS +- 40%, so a period cannot alias with ours. */
	long		ms = WAITS_SAMPLE_MS * 6 / 10 +
			    rand_r(&w->seed) % (WAITS_SAMPLE_MS * 8 / 10 + 1);
	struct timeval	tv = { 0, ms * 1000 };

	event_add(w->tick, &tv);
}

/* ARGSUSED */
static void
waits_tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waits	*w = arg;
	uint64_t	 now = dt_clock_ms(CLOCK_MONOTONIC);
	size_t		 i;

	for (i = 0; i < w->n; i++)
		if (w->r[i].pid > 0 && !w->r[i].off)
			waits_look(&w->r[i]);
	if (now - w->sent_at >= WAITS_SEND_MS)
		waits_send(w, now);
	waits_arm(w);
}

struct waits *
waits_new(struct event_base *base, const uint32_t *ranks, size_t n,
    waits_send_fn send, void *arg)
{
	struct waits	*w;
	size_t		 i;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->r = calloc(n + 1, sizeof(*w->r));
	w->out = calloc(n + 1, sizeof(*w->out));
	w->tick = event_new(base, -1, 0, waits_tick_cb, w);
	if (w->r == NULL || w->out == NULL || w->tick == NULL) {
		waits_free(w);
		return NULL;
	}
	for (i = 0; i < n; i++)
		w->r[i].rank = ranks[i];
	w->n = n;
	w->send = send;
	w->arg = arg;
	w->seed = (unsigned)getpid() ^ (unsigned)dt_clock_ms(CLOCK_MONOTONIC);
	w->sent_at = dt_clock_ms(CLOCK_MONOTONIC);
	return w;
}

void
waits_started(struct waits *w, uint32_t rank, pid_t pid)
{
	struct waits_rank	*r;
	size_t			 i;

	if (w == NULL)
		return;
	for (i = 0; i < w->n; i++) {
		r = &w->r[i];
		if (r->rank != rank)
			continue;
		memset(r->n, 0, sizeof(r->n));
		r->samples = 0;
		r->have_sched = 0;
		r->off = 0;
		r->pid = r->main = pid;
		if (pid > 0 && !event_pending(w->tick, EV_TIMEOUT, NULL))
			waits_arm(w);
		return;
	}
}

void
waits_free(struct waits *w)
{
	if (w == NULL)
		return;
	if (w->tick != NULL)
		event_free(w->tick);
	free(w->r);
	free(w->out);
	free(w);
}
