/*
 * t_deeppair.c -- the --deep pair listener: only connections that prove
 * the check's key count, a stranger's idle connections never take a pair's
 * place, and a listener out of descriptors sheds or rests (dt_accept_some).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/deeppair.h"
#include "common/err.h"
#include "common/sys.h"
#include "test.h"

#define T_STRANGERS	300
#define T_BURST		240	/* under the listen backlog (256) */

/* A connection to "ADDR:PORT" (blocking: loopback completes at once), or -1. */
static int
t_dial(const char *where)
{
	struct sockaddr_in	sin;
	int			fd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(atoi(strrchr(where, ':') + 1));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

struct t_done {
	int			 n;
	struct deep_result	 r;
};

static void
t_pair_done(void *arg, const struct deep_result *r)
{
	struct t_done	*d = arg;

	d->n++;
	d->r = *r;
}

/* Runs a PAIR to where under key until it is done; its result. */
static struct deep_result
t_pair(struct event_base *base, const char *where, const uint8_t *key,
    uint64_t bytes, uint32_t streams)
{
	struct t_done		 d = { 0 };
	struct deep_pair	*p;
	struct dt_err		 e;
	int			 i;

	dt_err_clear(&e);
	p = deep_pair_start(base, where, key, bytes, streams, t_pair_done, &d,
	    &e);
	CHECK(p != NULL);
	for (i = 0; p != NULL && d.n == 0 && i < 100000; i++)
		event_base_loop(base, EVLOOP_ONCE);
	CHECK_INT(d.n, 1);
	deep_pair_free(p);
	return d.r;
}

/* How many of fds the listener closed (its challenge read, then EOF). */
static int
t_closed(const int *fds, int n)
{
	char	buf[64];
	int	i, k = 0;

	for (i = 0; i < n; i++)
		if (fds[i] >= 0 && recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) >= 0 &&
		    recv(fds[i], buf, sizeof(buf), MSG_DONTWAIT) == 0)
			k++;
	return k;
}

TEST(deeppair_strangers_are_shed_and_pairs_with_the_key_measure)
{
	struct event_base	*base = event_base_new();
	struct deep_srv		*s;
	struct deep_result	 r;
	struct dt_err		 e;
	uint8_t			 key[DEEP_KEY_LEN], other[DEEP_KEY_LEN];
	char			 where[64];
	int			 fds[T_STRANGERS], i;

	memset(key, 7, sizeof(key));
	memset(other, 8, sizeof(other));
	dt_err_clear(&e);
	s = deep_srv_new(base, "127.0.0.1", key, where, sizeof(where), &e);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	/* 300 idle strangers, taken in by the listener before any pair. */
	for (i = 0; i < T_STRANGERS; i++) {
		fds[i] = t_dial(where);
		event_base_loop(base, EVLOOP_NONBLOCK);
	}
	for (i = 0; i < 50; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	/* Past DEEP_SRV_PENDING, the oldest went to make room. */
	CHECK(t_closed(fds, T_STRANGERS) >= T_STRANGERS - DEEP_SRV_PENDING);
	r = t_pair(base, where, key, 0, 1);
	CHECK_INT(r.err, 0);
	CHECK(r.rtt_us > 0);
	r = t_pair(base, where, key, 1 << 20, 4);
	CHECK_INT(r.err, 0);
	CHECK(r.bytes == 1 << 20);
	/* Another key proves nothing: the listener closes it. */
	r = t_pair(base, where, other, 0, 1);
	CHECK_INT(r.err, ECONNRESET);	/* closed, or reset: its ping unread */
	for (i = 0; i < T_STRANGERS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	deep_srv_free(s);
	event_base_free(base);
}

static int	t_taken;

static void
t_take(void *arg, int c)
{
	t_taken++;
	close(c);
}

/* Frees the descriptor *arg (once): as a listener sheds one it holds. */
static int
t_shed(void *arg)
{
	int	*fd = arg;

	if (*fd < 0)
		return 0;
	close(*fd);
	*fd = -1;
	return 1;
}

TEST(sys_accept_some_sheds_at_the_limit_or_says_rest)
{
	struct sockaddr_in	 sin = { .sin_family = AF_INET };
	socklen_t		 sl = sizeof(sin);
	struct rlimit		 old, low;
	char			 where[64], buf[32];
	int			 lfd, c[3], reserve, spare, spare2, fill[16];
	int			 i, n = 0;

	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    listen(lfd, 8) == 0 &&
	    getsockname(lfd, (struct sockaddr *)&sin, &sl) == 0);
	snprintf(where, sizeof(where), "127.0.0.1:%d", ntohs(sin.sin_port));
	for (i = 0; i < 3; i++)
		CHECK((c[i] = t_dial(where)) >= 0);	/* waiting, in order */
	reserve = dt_reserve_open();
	spare = dt_reserve_open();
	CHECK(reserve >= 0 && spare >= 0);
	/* Every descriptor below the limit in use: accept4 says EMFILE. */
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = (spare > reserve ? spare : reserve) + 4;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	while (n < 16 && (fill[n] = dt_reserve_open()) >= 0)
		n++;
	CHECK(n < 16 && accept4(lfd, NULL, NULL, 0) == -1 && errno == EMFILE);
	/* A descriptor of the caller's own goes first: then c[0] is taken. */
	t_taken = 0;
	CHECK_INT(dt_accept_some(lfd, SOCK_CLOEXEC, 2, &reserve, t_take,
	    t_shed, &spare), 0);
	CHECK_INT(t_taken, 1);
	CHECK_INT(spare, -1);
	CHECK(recv(c[0], buf, sizeof(buf), 0) == 0);
	/* Its slot filled again, nothing of its own to shed: the reserve. */
	spare = dt_reserve_open();
	CHECK(spare >= 0);
	CHECK_INT(dt_accept_some(lfd, SOCK_CLOEXEC, 1, &reserve, t_take,
	    NULL, NULL), 0);
	CHECK_INT(t_taken, 1);
	CHECK(reserve >= 0);
	CHECK(recv(c[1], buf, sizeof(buf), 0) == 0);	/* shed: closed */
	/* No reserve to be had: rest (-1), never a loop; c[2] waits on. */
	close(reserve);
	spare2 = dt_reserve_open();
	reserve = -1;
	CHECK_INT(dt_accept_some(lfd, SOCK_CLOEXEC, 8, &reserve, t_take,
	    NULL, NULL), -1);
	CHECK_INT(recv(c[2], buf, sizeof(buf), MSG_DONTWAIT), -1);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	while (n > 0)
		close(fill[--n]);
	close(spare);
	close(spare2);
	for (i = 0; i < 3; i++)
		close(c[i]);
	close(lfd);
}

/*
 * A pair's connection queued ahead of a burst of strangers is shed with
 * them before it can prove itself (the listener takes 64 a wake-up, and
 * keeps DEEP_SRV_PENDING): it connects again, and the pair still measures.
 */
TEST(deeppair_a_pair_shed_in_a_crowd_connects_again)
{
	struct event_base	*base = event_base_new();
	struct deep_srv		*s;
	struct deep_pair	*p;
	struct t_done		 d = { 0 };
	struct dt_err		 e;
	uint8_t			 key[DEEP_KEY_LEN];
	char			 where[64];
	int			 fds[T_BURST], i;

	memset(key, 7, sizeof(key));
	dt_err_clear(&e);
	s = deep_srv_new(base, "127.0.0.1", key, where, sizeof(where), &e);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	for (int kind = 0; kind < 2; kind++) {
		memset(&d, 0, sizeof(d));
		p = deep_pair_start(base, where, key, kind ? 1 << 20 : 0, 1,
		    t_pair_done, &d, &e);
		CHECK(p != NULL);
		/* Behind the pair's connection, in the listener's queue. */
		for (i = 0; i < T_BURST; i++)
			fds[i] = t_dial(where);
		for (i = 0; p != NULL && d.n == 0 && i < 100000; i++)
			event_base_loop(base, EVLOOP_ONCE);
		CHECK_INT(d.n, 1);
		CHECK_INT(d.r.err, 0);
		if (kind)
			CHECK(d.r.bytes == 1 << 20);
		else
			CHECK(d.r.rtt_us > 0);
		deep_pair_free(p);
		for (i = 0; i < T_BURST; i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	deep_srv_free(s);
	event_base_free(base);
}
