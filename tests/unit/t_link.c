/* t_link.c -- frames are delivered exactly once, even when delivery pauses the stream; heartbeats. */
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/err.h"
#include "common/link.h"
#include "common/wire.h"
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
	struct dt_err	 e;
	size_t		 one;

	dt_wbuf_init(&b);
	put_frames(&b, 3);
	one = b.len / 3;
	evbuffer_add(in, b.p, b.len);
	CHECK_INT(link_frames(in, 1024, got_frame, &g, got_more, &g, &e), 0);
	/* The frame that paused is gone from the buffer: not delivered twice. */
	CHECK_STR(g.seen, "1");
	CHECK_INT(evbuffer_get_length(in), 2 * one);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &e);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &e);
	g.stop = 0;
	link_frames(in, 1024, got_frame, &g, got_more, &g, &e);
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

/*
 * Held, a link writes nothing: what is sent waits in its queue, and the
 * event loop writes it all in one go once it is released.
 */
TEST(link_hold_writes_a_burst_at_once_from_the_loop)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 cbs = { got_frame, got_close, NULL, NULL };
	struct dt_wbuf		 b;
	struct got		 g = { .n = 0 };
	struct link		*l;
	char			 buf[64];
	int			 sv[2];

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	cbs.arg = &g;
	CHECK((l = link_new(base, sv[0], sv[0], 1024, &cbs)) != NULL);
	dt_wbuf_init(&b);
	put_frames(&b, 3);
	link_hold(l, 1);
	CHECK_INT(link_send(l, b.p, 6), 0);
	CHECK_INT(link_send(l, b.p + 6, b.len - 6), 0);
	CHECK_INT(link_queued(l), (long long)b.len);
	CHECK_INT(read(sv[1], buf, sizeof(buf)), -1);
	link_hold(l, 0);
	/* Released: still the loop's to write, not the caller's. */
	CHECK_INT(link_queued(l), (long long)b.len);
	event_base_loop(base, EVLOOP_NONBLOCK);
	CHECK_INT(link_queued(l), 0);
	CHECK_INT(read(sv[1], buf, sizeof(buf)), (long long)b.len);
	CHECK(memcmp(buf, b.p, b.len) == 0);
	/* Not held: written at once, as before. */
	CHECK_INT(link_send(l, b.p, b.len), 0);
	CHECK_INT(read(sv[1], buf, sizeof(buf)), (long long)b.len);
	link_free(l);
	close(sv[1]);
	dt_wbuf_free(&b);
	event_base_free(base);
}

/*
 * A frame whose payload waits in a pipe goes out whole and in order: what
 * the stream does not take is read into the queue (here all of it, header
 * too: a unix socket takes a whole splice once it has any room), and
 * frames sent after it wait behind it. With frames queued, the link
 * declines; with none, the payload is spliced straight through.
 */
TEST(link_splices_a_pipe_payload_and_queues_what_the_stream_refuses)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 cbs = { got_frame, got_close, NULL, NULL };
	struct dt_wbuf		 hdr, two;
	struct got		 g = { .n = 0 };
	struct link		*l;
	static char		 data[60000], got[70000];
	static const uint8_t	 one[] = { 0, 0, 0, 2, 1 };	/* 1 byte of payload */
	size_t			 want, have = 0, i;
	ssize_t			 n;
	int			 sv[2], p[2], small = 4096, spins = 0;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	CHECK_INT(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small,
	    sizeof(small)), 0);
	CHECK_INT(pipe2(p, O_NONBLOCK), 0);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 23);
	CHECK_INT(write(p[1], data, sizeof(data)), (long long)sizeof(data));
	cbs.arg = &g;
	CHECK((l = link_new(base, sv[0], sv[0], 1 << 20, &cbs)) != NULL);
	dt_wbuf_init(&hdr);
	dt_wbuf_init(&two);
	dt_wbuf_u32(&hdr, 1 + sizeof(data));	/* a type-1 frame's header */
	dt_wbuf_u8(&hdr, 1);
	put_frames(&two, 1);
	/* The stream full but for a few bytes. */
	while (write(sv[0], data, sizeof(data)) > 0)
		;
	for (have = 0; have < 1000; have += (size_t)n)
		CHECK((n = read(sv[1], got, 1000 - have)) > 0);
	CHECK_INT(link_send_spliced(l, hdr.p, hdr.len, p[0], sizeof(data)), 1);
	/* The pipe is empty: the queue holds the frame. */
	CHECK_INT(read(p[0], got, 1), -1);
	CHECK(link_queued(l) > 0);
	/* What filled the stream comes first. */
	while ((n = read(sv[1], got, sizeof(data))) > 0)
		;
	have = 0;
	CHECK_INT(link_send(l, two.p, two.len), 0);
	CHECK_INT(write(p[1], "z", 1), 1);
	CHECK_INT(link_send_spliced(l, one, sizeof(one), p[0], 1), 0);
	want = hdr.len + sizeof(data) + two.len;
	while (have < want && spins++ < 10000) {
		if ((n = read(sv[1], got + have, sizeof(got) - have)) > 0)
			have += (size_t)n;
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	CHECK_INT(have, (long long)want);
	CHECK(memcmp(got, hdr.p, hdr.len) == 0);
	CHECK(memcmp(got + hdr.len, data, sizeof(data)) == 0);
	CHECK(memcmp(got + hdr.len + sizeof(data), two.p, two.len) == 0);
	CHECK_INT(link_queued(l), 0);
	/* Nothing queued now: the next payload goes straight through. */
	CHECK_INT(link_send_spliced(l, one, sizeof(one), p[0], 1), 1);
	CHECK_INT(link_queued(l), 0);
	CHECK_INT(read(sv[1], got, sizeof(got)), (long long)sizeof(one) + 1);
	CHECK(memcmp(got, one, sizeof(one)) == 0 && got[sizeof(one)] == 'z');
	link_free(l);
	close(sv[0]);
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	dt_wbuf_free(&hdr);
	dt_wbuf_free(&two);
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

/* What heartbeat tests count: the peer given up, and frames heard. */
struct beats {
	struct event_base	*base;
	struct link		*l;		/* freed by silent when free_it */
	int			 silent;
	int			 free_it;
	int			 frames;
	int			 stop_at;	/* frames after which the loop ends */
};

/* link_silent_cb: counts; frees the link if asked (agent_cut does). */
static void
beats_silent(void *arg)
{
	struct beats	*t = arg;

	t->silent++;
	if (t->free_it) {
		link_free(t->l);
		t->l = NULL;
	}
	event_base_loopbreak(t->base);
}

/* A frame heard; the loop ends after stop_at of them. */
static void
beats_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct beats	*t = arg;

	if (++t->frames == t->stop_at)
		event_base_loopbreak(t->base);
}

/* A heartbeat frame: type 9, payload "B". */
static void
put_beat(struct dt_wbuf *b)
{
	size_t	start = dt_frame_begin(b, 9);

	dt_wbuf_u8(b, 'B');
	dt_frame_end(b, start, 1024);
}

/* Bytes waiting on fd, without blocking. */
static ssize_t
waiting(int fd, void *buf, size_t n)
{
	ssize_t	r = recv(fd, buf, n, MSG_DONTWAIT);

	return r < 0 ? 0 : r;
}

/* A heartbeat test's link: on sv[0], the peer's end at sv[1]. */
struct bfix {
	struct event_base	*base;
	struct beats		 t;
	struct link_cbs		 cbs;
	struct dt_wbuf		 beat;		/* the heartbeat frame */
	struct dt_wbuf		 f;		/* another frame */
	int			 sv[2];
};

/* Makes fx's link with heartbeats on at timeout_ms. */
static void
bfix_open(struct bfix *fx, uint64_t timeout_ms)
{
	memset(fx, 0, sizeof(*fx));
	fx->base = event_base_new();
	fx->t.base = fx->base;
	fx->cbs = (struct link_cbs){ beats_frame, got_close, NULL, &fx->t };
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, fx->sv), 0);
	dt_wbuf_init(&fx->beat);
	dt_wbuf_init(&fx->f);
	put_beat(&fx->beat);
	put_frames(&fx->f, 1);
	fx->t.l = link_new(fx->base, fx->sv[0], fx->sv[0], 1024, &fx->cbs);
	CHECK_INT(link_heartbeat(fx->t.l, timeout_ms, fx->beat.p, fx->beat.len,
	    beats_silent, &fx->t), 0);
}

/* Frees what bfix_open made (the link unless its callback freed it). */
static void
bfix_close(struct bfix *fx)
{
	link_free(fx->t.l);
	if (fx->sv[1] >= 0)
		close(fx->sv[1]);
	dt_wbuf_free(&fx->beat);
	dt_wbuf_free(&fx->f);
	event_base_free(fx->base);
}

TEST(link_heartbeat_sends_when_quiet_and_gives_up_a_silent_peer)
{
	struct bfix	 fx;
	char		 buf[256];
	int		 i;

	/* A timeout of a minute: only the looks below happen, no timer's. */
	bfix_open(&fx, 60000);
	/* Nothing sent since the last look: the beat goes, as given. */
	link_heartbeat_look(fx.t.l);
	CHECK_INT(waiting(fx.sv[1], buf, sizeof(buf)), (long long)fx.beat.len);
	CHECK(memcmp(buf, fx.beat.p, fx.beat.len) == 0);
	/* Something sent since: no beat, the peer heard that. */
	CHECK_INT(link_send(fx.t.l, fx.f.p, fx.f.len), 0);
	link_heartbeat_look(fx.t.l);
	CHECK_INT(waiting(fx.sv[1], buf, sizeof(buf)), (long long)fx.f.len);
	/* Silent for LINK_BEAT_LOOKS looks in a row: given up, not one sooner. */
	for (i = 2; i < LINK_BEAT_LOOKS - 1; i++)
		link_heartbeat_look(fx.t.l);
	CHECK_INT(fx.t.silent, 0);
	link_heartbeat_look(fx.t.l);
	CHECK_INT(fx.t.silent, 1);
	/* Once: the link looks no more, and sends no more beats. */
	waiting(fx.sv[1], buf, sizeof(buf));
	link_heartbeat_look(fx.t.l);
	CHECK_INT(fx.t.silent, 1);
	CHECK_INT(waiting(fx.sv[1], buf, sizeof(buf)), 0);
	bfix_close(&fx);
}

TEST(link_heartbeat_keeps_a_peer_that_talks_or_waits_unread)
{
	struct bfix	 fx;
	int		 i;

	bfix_open(&fx, 60000);
	/* The peer says something before every look: never given up. */
	for (i = 0; i < 4 * LINK_BEAT_LOOKS; i++) {
		CHECK_INT(write(fx.sv[1], fx.f.p, fx.f.len), (long long)fx.f.len);
		fx.t.stop_at = fx.t.frames + 1;
		event_base_loop(fx.base, EVLOOP_ONCE);
		link_heartbeat_look(fx.t.l);
	}
	CHECK_INT(fx.t.frames, 4 * LINK_BEAT_LOOKS);
	/* Even part of a frame is life: a frame that comes a byte a look. */
	for (i = 0; i < 2 * LINK_BEAT_LOOKS; i++) {
		CHECK_INT(write(fx.sv[1], fx.f.p + i % fx.f.len, 1), 1);
		event_base_loop(fx.base, EVLOOP_ONCE);
		link_heartbeat_look(fx.t.l);
	}
	CHECK_INT(fx.t.silent, 0);
	CHECK(!link_closed(fx.t.l));
	/* Not reading (back-pressure): what it sends waits, unread, not lost. */
	link_pause(fx.t.l, 1);
	for (i = 0; i < 2 * LINK_BEAT_LOOKS; i++)
		link_heartbeat_look(fx.t.l);
	CHECK_INT(fx.t.silent, 0);
	/* Resumed and silent again: given up within LINK_BEAT_LOOKS looks. */
	link_pause(fx.t.l, 0);
	for (i = 0; i < LINK_BEAT_LOOKS; i++)
		link_heartbeat_look(fx.t.l);
	CHECK_INT(fx.t.silent, 1);
	bfix_close(&fx);
}

/* A safety net for the timer tests: a hang fails instead of hanging. */
static void
beats_too_long(evutil_socket_t fd, short what, void *arg)
{
	struct beats	*t = arg;

	t->silent = -1;
	event_base_loopbreak(t->base);
}

/* Runs fx's loop until a callback ends it, or a minute passes (a failure). */
static void
bfix_run(struct bfix *fx)
{
	struct timeval	 net = { 60, 0 };
	struct event	*ev = evtimer_new(fx->base, beats_too_long, &fx->t);

	evtimer_add(ev, &net);
	event_base_dispatch(fx->base);
	event_free(ev);
}

TEST(link_heartbeat_timer_gives_up_a_silent_peer_once)
{
	struct bfix	 fx;
	char		 buf[256];

	bfix_open(&fx, 60);
	fx.t.free_it = 1;
	bfix_run(&fx);
	/* Given up (and freed inside the callback), however long it took. */
	CHECK_INT(fx.t.silent, 1);
	CHECK(fx.t.l == NULL);
	/* It beat at every look before: LINK_BEAT_LOOKS - 1 of them, no more. */
	CHECK_INT(waiting(fx.sv[1], buf, sizeof(buf)),
	    (long long)((LINK_BEAT_LOOKS - 1) * fx.beat.len));
	bfix_close(&fx);
}

TEST(link_heartbeat_timer_keeps_two_live_peers)
{
	struct bfix	 fx;
	struct beats	 t1;
	struct link_cbs	 cbs1 = { beats_frame, got_close, NULL, &t1 };

	/* Two sides beating at each other: each hears the other's beats. */
	bfix_open(&fx, 60);
	memset(&t1, 0, sizeof(t1));
	t1.base = fx.base;
	t1.stop_at = -1;
	t1.l = link_new(fx.base, fx.sv[1], fx.sv[1], 1024, &cbs1);
	fx.sv[1] = -1;			/* t1.l's now */
	CHECK_INT(link_heartbeat(t1.l, 60, fx.beat.p, fx.beat.len,
	    beats_silent, &t1), 0);
	fx.t.stop_at = 4 * LINK_BEAT_LOOKS;
	bfix_run(&fx);
	/* Many timeouts' worth of beats heard, and neither side gave up. */
	CHECK_INT(fx.t.frames, 4 * LINK_BEAT_LOOKS);
	CHECK_INT(fx.t.silent, 0);
	CHECK_INT(t1.silent, 0);
	link_free(t1.l);
	bfix_close(&fx);
}
