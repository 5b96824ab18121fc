/*
 * link.c -- framed stream over fds on libevent. Frames are split here and
 * handed to the owner whole; the owner decodes them (src/agent/proto.c).
 * Callbacks may free the link: a "busy" count defers the free until the
 * read loop has unwound.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "err.h"
#include "link.h"
#include "wire.h"

struct link {
	int		 rfd, wfd;
	size_t		 max_frame;
	struct link_cbs	 cb;
	struct event	*rev, *wev;
	struct evbuffer	*in, *out;
	size_t		 low, high;
	int		 above;		/* queued went over high; drain_cb owed */
	int		 paused;
	int		 closed;
	int		 wdown;		/* writing failed; reading goes on */
	int		 busy;		/* inside a callback */
	int		 dead;		/* freed while busy */
};

/* Bytes one read takes off the stream: 256 KiB is a few whole OUTPUT frames. */
#define LINK_READ	(256 * 1024)

static void	link_read_cb(evutil_socket_t, short, void *);
static void	link_write_cb(evutil_socket_t, short, void *);

/* Sets O_NONBLOCK on fd. */
static void
set_nonblock(int fd)
{
	int	fl = fcntl(fd, F_GETFL);

	if (fl != -1 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

struct link *
link_new(struct event_base *base, int rfd, int wfd, size_t max_frame,
    const struct link_cbs *cbs)
{
	struct link	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->rfd = rfd;
	l->wfd = wfd;
	l->max_frame = max_frame;
	l->cb = *cbs;
	l->low = 256 * 1024;
	l->high = 4 * 1024 * 1024;
	set_nonblock(rfd);
	set_nonblock(wfd);
	l->in = evbuffer_new();
	l->out = evbuffer_new();
	l->rev = event_new(base, rfd, EV_READ | EV_PERSIST, link_read_cb, l);
	l->wev = event_new(base, wfd, EV_WRITE | EV_PERSIST, link_write_cb, l);
	if (l->in == NULL || l->out == NULL || l->rev == NULL || l->wev == NULL) {
		link_free(l);
		return NULL;
	}
	event_add(l->rev, NULL);
	return l;
}

/* Marks the link closed, stops its events and tells the owner once. */
static void
link_down(struct link *l, int err, const char *why)
{
	if (l->closed)
		return;
	l->closed = 1;
	event_del(l->rev);
	event_del(l->wev);
	evbuffer_drain(l->out, evbuffer_get_length(l->out));
	l->cb.close(l->cb.arg, err, why);
}

/*
 * Writing failed. The peer is gone, but what it sent before leaving (an
 * agent's last EXIT and DONE) may still be unread: stop writing and let
 * the read side report the end after it.
 */
static void
link_wdown(struct link *l)
{
	l->wdown = 1;
	event_del(l->wev);
	evbuffer_drain(l->out, evbuffer_get_length(l->out));
}

/* Writes what it can; arms the write event if some remains. */
static void
link_write_some(struct link *l)
{
	int	n;

	while (evbuffer_get_length(l->out) > 0) {
		n = evbuffer_write(l->out, l->wfd);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		link_wdown(l);
		return;
	}
	if (evbuffer_get_length(l->out) > 0)
		event_add(l->wev, NULL);
	else
		event_del(l->wev);
	if (l->above && evbuffer_get_length(l->out) <= l->low) {
		l->above = 0;
		if (l->cb.drain != NULL)
			l->cb.drain(l->cb.arg);
	}
}

int
link_send(struct link *l, const void *p, size_t n)
{
	const char	*c = p;
	ssize_t		 w;

	if (l->closed || l->wdown)
		return DT_ERR_CLOSED;
	/*
	 * Nothing queued: write straight from the caller's buffer, which
	 * saves a loop turn per frame and a copy of each OUTPUT chunk, and
	 * queue only what the fd does not take.
	 */
	while (n > 0 && evbuffer_get_length(l->out) == 0) {
		if ((w = write(l->wfd, c, n)) > 0) {
			c += w;
			n -= w;
		} else if (w < 0 && errno == EINTR)
			continue;
		else if (w < 0 && errno == EAGAIN)
			break;
		else {
			link_wdown(l);
			return 0;
		}
	}
	if (n == 0)
		return 0;
	if (evbuffer_add(l->out, c, n) != 0)
		return DT_ERR_NOMEM;
	if (evbuffer_get_length(l->out) > l->high)
		l->above = 1;
	event_add(l->wev, NULL);
	return 0;
}

size_t
link_queued(const struct link *l)
{
	return evbuffer_get_length(l->out);
}

void
link_watermarks(struct link *l, size_t low, size_t high)
{
	l->low = low;
	l->high = high;
}

void
link_pause(struct link *l, int on)
{
	if (l->closed || l->paused == on)
		return;
	l->paused = on;
	if (on)
		event_del(l->rev);
	else {
		event_add(l->rev, NULL);
		/* Frames may already be buffered: deliver them without new input. */
		event_active(l->rev, EV_READ, 0);
	}
}

int
link_closed(const struct link *l)
{
	return l->closed;
}

int
link_frames(struct evbuffer *in, size_t max, link_frame_cb cb, void *arg,
    int (*more)(void *), void *more_arg, const char **why)
{
	uint8_t		*p, type;
	const uint8_t	*payload;
	size_t		 have, plen, used, len;
	int		 rc;

	while (more(more_arg)) {
		have = evbuffer_get_length(in);
		if (have < DT_FRAME_HDR)
			return 0;
		p = evbuffer_pullup(in, 4);
		len = (size_t)p[0] << 24 | (size_t)p[1] << 16 |
		    (size_t)p[2] << 8 | p[3];
		if (len + 4 > max) {
			*why = "frame over the size limit";
			return DT_ERR_TOOBIG;
		}
		if (have < len + 4)
			return 0;
		p = evbuffer_pullup(in, len + 4);
		rc = dt_frame_parse(p, len + 4, max, &type, &payload, &plen,
		    &used);
		if (rc != 0) {
			*why = "bad frame header";
			return DT_ERR_PROTO;
		}
		cb(arg, type, payload, plen);
		/*
		 * Consumed even when cb paused or closed the stream: a frame
		 * left in the buffer would be delivered again on resume.
		 */
		evbuffer_drain(in, used);
	}
	return 0;
}

/* Whether link_frames should go on delivering. */
static int
link_more(void *arg)
{
	struct link	*l = arg;

	return !l->closed && !l->dead && !l->paused;
}

/* Hands every whole frame in the input buffer to the owner. */
static void
link_deliver(struct link *l)
{
	const char	*why = NULL;

	if (link_frames(l->in, l->max_frame, l->cb.frame, l->cb.arg,
	    link_more, l, &why) != 0)
		link_down(l, DT_ERR_PROTO, why);
}

/*
 * Reads up to max bytes from fd straight into in. evbuffer_read takes at
 * most 4 KiB a call (libevent 2.1's EVBUFFER_MAX_READ): on a busy output
 * stream that is a read, an ioctl and an epoll_wait per 4 KiB. Returns what
 * read(2) returned.
 */
static ssize_t
link_read_fd(struct evbuffer *in, int fd, size_t max)
{
	struct evbuffer_iovec	v;
	ssize_t			n;

	if (evbuffer_reserve_space(in, max, &v, 1) != 1)
		return evbuffer_read(in, fd, max);
	if ((n = read(fd, v.iov_base, v.iov_len)) > 0)
		v.iov_len = n;
	else
		v.iov_len = 0;
	evbuffer_commit_space(in, &v, 1);
	return n;
}

/* ARGSUSED */
static void
link_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;
	int		 n, eof = 0;

	l->busy++;
	n = link_read_fd(l->in, fd, LINK_READ);
	if (n == 0)
		eof = 1;
	else if (n < 0 && errno != EAGAIN && errno != EINTR)
		eof = -1;
	link_deliver(l);
	if (eof && !l->dead) {
		if (evbuffer_get_length(l->in) > 0 && !l->closed && !l->paused)
			link_down(l, DT_ERR_PROTO, "stream ended inside a frame");
		else if (!l->paused || eof < 0)
			link_down(l, eof < 0 ? DT_ERR_CLOSED : 0,
			    eof < 0 ? strerror(errno) : "end of stream");
	}
	l->busy--;
	if (l->dead && l->busy == 0)
		link_free(l);
}

/* ARGSUSED */
static void
link_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;

	l->busy++;
	link_write_some(l);
	l->busy--;
	if (l->dead && l->busy == 0)
		link_free(l);
}

int
link_flush(struct link *l, int idle_ms)
{
	struct pollfd	pfd[2];
	char		scratch[16384];
	ssize_t		r;
	int		n, np;

	while (!l->closed && !l->wdown && evbuffer_get_length(l->out) > 0) {
		/*
		 * Reading too: a live peer that is slow to read us still
		 * sends (heartbeats), and that is what tells it from one gone
		 * silent. What it sends is dropped: the conversation is over.
		 */
		pfd[0].fd = l->wfd;
		pfd[0].events = POLLOUT;
		pfd[1].fd = l->rfd;
		pfd[1].events = POLLIN;
		np = l->rfd == l->wfd ? 1 : 2;
		if (np == 1)
			pfd[0].events |= POLLIN;
		if ((n = poll(pfd, np, idle_ms)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? -1 : 0;
		if ((pfd[np - 1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    ((r = read(l->rfd, scratch, sizeof(scratch))) == 0 ||
		    (r < 0 && errno != EAGAIN && errno != EINTR)))
			return 0;	/* the peer is gone */
		if ((pfd[0].revents & (POLLOUT | POLLERR | POLLHUP)) &&
		    evbuffer_write(l->out, l->wfd) <= 0 && errno != EAGAIN &&
		    errno != EINTR)
			return 0;
	}
	return 0;
}

void
link_free(struct link *l)
{
	if (l == NULL)
		return;
	if (l->busy > 0) {
		l->dead = 1;
		l->closed = 1;
		if (l->rev != NULL)
			event_del(l->rev);
		if (l->wev != NULL)
			event_del(l->wev);
		return;
	}
	if (l->rev != NULL)
		event_free(l->rev);
	if (l->wev != NULL)
		event_free(l->wev);
	if (l->in != NULL)
		evbuffer_free(l->in);
	if (l->out != NULL)
		evbuffer_free(l->out);
	if (l->rfd >= 0)
		close(l->rfd);
	if (l->wfd >= 0 && l->wfd != l->rfd)
		close(l->wfd);
	free(l);
}
