/* t_link.c -- frames are delivered exactly once, even when delivery pauses the stream. */
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "err.h"
#include "link.h"
#include "wire.h"
#include "test.h"

struct got {
	char		 seen[16];	/* first payload byte of each frame, in order */
	size_t		 n;
	int		 stop;		/* what more() answers: pause after a frame */
	struct link	*l;		/* pause this link from the callback */
};

/* Appends frames of type 1 with one-byte payloads "1", "2", ... to b. */
static void
put_frames(struct dt_wbuf *b, int n)
{
	size_t	start;
	int	i;

	for (i = 0; i < n; i++) {
		start = dt_frame_begin(b, 1);
		dt_wbuf_u8(b, '1' + i);
		dt_frame_end(b, start, 1024);
	}
}

/* Records a frame and asks to stop, as back-pressure does from the output path. */
static void
got_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct got	*g = arg;

	if (n == 1 && g->n < sizeof(g->seen) - 1)
		g->seen[g->n++] = (char)p[0];
	g->stop = 1;
	if (g->l != NULL)
		link_pause(g->l, 1);
}

/* more() for link_frames: go on until a frame asked to stop. */
static int
got_more(void *arg)
{
	struct got	*g = arg;

	return !g->stop;
}

TEST(link_frames_consumes_a_frame_that_paused)
{
	struct dt_wbuf	 b;
	struct evbuffer	*in = evbuffer_new();
	struct got	 g = { .n = 0 };
	const char	*why = NULL;
	size_t		 one;

	dt_wbuf_init(&b);
	put_frames(&b, 3);
	one = b.len / 3;
	evbuffer_add(in, b.p, b.len);
	CHECK_INT(link_frames(in, 1024, got_frame, &g, got_more, &g, &why), 0);
	/* The frame that paused is gone from the buffer: not delivered twice. */
	CHECK_STR(g.seen, "1");
	CHECK_INT(evbuffer_get_length(in), 2 * one);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &why);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &why);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &why);
	CHECK_STR(g.seen, "123");
	CHECK_INT(evbuffer_get_length(in), 0);
	evbuffer_free(in);
	dt_wbuf_free(&b);
}

/* The link's close callback: nothing to do here. */
static void
got_close(void *arg, int err, const char *why)
{
}

TEST(link_pause_inside_frame_callback_delivers_once)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 cbs = { got_frame, got_close, NULL, NULL };
	struct dt_wbuf		 b;
	struct got		 g = { .n = 0 };
	int			 sv[2], i;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cbs.arg = &g;
	g.l = link_new(base, sv[0], sv[0], 1024, &cbs);
	dt_wbuf_init(&b);
	put_frames(&b, 3);
	CHECK_INT(write(sv[1], b.p, b.len), (long long)b.len);
	/* Each turn: one frame, which pauses; resume for the next. */
	for (i = 0; i < 5; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		link_pause(g.l, 0);
	}
	CHECK_STR(g.seen, "123");
	link_free(g.l);
	close(sv[1]);
	dt_wbuf_free(&b);
	event_base_free(base);
}

TEST(link_later_queues_until_attached_then_writes_in_order)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 cbs = { got_frame, got_close, NULL, NULL };
	struct dt_wbuf		 b;
	struct got		 g = { .n = 0 };
	struct link		*l;
	char			 buf[64];
	int			 sv[2], fd;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	cbs.arg = &g;
	CHECK((l = link_new_later(base, 1024, &cbs)) != NULL);
	dt_wbuf_init(&b);
	put_frames(&b, 3);
	/* Sent before there is a stream: queued, in order, nothing lost. */
	CHECK_INT(link_send(l, b.p, 2), 0);
	CHECK_INT(link_send(l, b.p + 2, b.len - 2), 0);
	link_pause(l, 1);
	CHECK_INT(link_queued(l), (long long)b.len);
	CHECK_INT(link_attach(l, sv[0], sv[0]), 0);
	CHECK_INT(link_queued(l), 0);
	CHECK_INT(read(sv[1], buf, sizeof(buf)), (long long)b.len);
	CHECK(memcmp(buf, b.p, b.len) == 0);
	/* Paused before it was attached: nothing is delivered until resumed. */
	CHECK_INT(write(sv[1], b.p, b.len), (long long)b.len);
	event_base_loop(base, EVLOOP_NONBLOCK);
	CHECK_INT(g.n, 0);
	/* Taken back, the fd stays open for whoever takes it. */
	fd = link_take_fd(l);
	CHECK_INT(fd, sv[0]);
	CHECK_INT(write(fd, "x", 1), 1);
	close(fd);
	close(sv[1]);
	dt_wbuf_free(&b);
	event_base_free(base);
}

/* A stream in memory for an io link: what it reads, what was written. */
struct mem {
	struct dt_wbuf	 in;		/* to read */
	size_t		 off;
	int		 eof;		/* in ends the stream */
	struct dt_wbuf	 out;		/* written */
	size_t		 room;		/* bytes writes take before EAGAIN */
	int		 kicks;
	int		 closed, err;
	char		 why[64];
};

/* io read: what is left of in, then EAGAIN or the end. */
static ssize_t
mem_read(void *arg, void *buf, size_t n)
{
	struct mem	*m = arg;

	if (m->off == m->in.len) {
		if (m->eof)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	if (n > m->in.len - m->off)
		n = m->in.len - m->off;
	memcpy(buf, m->in.p + m->off, n);
	m->off += n;
	return (ssize_t)n;
}

/* io write: takes what room is left, as a slow channel would. */
static ssize_t
mem_write(void *arg, const void *buf, size_t n)
{
	struct mem	*m = arg;

	if (m->room == 0) {
		errno = EAGAIN;
		return -1;
	}
	if (n > m->room)
		n = m->room;
	m->room -= n;
	dt_wbuf_put(&m->out, buf, n);
	return (ssize_t)n;
}

/* io kick: counted. */
static void
mem_kick(void *arg)
{
	((struct mem *)arg)->kicks++;
}

/* The io link's close callback: what it said. */
static void
mem_close(void *arg, int err, const char *why)
{
	struct got	*g = arg;
	struct mem	*m = (struct mem *)g->l;

	m->closed = 1;
	m->err = err;
	snprintf(m->why, sizeof(m->why), "%s", why);
}

/* Records a frame without pausing. */
static void
mem_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct got	*g = arg;

	if (n == 1 && g->n < sizeof(g->seen) - 1)
		g->seen[g->n++] = (char)p[0];
}

TEST(link_io_moves_frames_both_ways_and_reports_a_cut_frame)
{
	struct event_base	*base = event_base_new();
	struct mem		 m;
	struct got		 g = { .n = 0 };
	struct link_io		 io = { mem_read, mem_write, mem_kick, NULL, &m };
	struct link_cbs		 cbs = { mem_frame, mem_close, NULL, &g };
	struct dt_wbuf		 b;
	struct link		*l;

	memset(&m, 0, sizeof(m));
	dt_wbuf_init(&m.in);
	dt_wbuf_init(&m.out);
	g.l = (struct link *)&m;	/* mem_close finds m there */
	CHECK((l = link_new_io(base, &io, 1024, &cbs)) != NULL);
	dt_wbuf_init(&b);
	put_frames(&b, 3);
	/* The channel takes 3 bytes; the rest waits and the owner is kicked. */
	m.room = 3;
	CHECK_INT(link_send(l, b.p, b.len), 0);
	CHECK(m.kicks > 0);
	CHECK(link_queued(l) > 0);
	/* Ready: the rest goes, and what came in is delivered, in order. */
	put_frames(&m.in, 2);
	m.room = 1 << 20;
	link_io_ready(l);
	CHECK_INT(link_queued(l), 0);
	CHECK_INT(m.out.len, (long long)b.len);
	CHECK(memcmp(m.out.p, b.p, b.len) == 0);
	CHECK_STR(g.seen, "12");
	/* The stream ends inside a frame: said so, the part kept for a message. */
	dt_wbuf_put(&m.in, b.p, 3);
	m.eof = 1;
	link_io_ready(l);
	CHECK(m.closed);
	CHECK_INT(m.err, DT_ERR_PROTO);
	CHECK_STR(m.why, LINK_TRUNCATED);
	CHECK_INT(link_peek(l, m.why, sizeof(m.why)), 3);
	link_free(l);
	dt_wbuf_free(&b);
	dt_wbuf_free(&m.in);
	dt_wbuf_free(&m.out);
	event_base_free(base);
}
