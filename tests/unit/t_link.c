/* t_link.c -- frames are delivered exactly once, even when delivery pauses the stream. */
#include <sys/socket.h>

#include <stdint.h>
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
