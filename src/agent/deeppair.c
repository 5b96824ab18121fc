/*
 * deeppair.c -- the network part of dtrun --check --deep, on one host (see
 * deeppair.h for the exchange between two agents). Everything runs in the
 * agent's event loop and never blocks: the agent keeps its heartbeats and
 * answers its own listener while its PAIR sends.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/deeppair.h"
#include "common/err.h"
#include "common/sys.h"
#include "common/wire.h"

#define DEEP_MAGIC	"DTDP"
#define DEEP_HDR	16
#define DEEP_PING	1
#define DEEP_BULK	2
#define DEEP_IO		(256 * 1024)	/* bytes one read or write moves */
#define DEEP_TURNS	4		/* reads or writes per wake-up: fair
					   to the rest of the loop */

/* What a BULK reads into and sends from: contents never matter. */
static uint8_t	deep_scratch[DEEP_IO];

static uint64_t
deep_now_us(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* v, big-endian, into the n bytes at p. */
static void
deep_put_be(uint8_t *p, uint64_t v, int n)
{
	int	i;

	for (i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = v & 0xff;
}

/* "ADDR:PORT" into sin; -1 if it is not one. */
static int
deep_parse(const char *target, struct sockaddr_in *sin)
{
	const char	*colon = strrchr(target, ':');
	char		 addr[64];
	int		 port;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	if (colon == NULL || (size_t)(colon - target) >= sizeof(addr) ||
	    (port = atoi(colon + 1)) <= 0 || port > 65535)
		return -1;
	snprintf(addr, sizeof(addr), "%.*s", (int)(colon - target), target);
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &sin->sin_addr) == 1 ? 0 : -1;
}

/* The listener. */

struct deep_conn {
	struct deep_srv		*srv;
	struct deep_conn	*prev, *next;
	int			 fd;
	struct event		*ev;
	uint8_t			 hdr[DEEP_HDR];
	size_t			 got;		/* of hdr */
	uint32_t		 kind;
	uint64_t		 left;		/* BULK: bytes still to come */
};

struct deep_srv {
	struct event_base	*base;
	int			 fd;
	struct event		*ev;
	struct deep_conn	*conns;
	size_t			 nconns;
};

static void
deep_conn_free(struct deep_conn *dc)
{
	struct deep_srv	*s = dc->srv;

	if (dc->prev != NULL)
		dc->prev->next = dc->next;
	else
		s->conns = dc->next;
	if (dc->next != NULL)
		dc->next->prev = dc->prev;
	s->nconns--;
	event_free(dc->ev);
	close(dc->fd);
	free(dc);
}

/* The header is in: 0, or -1 when it is not one of ours. */
static int
deep_conn_header(struct deep_conn *dc)
{
	if (memcmp(dc->hdr, DEEP_MAGIC, 4) != 0)
		return -1;
	dc->kind = dt_be32(dc->hdr + 4);
	dc->left = (uint64_t)dt_be32(dc->hdr + 8) << 32 | dt_be32(dc->hdr + 12);
	if (dc->kind != DEEP_PING && dc->kind != DEEP_BULK)
		return -1;
	return dc->kind == DEEP_BULK && dc->left > DEEP_BYTES_MAX ? -1 : 0;
}

/*
 * Takes n bytes read after the header: a PING's are echoed at once (a
 * pinger reads each answer before it sends again, so the echo never
 * waits), a BULK's counted, and its last one answered. -1: close.
 */
static int
deep_conn_take(struct deep_conn *dc, const uint8_t *p, size_t n)
{
	ssize_t	w;

	if (dc->kind == DEEP_PING) {
		w = send(dc->fd, p, n, MSG_NOSIGNAL);
		return w == (ssize_t)n ? 0 : -1;
	}
	if (dc->left == 0)
		return 0;	/* past the end: read until it closes */
	dc->left -= n < dc->left ? n : dc->left;
	if (dc->left == 0 && send(dc->fd, "k", 1, MSG_NOSIGNAL) != 1)
		return -1;
	return 0;
}

/* ARGSUSED */
static void
deep_conn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_conn	*dc = arg;
	ssize_t			 r;
	size_t			 off;
	int			 i;

	if (what & EV_TIMEOUT) {
		deep_conn_free(dc);	/* a silent peer holds nothing */
		return;
	}
	for (i = 0; i < DEEP_TURNS; i++) {
		r = read(fd, deep_scratch, sizeof(deep_scratch));
		if (r == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			deep_conn_free(dc);
			return;
		}
		off = 0;
		if (dc->got < DEEP_HDR) {
			off = (size_t)r < DEEP_HDR - dc->got ? (size_t)r :
			    DEEP_HDR - dc->got;
			memcpy(dc->hdr + dc->got, deep_scratch, off);
			dc->got += off;
			if (dc->got == DEEP_HDR && deep_conn_header(dc) != 0) {
				deep_conn_free(dc);
				return;
			}
		}
		if ((size_t)r > off && dc->got == DEEP_HDR &&
		    deep_conn_take(dc, deep_scratch + off, r - off) != 0) {
			deep_conn_free(dc);
			return;
		}
	}
}

/* ARGSUSED */
static void
deep_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_srv		*s = arg;
	struct deep_conn	*dc;
	struct timeval		 idle = { DEEP_SRV_IDLE_S, 0 };
	int			 c, one = 1;

	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (s->nconns >= DEEP_SRV_CONNS ||
		    (dc = calloc(1, sizeof(*dc))) == NULL) {
			close(c);
			continue;
		}
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		dc->srv = s;
		dc->fd = c;
		if ((dc->ev = event_new(s->base, c, EV_READ | EV_PERSIST,
		    deep_conn_cb, dc)) == NULL) {
			close(c);
			free(dc);
			continue;
		}
		event_add(dc->ev, &idle);
		dc->next = s->conns;
		if (s->conns != NULL)
			s->conns->prev = dc;
		s->conns = dc;
		s->nconns++;
	}
	/*
	 * Out of descriptors: the level-triggered listener would wake us
	 * at once, forever. Stop listening; the PAIR that could not connect
	 * reports it.
	 */
	if (errno == EMFILE || errno == ENFILE)
		event_del(s->ev);
}

struct deep_srv *
deep_srv_new(struct event_base *base, const char *addr, char *where,
    size_t len, struct dt_err *e)
{
	struct deep_srv		*s;
	struct sockaddr_in	 sin;
	socklen_t		 sl = sizeof(sin);
	int			 fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		dt_errf(e, "", 0, 0, DT_ERR_INVAL, "%s: not an IPv4 address",
		    addr);
		return NULL;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, DEEP_SRV_CONNS) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &sl) == -1) {
		dt_errf(e, "", 0, 0, DT_ERR_SYS, "cannot listen on %s: %s",
		    addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->ev = event_new(base, fd, EV_READ | EV_PERSIST, deep_accept_cb,
	    s)) == NULL) {
		free(s);
		close(fd);
		dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	s->base = base;
	s->fd = fd;
	event_add(s->ev, NULL);
	snprintf(where, len, "%s:%d", addr, ntohs(sin.sin_port));
	return s;
}

void
deep_srv_free(struct deep_srv *s)
{
	if (s == NULL)
		return;
	while (s->conns != NULL)
		deep_conn_free(s->conns);
	event_free(s->ev);
	close(s->fd);
	free(s);
}

/* This host's end of a PAIR. */

struct deep_stream {
	struct deep_pair	*p;
	int			 fd;
	struct event		*ev;
	int			 up;		/* connected */
	uint8_t			 out[DEEP_HDR + 8];
	size_t			 outlen, outoff;	/* header, a ping */
	uint64_t		 total, sent;	/* BULK: its share */
	int			 acked;
};

struct deep_pair {
	struct event_base	*base;
	char			 target[64];
	uint32_t		 kind;
	struct deep_stream	*s;
	uint32_t		 ns, nup, nacked;
	struct event		*timer;
	struct event		*fin;		/* done runs from here */
	int			 over;
	uint64_t		 t0_us;		/* the first byte went */
	uint64_t		 ping_us;	/* the ping in flight went */
	uint64_t		 rtt[DEEP_PINGS];
	size_t			 nrtt;
	uint8_t			 echo[8];
	size_t			 echoed;
	deep_done_fn		 done;
	void			*arg;
	struct deep_result	 r;
};

static void	deep_stream_cb(evutil_socket_t, short, void *);

/* The PAIR is over (r filled): done, from the loop. */
static void
deep_pair_end(struct deep_pair *p)
{
	uint32_t	i;

	if (p->over)
		return;
	p->over = 1;
	for (i = 0; i < p->ns; i++)
		if (p->s[i].ev != NULL)
			event_del(p->s[i].ev);
	event_del(p->timer);
	event_active(p->fin, EV_TIMEOUT, 0);
}

/* Ends p with errno err and why: "TARGET: " and fmt's text. */
static void
deep_pair_fail(struct deep_pair *p, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
deep_pair_fail(struct deep_pair *p, int err, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	p->r.err = err;
	n = snprintf(p->r.why, sizeof(p->r.why), "%s: ", p->target);
	va_start(ap, fmt);
	vsnprintf(p->r.why + n, sizeof(p->r.why) - n, fmt, ap);
	va_end(ap);
	deep_pair_end(p);
}

static int
deep_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A PING's answer came: the next ping, or the median of them all. */
static void
deep_ping_answered(struct deep_pair *p, struct deep_stream *st)
{
	p->rtt[p->nrtt++] = deep_now_us() - p->ping_us;
	p->echoed = 0;
	if (p->nrtt < DEEP_PINGS) {
		p->ping_us = deep_now_us();
		if (send(st->fd, p->echo, 8, MSG_NOSIGNAL) != 8)
			deep_pair_fail(p, errno, "%s", strerror(errno));
		return;
	}
	qsort(p->rtt, p->nrtt, sizeof(p->rtt[0]), deep_cmp);
	p->r.rtt_us = p->rtt[p->nrtt / 2];
	p->r.rtt_min_us = p->rtt[0];
	p->r.rtt_max_us = p->rtt[p->nrtt - 1];
	deep_pair_end(p);
}

/* Bytes for st to read: a ping's echo, or a BULK's answer. */
static void
deep_stream_read(struct deep_pair *p, struct deep_stream *st)
{
	uint8_t	buf[8];
	ssize_t	r;

	if (p->kind == DEEP_PING)
		r = read(st->fd, p->echo + p->echoed, 8 - p->echoed);
	else
		r = read(st->fd, buf, sizeof(buf));
	if (r == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		deep_pair_fail(p, r == 0 ? ECONNRESET : errno, "the connection "
		    "ended early: %s", r == 0 ? "closed by the listener" :
		    strerror(errno));
		return;
	}
	if (p->kind == DEEP_PING) {
		if ((p->echoed += r) == 8)
			deep_ping_answered(p, st);
		return;
	}
	st->acked = 1;
	event_del(st->ev);
	if (++p->nacked == p->ns) {
		p->r.bytes = 0;
		for (uint32_t i = 0; i < p->ns; i++)
			p->r.bytes += p->s[i].total;
		p->r.us = deep_now_us() - p->t0_us;
		deep_pair_end(p);
	}
}

/* st can write: the header (and first ping), then a BULK's bytes. */
static void
deep_stream_write(struct deep_pair *p, struct deep_stream *st)
{
	size_t	n;
	ssize_t	w;
	int	k;

	if (st->outoff < st->outlen) {
		w = send(st->fd, st->out + st->outoff, st->outlen - st->outoff,
		    MSG_NOSIGNAL);
		if (w == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w == -1) {
			deep_pair_fail(p, errno, "%s", strerror(errno));
			return;
		}
		st->outoff += w;
		if (st->outoff < st->outlen)
			return;
	}
	/* A few writes a wake-up: the loop's heartbeats and listener go on. */
	for (k = 0; p->kind == DEEP_BULK && st->sent < st->total; k++) {
		if (k == DEEP_TURNS)
			return;
		n = st->total - st->sent < DEEP_IO ? st->total - st->sent :
		    DEEP_IO;
		w = send(st->fd, deep_scratch, n, MSG_NOSIGNAL);
		if (w == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w == -1) {
			deep_pair_fail(p, errno, "%s", strerror(errno));
			return;
		}
		st->sent += w;
	}
	/* All written: only the answers are left to read. */
	event_del(st->ev);
	event_assign(st->ev, p->base, st->fd, EV_READ | EV_PERSIST,
	    deep_stream_cb, st);
	event_add(st->ev, NULL);
}

/* The connect finished: the clock starts with the first one. */
static void
deep_stream_up(struct deep_pair *p, struct deep_stream *st)
{
	struct timeval	tv = { p->kind == DEEP_PING ? DEEP_PING_S :
			    DEEP_BULK_S, 0 };
	socklen_t	l = sizeof(int);
	int		err = 0, one = 1;

	if (getsockopt(st->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
		err = errno;
	if (err != 0) {
		deep_pair_fail(p, err, "%s", strerror(err));
		return;
	}
	st->up = 1;
	setsockopt(st->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (p->nup++ == 0) {
		p->t0_us = p->ping_us = deep_now_us();
		event_add(p->timer, &tv);
	}
}

static void
deep_stream_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_stream	*st = arg;
	struct deep_pair	*p = st->p;

	if (p->over)
		return;
	if (!st->up) {
		deep_stream_up(p, st);
		if (p->over)
			return;
	}
	if (what & EV_READ)
		deep_stream_read(p, st);
	else
		deep_stream_write(p, st);
}

/* What arrived by now: sent, less what the kernel still holds unacked. */
static uint64_t
deep_arrived(const struct deep_pair *p)
{
	uint64_t	sum = 0;
	uint32_t	i;
	int		q;

	for (i = 0; i < p->ns; i++) {
		if (p->s[i].acked) {
			sum += p->s[i].total;
			continue;
		}
		if (ioctl(p->s[i].fd, SIOCOUTQ, &q) == -1 || q < 0)
			q = 0;
		sum += p->s[i].sent > (uint64_t)q ? p->s[i].sent - q : 0;
	}
	return sum;
}

/* ARGSUSED */
static void
deep_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_pair	*p = arg;

	if (p->nup < p->ns) {
		if (p->nup == 0)
			deep_pair_fail(p, ETIMEDOUT, "no answer within %d s",
			    DEEP_CONNECT_S);
		else
			deep_pair_fail(p, ETIMEDOUT, "%u of %u connections "
			    "were not accepted within %d s", p->ns - p->nup,
			    p->ns, DEEP_BULK_S);
		return;
	}
	if (p->kind == DEEP_PING) {
		deep_pair_fail(p, ETIMEDOUT, "%zu of %d round trips in %d s",
		    p->nrtt, DEEP_PINGS, DEEP_PING_S);
		return;
	}
	/* Slow: what got through in the time is the figure. */
	p->r.bytes = deep_arrived(p);
	p->r.us = deep_now_us() - p->t0_us;
	p->r.capped = 1;
	deep_pair_end(p);
}

/* ARGSUSED */
static void
deep_fin_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_pair	*p = arg;

	p->done(p->arg, &p->r);
}

/* Opens stream i toward sin; 0, or -1 with e filled. */
static int
deep_stream_open(struct deep_pair *p, uint32_t i,
    const struct sockaddr_in *sin, uint64_t share, struct dt_err *e)
{
	struct deep_stream	*st = &p->s[i];

	st->p = p;
	st->total = share;
	memcpy(st->out, DEEP_MAGIC, 4);
	deep_put_be(st->out + 4, p->kind, 4);
	deep_put_be(st->out + 8, p->kind == DEEP_PING ? DEEP_PINGS : share, 8);
	/* A PING's first round trip goes with the header. */
	st->outlen = DEEP_HDR + (p->kind == DEEP_PING ? 8 : 0);
	if ((st->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return dt_errf(e, "", 0, 0, DT_ERR_SYS, "socket: %s",
		    strerror(errno));
	if (connect(st->fd, (const struct sockaddr *)sin, sizeof(*sin)) == -1 &&
	    errno != EINPROGRESS)
		return dt_errf(e, "", 0, 0, DT_ERR_SYS, "%s: %s", p->target,
		    strerror(errno));
	if ((st->ev = event_new(p->base, st->fd, EV_WRITE | EV_PERSIST,
	    deep_stream_cb, st)) == NULL)
		return dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
	event_add(st->ev, NULL);
	return 0;
}

struct deep_pair *
deep_pair_start(struct event_base *base, const char *target, uint64_t bytes,
    uint32_t streams, deep_done_fn done, void *arg, struct dt_err *e)
{
	struct deep_pair	*p;
	struct sockaddr_in	 sin;
	struct timeval		 tv = { DEEP_CONNECT_S, 0 };
	uint32_t		 i;

	if (deep_parse(target, &sin) != 0) {
		dt_errf(e, "", 0, 0, DT_ERR_INVAL, "%s: not ADDR:PORT", target);
		return NULL;
	}
	if (bytes > DEEP_BYTES_MAX || (bytes > 0 && streams == 0)) {
		dt_errf(e, "", 0, 0, DT_ERR_RANGE, "%llu bytes over %u "
		    "connections: out of range", (unsigned long long)bytes,
		    streams);
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->s = calloc(bytes > 0 ? streams : 1, sizeof(*p->s))) == NULL) {
		free(p);
		dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	p->base = base;
	snprintf(p->target, sizeof(p->target), "%s", target);
	p->kind = bytes > 0 ? DEEP_BULK : DEEP_PING;
	p->ns = bytes > 0 ? streams : 1;
	p->done = done;
	p->arg = arg;
	for (i = 0; i < p->ns; i++)
		p->s[i].fd = -1;
	p->timer = evtimer_new(base, deep_timer_cb, p);
	p->fin = event_new(base, -1, 0, deep_fin_cb, p);
	if (p->timer == NULL || p->fin == NULL) {
		deep_pair_free(p);
		dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	for (i = 0; i < p->ns; i++) {
		/* The first stream carries what does not divide evenly. */
		if (deep_stream_open(p, i, &sin, bytes / p->ns + (i == 0 ?
		    bytes % p->ns : 0), e) != 0) {
			deep_pair_free(p);
			return NULL;
		}
	}
	event_add(p->timer, &tv);
	return p;
}

void
deep_pair_free(struct deep_pair *p)
{
	uint32_t	i;

	if (p == NULL)
		return;
	for (i = 0; i < p->ns; i++) {
		if (p->s[i].ev != NULL)
			event_free(p->s[i].ev);
		if (p->s[i].fd >= 0)
			close(p->s[i].fd);
	}
	if (p->timer != NULL)
		event_free(p->timer);
	if (p->fin != NULL)
		event_free(p->fin);
	free(p->s);
	free(p);
}
