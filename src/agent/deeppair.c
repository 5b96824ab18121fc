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
#include "common/evfd.h"
#include "common/mac.h"
#include "common/sys.h"
#include "common/wire.h"

#define DEEP_MAGIC	"DTDP"
#define DEEP_LABEL	"dtrun deep pair 1"	/* what the MAC is for */
#define DEEP_HDR	16
#define DEEP_HELLO	(DEEP_HDR + DT_SHA256_LEN)	/* with its MAC */
#define DEEP_PROVEN	"p"		/* the listener's answer to a hello */
#define DEEP_RETRIES	16		/* a connection shed before it proved
					   itself (a crowd of strangers) is
					   opened again, this often at most */
#define DEEP_PING	1
#define DEEP_BULK	2
#define DEEP_IO		(256 * 1024)	/* bytes one read or write moves */
#define DEEP_TURNS	4		/* reads or writes per wake-up: fair
					   to the rest of the loop */
#define DEEP_ACCEPTS	64		/* accepts per wake-up, likewise */
#define DEEP_PAUSE_MS	100		/* out of descriptors, none to shed:
					   the listener rests this long */

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

/* Connections of one kind, oldest first. */
struct deep_list {
	struct deep_conn	*head, *tail;
	size_t			 n;
};

struct deep_conn {
	struct deep_srv		*srv;
	struct deep_conn	*prev, *next;
	int			 fd;
	int			 proven;	/* its hello's MAC was good */
	struct event		*ev;
	uint8_t			 nonce[DEEP_NONCE_LEN];
	uint8_t			 hello[DEEP_HELLO];
	size_t			 got;		/* of hello */
	uint32_t		 kind;
	uint64_t		 left;		/* BULK: bytes still to come */
};

struct deep_srv {
	struct event_base	*base;
	int			 fd;
	int			 reserve;	/* a spare fd (dt_accept_shed) */
	struct event		*ev;
	struct event		*relisten;	/* ev paused: out of fds */
	uint8_t			 key[DEEP_KEY_LEN];
	uint8_t			 nbase[8];	/* nonces: this, then a count */
	uint64_t		 nseq;
	struct deep_list	 pending;	/* still to prove themselves */
	struct deep_list	 proven;
	size_t			 max_pending, max_proven;
};

static void
deep_list_add(struct deep_list *l, struct deep_conn *dc)
{
	dc->prev = l->tail;
	dc->next = NULL;
	if (l->tail != NULL)
		l->tail->next = dc;
	else
		l->head = dc;
	l->tail = dc;
	l->n++;
}

static void
deep_list_del(struct deep_list *l, struct deep_conn *dc)
{
	if (dc->prev != NULL)
		dc->prev->next = dc->next;
	else
		l->head = dc->next;
	if (dc->next != NULL)
		dc->next->prev = dc->prev;
	else
		l->tail = dc->prev;
	l->n--;
}

static void
deep_conn_free(struct deep_conn *dc)
{
	struct deep_srv	*s = dc->srv;

	deep_list_del(dc->proven ? &s->proven : &s->pending, dc);
	event_free(dc->ev);
	close(dc->fd);
	free(dc);
}

/* The MAC a hello carries, over the nonce and its header. */
static void
deep_mac(const uint8_t *key, const uint8_t *nonce, const uint8_t *hdr,
    uint8_t out[DT_SHA256_LEN])
{
	const void	*p[3] = { DEEP_LABEL, nonce, hdr };
	size_t		 len[3] = { sizeof(DEEP_LABEL) - 1, DEEP_NONCE_LEN,
			    DEEP_HDR };

	dt_hmac_sha256(key, DEEP_KEY_LEN, 3, p, len, out);
}

/*
 * The hello is in: 0, and the connection counts among the proven, or -1
 * when it is not one of ours (or there is no room for it).
 */
static int
deep_conn_hello(struct deep_conn *dc)
{
	struct deep_srv	*s = dc->srv;
	struct timeval	 idle = { DEEP_SRV_IDLE_S, 0 };
	uint8_t		 mac[DT_SHA256_LEN];

	deep_mac(s->key, dc->nonce, dc->hello, mac);
	if (!dt_memeq_ct(mac, dc->hello + DEEP_HDR, DT_SHA256_LEN) ||
	    memcmp(dc->hello, DEEP_MAGIC, 4) != 0)
		return -1;
	dc->kind = dt_be32(dc->hello + 4);
	dc->left = (uint64_t)dt_be32(dc->hello + 8) << 32 |
	    dt_be32(dc->hello + 12);
	if ((dc->kind != DEEP_PING && dc->kind != DEEP_BULK) ||
	    (dc->kind == DEEP_BULK && dc->left > DEEP_BYTES_MAX) ||
	    s->proven.n >= s->max_proven)
		return -1;
	/* The sender learns it counts: before this, a close means "shed". */
	if (send(dc->fd, DEEP_PROVEN, 1, MSG_NOSIGNAL) != 1)
		return -1;
	deep_list_del(&s->pending, dc);
	dc->proven = 1;
	deep_list_add(&s->proven, dc);
	event_add(dc->ev, &idle);	/* from now on: silent this long */
	return 0;
}

/*
 * Takes n bytes read after the hello: a PING's are echoed at once (a
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
	int			 i;

	if (what & EV_TIMEOUT) {
		deep_conn_free(dc);	/* silent, or never proven: gone */
		return;
	}
	for (i = 0; i < DEEP_TURNS; i++) {
		/* Until it is proven, not a byte past the hello. */
		r = read(fd, deep_scratch, dc->proven ? sizeof(deep_scratch) :
		    DEEP_HELLO - dc->got);
		if (r == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (r <= 0) {
			deep_conn_free(dc);
			return;
		}
		if (!dc->proven) {
			memcpy(dc->hello + dc->got, deep_scratch, r);
			dc->got += r;
			if (dc->got == DEEP_HELLO && deep_conn_hello(dc) != 0) {
				deep_conn_free(dc);
				return;
			}
			continue;
		}
		if (deep_conn_take(dc, deep_scratch, r) != 0) {
			deep_conn_free(dc);
			return;
		}
	}
}

/* Takes connection c: it is sent its challenge, and must answer it. */
static void
deep_take(void *arg, int c)
{
	struct deep_srv		*s = arg;
	struct deep_conn	*dc;
	struct timeval		 tv = { DEEP_AUTH_S, 0 };
	int			 one = 1;

	/* Room first: the stranger that waited longest goes. */
	if (s->pending.n >= s->max_pending)
		deep_conn_free(s->pending.head);
	if ((dc = calloc(1, sizeof(*dc))) == NULL) {
		close(c);
		return;
	}
	setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	dc->srv = s;
	dc->fd = c;
	memcpy(dc->nonce, s->nbase, sizeof(s->nbase));
	deep_put_be(dc->nonce + sizeof(s->nbase), s->nseq++, 8);
	/* A new socket's buffer is empty: the challenge goes whole. */
	if (send(c, dc->nonce, DEEP_NONCE_LEN, MSG_NOSIGNAL) != DEEP_NONCE_LEN ||
	    (dc->ev = event_new(s->base, c, EV_READ | EV_PERSIST, deep_conn_cb,
	    dc)) == NULL) {
		close(c);
		free(dc);
		return;
	}
	event_add(dc->ev, &tv);
	deep_list_add(&s->pending, dc);
}

/* ARGSUSED */
static void
deep_relisten_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_srv	*s = arg;

	event_add(s->ev, NULL);
}

/* Out of descriptors: an unproven connection goes first (1), if any. */
static int
deep_shed(void *arg)
{
	struct deep_srv	*s = arg;

	if (s->pending.head == NULL)
		return 0;
	deep_conn_free(s->pending.head);
	return 1;
}

/* ARGSUSED */
static void
deep_accept_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_srv	*s = arg;
	struct timeval	 tv = { 0, DEEP_PAUSE_MS * 1000 };

	/* Else the newcomer, with the spare descriptor; else rest a while. */
	if (dt_accept_some(fd, SOCK_NONBLOCK | SOCK_CLOEXEC, DEEP_ACCEPTS,
	    &s->reserve, deep_take, deep_shed, s) != 0) {
		event_del(s->ev);
		evtimer_add(s->relisten, &tv);
	}
}

/* The open-files limit over div, or want if that is less; at least 8. */
static size_t
deep_room(size_t want, uint64_t div)
{
	uint64_t	lim = dt_nofile_limit() / div;

	return lim < 8 ? 8 : lim < want ? (size_t)lim : want;
}

struct deep_srv *
deep_srv_new(struct event_base *base, const char *addr, const uint8_t *key,
    char *where, size_t len, struct dt_err *e)
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
	    s)) == NULL ||
	    (s->relisten = evtimer_new(base, deep_relisten_cb, s)) == NULL ||
	    dt_random(s->nbase, sizeof(s->nbase)) != 0) {
		if (s != NULL && s->ev != NULL)
			event_free(s->ev);
		free(s);
		close(fd);
		dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	s->base = base;
	s->fd = fd;
	s->reserve = dt_reserve_open();
	memcpy(s->key, key, DEEP_KEY_LEN);
	s->max_pending = deep_room(DEEP_SRV_PENDING, 8);
	s->max_proven = deep_room(DEEP_SRV_CONNS, 4);
	event_add(s->ev, NULL);
	snprintf(where, len, "%s:%d", addr, ntohs(sin.sin_port));
	return s;
}

void
deep_srv_free(struct deep_srv *s)
{
	if (s == NULL)
		return;
	while (s->pending.head != NULL)
		deep_conn_free(s->pending.head);
	while (s->proven.head != NULL)
		deep_conn_free(s->proven.head);
	event_free(s->ev);
	event_free(s->relisten);
	close(s->fd);
	if (s->reserve >= 0)
		close(s->reserve);
	explicit_bzero(s->key, sizeof(s->key));
	free(s);
}

/* This host's end of a PAIR. */

struct deep_stream {
	struct deep_pair	*p;
	int			 fd;
	struct event		*ev;
	int			 connected;
	int			 up;		/* the challenge came */
	int			 proven;	/* the listener said so */
	uint32_t		 tries;		/* connections opened */
	uint8_t			 nonce[DEEP_NONCE_LEN];
	size_t			 ngot;		/* of nonce */
	uint8_t			 out[DEEP_HELLO + 8];
	size_t			 outlen, outoff;	/* hello, a ping */
	uint64_t		 total, sent;	/* BULK: its share */
	int			 acked;
};

struct deep_pair {
	struct event_base	*base;
	char			 target[64];
	uint8_t			 key[DEEP_KEY_LEN];
	uint32_t		 kind;
	struct sockaddr_in	 sin;
	struct deep_stream	*s;
	uint32_t		 ns, nup, nacked;
	int			 started;	/* t0_us and the timer set */
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
static void	deep_stream_lost(struct deep_pair *, struct deep_stream *,
		    int, const char *);

/* st's event waits for what (EV_READ or EV_WRITE) from now on. */
static void
deep_stream_watch(struct deep_pair *p, struct deep_stream *st, short what)
{
	event_del(st->ev);
	event_assign(st->ev, p->base, st->fd, what | EV_PERSIST,
	    deep_stream_cb, st);
	event_add(st->ev, NULL);
}

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

	if (!st->proven)
		r = read(st->fd, buf, 1);
	else if (p->kind == DEEP_PING)
		r = read(st->fd, p->echo + p->echoed, 8 - p->echoed);
	else
		r = read(st->fd, buf, sizeof(buf));
	if (r == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		deep_stream_lost(p, st, r == 0 ? ECONNRESET : errno, "early");
		return;
	}
	if (!st->proven) {
		if (buf[0] != DEEP_PROVEN[0]) {
			deep_pair_fail(p, EPROTO, "not a pair listener");
			return;
		}
		st->proven = 1;
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
			deep_stream_lost(p, st, errno, "in its hello");
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
			deep_stream_lost(p, st, errno, "early");
			return;
		}
		st->sent += w;
	}
	/* All written: only the answers are left to read. */
	deep_stream_watch(p, st, EV_READ);
}

/* The connect finished: the listener's challenge comes next. */
static void
deep_stream_connected(struct deep_pair *p, struct deep_stream *st)
{
	socklen_t	l = sizeof(int);
	int		err = 0, one = 1;

	if (getsockopt(st->fd, SOL_SOCKET, SO_ERROR, &err, &l) == -1)
		err = errno;
	if (err != 0) {
		deep_pair_fail(p, err, "%s", strerror(err));
		return;
	}
	st->connected = 1;
	setsockopt(st->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	deep_stream_watch(p, st, EV_READ);
}

/*
 * Bytes of the challenge: once it is whole, the hello answers it (and a
 * PING's first round trip goes with it), and the clock starts with the
 * first connection that got this far.
 */
static void
deep_stream_nonce(struct deep_pair *p, struct deep_stream *st)
{
	struct timeval	tv = { p->kind == DEEP_PING ? DEEP_PING_S :
			    DEEP_BULK_S, 0 };
	ssize_t		r;

	r = read(st->fd, st->nonce + st->ngot, DEEP_NONCE_LEN - st->ngot);
	if (r == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) {
		deep_stream_lost(p, st, r == 0 ? ECONNRESET : errno,
		    "before the listener's challenge");
		return;
	}
	if ((st->ngot += r) < DEEP_NONCE_LEN)
		return;
	deep_mac(p->key, st->nonce, st->out, st->out + DEEP_HDR);
	st->up = 1;
	p->nup++;
	p->ping_us = deep_now_us();	/* a PING's first goes with the hello */
	if (!p->started) {
		p->started = 1;
		p->t0_us = p->ping_us;
		event_add(p->timer, &tv);
	}
	/* Reading too: the listener's word that it counts comes any time. */
	deep_stream_watch(p, st, EV_WRITE | EV_READ);
	deep_stream_write(p, st);
}

static void
deep_stream_cb(evutil_socket_t fd, short what, void *arg)
{
	struct deep_stream	*st = arg;
	struct deep_pair	*p = st->p;
	uint32_t		 tries = st->tries;

	if (p->over)
		return;
	if (!st->connected)
		deep_stream_connected(p, st);
	else if (!st->up)
		deep_stream_nonce(p, st);
	else {
		if (what & EV_READ)
			deep_stream_read(p, st);
		/* Unless the read ended it, or this connection. */
		if ((what & EV_WRITE) && !p->over && st->tries == tries)
			deep_stream_write(p, st);
	}
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

/* Opens st's connection to the listener; 0, or -1 with e filled. */
static int
deep_stream_dial(struct deep_pair *p, struct deep_stream *st,
    struct dt_err *e)
{
	st->tries++;
	if ((st->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1)
		return dt_errf(e, "", 0, 0, DT_ERR_SYS, "socket: %s",
		    strerror(errno));
	if (connect(st->fd, (const struct sockaddr *)&p->sin,
	    sizeof(p->sin)) == -1 && errno != EINPROGRESS)
		return dt_errf(e, "", 0, 0, DT_ERR_SYS, "%s: %s", p->target,
		    strerror(errno));
	if ((st->ev = event_new(p->base, st->fd, EV_WRITE | EV_PERSIST,
	    deep_stream_cb, st)) == NULL)
		return dt_errf(e, "", 0, 0, DT_ERR_NOMEM, "out of memory");
	event_add(st->ev, NULL);
	return 0;
}

/*
 * st's connection ended (errno err) before it was done. Before the
 * listener counted it, a listener crowded by strangers shed it as one of
 * them: a new connection, at the back of the queue, tries again. After,
 * or past DEEP_RETRIES, the PAIR fails.
 */
static void
deep_stream_lost(struct deep_pair *p, struct deep_stream *st, int err,
    const char *when)
{
	struct dt_err	e;

	if (st->proven || st->tries >= DEEP_RETRIES) {
		deep_pair_fail(p, err, "the connection ended %s: %s%s", when,
		    err == ECONNRESET ? "closed by the listener" :
		    strerror(err), st->proven ? "" : ", every time");
		return;
	}
	dt_event_close(&st->ev, &st->fd);
	if (st->up)
		p->nup--;
	st->connected = st->up = 0;
	st->ngot = st->outoff = 0;
	st->sent = 0;
	p->echoed = 0;
	dt_err_clear(&e);
	if (deep_stream_dial(p, st, &e) != 0)
		deep_pair_fail(p, errno, "%s", e.msg);
}

/* Opens stream i, its share bytes; 0, or -1 with e filled. */
static int
deep_stream_open(struct deep_pair *p, uint32_t i, uint64_t share,
    struct dt_err *e)
{
	struct deep_stream	*st = &p->s[i];

	st->p = p;
	st->total = share;
	memcpy(st->out, DEEP_MAGIC, 4);
	deep_put_be(st->out + 4, p->kind, 4);
	deep_put_be(st->out + 8, p->kind == DEEP_PING ? DEEP_PINGS : share, 8);
	/* The MAC follows at the challenge; a PING's first round trip too. */
	st->outlen = DEEP_HELLO + (p->kind == DEEP_PING ? 8 : 0);
	return deep_stream_dial(p, st, e);
}

struct deep_pair *
deep_pair_start(struct event_base *base, const char *target,
    const uint8_t *key, uint64_t bytes, uint32_t streams, deep_done_fn done,
    void *arg, struct dt_err *e)
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
	p->sin = sin;
	memcpy(p->key, key, DEEP_KEY_LEN);
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
		if (deep_stream_open(p, i, bytes / p->ns + (i == 0 ?
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
	explicit_bzero(p->key, sizeof(p->key));
	free(p->s);
	free(p);
}
