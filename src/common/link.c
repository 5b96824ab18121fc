/*
 * link.c -- framed stream over fds on libevent, or over a stream its
 * owner drives (link_io). Frames are split here and handed to the owner
 * whole; the owner decodes them (src/proto/agentproto.c). Heartbeats are
 * the owner's frame bytes, sent when the link has sent nothing for a look;
 * the link only counts what it hears and sends. PACKED frames (pack.h)
 * are the link's own too: it packs what it sends when told to (link_pack),
 * and unpacks what it reads, always, so its owner sees only the frames
 * inside. Callbacks may free the link: a "busy" count defers the free until
 * the read loop has unwound.
 */
#include <sys/time.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/err.h"
#include "common/link.h"
#include "common/pack.h"
#include "common/sys.h"
#include "common/wire.h"

struct link {
	struct event_base *base;
	int		 rfd, wfd;	/* -1 with io, or before link_attach */
	struct link_io	 io;
	int		 has_io;
	int		 ioing;		/* inside link_io_ready */
	size_t		 max_frame;
	struct link_cbs	 cb;
	struct event	*rev, *wev;
	struct evbuffer	*in, *out;
	size_t		 low, high;
	int		 above;		/* queued went over high; drain_cb owed */
	int		 paused;
	int		 closed;
	int		 wdown;		/* writing failed; reading goes on */
	int		 rdown;		/* a bad frame came: reading is over,
					   writing goes on (the owner says why) */
	int		 held;		/* link_hold: queue, do not write yet */
	int		 busy;		/* inside a callback */
	int		 dead;		/* freed while busy */
	struct event	*beat_ev;	/* heartbeat looks; NULL: never on */
	uint8_t		*beat;		/* what a look sends; NULL: off */
	size_t		 beat_len;
	link_silent_cb	 silent;
	void		*silent_arg;
	int		 heard;		/* read something since the last look */
	int		 sent;		/* sent something since the last look */
	int		 quiet;		/* looks in a row with nothing heard */
	int		 pack;		/* pack what is sent (link_pack) */
	int		 nosplice;	/* splice(2) refused the stream once */
	struct dt_wbuf	 packed;	/* the PACKED frame being sent */
	struct evbuffer	*unpacked;	/* frames out of a PACKED frame: they
					   come before the rest of in */
	int		 unpacking;	/* delivering from unpacked */
	struct dt_err	 perr;		/* a bad frame: why (code 0: none) */
	uint64_t	 nread;		/* bytes read off the stream */
	uint64_t	 nframes;	/* bytes of the frames delivered */
};

/* Bytes one read takes off the stream: 256 KiB is a few whole OUTPUT frames. */
#define LINK_READ	(256 * 1024)

static void	link_read_cb(evutil_socket_t, short, void *);
static void	link_write_some(struct link *);
static void	link_write_cb(evutil_socket_t, short, void *);
static void	link_beat_cb(evutil_socket_t, short, void *);
static int	link_queued_more(struct link *, size_t);

/*
 * Ends a stretch that calls the owner back (busy); frees l if a callback
 * freed it meanwhile. Returns 1 if l is gone.
 */
static int
link_unbusy(struct link *l)
{
	if (--l->busy > 0 || !l->dead)
		return 0;
	link_free(l);
	return 1;
}

/* A link with its buffers and no stream yet; NULL if out of memory. */
static struct link *
link_alloc(struct event_base *base, size_t max_frame,
    const struct link_cbs *cbs)
{
	struct link	*l;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return NULL;
	l->base = base;
	l->rfd = l->wfd = -1;
	l->max_frame = max_frame;
	l->cb = *cbs;
	l->low = 256 * 1024;
	l->high = 4 * 1024 * 1024;
	l->in = evbuffer_new();
	l->out = evbuffer_new();
	l->unpacked = evbuffer_new();
	dt_wbuf_init(&l->packed);
	if (l->in == NULL || l->out == NULL || l->unpacked == NULL) {
		link_free(l);
		return NULL;
	}
	return l;
}

struct link *
link_new_later(struct event_base *base, size_t max_frame,
    const struct link_cbs *cbs)
{
	return link_alloc(base, max_frame, cbs);
}

int
link_attach(struct link *l, int rfd, int wfd)
{
	l->rfd = rfd;
	l->wfd = wfd;
	dt_set_nonblock(rfd);
	dt_set_nonblock(wfd);
	l->rev = event_new(l->base, rfd, EV_READ | EV_PERSIST, link_read_cb, l);
	l->wev = event_new(l->base, wfd, EV_WRITE | EV_PERSIST, link_write_cb,
	    l);
	if (l->rev == NULL || l->wev == NULL)
		return DT_ERR_NOMEM;
	if (!l->paused)
		event_add(l->rev, NULL);
	if (evbuffer_get_length(l->out) > 0) {
		l->busy++;
		link_write_some(l);
		if (link_unbusy(l))
			return DT_ERR_CLOSED;	/* its drain callback freed it */
	}
	return 0;
}

int
link_take_fd(struct link *l)
{
	int	fd = l->rfd;

	l->rfd = l->wfd = -1;
	link_free(l);
	return fd;
}

struct link *
link_new(struct event_base *base, int rfd, int wfd, size_t max_frame,
    const struct link_cbs *cbs)
{
	struct link	*l;

	if ((l = link_new_later(base, max_frame, cbs)) == NULL)
		return NULL;
	if (link_attach(l, rfd, wfd) != 0) {
		l->rfd = l->wfd = -1;	/* the caller's still */
		link_free(l);
		return NULL;
	}
	return l;
}

struct link *
link_new_io(struct event_base *base, const struct link_io *io,
    size_t max_frame, const struct link_cbs *cbs)
{
	struct link	*l;

	if ((l = link_alloc(base, max_frame, cbs)) == NULL)
		return NULL;
	l->io = *io;
	l->has_io = 1;
	return l;
}

/* Tells an io link's owner it has bytes to move (not from inside link_io_ready). */
static void
link_kick(struct link *l)
{
	if (l->has_io && !l->ioing && !l->closed && l->io.kick != NULL)
		l->io.kick(l->io.arg);
}

/* Writes some of the output queue; as evbuffer_write (-1 with errno EAGAIN: nothing now). */
static int
link_out(struct link *l)
{
	unsigned char	*p;
	size_t		 len;
	ssize_t		 n;

	if (!l->has_io && l->wfd < 0) {
		errno = EAGAIN;		/* not attached yet: it waits */
		return -1;
	}
	if (!l->has_io)
		return evbuffer_write(l->out, l->wfd);
	len = evbuffer_get_length(l->out);
	if (len > 64 * 1024)
		len = 64 * 1024;
	p = evbuffer_pullup(l->out, len);
	if ((n = l->io.write(l->io.arg, p, len)) > 0)
		evbuffer_drain(l->out, n);
	else if (n == 0) {
		errno = EAGAIN;
		n = -1;
	}
	return (int)n;
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

/*
 * Reads some input into l->in; as read(2) (0: end of stream). Straight into
 * reserved space, LINK_READ at a time, from the fd or the stream adapter.
 */
static int
link_in(struct link *l)
{
	struct evbuffer_iovec	v;
	ssize_t			n;

	if (!l->has_io)
		n = link_read_fd(l->in, l->rfd, LINK_READ);
	else if (evbuffer_reserve_space(l->in, LINK_READ, &v, 1) != 1) {
		errno = ENOMEM;
		return -1;
	} else {
		n = l->io.read(l->io.arg, v.iov_base, v.iov_len);
		v.iov_len = n > 0 ? (size_t)n : 0;
		evbuffer_commit_space(l->in, &v, 1);
	}
	/* Any byte is life, even a frame's first part: heartbeats count it. */
	if (n > 0) {
		l->heard = 1;
		l->nread += (uint64_t)n;
	}
	return (int)n;
}

/* Stops every event of l (read, write, heartbeat): nothing of it runs again. */
static void
link_events_off(struct link *l)
{
	if (l->rev != NULL)
		event_del(l->rev);
	if (l->wev != NULL)
		event_del(l->wev);
	if (l->beat_ev != NULL)
		event_del(l->beat_ev);
}

/*
 * Marks the link closed, stops its events and tells the owner once. A bad
 * frame (DT_ERR_PROTO) only ends reading: the peer may still listen, and
 * the owner may tell it why (an agent's ERROR 70) before it closes.
 */
static void
link_down(struct link *l, int err, const char *why)
{
	if (l->closed || l->rdown)
		return;
	if (err == DT_ERR_PROTO && !l->wdown) {
		l->rdown = 1;
		if (l->rev != NULL)
			event_del(l->rev);
		if (l->beat_ev != NULL)
			event_del(l->beat_ev);
		l->cb.close(l->cb.arg, err, why);
		return;
	}
	l->closed = 1;
	link_events_off(l);
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
	if (l->wev != NULL)
		event_del(l->wev);
	evbuffer_drain(l->out, evbuffer_get_length(l->out));
}

/* Writes what it can; arms the write event if some remains. */
static void
link_write_some(struct link *l)
{
	int	n;

	while (evbuffer_get_length(l->out) > 0) {
		n = link_out(l);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		link_wdown(l);
		return;
	}
	if (l->has_io) {
		if (evbuffer_get_length(l->out) > 0)
			link_kick(l);
	} else if (l->wev == NULL)
		;			/* not attached yet */
	else if (evbuffer_get_length(l->out) > 0)
		event_add(l->wev, NULL);
	else
		event_del(l->wev);
	if (l->above && evbuffer_get_length(l->out) <= l->low) {
		l->above = 0;
		if (l->cb.drain != NULL)
			l->cb.drain(l->cb.arg);
	}
}

/* Queues n bytes, or writes them at once when nothing waits before them. */
static int
link_put(struct link *l, const void *p, size_t n)
{
	const char	*c = p;
	ssize_t		 w;

	if (l->closed || l->wdown)
		return DT_ERR_CLOSED;
	if (n > 0)
		l->sent = 1;	/* the peer hears from us: no heartbeat due */
	/*
	 * Nothing queued on an attached fd: write straight from the caller's
	 * buffer, which saves a loop turn per frame and a copy of each OUTPUT
	 * chunk, and queue only what the fd does not take.
	 */
	while (n > 0 && !l->held && !l->has_io && l->wfd >= 0 &&
	    evbuffer_get_length(l->out) == 0) {
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
	return link_queued_more(l, n);
}

/* Has what was just queued (n bytes) written when the stream can take it. */
static int
link_queued_more(struct link *l, size_t n)
{
	if (evbuffer_get_length(l->out) > l->high)
		l->above = 1;
	if (l->held)
		return 0;		/* link_hold's release writes it */
	if (!l->has_io && l->wfd >= 0) {
		event_add(l->wev, NULL);
		return 0;
	}
	/* A stream adapter: write at once when nothing was queued before. */
	if (evbuffer_get_length(l->out) == n) {
		l->busy++;
		link_write_some(l);
		if (link_unbusy(l))
			return DT_ERR_CLOSED;
	}
	return 0;
}

int
link_send(struct link *l, const void *p, size_t n)
{
	if (l->pack && n >= PACK_MIN && n <= l->max_frame && !l->closed &&
	    !l->wdown) {
		dt_wbuf_reset(&l->packed);
		if (pack_frames(&l->packed, p, n, l->max_frame))
			return link_put(l, l->packed.p, l->packed.len);
	}
	return link_put(l, p, n);
}

/*
 * Reads exactly n bytes that wait in fd onto the end of the queue. Only
 * for a frame's payload already announced by its header: less would cut
 * the stream, so the link stops writing then.
 */
static int
link_queue_from(struct link *l, int fd, size_t n)
{
	struct evbuffer_iovec	v;
	size_t			got = 0;
	ssize_t			r;

	if (evbuffer_reserve_space(l->out, n, &v, 1) != 1) {
		link_wdown(l);
		return DT_ERR_NOMEM;
	}
	while (got < n) {
		r = read(fd, (char *)v.iov_base + got, n - got);
		if (r > 0)
			got += (size_t)r;
		else if (r < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	v.iov_len = got;
	evbuffer_commit_space(l->out, &v, 1);
	if (got < n) {
		link_wdown(l);
		return DT_ERR_CLOSED;
	}
	return link_queued_more(l, n);
}

int
link_send_spliced(struct link *l, const void *hdr, size_t hlen, int fd,
    size_t n)
{
	ssize_t	w;
	int	rc;

	if (l->closed || l->wdown || l->held || l->has_io || l->pack ||
	    l->nosplice || l->wfd < 0 || evbuffer_get_length(l->out) > 0)
		return 0;
	if ((rc = link_put(l, hdr, hlen)) != 0)
		return rc;
	while (n > 0 && !l->wdown && evbuffer_get_length(l->out) == 0) {
		w = splice(fd, NULL, l->wfd, NULL, n, SPLICE_F_NONBLOCK |
		    SPLICE_F_MOVE);
		if (w > 0)
			n -= (size_t)w;
		else if (w < 0 && errno == EINTR)
			continue;
		else {
			/* Full (EAGAIN), or a stream splice cannot feed. */
			if (w == 0 || errno == EINVAL)
				l->nosplice = 1;
			break;
		}
	}
	if (l->wdown)
		return DT_ERR_CLOSED;
	if (n > 0 && (rc = link_queue_from(l, fd, n)) != 0)
		return rc;
	return 1;
}

void
link_hold(struct link *l, int on)
{
	l->held = on;
	if (on || l->closed || l->wdown || evbuffer_get_length(l->out) == 0)
		return;
	/* From the loop, not from inside whatever callback releases us. */
	if (!l->has_io && l->wfd >= 0)
		event_add(l->wev, NULL);
	else
		link_kick(l);
}

void
link_pack(struct link *l, int on)
{
	l->pack = on;
}

void
link_counts(const struct link *l, uint64_t *read, uint64_t *frames)
{
	*read = l->nread;
	*frames = l->nframes;
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
	if (l->closed || l->rdown || l->paused == on)
		return;
	l->paused = on;
	if (l->has_io) {
		if (!on)
			link_kick(l);	/* frames may be buffered already */
	} else if (l->rev == NULL)
		;			/* not attached yet: link_attach looks */
	else if (on)
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
	return l->closed || l->rdown;
}

int
link_paused(const struct link *l)
{
	return l->paused;
}

size_t
link_peek(const struct link *l, void *buf, size_t n)
{
	ev_ssize_t	got = evbuffer_copyout(l->in, buf, n);

	return got < 0 ? 0 : (size_t)got;
}

int
link_frames(struct evbuffer *in, size_t max, link_frame_cb cb, void *arg,
    int (*more)(void *), void *more_arg, struct dt_err *e)
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
		len = dt_be32(p);
		if (len + 4 > max)
			return dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG,
			    "frame over the size limit");
		if (have < len + 4)
			return 0;
		p = evbuffer_pullup(in, len + 4);
		rc = dt_frame_parse(p, len + 4, max, &type, &payload, &plen,
		    &used);
		if (rc != 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO,
			    "bad frame header");
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

	return !l->closed && !l->dead && !l->paused && l->perr.code == 0;
}

static void	link_frame_in(void *, uint8_t, const uint8_t *, size_t);

/*
 * Hands the owner the frames a PACKED frame held, until it pauses. They
 * must be whole: the sender packs whole frames only.
 */
static void
link_deliver_unpacked(struct link *l)
{
	if (evbuffer_get_length(l->unpacked) == 0)
		return;
	l->unpacking = 1;
	link_frames(l->unpacked, l->max_frame, link_frame_in, l, link_more, l,
	    &l->perr);
	l->unpacking = 0;
	if (link_more(l) && evbuffer_get_length(l->unpacked) > 0)
		dt_errf(&l->perr, NULL, 0, 0, DT_ERR_PROTO,
		    "PACKED frame ends inside a frame");
}

/* One frame read: the owner's, or a PACKED one to open first. */
static void
link_frame_in(void *arg, uint8_t type, const uint8_t *payload, size_t len)
{
	struct link	*l = arg;

	if (type != PACK_TYPE) {
		l->nframes += DT_FRAME_HDR + len;
		l->cb.frame(l->cb.arg, type, payload, len);
		return;
	}
	if (l->unpacking) {
		dt_errf(&l->perr, NULL, 0, 0, DT_ERR_PROTO,
		    "PACKED frame inside a PACKED frame");
		return;
	}
	if (pack_unpack(payload, len, l->max_frame, l->unpacked,
	    &l->perr) == 0)
		link_deliver_unpacked(l);
}

/*
 * Hands every whole frame read to the owner: first what is left of a
 * PACKED frame it paused in, then the input buffer.
 */
static void
link_deliver(struct link *l)
{
	link_deliver_unpacked(l);
	if (link_more(l))
		link_frames(l->in, l->max_frame, link_frame_in, l, link_more,
		    l, &l->perr);
	if (l->perr.code != 0 && !l->closed && !l->dead)
		link_down(l, DT_ERR_PROTO, l->perr.msg);
}

/*
 * Reading found the end (eof 1) or a break (eof -1, errno err): once the
 * whole frames before it are delivered, tell the owner; a paused owner
 * hears of a clean end when it resumes.
 */
static void
link_ended(struct link *l, int eof, int err)
{
	const char	*why;

	if (!eof || l->dead)
		return;
	if (evbuffer_get_length(l->in) > 0 && !l->closed && !l->paused)
		link_down(l, DT_ERR_PROTO, LINK_TRUNCATED);
	else if (eof > 0 && !l->paused)
		link_down(l, 0, "end of stream");
	else if (eof < 0) {
		why = l->has_io && l->io.why != NULL ? l->io.why(l->io.arg) :
		    strerror(err);
		link_down(l, DT_ERR_CLOSED, why);
	}
}

/* How a read went: 0 more may come, 1 end of stream, -1 broken. */
static int
link_eof(int n)
{
	if (n > 0)
		return 0;
	if (n == 0)
		return 1;
	return errno == EAGAIN || errno == EINTR ? 0 : -1;
}

/* ARGSUSED */
static void
link_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;
	int		 eof, err;

	l->busy++;
	eof = link_eof(link_in(l));
	err = errno;
	link_deliver(l);
	link_ended(l, eof, err);
	link_unbusy(l);
}

void
link_io_ready(struct link *l)
{
	size_t	before;
	int	n, eof = 0, err = 0, progress;

	l->busy++;
	l->ioing = 1;
	do {
		progress = 0;
		/* Frames already here first: a HELLO may be waiting. */
		link_deliver(l);
		if (l->closed || l->dead)
			break;
		/* Writes before reads: STOP must not wait behind output. */
		before = evbuffer_get_length(l->out);
		if (before > 0 && !l->wdown) {
			link_write_some(l);
			progress = evbuffer_get_length(l->out) < before;
		}
		if (l->closed || l->dead || l->paused || l->rdown)
			break;
		n = link_in(l);
		err = errno;
		if ((eof = link_eof(n)) == 0 && n > 0)
			progress = 1;
	} while (progress && !eof);
	link_deliver(l);
	link_ended(l, eof, err);
	l->ioing = 0;
	link_unbusy(l);
}

/* ARGSUSED */
static void
link_write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;

	l->busy++;
	link_write_some(l);
	link_unbusy(l);
}

int
link_flush(struct link *l, int idle_ms)
{
	struct pollfd	pfd[2];
	char		scratch[16384];
	ssize_t		r;
	int		n, np;

	/* An io stream's owner drives it; only fds can be waited on here. */
	while (!l->has_io && !l->closed && !l->wdown &&
	    evbuffer_get_length(l->out) > 0) {
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

uint64_t
link_beat_period_ms(uint64_t timeout_ms)
{
	uint64_t	ms = timeout_ms / (LINK_BEAT_LOOKS + 1);

	return ms > 0 ? ms : 1;
}

int
link_heartbeat(struct link *l, uint64_t timeout_ms, const void *beat,
    size_t len, link_silent_cb silent, void *arg)
{
	struct timeval	 tv;
	uint64_t	 ms = link_beat_period_ms(timeout_ms);
	uint8_t		*copy = NULL;

	if (timeout_ms > 0 && len > 0) {
		if ((copy = malloc(len)) == NULL)
			return DT_ERR_NOMEM;
		memcpy(copy, beat, len);
		if (l->beat_ev == NULL && (l->beat_ev = event_new(l->base, -1,
		    EV_PERSIST, link_beat_cb, l)) == NULL) {
			free(copy);
			return DT_ERR_NOMEM;
		}
	}
	free(l->beat);
	l->beat = copy;
	l->beat_len = copy != NULL ? len : 0;
	l->silent = silent;
	l->silent_arg = arg;
	l->quiet = 0;
	if (l->beat_ev == NULL)
		return 0;
	if (copy == NULL || l->closed) {
		event_del(l->beat_ev);
		return 0;
	}
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	event_add(l->beat_ev, &tv);
	return 0;
}

void
link_heartbeat_look(struct link *l)
{
	if (l->beat == NULL || l->closed)
		return;
	l->busy++;
	/* Not reading: what the peer sends waits unread, not lost. */
	if (l->heard || l->paused)
		l->quiet = 0;
	else
		l->quiet++;
	l->heard = 0;
	if (l->quiet >= LINK_BEAT_LOOKS) {
		/* Once: the owner decides what follows (it may free l). */
		event_del(l->beat_ev);
		free(l->beat);
		l->beat = NULL;
		l->beat_len = 0;
		l->silent(l->silent_arg);
	} else {
		/* Something queued reaches the peer before a beat would. */
		if (!l->sent && !l->wdown && evbuffer_get_length(l->out) == 0)
			link_send(l, l->beat, l->beat_len);
		l->sent = 0;
	}
	link_unbusy(l);
}

/* ARGSUSED */
static void
link_beat_cb(evutil_socket_t fd, short what, void *arg)
{
	link_heartbeat_look(arg);
}

void
link_free(struct link *l)
{
	if (l == NULL)
		return;
	if (l->busy > 0) {
		l->dead = 1;
		l->closed = 1;
		link_events_off(l);
		return;
	}
	if (l->rev != NULL)
		event_free(l->rev);
	if (l->wev != NULL)
		event_free(l->wev);
	if (l->beat_ev != NULL)
		event_free(l->beat_ev);
	free(l->beat);
	if (l->in != NULL)
		evbuffer_free(l->in);
	if (l->out != NULL)
		evbuffer_free(l->out);
	if (l->unpacked != NULL)
		evbuffer_free(l->unpacked);
	dt_wbuf_free(&l->packed);
	if (l->rfd >= 0)
		close(l->rfd);
	if (l->wfd >= 0 && l->wfd != l->rfd)
		close(l->wfd);
	free(l);
}
