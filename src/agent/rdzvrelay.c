/*
 * rdzvrelay.c -- the ranks' rendezvous through their agent (rdzvrelay.h).
 *
 * The socket is in the abstract namespace: nothing to remove from the
 * file system, gone with the agent. Anyone on the host could dial it, so
 * each connection's peer must be of our user (SO_PEERCRED); a rank could
 * read the job's secret out of our memory anyway, and it has none.
 * What dtrun sends a rank is queued without a bound of its own: the
 * server answers only what was asked, one request at a time.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

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

struct relay_chan {
	struct rdzvrelay *r;
	uint32_t	 id;
	int		 fd;
	struct event	*rev, *wev;
	struct dt_wbuf	 out;		/* dtrun's bytes not yet written */
	size_t		 off;
};

struct rdzvrelay {
	struct event_base	*base;
	struct rdzvrelay_cbs	 cb;
	int			 lfd;
	struct event		*lev;
	struct relay_chan	**ch;	/* by id - 1; NULL once closed */
	size_t			 nch;
};

/* Closes c; with tell, dtrun hears that the rank went. */
static void
chan_close(struct relay_chan *c, int tell)
{
	struct rdzvrelay	*r = c->r;

	if (tell)
		r->cb.send(r->cb.arg, c->id, NULL, 0);
	r->ch[c->id - 1] = NULL;
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
	if (n <= 0) {
		chan_close(c, 1);
		return;
	}
	c->r->cb.send(c->r->cb.arg, c->id, buf, (size_t)n);
}

/* Whether fd's peer runs as our user. */
static int
peer_is_ours(int fd)
{
	struct ucred	uc;
	socklen_t	len = sizeof(uc);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 &&
	    uc.uid == getuid();
}

/* Takes a new channel for fd; 0, or -1 (fd closed). */
static int
relay_add(struct rdzvrelay *r, int fd)
{
	struct relay_chan	 *c, **v;

	if ((v = reallocarray(r->ch, r->nch + 1, sizeof(*v))) == NULL)
		goto fail;
	r->ch = v;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->r = r;
	c->fd = fd;
	c->id = (uint32_t)r->nch + 1;
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
	r->ch[r->nch++] = c;
	return 0;
fail:
	close(fd);
	return -1;
}

/* ARGSUSED */
static void
relay_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct rdzvrelay	*r = arg;
	int			 fd;

	char			 msg[512];

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) >= 0) {
		if (!peer_is_ours(fd))
			close(fd);
		else
			relay_add(r, fd);
	}
	/*
	 * Out of descriptors: a rank that cannot be taken never joins, and
	 * the listener would fire again at once. Say so, and stop.
	 */
	if (dt_nofile(errno)) {
		event_del(r->lev);
		r->cb.failed(r->cb.arg, dt_nofile_msg(msg, sizeof(msg),
		    "the ranks' rendezvous", errno));
	}
}

struct rdzvrelay *
rdzvrelay_new(struct event_base *base, const char *job_id,
    const struct rdzvrelay_cbs *cb, char *addr, size_t addrlen,
    struct dt_err *e)
{
	static unsigned		 serial;
	struct sockaddr_un	 sa;
	struct rdzvrelay	*r;
	char			 name[sizeof(sa.sun_path) - 1];
	socklen_t		 len;

	snprintf(name, sizeof(name), "dtrun-rdzv.%.64s.%d.%u", job_id,
	    (int)getpid(), ++serial);
	len = sock_abstract(&sa, name);
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		return NULL;
	}
	r->base = base;
	r->cb = *cb;
	if ((r->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) == -1 || bind(r->lfd, (struct sockaddr *)&sa,
	    len) == -1 ||
	    listen(r->lfd, SOMAXCONN) == -1) {
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "the ranks' rendezvous "
		    "socket @%s: %s", name, strerror(errno));
		if (r->lfd >= 0)
			close(r->lfd);
		free(r);
		return NULL;
	}
	r->lev = event_new(base, r->lfd, EV_READ | EV_PERSIST,
	    relay_accept_cb, r);
	if (r->lev == NULL || event_add(r->lev, NULL) != 0) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		rdzvrelay_free(r);
		return NULL;
	}
	snprintf(addr, addrlen, "unix:@%s", name);
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
	free(r->ch);
	if (r->lev != NULL)
		event_free(r->lev);
	if (r->lfd >= 0)
		close(r->lfd);
	free(r);
}
