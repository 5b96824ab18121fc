/*
 * progress.c -- the steps this host's ranks report (progress.h).
 *
 * Datagrams, not streams: a rank that reports never blocks on us and never
 * holds a descriptor of ours, and one that dies loses nothing but its last
 * step. The kernel tells each datagram's sender (SO_PASSCRED), so another
 * user's process is not heard; a rank of ours could claim another's number
 * anyway, and gains nothing by it.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/procs.h"
#include "agent/progress.h"
#include "common/err.h"
#include "common/sock.h"
#include "common/sys.h"
#include "proto/agentproto.h"

#define PROGRESS_READS	4096	/* datagrams a wake-up, at most */
#define PROGRESS_READ_MS 250	/* between two reads of the socket */
#define PROGRESS_RCVBUF	(1 << 20) /* datagrams queued between reads */

struct progress_rank {
	uint32_t	 rank;
	pid_t		 pid;		/* 0: not running */
	uint64_t	 step;
	uint64_t	 ms;		/* when it came, our clock */
	int		 fresh;		/* not yet sent */
};

struct progress {
	int			 fd;
	struct event		*ev, *timer, *rearm;
	uint64_t		 used_at;	/* usage last read */
	struct progress_rank	*r;		/* sorted by rank */
	size_t			 n;
	struct ap_progress	*out;
	progress_send_fn	 send;
	void			*arg;
};

static int
progress_cmp(const void *a, const void *b)
{
	const struct progress_rank	*x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* One datagram: "RANK STEP", from a process of ours. */
static void
progress_take(struct progress *pg, const char *msg, const struct ucred *uc)
{
	struct progress_rank	 key, *r;
	unsigned long long	 step;
	unsigned		 rank;
	char			 end;

	uint64_t		 now = dt_clock_ms(CLOCK_MONOTONIC);
	unsigned long long	 at = 0;
	int			 k;

	if (uc == NULL || uc->uid != getuid() ||
	    (k = sscanf(msg, "%u %llu %llu%c", &rank, &step, &at, &end)) < 2)
		return;
	key.rank = rank;
	if ((r = bsearch(&key, pg->r, pg->n, sizeof(*r), progress_cmp)) == NULL)
		return;		/* not a rank of this host */
	r->step = step;
	/* The rank's own time of the step (one clock per host), if sane. */
	r->ms = k >= 3 && at <= now && now - at < PROGRESS_SEND_MS * 60 ? at :
	    now;
	r->fresh = 1;
}

/* ARGSUSED */
static void
progress_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct progress	*pg = arg;
	struct timeval	 pause = { 0, PROGRESS_READ_MS * 1000 };
	char		 buf[PROGRESS_MSG_MAX + 1];
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(sizeof(struct ucred))];
	}		 cm;
	struct iovec	 iov = { buf, PROGRESS_MSG_MAX };
	struct msghdr	 mh;
	struct cmsghdr	*c;
	struct ucred	*uc;
	ssize_t		 n;
	int		 i;

	/*
	 * All that came, then a pause before the next read: a rank's step
	 * carries its own time, so reading late loses nothing, and at most
	 * 1000 / PROGRESS_READ_MS wake-ups a second however fast ranks step.
	 */
	evtimer_add(pg->rearm, &pause);
	for (i = 0; i < PROGRESS_READS; i++) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		if ((n = recvmsg(fd, &mh, MSG_DONTWAIT)) < 0)
			return;		/* EAGAIN: all read */
		buf[n] = '\0';
		uc = NULL;
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_CREDENTIALS)
				uc = (struct ucred *)CMSG_DATA(c);
		progress_take(pg, buf, uc);
	}
}

/*
 * Adds process pid's CPU time (ms) and resident memory (KiB) to *cpu and
 * *rss, then its children's, down the tree: only what the rank runs is
 * read, never all of /proc. *left bounds how many processes are.
 */
static void
progress_usage(pid_t pid, uint64_t *cpu, uint64_t *rss, int *left)
{
	struct proc_info	 pi;
	unsigned long		 size, res;
	char			 path[96], buf[4096], *p, *end;
	long			 tck = sysconf(_SC_CLK_TCK);
	long			 c;
	FILE			*f;

	if (*left <= 0 || proc_info(pid, &pi) != 0 || pi.uid != getuid())
		return;
	(*left)--;
	*cpu += pi.cpu * 1000 / (tck > 0 ? (unsigned long)tck : 100);
	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		if (fscanf(f, "%lu %lu", &size, &res) == 2)
			*rss += (uint64_t)res * (sysconf(_SC_PAGESIZE) / 1024);
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fgets(buf, sizeof(buf), f) != NULL)
		for (p = buf; (c = strtol(p, &end, 10)) > 0 && end != p; p = end)
			progress_usage((pid_t)c, cpu, rss, left);
	fclose(f);
}

void
progress_started(struct progress *pg, uint32_t rank, pid_t pid)
{
	struct progress_rank	key, *r;

	key.rank = rank;
	if (pg != NULL && (r = bsearch(&key, pg->r, pg->n, sizeof(*r),
	    progress_cmp)) != NULL)
		r->pid = pid;
}

void
progress_flush(struct progress *pg)
{
	struct ap_progress	*o;
	uint64_t		 now, cpu, rss;
	uint32_t		 k = 0;
	size_t			 i;
	int			 left, usage;

	if (pg == NULL)
		return;
	now = dt_clock_ms(CLOCK_MONOTONIC);
	/* /proc is read less often than steps go: it costs more. */
	if ((usage = now - pg->used_at >= PROGRESS_USAGE_MS))
		pg->used_at = now;
	for (i = 0; i < pg->n; i++) {
		if (!pg->r[i].fresh && (pg->r[i].pid <= 0 || !usage))
			continue;
		o = &pg->out[k++];
		memset(o, 0, sizeof(*o));
		o->rank = pg->r[i].rank;
		o->flags = pg->r[i].fresh ? AP_PROG_STEP : 0;
		o->step = pg->r[i].step;
		o->age_ms = now - pg->r[i].ms > UINT32_MAX ? UINT32_MAX :
		    (uint32_t)(now - pg->r[i].ms);
		pg->r[i].fresh = 0;
		if (!usage)
			continue;
		o->flags |= AP_PROG_USAGE;
		cpu = rss = 0;
		left = PROGRESS_PROCS_MAX;
		if (pg->r[i].pid > 0)
			progress_usage(pg->r[i].pid, &cpu, &rss, &left);
		/* A rank that ended reads as none: it stays that way. */
		if (left == PROGRESS_PROCS_MAX)
			pg->r[i].pid = 0;
		o->cpu_ms = cpu;
		o->rss_kb = rss > UINT32_MAX ? UINT32_MAX : (uint32_t)rss;
	}
	if (k > 0)
		pg->send(pg->arg, pg->out, k);
}

/* ARGSUSED */
static void
progress_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	progress_flush(arg);
}

/* ARGSUSED */
static void
progress_rearm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct progress	*pg = arg;

	event_add(pg->ev, NULL);
}

struct progress *
progress_new(struct event_base *base, const char *job_id,
    const uint32_t *ranks, size_t n, progress_send_fn send, void *arg,
    char *addr, size_t addrlen, struct dt_err *e)
{
	static unsigned		 serial;
	struct timeval		 tv = { PROGRESS_SEND_MS / 1000,
				    PROGRESS_SEND_MS % 1000 * 1000 };
	struct sockaddr_un	 sa;
	struct progress		*pg;
	char			 name[sizeof(sa.sun_path) - 1];
	socklen_t		 len;
	size_t			 i;
	int			 one = 1, rcvbuf = PROGRESS_RCVBUF;

	snprintf(name, sizeof(name), "dtrun-prog.%.64s.%d.%u", job_id,
	    (int)getpid(), ++serial);
	len = sock_abstract(&sa, name);
	if ((pg = calloc(1, sizeof(*pg))) == NULL ||
	    (pg->r = calloc(n + 1, sizeof(*pg->r))) == NULL ||
	    (pg->out = calloc(n + 1, sizeof(*pg->out))) == NULL) {
		progress_free(pg);
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	pg->fd = -1;
	pg->send = send;
	pg->arg = arg;
	pg->n = n;
	for (i = 0; i < n; i++)
		pg->r[i].rank = ranks[i];
	qsort(pg->r, n, sizeof(*pg->r), progress_cmp);
	if ((pg->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(pg->fd, SOL_SOCKET, SO_PASSCRED, &one,
	    sizeof(one)) == -1 ||
	    bind(pg->fd, (struct sockaddr *)&sa, len) == -1) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "the ranks' progress "
		    "socket @%s: %s", name, strerror(errno));
		progress_free(pg);
		return NULL;
	}
	/* Room for a burst between two reads (the kernel may cap it). */
	setsockopt(pg->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	pg->ev = event_new(base, pg->fd, EV_READ, progress_read_cb, pg);
	pg->timer = event_new(base, -1, EV_PERSIST, progress_timer_cb, pg);
	pg->rearm = evtimer_new(base, progress_rearm_cb, pg);
	if (pg->ev == NULL || pg->timer == NULL || pg->rearm == NULL ||
	    event_add(pg->ev, NULL) != 0 ||
	    event_add(pg->timer, &tv) != 0) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		progress_free(pg);
		return NULL;
	}
	snprintf(addr, addrlen, "unix:@%s", name);
	return pg;
}

void
progress_free(struct progress *pg)
{
	if (pg == NULL)
		return;
	if (pg->ev != NULL)
		event_free(pg->ev);
	if (pg->timer != NULL)
		event_free(pg->timer);
	if (pg->rearm != NULL)
		event_free(pg->rearm);
	if (pg->fd >= 0)
		close(pg->fd);
	free(pg->r);
	free(pg->out);
	free(pg);
}
