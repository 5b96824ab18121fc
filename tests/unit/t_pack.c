/*
 * t_pack.c -- PACKED frames: the codec, and links that pack what they send
 * and unpack what they read, so their owners see every frame once, in
 * order, even when they pause inside a PACKED frame.
 */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <lz4.h>

#include "common/err.h"
#include "common/link.h"
#include "common/pack.h"
#include "common/wire.h"
#include "test.h"

#define T_MAX	(1024 * 1024)

/* Appends n frames of type 7, each "k: " and a line of text repeated to len bytes. */
static void
t_text_frames(struct dt_wbuf *b, int n, size_t len)
{
	char	line[256];
	size_t	st, i;
	int	k;

	for (k = 0; k < n; k++) {
		st = dt_frame_begin(b, 7);
		snprintf(line, sizeof(line), "%04d: epoch 3 step 1200 loss 0.4211 "
		    "lr 3e-4 tokens/s 51234\n", k);
		for (i = 0; i < len; i++)
			dt_wbuf_u8(b, (uint8_t)line[i % strlen(line)]);
		dt_frame_end(b, st, T_MAX);
	}
}

TEST(pack_roundtrip_and_refusals)
{
	struct dt_wbuf	 raw, b;
	struct evbuffer	*out = evbuffer_new();
	struct dt_err	 e;
	uint32_t	 len;
	size_t		 i;

	dt_wbuf_init(&raw);
	dt_wbuf_init(&b);
	t_text_frames(&raw, 8, 3000);
	CHECK_INT(pack_frames(&b, raw.p, raw.len, T_MAX), 1);
	CHECK(b.len < raw.len / 4);		/* text shrinks */
	CHECK_INT(b.p[4], PACK_TYPE);
	len = (uint32_t)b.p[0] << 24 | b.p[1] << 16 | b.p[2] << 8 | b.p[3];
	CHECK_INT(len + 4, b.len);
	CHECK_INT(pack_unpack(b.p + 5, b.len - 5, T_MAX, out, &e), 0);
	CHECK_INT(evbuffer_get_length(out), raw.len);
	CHECK(memcmp(evbuffer_pullup(out, -1), raw.p, raw.len) == 0);
	evbuffer_drain(out, raw.len);

	/* Over the reader's limit, cut, or corrupt: refused, out unchanged. */
	CHECK_INT(pack_unpack(b.p + 5, b.len - 5, raw.len - 1, out, &e),
	    DT_ERR_PROTO);
	CHECK_INT(pack_unpack(b.p + 5, b.len - 6, T_MAX, out, &e),
	    DT_ERR_PROTO);
	CHECK_INT(pack_unpack(b.p + 5, 4, T_MAX, out, &e), DT_ERR_PROTO);
	CHECK_INT(pack_unpack(b.p + 5, 3, T_MAX, out, &e), DT_ERR_PROTO);
	CHECK_STR(e.msg, "short PACKED frame");
	b.p[8]++;				/* raw says one byte more */
	CHECK_INT(pack_unpack(b.p + 5, b.len - 5, T_MAX, out, &e),
	    DT_ERR_PROTO);
	CHECK_STR(e.msg, "bad PACKED frame");
	CHECK_INT(evbuffer_get_length(out), 0);

	/* Bytes that do not shrink by an eighth are left as they are. */
	dt_wbuf_reset(&raw);
	dt_wbuf_reset(&b);
	srandom(7);
	for (i = 0; i < 8192; i++)
		dt_wbuf_u8(&raw, (uint8_t)random());
	CHECK_INT(pack_frames(&b, raw.p, raw.len, T_MAX), 0);
	CHECK_INT(b.len, 0);
	/* Nor a few bytes, which the frame's header alone would outgrow. */
	CHECK_INT(pack_frames(&b, "aaaaaaaa", 8, T_MAX), 0);
	CHECK_INT(b.len, 0);
	/* Nor packed over the limit it is given. */
	dt_wbuf_reset(&raw);
	t_text_frames(&raw, 8, 3000);
	CHECK_INT(pack_frames(&b, raw.p, raw.len, 64), 0);
	CHECK_INT(b.len, 0);
	dt_wbuf_free(&raw);
	dt_wbuf_free(&b);
	evbuffer_free(out);
}

struct tp_got {
	struct link	*l;
	uint8_t		*bytes;		/* the frames received, as they were sent */
	size_t		 len;
	size_t		 frames;
	int		 packed_seen;	/* a handler saw a PACKED frame */
	int		 pause_every;	/* pause after this many frames (0: never) */
	int		 err;		/* the close callback's */
	int		 closed;
};

/* Rebuilds each frame as it was sent; pauses when asked, as back-pressure does. */
static void
tp_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct tp_got	*g = arg;
	uint8_t		 hdr[5] = { (n + 1) >> 24, (n + 1) >> 16, (n + 1) >> 8,
			    n + 1, type };

	if (type == PACK_TYPE)
		g->packed_seen = 1;
	g->bytes = realloc(g->bytes, g->len + 5 + n);
	memcpy(g->bytes + g->len, hdr, 5);
	memcpy(g->bytes + g->len + 5, p, n);
	g->len += 5 + n;
	g->frames++;
	if (g->pause_every > 0 && g->frames % g->pause_every == 0)
		link_pause(g->l, 1);
}

static void
tp_close(void *arg, int err, const char *why)
{
	struct tp_got	*g = arg;

	g->closed = 1;
	g->err = err;
}

/* Runs base until the reader has want bytes or closed, resuming it when paused. */
static void
tp_pump(struct event_base *base, struct tp_got *g, size_t want)
{
	int	turns;

	for (turns = 0; turns < 10000 && g->len < want && !g->closed;
	    turns++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (link_paused(g->l))
			link_pause(g->l, 0);
	}
}

TEST(link_pack_sends_fewer_bytes_and_delivers_every_frame_once)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 rc = { tp_frame, tp_close, NULL, NULL };
	struct link_cbs		 sc = { tp_frame, tp_close, NULL, NULL };
	struct tp_got		 got = { 0 }, sgot = { 0 };
	struct dt_wbuf		 raw, small;
	struct link		*s;
	uint8_t			 peek[5];
	int			 sv[2], i, avail = 0;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rc.arg = &got;
	sc.arg = &sgot;
	s = link_new(base, sv[0], sv[0], T_MAX, &sc);
	link_pack(s, 1);
	dt_wbuf_init(&raw);
	dt_wbuf_init(&small);
	/* Three writes of 8 frames, and one small frame that goes as it is. */
	t_text_frames(&raw, 8, 3000);
	for (i = 0; i < 3; i++)
		CHECK_INT(link_send(s, raw.p, raw.len), 0);
	t_text_frames(&small, 1, 40);
	CHECK_INT(link_send(s, small.p, small.len), 0);
	event_base_loop(base, EVLOOP_NONBLOCK);

	/* On the wire: PACKED frames, far fewer bytes than were sent. */
	CHECK_INT(recv(sv[1], peek, sizeof(peek), MSG_PEEK), 5);
	CHECK_INT(peek[4], PACK_TYPE);
	CHECK_INT(ioctl(sv[1], FIONREAD, &avail), 0);
	CHECK(avail < (int)(3 * raw.len) / 4);

	/* The reader pauses after every third frame, inside PACKED frames. */
	got.l = link_new(base, sv[1], sv[1], T_MAX, &rc);
	got.pause_every = 3;
	tp_pump(base, &got, 3 * raw.len + small.len);
	CHECK_INT(got.frames, 25);
	CHECK_INT(got.packed_seen, 0);
	CHECK_INT(got.closed, 0);
	CHECK_INT(got.len, 3 * raw.len + small.len);
	for (i = 0; i < 3; i++)
		CHECK(memcmp(got.bytes + i * raw.len, raw.p, raw.len) == 0);
	CHECK(memcmp(got.bytes + 3 * raw.len, small.p, small.len) == 0);

	/* Off again: the same bytes go as they are. */
	CHECK_INT(link_take_fd(got.l), sv[1]);
	link_pack(s, 0);
	CHECK_INT(link_send(s, raw.p, raw.len), 0);
	event_base_loop(base, EVLOOP_NONBLOCK);
	CHECK_INT(recv(sv[1], peek, sizeof(peek), MSG_PEEK), 5);
	CHECK_INT(peek[4], 7);
	close(sv[1]);
	link_free(s);
	free(got.bytes);
	dt_wbuf_free(&raw);
	dt_wbuf_free(&small);
	event_base_free(base);
}

/* Sends bytes as one PACKED frame to a link, and returns how it ended. */
static struct tp_got
tp_receive_packed(const uint8_t *inner, size_t n)
{
	struct event_base	*base = event_base_new();
	struct link_cbs		 rc = { tp_frame, tp_close, NULL, NULL };
	struct tp_got		 got = { 0 };
	struct dt_wbuf		 b;
	char			*dst;
	size_t			 st;
	int			 sv[2], k;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rc.arg = &got;
	got.l = link_new(base, sv[1], sv[1], T_MAX, &rc);
	dt_wbuf_init(&b);
	/* Packed by hand: pack_frames would refuse bytes that do not shrink. */
	st = dt_frame_begin(&b, PACK_TYPE);
	dt_wbuf_u32(&b, (uint32_t)n);
	dst = (char *)dt_wbuf_reserve(&b, n + 64);
	k = LZ4_compress_default((const char *)inner, dst, (int)n, (int)n + 64);
	CHECK(k > 0);
	b.len += (size_t)k;
	dt_frame_end(&b, st, T_MAX);
	CHECK_INT(write(sv[0], b.p, b.len), (long long)b.len);
	close(sv[0]);
	tp_pump(base, &got, SIZE_MAX);
	link_free(got.l);
	dt_wbuf_free(&b);
	event_base_free(base);
	return got;
}

TEST(link_refuses_a_packed_frame_that_cuts_a_frame_or_nests)
{
	struct dt_wbuf	 raw, inner;
	struct tp_got	 g;

	dt_wbuf_init(&raw);
	dt_wbuf_init(&inner);
	t_text_frames(&raw, 3, 500);

	/* Whole frames: delivered, then the stream's end is a clean one. */
	g = tp_receive_packed(raw.p, raw.len);
	CHECK_INT(g.frames, 3);
	CHECK_INT(g.closed, 1);
	CHECK_INT(g.err, 0);
	free(g.bytes);

	/* The last frame cut short: the frames before it, then an error. */
	g = tp_receive_packed(raw.p, raw.len - 10);
	CHECK_INT(g.frames, 2);
	CHECK_INT(g.closed, 1);
	CHECK_INT(g.err, DT_ERR_PROTO);
	free(g.bytes);

	/* A PACKED frame inside one. */
	CHECK_INT(pack_frames(&inner, raw.p, raw.len, T_MAX), 1);
	g = tp_receive_packed(inner.p, inner.len);
	CHECK_INT(g.frames, 0);
	CHECK_INT(g.packed_seen, 0);
	CHECK_INT(g.err, DT_ERR_PROTO);
	free(g.bytes);
	dt_wbuf_free(&raw);
	dt_wbuf_free(&inner);
}
