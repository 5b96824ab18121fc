/*
 * rdzvrelay.c -- the ranks' connections through their agent (rdzvrelay.h).
 *
 * The rendezvous socket is in the abstract namespace: nothing to remove
 * from the file system, gone with the agent. The store's is TCP, bound
 * to the loopback: only this host reaches it. Anyone on the host could
 * dial either, so each connection's peer must be of our user; a rank
 * could read the job's secret out of our memory anyway, and it has none.
 * What dtrun sends a rank is queued without a bound of its own: the
 * server answers only what was asked, one request at a time.
 *
 * A connection gets its channel number only with its first bytes: one
 * that says nothing costs dtrun nothing and never moves a rank's channel
 * out of reach. Silent ones are few (a rank writes its JOIN as soon as
 * it connects): past a cap the oldest is closed, and any is closed
 * after RELAY_SILENT_S, so a flood of them never holds our descriptors.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/rdzvrelay.h"
#include "common/err.h"
#include "common/sock.h"
#include "common/sys.h"
#include "common/wire.h"

#define RELAY_READ	(64 * 1024)	/* one read of a rank's stream */
#define RELAY_SILENT_S	10		/* seconds one may say nothing */
#define RELAY_SILENT_MIN 16		/* silent ones kept, at least */
#define RELAY_SILENT_MAX 256		/* and at most */
#define STORE_SILENT_MIN 64		/* the same for the store, whose */
#define STORE_SILENT_MAX 8192		/* ranks keep one silent each */
#define RELAY_ACCEPTS	256		/* accepted per turn of the loop */

struct relay_chan {
	struct rdzvrelay *r;
	uint32_t	 id;		/* 0 while it has sent nothing */
	int		 fd;
	struct event	*rev, *wev;
	struct dt_wbuf	 out;		/* dtrun's bytes not yet written */
	size_t		 off;
	double		 t_open;	/* accepted at (monotonic) */
	struct relay_chan *snext, *sprev; /* the silent ones, oldest first */
};

struct rdzvrelay {
	struct event_base	*base;
	enum relay_kind		 kind;
	const char		*what;	/* for messages */
	struct rdzvrelay_cbs	 cb;
	int			 lfd;
	struct event		*lev;
	struct relay_chan	**ch;	/* by id - 1; NULL once closed */
	size_t			 nch;
	struct relay_chan	*shead, *stail;
	size_t			 nsilent, maxsilent;
	size_t			 shed;	/* silent, closed for room */
	struct event		*sweep;	/* closes the long silent */
};

/* Takes c off the list of silent connections. */
static void
silent_unlink(struct relay_chan *c)
{
	struct rdzvrelay	*r = c->r;

	if (c->sprev != NULL)
		c->sprev->snext = c->snext;
	else
		r->shead = c->snext;
	if (c->snext != NULL)
		c->snext->sprev = c->sprev;
	else
		r->stail = c->sprev;
	c->snext = c->sprev = NULL;
	r->nsilent--;
}

/* Closes c; with tell, dtrun hears that the rank went (if it knew it). */
static void
chan_close(struct relay_chan *c, int tell)
{
	struct rdzvrelay	*r = c->r;

	if (c->id == 0)
		silent_unlink(c);
	else {
		if (tell)
			r->cb.send(r->cb.arg, c->id, NULL, 0);
		r->ch[c->id - 1] = NULL;
	}
	event_free(c->rev);
	event_free(c->wev);
	close(c->fd);
	dt_wbuf_free(&c->out);
	free(c);
}

/* Writes what c has queued; 0, or -1 when c was closed. */
static int
chan_flush(struct relay_chan *c)
{
	ssize_t	n;

	while (c->off < c->out.len) {
		n = write(c->fd, c->out.p + c->off, c->out.len - c->off);
		if (n > 0) {
			c->off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_add(c->wev, NULL);
			return 0;
		}
		chan_close(c, 1);	/* the rank is gone */
		return -1;
	}
	dt_wbuf_reset(&c->out);
	c->off = 0;
	return 0;
}

/* ARGSUSED */
static void
chan_write_cb(evutil_socket_t fd, short what, void *arg)
{
	chan_flush(arg);
}

/* c's first bytes came: it gets the next channel number; 0, or -1. */
static int
chan_number(struct relay_chan *c)
{
	struct rdzvrelay	 *r = c->r;
	struct relay_chan	**v;

	if ((v = reallocarray(r->ch, r->nch + 1, sizeof(*v))) == NULL)
		return -1;
	r->ch = v;
	silent_unlink(c);
	c->id = (uint32_t)r->nch + 1;
	r->ch[r->nch++] = c;
	return 0;
}

/* A rank wrote: pass it on as it came. */
/* ARGSUSED */
static void
chan_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct relay_chan	*c = arg;
	uint8_t			 buf[RELAY_READ];
	ssize_t			 n;

	n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0 || (c->id == 0 && chan_number(c) != 0)) {
		chan_close(c, 1);
		return;
	}
	c->r->cb.send(c->r->cb.arg, c->id, buf, (size_t)n);
}

/* Says once that silent connections are being closed, and how many. */
static void
relay_say_shed(struct rdzvrelay *r)
{
	char	msg[256];

	snprintf(msg, sizeof(msg), "%s socket: %zu connection%s that sent "
	    "nothing closed to keep at most %zu (a process of the job's user "
	    "flooding it?)", r->what, r->shed, r->shed == 1 ? "" : "s",
	    r->maxsilent);
	r->cb.note(r->cb.arg, msg);
}

/* Every second while some are silent: close those silent too long. */
/* ARGSUSED */
static void
relay_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rdzvrelay	*r = arg;
	double			 now = dt_clock_s(CLOCK_MONOTONIC_COARSE);

	while (r->shead != NULL && now - r->shead->t_open > RELAY_SILENT_S)
		chan_close(r->shead, 0);
	if (r->shead == NULL)
		event_del(r->sweep);
}

/*
 * Takes fd as a silent connection, the oldest silent one closed when
 * over the cap; reads at once what the rank may have written already.
 */
static void
relay_add(struct rdzvrelay *r, int fd)
{
	struct timeval		 tv = { 1, 0 };
	struct relay_chan	 *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->r = r;
	c->fd = fd;
	c->t_open = dt_clock_s(CLOCK_MONOTONIC_COARSE);
	dt_wbuf_init(&c->out);
	c->rev = event_new(r->base, fd, EV_READ | EV_PERSIST, chan_read_cb, c);
	c->wev = event_new(r->base, fd, EV_WRITE, chan_write_cb, c);
	if (c->rev == NULL || c->wev == NULL || event_add(c->rev, NULL) != 0) {
		if (c->rev != NULL)
			event_free(c->rev);
		if (c->wev != NULL)
			event_free(c->wev);
		free(c);
		goto fail;
	}
	if ((c->sprev = r->stail) != NULL)
		r->stail->snext = c;
	else
		r->shead = c;
	r->stail = c;
	if (++r->nsilent > r->maxsilent) {
		chan_close(r->shead, 0);
		if (r->shed++ == 0)
			relay_say_shed(r);
	}
	if (r->kind == RELAY_RDZV && !event_pending(r->sweep, EV_TIMEOUT,
	    NULL))
		event_add(r->sweep, &tv);
	chan_read_cb(fd, EV_READ, c);
	return;
fail:
	close(fd);
}

/*
 * The most silent connections to keep: an eighth of our descriptors for
 * the rendezvous, a quarter for the store (a rank's watch connection).
 */
static size_t
relay_max_silent(enum relay_kind kind)
{
	uint64_t	lim = dt_nofile_limit() / (kind == RELAY_STORE ? 4 : 8);
	size_t		lo = kind == RELAY_STORE ? STORE_SILENT_MIN :
			    RELAY_SILENT_MIN;
	size_t		hi = kind == RELAY_STORE ? STORE_SILENT_MAX :
			    RELAY_SILENT_MAX;

	if (lim < lo)
		return lo;
	return lim > hi ? hi : (size_t)lim;
}

/* Whether fd's peer runs as our user, as this kind of socket tells. */
static int
relay_peer_ok(const struct rdzvrelay *r, int fd)
{
	if (r->kind == RELAY_STORE) {
		sock_nodelay(fd);	/* torch's queries are small */
		return sock_tcp_peer_is_us(fd);
	}
	return sock_peer_is_us(fd);
}

/* The socket is readable: take a batch of connections, ours only. */
/* ARGSUSED */
static void
relay_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct rdzvrelay	*r = arg;
	int			 fd = -1, i;
	char			 msg[512];

	/* A batch at a time: a flood must not keep the loop from the rest. */
	for (i = 0; i < RELAY_ACCEPTS; i++) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
		    SOCK_CLOEXEC)) < 0)
			break;
		if (!relay_peer_ok(r, fd))
			close(fd);
		else
			relay_add(r, fd);
	}
	/*
	 * Out of descriptors: a rank that cannot be taken never joins, and
	 * the listener would fire again at once. Say so, and stop.
	 */
	if (fd < 0 && dt_nofile(errno)) {
		event_del(r->lev);
		r->cb.failed(r->cb.arg, dt_nofile_msg(msg, sizeof(msg),
		    r->what, errno));
	}
}

/* The rendezvous' listener: a fresh abstract socket; addr for the ranks. */
static int
relay_listen_unix(const char *job_id, char *addr, size_t addrlen,
    struct dt_err *e)
{
	static unsigned		 serial;
	struct sockaddr_un	 sa;
	char			 name[sizeof(sa.sun_path) - 1];
	socklen_t		 len;
	int			 fd;

	snprintf(name, sizeof(name), "dtrun-rdzv.%.64s.%d.%u", job_id,
	    (int)getpid(), ++serial);
	len = sock_abstract(&sa, name);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sa, len) == -1 ||
	    listen(fd, SOMAXCONN) == -1) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "the ranks' rendezvous "
		    "socket @%s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(addr, addrlen, "unix:@%s", name);
	return fd;
}

/* The store's listener: 127.0.0.1, a port the kernel picks. */
static int
relay_listen_tcp(char *addr, size_t addrlen, struct dt_err *e)
{
	struct sockaddr_in	 sa;
	int			 fd, port = -1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, SOMAXCONN) == -1 || (port = sock_port(fd)) < 0) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "the ranks' store: cannot "
		    "listen on 127.0.0.1: %s (is the loopback up? --store "
		    "rank0 lets rank 0 host it)", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	snprintf(addr, addrlen, "127.0.0.1:%d", port);
	return fd;
}

struct rdzvrelay *
rdzvrelay_new(struct event_base *base, enum relay_kind kind,
    const char *job_id, const struct rdzvrelay_cbs *cb, char *addr,
    size_t addrlen, struct dt_err *e)
{
	struct rdzvrelay	*r;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	r->base = base;
	r->kind = kind;
	r->what = kind == RELAY_STORE ? "the ranks' store" :
	    "the ranks' rendezvous";
	r->cb = *cb;
	r->maxsilent = relay_max_silent(kind);
	r->lfd = kind == RELAY_STORE ? relay_listen_tcp(addr, addrlen, e) :
	    relay_listen_unix(job_id, addr, addrlen, e);
	if (r->lfd < 0) {
		free(r);
		return NULL;
	}
	r->lev = event_new(base, r->lfd, EV_READ | EV_PERSIST,
	    relay_accept_cb, r);
	r->sweep = event_new(base, -1, EV_PERSIST, relay_sweep_cb, r);
	if (r->lev == NULL || r->sweep == NULL ||
	    event_add(r->lev, NULL) != 0) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		rdzvrelay_free(r);
		return NULL;
	}
	return r;
}

void
rdzvrelay_input(struct rdzvrelay *r, uint32_t chan, const void *p, size_t n)
{
	struct relay_chan	*c;

	if (chan == 0 || chan > r->nch || (c = r->ch[chan - 1]) == NULL)
		return;		/* the rank left meanwhile */
	if (n == 0) {
		chan_close(c, 0);
		return;
	}
	dt_wbuf_put(&c->out, p, n);
	if (c->out.oom) {
		chan_close(c, 1);
		return;
	}
	if (!event_pending(c->wev, EV_WRITE, NULL))
		chan_flush(c);
}

void
rdzvrelay_free(struct rdzvrelay *r)
{
	size_t	i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nch; i++)
		if (r->ch[i] != NULL)
			chan_close(r->ch[i], 0);
	while (r->shead != NULL)
		chan_close(r->shead, 0);
	free(r->ch);
	if (r->shed > 1)
		relay_say_shed(r);	/* the count in all */
	if (r->lev != NULL)
		event_free(r->lev);
	if (r->sweep != NULL)
		event_free(r->sweep);
	if (r->lfd >= 0)
		close(r->lfd);
	free(r);
}
