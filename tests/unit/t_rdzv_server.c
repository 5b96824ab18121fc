/*
 * t_rdzv_server.c -- the rendezvous server and client together in one
 * process: the server's event loop runs in a thread, driven through a
 * control pipe; clients run in the test (and in threads where they must
 * wait for each other).
 */
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/err.h"
#include "rendezvous/proto.h"
#include "rendezvous/auth.h"
#include "rendezvous/server.h"
#include "rendezvous/client.h"
#include "test.h"

struct tsrv {
	struct event_base	*base;
	struct rdzv_server	*s;
	pthread_t		 th;
	int			 ctl[2];	/* test -> loop: one command byte */
	int			 ack[2];	/* loop -> test: done */
	struct event		*ctlev;
	uint8_t			 secret[RDZV_SECRET_LEN];
	char			 addr[64];
	int			 joined_calls;
	int			 joined[4];	/* rdzv_server_joined, by 'j' */
	int			 alive_calls;
	int			 alive_rank;
	int			 timeouts;
	char			 timeout_msg[RDZV_MAX_TEXT];
	struct rdzv_server_stats st;
};

static void
on_joined(void *arg)
{
	struct tsrv	*t = arg;

	t->joined_calls++;
}

static void
on_alive(void *arg, int rank)
{
	struct tsrv	*t = arg;

	t->alive_calls++;
	t->alive_rank = rank;
}

static void
on_timeout(void *arg, const char *msg)
{
	struct tsrv	*t = arg;

	t->timeouts++;
	snprintf(t->timeout_msg, sizeof(t->timeout_msg), "%s", msg);
}

/* Runs one command from the test inside the loop. */
static void
ctl_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tsrv	*t = arg;
	char		 c;
	int		 r;

	if (read(fd, &c, 1) != 1)
		return;
	if (c == 'j')
		for (r = 0; r < 4; r++)
			t->joined[r] = rdzv_server_joined(t->s, r);
	if (c == 'q')
		event_base_loopbreak(t->base);
	else if (c == 'a')
		rdzv_server_abort(t->s, "launcher: rank 2 exited with code 1");
	rdzv_server_stats(t->s, &t->st);
	if (write(t->ack[1], &c, 1) != 1)
		abort();
}

static void *
loop_main(void *arg)
{
	struct tsrv	*t = arg;

	event_base_dispatch(t->base);
	return NULL;
}

/* Sends a command to the loop and waits until it ran. */
static void
tsrv_cmd(struct tsrv *t, char c)
{
	if (write(t->ctl[1], &c, 1) != 1 || read(t->ack[0], &c, 1) != 1)
		abort();
}

/* A plan of world ranks over two hosts "hostA" and "hostB", rank-major. */
static struct rdzv_rank_info *
plan_two_hosts(int world)
{
	static struct rdzv_rank_info	ri[64];
	int				r, per = world < 2 ? 1 : world / 2;

	for (r = 0; r < world; r++) {
		ri[r].rank = r;
		ri[r].node_rank = r / per;
		ri[r].local_rank = r % per;
		ri[r].local_world = per;
		ri[r].host = r < per ? "hostA" : "hostB";
	}
	return ri;
}

/* Starts a server for world ranks on 127.0.0.1, with the plan or none. */
static struct tsrv *
tsrv_start(int world, int with_plan, double start_timeout, double io_timeout)
{
	struct rdzv_server_cfg	 cfg;
	struct tsrv		*t = calloc(1, sizeof(*t));
	struct dt_err		 e;

	rdzv_auth_random(t->secret, sizeof(t->secret), NULL);
	memset(&cfg, 0, sizeof(cfg));
	cfg.bind_addr = "127.0.0.1";
	cfg.secret = t->secret;
	cfg.secret_len = sizeof(t->secret);
	cfg.world = world;
	cfg.nnodes = 2;
	cfg.ranks = with_plan ? plan_two_hosts(world) : NULL;
	cfg.start_timeout = start_timeout;
	cfg.io_timeout = io_timeout;
	cfg.on_timeout = on_timeout;
	cfg.on_all_joined = on_joined;
	cfg.on_alive = on_alive;
	cfg.arg = t;
	t->base = event_base_new();
	if (rdzv_server_new(t->base, &cfg, &t->s, &e) != 0) {
		printf("    rdzv_server_new: %s\n", e.msg);
		abort();
	}
	snprintf(t->addr, sizeof(t->addr), "127.0.0.1:%d",
	    rdzv_server_port(t->s));
	if (pipe(t->ctl) != 0 || pipe(t->ack) != 0)
		abort();
	t->ctlev = event_new(t->base, t->ctl[0], EV_READ | EV_PERSIST, ctl_cb, t);
	event_add(t->ctlev, NULL);
	pthread_create(&t->th, NULL, loop_main, t);
	return t;
}

/* Frees t once its loop has stopped. */
static void
tsrv_free(struct tsrv *t)
{
	event_free(t->ctlev);
	rdzv_server_free(t->s);
	event_base_free(t->base);
	close(t->ctl[0]);
	close(t->ctl[1]);
	close(t->ack[0]);
	close(t->ack[1]);
	free(t);
}

static void
tsrv_stop(struct tsrv *t)
{
	tsrv_cmd(t, 'q');
	pthread_join(t->th, NULL);
	tsrv_free(t);
}

/* Connects a client with the server's secret; fails the test if it cannot. */
static struct rdzv_client *
tconnect(struct tsrv *t)
{
	struct rdzv_client	*c = NULL;
	struct dt_err		 e;

	if (rdzv_client_connect(t->addr, t->secret, sizeof(t->secret), 10, &c,
	    &e) != 0)
		printf("    connect: %s\n", e.msg);
	return c;
}

static void
msleep(int ms)
{
	struct timespec	ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

TEST(rdzv_server_plan_join_and_nccl_id)
{
	struct tsrv		*t = tsrv_start(4, 1, 0, 0);
	struct rdzv_client	*c[4];
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	uint8_t			 id[128], got[128];
	size_t			 n;
	int			 i;

	for (i = 0; i < 4; i++)
		CHECK((c[i] = tconnect(t)) != NULL);
	/* By rank, as dtrun's workers do ... */
	CHECK_INT(rdzv_client_join(c[0], 0, NULL, -1, &ji, &e), 0);
	CHECK(ji.rank == 0 && ji.world == 4 && ji.local_rank == 0 &&
	    ji.local_world == 2 && ji.node_rank == 0 && ji.nnodes == 2);
	CHECK_INT(rdzv_client_join(c[3], 3, "ignored", -1, &ji, &e), 0);
	CHECK(ji.rank == 3 && ji.local_rank == 1 && ji.node_rank == 1);
	/* ... and by (host, local rank), as a srun-started worker does. */
	CHECK_INT(rdzv_client_join(c[1], -1, "hostB", 0, &ji, &e), 0);
	CHECK(ji.rank == 2 && ji.local_rank == 0 && ji.node_rank == 1);
	CHECK_INT(rdzv_client_join(c[2], -1, "hostC", 0, &ji, &e),
	    DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "hostC") != NULL);
	CHECK_INT(rdzv_client_join(c[2], 3, NULL, -1, &ji, &e), DT_ERR_INVAL);
	CHECK(strstr(e.msg, "already joined") != NULL);
	CHECK_INT(rdzv_client_join(c[2], 4, NULL, -1, &ji, &e), DT_ERR_RANGE);
	CHECK_INT(rdzv_client_join(c[2], 1, NULL, -1, &ji, &e), 0);
	CHECK_INT(rdzv_client_join(c[2], 1, NULL, -1, &ji, &e), DT_ERR_INVAL);
	/* Rank 0 publishes the id; everyone reads the same bytes. */
	for (i = 0; i < 128; i++)
		id[i] = (uint8_t)(i * 7 + 1);
	CHECK_INT(rdzv_client_set(c[0], "dtrun/nccl-id/0", id, sizeof(id), &e), 0);
	for (i = 0; i < 4; i++) {
		memset(got, 0, sizeof(got));
		CHECK_INT(rdzv_client_get(c[i], "dtrun/nccl-id/0", 1, got,
		    sizeof(got), &n, &e), 0);
		CHECK(n == 128 && memcmp(got, id, 128) == 0);
	}
	tsrv_cmd(t, 's');
	CHECK_INT(t->joined_calls, 1);
	CHECK_INT(t->st.joined, 4);
	CHECK_INT(t->st.conns, 4);
	for (i = 0; i < 4; i++)
		rdzv_client_free(c[i]);
	tsrv_stop(t);
}

TEST(rdzv_server_wrong_secret_is_refused)
{
	struct tsrv		*t = tsrv_start(2, 1, 0, 0);
	struct rdzv_client	*c = NULL, *ok;
	struct dt_err		 e;
	uint8_t			 bad[RDZV_SECRET_LEN];

	memcpy(bad, t->secret, sizeof(bad));
	bad[5] ^= 0x10;
	CHECK_INT(rdzv_client_connect(t->addr, bad, sizeof(bad), 5, &c, &e),
	    DT_ERR_AUTH);
	CHECK(c == NULL);
	CHECK(strstr(e.msg, "authentication failed") != NULL);
	CHECK(strstr(e.msg, "DTRUN_RDZV_TOKEN") != NULL);
	/* A short secret never leaves the worker. */
	CHECK_INT(rdzv_client_connect(t->addr, bad, 8, 5, &c, &e), DT_ERR_AUTH);
	/* The server goes on serving the right secret. */
	CHECK((ok = tconnect(t)) != NULL);
	CHECK_INT(rdzv_client_ping(ok, &e), 0);
	tsrv_cmd(t, 's');
	CHECK_INT(t->st.auth_failed, 1);
	CHECK_INT(t->st.joined, 0);
	rdzv_client_free(ok);
	tsrv_stop(t);
}

struct joiner {
	struct tsrv		*t;
	const char		*host;
	int			 local_rank;
	int			 rc;
	int			 barrier_rc;
	struct rdzv_join_info	 ji;
};

/* A worker thread: join by host, then one barrier. */
static void *
joiner_main(void *arg)
{
	struct joiner		*j = arg;
	struct rdzv_client	*c = tconnect(j->t);
	struct dt_err		 e;

	if (c == NULL) {
		j->rc = -1;
		return NULL;
	}
	j->rc = rdzv_client_join(c, -1, j->host, j->local_rank, &j->ji, &e);
	if (j->rc == 0)
		j->barrier_rc = rdzv_client_barrier(c, &e);
	rdzv_client_free(c);
	return NULL;
}

TEST(rdzv_server_join_by_host_is_deterministic)
{
	struct tsrv	*t = tsrv_start(5, 0, 0, 0);
	struct joiner	 j[5] = {
		{ .t = t, .host = "node-b", .local_rank = 1 },
		{ .t = t, .host = "node-a", .local_rank = 1 },
		{ .t = t, .host = "node-c", .local_rank = 0 },
		{ .t = t, .host = "node-b", .local_rank = 0 },
		{ .t = t, .host = "node-a", .local_rank = 0 },
	};
	/* Sorted by (host, local rank): a/0 a/1 b/0 b/1 c/0. */
	static const int	want[5] = { 3, 1, 4, 2, 0 };
	pthread_t		th[5];
	int			i;

	for (i = 0; i < 5; i++)
		pthread_create(&th[i], NULL, joiner_main, &j[i]);
	for (i = 0; i < 5; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 5; i++) {
		CHECK_INT(j[i].rc, 0);
		CHECK_INT(j[i].barrier_rc, 0);
		CHECK_INT(j[i].ji.rank, want[i]);
		CHECK_INT(j[i].ji.world, 5);
		CHECK_INT(j[i].ji.nnodes, 3);
	}
	CHECK(j[0].ji.node_rank == 1 && j[0].ji.local_rank == 1 &&
	    j[0].ji.local_world == 2);
	CHECK(j[2].ji.node_rank == 2 && j[2].ji.local_world == 1);
	tsrv_cmd(t, 's');
	CHECK_INT(t->joined_calls, 1);
	tsrv_stop(t);
}

struct getter {
	struct tsrv	*t;
	int		 rank;
	int		 rc;
	char		 val[64];
	char		 err[RDZV_MAX_TEXT + 64];
	int		 rc2;
};

/* A worker thread: join, then wait for "k". */
static void *
getter_main(void *arg)
{
	struct getter		*g = arg;
	struct rdzv_client	*c = tconnect(g->t);
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	size_t			 n = 0;

	if (c == NULL || rdzv_client_join(c, g->rank, NULL, -1, &ji, &e) != 0) {
		g->rc = -100;
		rdzv_client_free(c);
		return NULL;
	}
	g->rc = rdzv_client_get(c, "k", 1, g->val, sizeof(g->val) - 1, &n, &e);
	g->val[n] = '\0';
	if (g->rc != 0)
		snprintf(g->err, sizeof(g->err), "%s", e.msg);
	g->rc2 = rdzv_client_ping(c, &e);
	rdzv_client_free(c);
	return NULL;
}

TEST(rdzv_server_kv_wait_add_ping)
{
	struct tsrv		*t = tsrv_start(2, 1, 0, 0);
	struct getter		 g = { .t = t, .rank = 1 };
	struct rdzv_client	*c = tconnect(t);
	struct dt_err		 e;
	pthread_t		 th;
	char			 small[2];
	size_t			 n;
	int64_t			 v;

	pthread_create(&th, NULL, getter_main, &g);
	msleep(100);
	CHECK_INT(rdzv_client_get(c, "k", 0, small, sizeof(small), &n, &e),
	    DT_ERR_NOTFOUND);
	CHECK_INT(rdzv_client_set(c, "k", "hello", 5, &e), 0);
	pthread_join(th, NULL);
	CHECK_INT(g.rc, 0);
	CHECK_STR(g.val, "hello");
	CHECK_INT(g.rc2, 0);
	CHECK_INT(rdzv_client_get(c, "k", 0, small, sizeof(small), &n, &e),
	    DT_ERR_RANGE);
	CHECK_INT(n, 5);
	CHECK_INT(rdzv_client_add(c, "ctr", 3, &v, &e), 0);
	CHECK_INT(rdzv_client_add(c, "ctr", 4, &v, &e), 0);
	CHECK_INT(v, 7);
	CHECK_INT(rdzv_client_add(c, "k", 1, &v, &e), DT_ERR_PARSE);
	CHECK_INT(rdzv_client_barrier(c, &e), DT_ERR_INVAL);	/* no join */
	CHECK_INT(rdzv_client_ping(c, &e), 0);
	/* A client-side timeout on a wait that never ends. */
	rdzv_client_set_timeout(c, 0.2);
	CHECK_INT(rdzv_client_get(c, "never", 1, small, sizeof(small), &n, &e),
	    DT_ERR_TIMEOUT);
	rdzv_client_free(c);
	tsrv_stop(t);
}

TEST(rdzv_server_ping_of_a_joined_rank_is_alive)
{
	struct tsrv		*t = tsrv_start(2, 1, 0, 0);
	struct rdzv_client	*c = tconnect(t);
	struct rdzv_join_info	 ji;
	struct dt_err		 e;

	CHECK(c != NULL);
	CHECK_INT(rdzv_client_ping(c, &e), 0);
	tsrv_cmd(t, 'n');
	CHECK_INT(t->alive_calls, 0);		/* not a rank yet */
	CHECK_INT(rdzv_client_join(c, 1, NULL, -1, &ji, &e), 0);
	CHECK_INT(rdzv_client_ping(c, &e), 0);
	CHECK_INT(rdzv_client_ping(c, &e), 0);
	tsrv_cmd(t, 'j');
	CHECK_INT(t->alive_calls, 2);
	CHECK_INT(t->alive_rank, 1);
	CHECK(!t->joined[0] && t->joined[1]);
	CHECK(!rdzv_server_joined(t->s, -1) && !rdzv_server_joined(t->s, 2));
	rdzv_client_free(c);
	tsrv_stop(t);
}

TEST(rdzv_server_abort_reaches_waiters)
{
	struct tsrv		*t = tsrv_start(4, 1, 0, 0);
	struct getter		 g = { .t = t, .rank = 0 };
	struct rdzv_client	*c;
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	pthread_t		 th;

	pthread_create(&th, NULL, getter_main, &g);
	msleep(100);
	tsrv_cmd(t, 'a');
	pthread_join(th, NULL);
	CHECK_INT(g.rc, DT_ERR_ABORTED);
	CHECK(strstr(g.err, "rank 2 exited") != NULL);
	CHECK_INT(g.rc2, DT_ERR_ABORTED);	/* and it stays aborted */
	/* A worker arriving after the abort learns it at once. */
	CHECK((c = tconnect(t)) != NULL);
	CHECK_INT(rdzv_client_join(c, 1, NULL, -1, &ji, &e), DT_ERR_ABORTED);
	rdzv_client_free(c);
	tsrv_stop(t);
}

TEST(rdzv_server_start_timeout_names_missing_ranks)
{
	struct tsrv	*t = tsrv_start(4, 1, 0.3, 0);
	struct getter	 g[2] = { { .t = t, .rank = 0 }, { .t = t, .rank = 2 } };
	pthread_t	 th[2];
	int		 i;

	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, getter_main, &g[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	tsrv_cmd(t, 's');
	CHECK_INT(t->timeouts, 1);
	CHECK_INT(t->joined_calls, 0);
	CHECK(strstr(t->timeout_msg, "2 of 4 ranks never joined") != NULL);
	CHECK(strstr(t->timeout_msg, "rank 1 on hostA (local rank 1)") != NULL);
	CHECK(strstr(t->timeout_msg, "rank 3 on hostB (local rank 1)") != NULL);
	CHECK(strstr(t->timeout_msg, "rank 2 ") == NULL);
	tsrv_cmd(t, 'j');
	CHECK(t->joined[0] && !t->joined[1] && t->joined[2] && !t->joined[3]);
	for (i = 0; i < 2; i++) {
		CHECK_INT(g[i].rc, DT_ERR_ABORTED);
		CHECK(strstr(g[i].err, "rank 3 on hostB") != NULL);
	}
	tsrv_stop(t);
}

TEST(rdzv_server_start_timeout_without_plan)
{
	struct tsrv	*t = tsrv_start(3, 0, 0.3, 0);
	struct joiner	 j = { .t = t, .host = "node-z", .local_rank = 0 };
	pthread_t	 th;

	pthread_create(&th, NULL, joiner_main, &j);
	pthread_join(th, NULL);
	CHECK_INT(j.rc, DT_ERR_ABORTED);
	tsrv_cmd(t, 's');
	CHECK(strstr(t->timeout_msg, "2 of 3 ranks never joined") != NULL);
	CHECK(strstr(t->timeout_msg, "node-z x1") != NULL);
	tsrv_stop(t);
}

/* A raw TCP connection to the server. */
static int
raw_connect(struct tsrv *t)
{
	struct sockaddr_in	sin;
	int			fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(rdzv_server_port(t->s));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		abort();
	return fd;
}

/* True once the server has closed fd (reads to EOF within ms). */
static int
raw_closed(int fd, int ms)
{
	struct pollfd	pfd = { fd, POLLIN, 0 };
	char		buf[4096];
	ssize_t		n;

	while (poll(&pfd, 1, ms) == 1) {
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return 1;
	}
	return 0;
}

TEST(rdzv_server_bad_peers_are_dropped)
{
	struct tsrv		*t = tsrv_start(1, 1, 0, 0.3);
	struct rdzv_client	*c = tconnect(t), *d;
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	uint8_t			 junk[1000];
	uint8_t			 huge[5] = { 0x7f, 0xff, 0xff, 0xff, 1 };
	int			 fg, fh, fs, i;

	srand(7);
	for (i = 0; i < (int)sizeof(junk); i++)
		junk[i] = (uint8_t)rand();
	junk[0] = 0;			/* a plausible length, then garbage */
	fg = raw_connect(t);
	CHECK(write(fg, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	fh = raw_connect(t);
	CHECK(write(fh, huge, sizeof(huge)) == 5);
	fs = raw_connect(t);		/* says nothing: half-open */
	CHECK(raw_closed(fg, 2000));
	CHECK(raw_closed(fh, 2000));
	CHECK(raw_closed(fs, 3000));
	/* An authenticated worker that stalls mid-frame is dropped too. */
	CHECK((d = tconnect(t)) != NULL);
	CHECK(write(rdzv_client_fd(d), "\0\0\0\x20\x03", 5) == 5);
	CHECK(raw_closed(rdzv_client_fd(d), 3000));
	/* The good client never noticed. */
	CHECK_INT(rdzv_client_join(c, 0, NULL, -1, &ji, &e), 0);
	CHECK_INT(rdzv_client_barrier(c, &e), 0);
	tsrv_cmd(t, 's');
	CHECK_INT(t->st.dropped, 4);
	CHECK_INT(t->st.conns, 1);
	close(fg);
	close(fh);
	close(fs);
	rdzv_client_free(d);
	rdzv_client_free(c);
	tsrv_stop(t);
}

TEST(rdzv_server_many_connections)
{
	struct tsrv		*t = tsrv_start(64, 1, 0, 0);
	struct rdzv_client	*c[64];
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	uint8_t			 v[128];
	size_t			 n;
	int			 i, ok = 0;

	for (i = 0; i < 64; i++)
		if ((c[i] = tconnect(t)) != NULL &&
		    rdzv_client_join(c[i], 63 - i, NULL, -1, &ji, &e) == 0 &&
		    ji.rank == 63 - i)
			ok++;
	CHECK_INT(ok, 64);
	memset(v, 0x5a, sizeof(v));
	CHECK_INT(rdzv_client_set(c[63], "dtrun/nccl-id/0", v, 128, &e), 0);
	for (i = 0, ok = 0; i < 64; i++)
		if (rdzv_client_get(c[i], "dtrun/nccl-id/0", 1, v, sizeof(v),
		    &n, &e) == 0 && n == 128 && v[127] == 0x5a)
			ok++;
	CHECK_INT(ok, 64);
	tsrv_cmd(t, 's');
	CHECK_INT(t->joined_calls, 1);
	for (i = 0; i < 64; i++)
		rdzv_client_free(c[i]);
	tsrv_stop(t);
}

TEST(rdzv_addr_split_forms)
{
	char	host[64];
	int	port;

	CHECK_INT(rdzv_addr_split("node1:29500", host, sizeof(host), &port), 0);
	CHECK_STR(host, "node1");
	CHECK_INT(port, 29500);
	CHECK_INT(rdzv_addr_split("[::1]:80", host, sizeof(host), &port), 0);
	CHECK_STR(host, "::1");
	CHECK_INT(rdzv_addr_split("node1", host, sizeof(host), &port),
	    DT_ERR_PARSE);
	CHECK_INT(rdzv_addr_split("node1:0", host, sizeof(host), &port),
	    DT_ERR_PARSE);
	CHECK_INT(rdzv_addr_split(":80", host, sizeof(host), &port),
	    DT_ERR_PARSE);
	CHECK_INT(rdzv_addr_split("h:80x", host, sizeof(host), &port),
	    DT_ERR_PARSE);
}

/* One virtual connection's side: what the server sent it, and its end. */
struct tv {
	struct dt_wbuf	 got;
	int		 closed;
};

static void
tv_send(void *arg, const uint8_t *p, size_t n)
{
	struct tv	*v = arg;

	dt_wbuf_put(&v->got, p, n);
}

static void
tv_closed(void *arg)
{
	struct tv	*v = arg;

	v->closed++;
}

/* Encodes a message of type with the fields given into b. */
static void
tv_put(struct dt_wbuf *b, uint8_t type, int rank, const char *key,
    const char *val, uint8_t flags)
{
	struct rdzv_msg	m;

	memset(&m, 0, sizeof(m));
	m.type = type;
	m.rank = rank;
	m.local_rank = -1;
	m.flags = flags;
	m.seq = 7;
	if (key != NULL) {
		m.key = (const uint8_t *)key;
		m.keylen = strlen(key);
	}
	if (val != NULL) {
		m.val = (const uint8_t *)val;
		m.vallen = strlen(val);
	}
	if (rdzv_msg_encode(b, &m) != 0)
		abort();
}

/* The types of the frames v got, in order, as "JOIN_OK OK ..."; empties it. */
static const char *
tv_types(struct tv *v)
{
	static char	 buf[256];
	struct rdzv_msg	 m;
	size_t		 off = 0, used;

	buf[0] = '\0';
	while (off < v->got.len && rdzv_msg_parse(v->got.p + off,
	    v->got.len - off, &m, &used) == 0) {
		if (buf[0] != '\0')
			strcat(buf, " ");
		strcat(buf, rdzv_msg_name(m.type));
		off += used;
	}
	dt_wbuf_reset(&v->got);
	return buf;
}

/* Feeds b's bytes to c one byte at a time (any split of frames is fine), then empties b. */
static void
tv_feed(struct rdzv_conn *c, struct dt_wbuf *b, int bytewise)
{
	size_t	i;

	if (!bytewise)
		rdzv_server_vinput(c, b->p, b->len);
	for (i = 0; bytewise && i < b->len; i++)
		rdzv_server_vinput(c, b->p + i, 1);
	dt_wbuf_reset(b);
}

/*
 * Two workers through virtual connections: no handshake, JOIN first; each
 * waits on its own (one's BARRIER does not hold back the other's SET), a
 * GET that waits holds back only its own connection's next request, and
 * ABORT reaches them. Too much input ahead of the answers drops one, and
 * its owner hears of it; the owner's own close is silent.
 */
TEST(rdzv_server_virtual_connections)
{
	struct tsrv		*t = tsrv_start(2, 1, 0, 0);
	struct rdzv_vconn_cbs	 cb0 = { tv_send, tv_closed, NULL };
	struct rdzv_vconn_cbs	 cb1 = { tv_send, tv_closed, NULL };
	struct tv		 v0, v1, v2;
	struct rdzv_conn	*c0, *c1, *c2;
	struct dt_wbuf		 b;
	char			 big[60000];

	/* The loop runs in its thread: stop it, drive the server here. */
	tsrv_cmd(t, 'q');
	pthread_join(t->th, NULL);
	memset(&v0, 0, sizeof(v0));
	memset(&v1, 0, sizeof(v1));
	memset(&v2, 0, sizeof(v2));
	dt_wbuf_init(&v0.got);
	dt_wbuf_init(&v1.got);
	dt_wbuf_init(&v2.got);
	dt_wbuf_init(&b);
	cb0.arg = &v0;
	cb1.arg = &v1;
	c0 = rdzv_server_vopen(t->s, &cb0);
	c1 = rdzv_server_vopen(t->s, &cb1);
	CHECK(c0 != NULL && c1 != NULL);
	CHECK_STR(tv_types(&v0), "");		/* no CHALLENGE */
	tv_put(&b, RDZV_JOIN, 0, NULL, NULL, 0);
	tv_put(&b, RDZV_BARRIER, 0, NULL, NULL, 0);
	tv_feed(c0, &b, 1);
	CHECK_STR(tv_types(&v0), "JOIN_OK");	/* and waits in the barrier */
	tv_put(&b, RDZV_JOIN, 1, NULL, NULL, 0);
	tv_put(&b, RDZV_SET, 0, "k", "v", 0);
	tv_feed(c1, &b, 0);
	CHECK_STR(tv_types(&v1), "JOIN_OK OK");
	CHECK_STR(tv_types(&v0), "");
	/* Rank 0 waits for a key, with a PING queued behind the GET. */
	tv_put(&b, RDZV_BARRIER, 0, NULL, NULL, 0);
	tv_feed(c1, &b, 0);
	CHECK_STR(tv_types(&v0), "OK");
	CHECK_STR(tv_types(&v1), "OK");
	tv_put(&b, RDZV_GET, 0, "late", NULL, RDZV_GET_WAIT);
	tv_put(&b, RDZV_PING, 0, NULL, NULL, 0);
	tv_feed(c0, &b, 0);
	CHECK_STR(tv_types(&v0), "");
	tv_put(&b, RDZV_SET, 0, "late", "x", 0);
	tv_feed(c1, &b, 0);
	CHECK_STR(tv_types(&v1), "OK");
	CHECK_STR(tv_types(&v0), "VALUE PONG");
	/* A third, joining nobody, sends far ahead of an unanswered GET. */
	cb0.arg = &v2;
	c2 = rdzv_server_vopen(t->s, &cb0);
	CHECK(c2 != NULL);
	tv_put(&b, RDZV_GET, 0, "never", NULL, RDZV_GET_WAIT);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	while (b.len < 17 * RDZV_MAX_FRAME)
		tv_put(&b, RDZV_SET, 0, "x", big, 0);
	tv_feed(c2, &b, 0);
	CHECK_INT(v2.closed, 1);
	CHECK(strstr(tv_types(&v2), "ERROR") != NULL);
	/* The launcher aborts: the waiting hear it. */
	tv_put(&b, RDZV_GET, 0, "never", NULL, RDZV_GET_WAIT);
	tv_feed(c0, &b, 0);
	rdzv_server_abort(t->s, "rank 3 exited with code 1");
	CHECK_STR(tv_types(&v0), "ABORT");
	rdzv_server_vclose(c1);
	rdzv_server_vclose(c0);
	CHECK_INT(v0.closed + v1.closed, 0);
	rdzv_server_stats(t->s, &t->st);
	CHECK_INT(t->st.conns, 0);
	dt_wbuf_free(&b);
	dt_wbuf_free(&v0.got);
	dt_wbuf_free(&v1.got);
	dt_wbuf_free(&v2.got);
	tsrv_free(t);
}

/* A send that answers at once, from inside the call, as an ssh link may. */
static struct rdzv_conn	*tv_echo_conn;
static struct dt_wbuf	 tv_echo_next;

static void
tv_send_feeding(void *arg, const uint8_t *p, size_t n)
{
	struct dt_wbuf	next;

	tv_send(arg, p, n);
	if (tv_echo_next.len == 0)
		return;
	next = tv_echo_next;			/* fed once */
	dt_wbuf_init(&tv_echo_next);
	rdzv_server_vinput(tv_echo_conn, next.p, next.len);
	dt_wbuf_free(&next);
}

/*
 * The worker's next request handed to the server from inside its send
 * callback is answered once, after what was being sent: nothing twice,
 * nothing lost.
 */
TEST(rdzv_server_virtual_input_from_inside_send)
{
	struct tsrv		*t = tsrv_start(1, 1, 0, 0);
	struct rdzv_vconn_cbs	 cb = { tv_send_feeding, tv_closed, NULL };
	struct tv		 v;
	struct dt_wbuf		 b;

	tsrv_cmd(t, 'q');
	pthread_join(t->th, NULL);
	memset(&v, 0, sizeof(v));
	dt_wbuf_init(&v.got);
	dt_wbuf_init(&b);
	dt_wbuf_init(&tv_echo_next);
	cb.arg = &v;
	tv_echo_conn = rdzv_server_vopen(t->s, &cb);
	CHECK(tv_echo_conn != NULL);
	tv_put(&tv_echo_next, RDZV_PING, 0, NULL, NULL, 0);
	tv_put(&tv_echo_next, RDZV_SET, 0, "k", "v", 0);
	tv_put(&b, RDZV_JOIN, 0, NULL, NULL, 0);
	tv_feed(tv_echo_conn, &b, 0);
	CHECK_STR(tv_types(&v), "JOIN_OK PONG OK");
	rdzv_server_abort(t->s, "done");
	CHECK_STR(tv_types(&v), "ABORT");
	rdzv_server_vclose(tv_echo_conn);
	CHECK_INT(v.closed, 0);
	dt_wbuf_free(&b);
	dt_wbuf_free(&v.got);
	dt_wbuf_free(&tv_echo_next);
	tsrv_free(t);
}

/* Runs base's loop for secs: timers due before then fire, in order. */
static void
loop_for(struct event_base *base, double secs)
{
	struct timeval	tv = { (time_t)secs,
			    (suseconds_t)((secs - (time_t)secs) * 1e6) };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

/* A server as dtrun's: no TCP port, 2 ranks, 0.2 s to join, on t->base. */
static void
nolisten_start(struct tsrv *t)
{
	struct rdzv_server_cfg	 cfg;
	struct dt_err		 e;

	memset(t, 0, sizeof(*t));
	rdzv_auth_random(t->secret, sizeof(t->secret), NULL);
	memset(&cfg, 0, sizeof(cfg));
	cfg.no_listen = 1;
	cfg.secret = t->secret;
	cfg.secret_len = sizeof(t->secret);
	cfg.world = 2;
	cfg.nnodes = 2;
	cfg.ranks = plan_two_hosts(2);
	cfg.start_timeout = 0.2;
	cfg.start_on_first_use = 1;
	cfg.on_timeout = on_timeout;
	cfg.arg = t;
	t->base = event_base_new();
	if (rdzv_server_new(t->base, &cfg, &t->s, &e) != 0)
		abort();
}

/* A worker's first request on a fresh virtual connection: a PING. */
static struct rdzv_conn *
nolisten_ping(struct tsrv *t, struct tv *v)
{
	struct rdzv_vconn_cbs	 cb = { tv_send, tv_closed, NULL };
	struct rdzv_conn	*c;
	struct dt_wbuf		 b;

	cb.arg = v;
	dt_wbuf_init(&b);
	if ((c = rdzv_server_vopen(t->s, &cb)) == NULL)
		abort();
	tv_put(&b, RDZV_PING, 0, NULL, NULL, 0);
	tv_feed(c, &b, 0);
	dt_wbuf_free(&b);
	return c;
}

/*
 * dtrun's server: no TCP port at all, every worker through a virtual
 * connection. The start timeout counts from rdzv_server_start_clock
 * (timers of one loop fire in order of their deadlines, so no wall
 * clock is raced here); if no worker has asked anything by then (env://
 * jobs) it does not fire, and a worker's first request, a PING without
 * a JOIN, starts it afresh.
 */
TEST(rdzv_server_no_listen_and_the_start_clock)
{
	struct tsrv		 t;
	struct tv		 v;
	struct rdzv_conn	*c;

	memset(&v, 0, sizeof(v));
	dt_wbuf_init(&v.got);
	/* Asked 0.1 s after the start: the deadline stays at 0.2 s. */
	nolisten_start(&t);
	CHECK_INT(rdzv_server_port(t.s), 0);
	rdzv_server_start_clock(t.s);
	loop_for(t.base, 0.1);
	c = nolisten_ping(&t, &v);
	CHECK_STR(tv_types(&v), "PONG");
	loop_for(t.base, 0.15);
	CHECK_INT(t.timeouts, 1);
	CHECK(strstr(t.timeout_msg, "2 of 2 ranks never joined") != NULL);
	rdzv_server_vclose(c);
	rdzv_server_free(t.s);
	event_base_free(t.base);
	/* Nobody asked by the deadline: none, until a first request. */
	nolisten_start(&t);
	rdzv_server_start_clock(t.s);
	loop_for(t.base, 0.4);
	CHECK_INT(t.timeouts, 0);
	c = nolisten_ping(&t, &v);
	loop_for(t.base, 0.4);
	CHECK_INT(t.timeouts, 1);
	rdzv_server_vclose(c);
	rdzv_server_free(t.s);
	event_base_free(t.base);
	dt_wbuf_free(&v.got);
}

/* The open-files limit that leaves exactly n descriptors free. */
static rlim_t
limit_leaving(int n)
{
	int	fd;

	for (fd = 0; n > 0; fd++)
		if (fcntl(fd, F_GETFD) == -1)
			n--;
	return (rlim_t)fd;
}

/* A child: on a byte from go, opens n idle connections, says so, holds them. */
static pid_t
flood_child(struct tsrv *t, int n, int go[2], int ready[2])
{
	struct sockaddr_in	sin;
	pid_t			pid;
	char			b;
	int			i, fd;

	if ((pid = fork()) != 0)
		return pid;
	close(go[1]);
	close(ready[0]);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(rdzv_server_port(t->s));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (read(go[0], &b, 1) != 1)
		_exit(1);
	for (i = 0; i < n; i++)
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
		    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
			_exit(1);
	if (write(ready[1], "r", 1) != 1)
		_exit(1);
	while (read(go[0], &b, 1) > 0)
		;			/* until the test closes go */
	_exit(0);
}

/*
 * At the open-files limit the server makes room by dropping the oldest
 * connection that has not authenticated: a stranger's 100 idle ones
 * neither keep a worker out nor end the job (they once aborted it).
 */
TEST(rdzv_server_sheds_strangers_at_the_descriptor_limit)
{
	struct tsrv		*t = tsrv_start(1, 1, 0, 60);
	struct rdzv_client	*c = NULL;
	struct rdzv_join_info	 ji;
	struct dt_err		 e;
	struct rlimit		 old, low;
	int			 go[2], ready[2], spare, i, st;
	pid_t			 pid;
	char			 b;

	if (pipe(go) != 0 || pipe(ready) != 0)
		abort();
	pid = flood_child(t, 100, go, ready);
	close(go[0]);
	close(ready[1]);
	getrlimit(RLIMIT_NOFILE, &old);
	low = old;
	low.rlim_cur = limit_leaving(24);
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	spare = open("/dev/null", O_RDONLY);	/* the worker's, later */
	CHECK(spare >= 0);
	CHECK(write(go[1], "g", 1) == 1 && read(ready[0], &b, 1) == 1);
	for (i = 0; i < 1000; i++) {		/* 10 s at most */
		tsrv_cmd(t, 's');
		if (t->st.accepted == 100)
			break;
		msleep(10);
	}
	CHECK_INT(t->st.accepted, 100);
	CHECK(t->st.shed > 0);
	close(spare);
	CHECK((c = tconnect(t)) != NULL);
	CHECK(c != NULL && rdzv_client_join(c, 0, NULL, -1, &ji, &e) == 0);
	setrlimit(RLIMIT_NOFILE, &old);
	tsrv_cmd(t, 's');
	CHECK_INT(t->st.joined, 1);
	if (c != NULL)
		rdzv_client_free(c);
	close(go[1]);
	close(ready[0]);
	waitpid(pid, &st, 0);
	tsrv_stop(t);
}
