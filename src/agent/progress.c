/*
 * progress.c -- the steps this host's ranks report (progress.h).
 *
 * A stream connection per reporting process, not datagrams: a datagram
 * socket's queue is capped by net.unix.max_dgram_qlen (10 by default,
 * whatever SO_RCVBUF says) and shared by all who send, so ranks stepping
 * fast lost steps and a stranger who kept it full silenced the watch. A
 * connection queues in its sender's socket buffer (some 270 lines by
 * default), which nobody else shares, and lines are never refused: a rank
 * that reports never blocks (a full buffer drops that one step, and the
 * next says as much). Whose connection it is the kernel tells at accept
 * (SO_PEERCRED): another user's is closed at once and never read.
 * A process of ours could claim another rank's number anyway, and gains
 * nothing by it.
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

#include "host/procs.h"
#include "agent/progress.h"
#include "common/err.h"
#include "common/log.h"
#include "common/sock.h"
#include "common/sys.h"
#include "proto/agentproto.h"

#define PROGRESS_ACCEPTS 256	/* connections taken a wake-up, at most */
#define PROGRESS_READ_MS 50	/* between two reads of one connection */
#define PROGRESS_READ_MAX 65536	/* bytes read a wake-up, a connection */

struct progress_rank {
	uint32_t	 rank;
	pid_t		 pid;		/* 0: not running */
	uint64_t	 step;
	uint64_t	 ms;		/* when it came, our clock */
	int		 fresh;		/* not yet sent */
};

/* A reporting process's connection, and its unfinished line. */
struct progress_conn {
	struct progress	*pg;
	int		 fd;
	struct event	*ev;
	size_t		 len;
	char		 line[PROGRESS_MSG_MAX + 1];
};

struct progress {
	int			 fd;		/* listening */
	struct event		*ev, *timer, *rearm;
	uint64_t		 used_at;	/* usage last read */
	struct progress_rank	*r;		/* sorted by rank */
	size_t			 n;
	struct progress_conn	**c;		/* connections */
	size_t			 nc, maxc;
	struct ap_progress	*out;
	progress_send_fn	 send;
	void			*arg;
	struct ap_coll		*colls;		/* arrivals not yet sent */
	size_t			 ncolls;
	uint64_t		 colls_dropped;
	progress_colls_fn	 send_colls;
};

static int
progress_cmp(const void *a, const void *b)
{
	const struct progress_rank	*x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/*
 * "coll RANK NRANKS COMM SEQ NS": a rank's arrival at a NCCL collective,
 * from dtrun's profiler plugin. Kept for the next send; past a send's
 * worth, dropped (and counted): the plugin then outruns the agent.
 */
static void
progress_coll(struct progress *pg, const char *msg)
{
	struct progress_rank	 key;
	struct ap_coll		*c;
	unsigned long long	 comm, seq, ns;
	unsigned		 rank, nranks;
	char			 end;

	if (sscanf(msg, "coll %u %u %llx %llu %llu%c", &rank, &nranks, &comm,
	    &seq, &ns, &end) != 5 || nranks == 0)
		return;
	key.rank = rank;
	if (bsearch(&key, pg->r, pg->n, sizeof(key), progress_cmp) == NULL)
		return;		/* not a rank of this host */
	if (pg->ncolls >= AP_MAX_COLLS) {
		pg->colls_dropped++;
		return;
	}
	if (pg->colls == NULL &&
	    (pg->colls = calloc(AP_MAX_COLLS, sizeof(*pg->colls))) == NULL)
		return;
	c = &pg->colls[pg->ncolls++];
	c->rank = rank;
	c->nranks = nranks;
	c->comm = comm;
	c->seq = seq;
	c->ns = ns;
}

/* One line: "RANK STEP" or "RANK STEP MS", or a collective's. */
static void
progress_take(struct progress *pg, const char *msg)
{
	struct progress_rank	 key, *r;
	unsigned long long	 step;
	unsigned		 rank;
	char			 end;

	uint64_t		 now = dt_clock_ms(CLOCK_MONOTONIC);
	unsigned long long	 at = 0;
	int			 k;

	if (strncmp(msg, "coll ", 5) == 0) {
		progress_coll(pg, msg);
		return;
	}
	if ((k = sscanf(msg, "%u %llu %llu%c", &rank, &step, &at, &end)) < 2 ||
	    k > 3)
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

/* Closes connection i (the last one takes its place). */
static void
progress_drop(struct progress *pg, size_t i)
{
	struct progress_conn	*c = pg->c[i];

	event_free(c->ev);
	close(c->fd);
	free(c);
	pg->c[i] = pg->c[--pg->nc];
}

/*
 * Takes every whole line connection c holds. Returns -1 when it is to be
 * closed: its process closed it, or sent a line too long to be ours.
 */
static int
progress_read(struct progress_conn *c)
{
	char	*nl, *p;
	size_t	 got = 0;
	ssize_t	 n;

	while (got < PROGRESS_READ_MAX) {
		n = read(c->fd, c->line + c->len, PROGRESS_MSG_MAX - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		c->len += (size_t)n;
		c->line[c->len] = '\0';
		for (p = c->line; (nl = memchr(p, '\n', c->len - (size_t)(p -
		    c->line))) != NULL; p = nl + 1) {
			*nl = '\0';
			progress_take(c->pg, p);
		}
		c->len -= (size_t)(p - c->line);
		memmove(c->line, p, c->len);
		if (c->len == PROGRESS_MSG_MAX)
			return -1;
	}
	return 0;
}

/*
 * A connection has something: all it has is read, then it rests
 * PROGRESS_READ_MS (the rearm timer) before the next read. A rank's step
 * carries its own time, so reading late loses nothing, and a rank stepping
 * fast costs at most 1000 / PROGRESS_READ_MS wake-ups a second.
 */
/* ARGSUSED */
static void
progress_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct progress_conn	*c = arg;
	struct progress		*pg = c->pg;
	struct timeval		 pause = { 0, PROGRESS_READ_MS * 1000 };
	size_t			 i;

	if (progress_read(c) == 0) {
		if (!evtimer_pending(pg->rearm, NULL))
			evtimer_add(pg->rearm, &pause);
		return;
	}
	for (i = 0; i < pg->nc; i++)
		if (pg->c[i] == c) {
			progress_drop(pg, i);
			break;
		}
}

/* Keeps connection fd, from a process of ours. */
static void
progress_keep(struct progress *pg, int fd)
{
	struct progress_conn	*c;

	if (pg->nc == pg->maxc || (c = calloc(1, sizeof(*c))) == NULL) {
		log_debug("progress: %zu connections already: one more is "
		    "closed", pg->nc);
		close(fd);
		return;
	}
	c->pg = pg;
	c->fd = fd;
	if ((c->ev = event_new(event_get_base(pg->ev), fd, EV_READ,
	    progress_read_cb, c)) == NULL || event_add(c->ev, NULL) != 0) {
		if (c->ev != NULL)
			event_free(c->ev);
		free(c);
		close(fd);
		return;
	}
	pg->c[pg->nc++] = c;
}

/*
 * Someone connected: kept if of our user, closed at once if not (never
 * read: another user's lines never count, and they cost us no memory).
 */
/* ARGSUSED */
static void
progress_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct progress	*pg = arg;
	struct timeval	 pause = { 0, PROGRESS_READ_MS * 1000 };
	int		 fd, i;

	for (i = 0; i < PROGRESS_ACCEPTS; i++) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
		    SOCK_CLOEXEC)) == -1) {
			/* Out of descriptors: rest, rather than spin. */
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				event_del(pg->ev);
				evtimer_add(pg->rearm, &pause);
			}
			return;
		}
		if (!sock_peer_is_us(fd)) {
			close(fd);
			continue;
		}
		progress_keep(pg, fd);
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

/* Sends the steps, usage and collectives that are new (every second). */
static void
progress_send_new(struct progress *pg)
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
	if (pg->ncolls > 0 && pg->send_colls != NULL)
		pg->send_colls(pg->arg, pg->colls, (uint32_t)pg->ncolls);
	pg->ncolls = 0;
}

/*
 * The ranks are done: what they wrote last may still sit unread, in a
 * connection resting between reads or one not yet accepted (a rank's
 * NCCL plugin sends its last collectives as it exits). Take it all.
 */
static void
progress_drain(struct progress *pg)
{
	size_t	i;

	progress_accept_cb(pg->fd, EV_READ, pg);
	for (i = 0; i < pg->nc; )
		if (progress_read(pg->c[i]) != 0)
			progress_drop(pg, i);	/* the last takes its place */
		else
			i++;
}

void
progress_flush(struct progress *pg)
{
	if (pg == NULL)
		return;
	progress_drain(pg);
	progress_send_new(pg);
}

void
progress_on_colls(struct progress *pg, progress_colls_fn fn)
{
	if (pg != NULL)
		pg->send_colls = fn;
}

/* ARGSUSED */
static void
progress_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	progress_send_new(arg);
}

/* The pause is over: the listener and every connection are heard again. */
/* ARGSUSED */
static void
progress_rearm_cb(evutil_socket_t fd, short what, void *arg)
{
	struct progress	*pg = arg;
	size_t		 i;

	event_add(pg->ev, NULL);
	for (i = 0; i < pg->nc; i++)
		event_add(pg->c[i]->ev, NULL);
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

	snprintf(name, sizeof(name), "dtrun-prog.%.64s.%d.%u", job_id,
	    (int)getpid(), ++serial);
	len = sock_abstract(&sa, name);
	if ((pg = calloc(1, sizeof(*pg))) == NULL ||
	    (pg->r = calloc(n + 1, sizeof(*pg->r))) == NULL ||
	    (pg->out = calloc(n + 1, sizeof(*pg->out))) == NULL ||
	    (pg->c = calloc(PROGRESS_CONNS(n), sizeof(*pg->c))) == NULL) {
		progress_free(pg);
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	pg->fd = -1;
	pg->send = send;
	pg->arg = arg;
	pg->n = n;
	pg->maxc = PROGRESS_CONNS(n);
	for (i = 0; i < n; i++)
		pg->r[i].rank = ranks[i];
	qsort(pg->r, n, sizeof(*pg->r), progress_cmp);
	if ((pg->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 ||
	    bind(pg->fd, (struct sockaddr *)&sa, len) == -1 ||
	    listen(pg->fd, SOMAXCONN) == -1) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "the ranks' progress "
		    "socket @%s: %s", name, strerror(errno));
		progress_free(pg);
		return NULL;
	}
	pg->ev = event_new(base, pg->fd, EV_READ | EV_PERSIST,
	    progress_accept_cb, pg);
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
	while (pg->nc > 0)
		progress_drop(pg, pg->nc - 1);
	free(pg->c);
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
	free(pg->colls);
	free(pg);
}
