/*
 * rdzv-load.c -- load generator for the rendezvous server: N workers, each
 * a TCP connection that authenticates, joins as its rank and fetches the
 * 128-byte NCCL id (rank 0 sets it first), as libdtcomm does.
 *
 *	rdzv-load -n N [-p PROCS] [-c INFLIGHT] [-q]
 *
 * Reads DTRUN_RDZV_ADDR and DTRUN_RDZV_TOKEN. Forks PROCS processes (the
 * descriptor limit is per process), each driving its share of the
 * connections with epoll, at most INFLIGHT of them still handshaking at
 * a time (so the listen backlog never overflows), each bound to its own
 * source address 127.x.y.z so ports never run out. Every connection stays
 * open until its process is done, as workers keep theirs. Prints
 *	rdzv-load: N ranks in S s (F failed), PROCS procs, INFLIGHT in flight
 * timed from the moment all processes are ready to the last id received.
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"
#include "rendezvous/auth.h"
#include "rendezvous/client.h"

#define ID_KEY		"dtrun/nccl-id/0"

enum state {
	S_IDLE,
	S_CONNECT,	/* connect() in progress */
	S_CHALLENGE,	/* waiting for CHALLENGE */
	S_REPLIES,	/* AUTH JOIN [SET] GET sent; reading the answers */
	S_DONE,
	S_FAILED,
};

struct conn {
	int		 fd;
	int		 rank;
	enum state	 st;
	int		 replies;	/* answers still expected */
	uint8_t		 snonce[RDZV_NONCE_LEN];
	uint8_t		 cnonce[RDZV_NONCE_LEN];
	uint8_t		 in[512];
	size_t		 inlen;
};

struct load {
	struct sockaddr_in	 srv;
	uint8_t			 secret[RDZV_SECRET_MAX];
	size_t			 slen;
	int			 ep;
	struct conn		*c;
	int			 n;		/* connections of this process */
	int			 next;		/* next to start */
	int			 inflight;
	int			 maxinflight;
	int			 done;
	int			 failed;
	int			 quiet;
	struct dt_wbuf		 out;
};

static double
now_mono(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Ends a connection's handshake with a failure. */
static void
conn_failed(struct load *l, struct conn *c, const char *why)
{
	if (!l->quiet && l->failed < 5)
		fprintf(stderr, "rdzv-load: rank %d: %s\n", c->rank, why);
	if (c->st == S_CONNECT || c->st == S_CHALLENGE)
		l->inflight--;
	c->st = S_FAILED;
	l->failed++;
	if (c->fd >= 0) {
		epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
}

/* Opens connection i from source address 127.x.y.z. */
static void
conn_start(struct load *l, struct conn *c)
{
	struct sockaddr_in	src;
	struct epoll_event	ev;
	uint32_t		k = (uint32_t)c->rank;
	int			on = 1;

	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = htonl(0x7f000000u | (1 + k / 62500) << 16 |
	    (1 + k / 250 % 250) << 8 | (1 + k % 250));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	c->st = S_CONNECT;
	l->inflight++;
	if (c->fd < 0) {
		conn_failed(l, c, strerror(errno));
		return;
	}
	setsockopt(c->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &on, sizeof(on));
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (bind(c->fd, (struct sockaddr *)&src, sizeof(src)) != 0) {
		conn_failed(l, c, strerror(errno));
		return;
	}
	if (connect(c->fd, (struct sockaddr *)&l->srv, sizeof(l->srv)) != 0 &&
	    errno != EINPROGRESS) {
		conn_failed(l, c, strerror(errno));
		return;
	}
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.ptr = c;
	epoll_ctl(l->ep, EPOLL_CTL_ADD, c->fd, &ev);
}

/* Answers the challenge with AUTH, JOIN, (rank 0: SET of the id,) GET. */
static int
conn_answer(struct load *l, struct conn *c, const struct rdzv_msg *ch)
{
	struct rdzv_msg	m;
	uint8_t		id[128];
	size_t		i;
	ssize_t		n;

	memcpy(c->snonce, ch->nonce, RDZV_NONCE_LEN);
	dt_wbuf_reset(&l->out);
	memset(&m, 0, sizeof(m));
	m.type = RDZV_AUTH;
	m.magic = RDZV_MAGIC;
	m.version = RDZV_VERSION;
	rdzv_auth_random(c->cnonce, sizeof(c->cnonce), NULL);
	memcpy(m.nonce, c->cnonce, sizeof(m.nonce));
	rdzv_auth_mac(l->secret, l->slen, RDZV_ROLE_WORKER, c->snonce,
	    c->cnonce, m.mac);
	rdzv_msg_encode(&l->out, &m);
	memset(&m, 0, sizeof(m));
	m.type = RDZV_JOIN;
	m.rank = c->rank;
	m.local_rank = -1;
	rdzv_msg_encode(&l->out, &m);
	c->replies = 3;
	if (c->rank == 0) {
		for (i = 0; i < sizeof(id); i++)
			id[i] = (uint8_t)(i + 1);
		memset(&m, 0, sizeof(m));
		m.type = RDZV_SET;
		m.key = (const uint8_t *)ID_KEY;
		m.keylen = strlen(ID_KEY);
		m.val = id;
		m.vallen = sizeof(id);
		rdzv_msg_encode(&l->out, &m);
		c->replies++;
	}
	memset(&m, 0, sizeof(m));
	m.type = RDZV_GET;
	m.flags = RDZV_GET_WAIT;
	m.key = (const uint8_t *)ID_KEY;
	m.keylen = strlen(ID_KEY);
	rdzv_msg_encode(&l->out, &m);
	n = send(c->fd, l->out.p, l->out.len, MSG_NOSIGNAL);
	return n == (ssize_t)l->out.len ? 0 : -1;
}

/* Checks one answer; returns 0, or -1 with the connection failed. */
static int
conn_reply(struct load *l, struct conn *c, const struct rdzv_msg *m)
{
	char	why[RDZV_MAX_TEXT + 32];

	switch (m->type) {
	case RDZV_AUTH_OK:
		if (rdzv_auth_check(l->secret, l->slen, RDZV_ROLE_SERVER,
		    c->snonce, c->cnonce, m->mac) == 0)
			return 0;
		conn_failed(l, c, "server proof is wrong");
		return -1;
	case RDZV_JOIN_OK:
		if (m->rank == c->rank)
			return 0;
		conn_failed(l, c, "wrong rank");
		return -1;
	case RDZV_OK:
		return 0;
	case RDZV_VALUE:
		if (m->vallen == 128 && m->val[0] == 1 && m->val[127] == 128)
			return 0;
		conn_failed(l, c, "wrong id");
		return -1;
	default:
		snprintf(why, sizeof(why), "%s: %.*s", rdzv_msg_name(m->type),
		    (int)m->textlen, (const char *)m->text);
		conn_failed(l, c, why);
		return -1;
	}
}

/* Reads what arrived and moves the connection along. */
static void
conn_input(struct load *l, struct conn *c)
{
	struct rdzv_msg	m;
	size_t		used;
	ssize_t		n;
	int		rc;

	n = recv(c->fd, c->in + c->inlen, sizeof(c->in) - c->inlen, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_failed(l, c, n == 0 ? "closed" : strerror(errno));
		return;
	}
	c->inlen += (size_t)n;
	while ((rc = rdzv_msg_parse(c->in, c->inlen, &m, &used)) == 0) {
		if (c->st == S_CHALLENGE) {
			if (m.type != RDZV_CHALLENGE || conn_answer(l, c, &m)) {
				conn_failed(l, c, "bad challenge");
				return;
			}
			c->st = S_REPLIES;
			l->inflight--;
		} else {
			if (conn_reply(l, c, &m) != 0)
				return;
			if (--c->replies == 0) {
				c->st = S_DONE;
				l->done++;
				epoll_ctl(l->ep, EPOLL_CTL_DEL, c->fd, NULL);
			}
		}
		memmove(c->in, c->in + used, c->inlen - used);
		c->inlen -= used;
	}
	if (rc != DT_ERR_AGAIN)
		conn_failed(l, c, "bad frame");
}

/* Runs this process's connections; returns its finishing time. */
static double
load_run(struct load *l)
{
	struct epoll_event	 evs[256], ev;
	struct conn		*c;
	int			 i, n, err;
	socklen_t		 sl;

	while (l->done + l->failed < l->n) {
		while (l->next < l->n && l->inflight < l->maxinflight)
			conn_start(l, &l->c[l->next++]);
		n = epoll_wait(l->ep, evs, 256, 10000);
		if (n == 0) {
			fprintf(stderr, "rdzv-load: stuck: %d done, %d failed "
			    "of %d\n", l->done, l->failed, l->n);
			break;
		}
		for (i = 0; i < n; i++) {
			c = evs[i].data.ptr;
			if (c->st == S_CONNECT) {
				err = 0;
				sl = sizeof(err);
				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl);
				if (err != 0) {
					conn_failed(l, c, strerror(err));
					continue;
				}
				c->st = S_CHALLENGE;
				ev.events = EPOLLIN;
				ev.data.ptr = c;
				epoll_ctl(l->ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
			if ((evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) &&
			    (c->st == S_CHALLENGE || c->st == S_REPLIES))
				conn_input(l, c);
		}
	}
	return now_mono();
}

/* One process: waits for the go byte, runs ranks [lo, hi), reports. */
static void
child_main(struct load *l, int lo, int hi, int gofd, int resfd)
{
	struct rlimit	rl;
	double		end;
	char		buf[128], go;
	int		i;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	l->n = hi - lo;
	if ((l->c = calloc(l->n, sizeof(*l->c))) == NULL ||
	    (l->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
		_exit(1);
	for (i = 0; i < l->n; i++) {
		l->c[i].rank = lo + i;
		l->c[i].fd = -1;
	}
	dt_wbuf_init(&l->out);
	if (read(gofd, &go, 1) != 1)
		_exit(1);
	end = load_run(l);
	snprintf(buf, sizeof(buf), "%d %d %.6f\n", l->done, l->failed, end);
	if (write(resfd, buf, strlen(buf)) < 0)
		_exit(1);
	/* Keep every connection open until all processes have reported. */
	if (read(gofd, &go, 1) < 0)
		_exit(1);
	_exit(0);
}

int
main(int argc, char **argv)
{
	struct load	 l;
	struct dt_err	 e;
	char		 host[256], line[128];
	const char	*addr = getenv("DTRUN_RDZV_ADDR");
	const char	*tok = getenv("DTRUN_RDZV_TOKEN");
	int		 ch, n = 0, procs = 4, port, i, gop[2], resp[2];
	int		 done = 0, failed = 0, d, f;
	double		 t0, end, last = 0;
	FILE		*res;
	pid_t		*pids;

	memset(&l, 0, sizeof(l));
	l.maxinflight = 128;
	while ((ch = getopt(argc, argv, "c:n:p:q")) != -1) {
		switch (ch) {
		case 'c':
			l.maxinflight = atoi(optarg);
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 'p':
			procs = atoi(optarg);
			break;
		case 'q':
			l.quiet = 1;
			break;
		default:
			goto usage;
		}
	}
	if (n < 1 || procs < 1 || l.maxinflight < 1 || addr == NULL ||
	    tok == NULL)
		goto usage;
	if (procs > n)
		procs = n;
	if (rdzv_addr_split(addr, host, sizeof(host), &port) != 0 ||
	    inet_pton(AF_INET, host, &l.srv.sin_addr) != 1) {
		fprintf(stderr, "rdzv-load: DTRUN_RDZV_ADDR must be "
		    "IPv4:port\n");
		return 1;
	}
	l.srv.sin_family = AF_INET;
	l.srv.sin_port = htons(port);
	if (rdzv_token_decode(tok, l.secret, sizeof(l.secret), &l.slen,
	    &e) != 0) {
		fprintf(stderr, "rdzv-load: %s\n", e.msg);
		return 1;
	}
	if (pipe(gop) != 0 || pipe(resp) != 0 ||
	    (pids = calloc(procs, sizeof(*pids))) == NULL)
		return 1;
	for (i = 0; i < procs; i++) {
		if ((pids[i] = fork()) == 0) {
			close(gop[1]);
			close(resp[0]);
			child_main(&l, (int)((long)n * i / procs),
			    (int)((long)n * (i + 1) / procs), gop[0], resp[1]);
		}
	}
	close(gop[0]);
	close(resp[1]);
	usleep(200000);			/* let every child get ready */
	t0 = now_mono();
	for (i = 0; i < procs; i++)
		if (write(gop[1], "g", 1) != 1)
			return 1;
	res = fdopen(resp[0], "r");
	for (i = 0; i < procs && fgets(line, sizeof(line), res) != NULL; i++) {
		if (sscanf(line, "%d %d %lf", &d, &f, &end) != 3)
			continue;
		done += d;
		failed += f;
		if (end > last)
			last = end;
	}
	close(gop[1]);			/* children close their connections */
	for (i = 0; i < procs; i++)
		waitpid(pids[i], NULL, 0);
	failed += n - done - failed;
	printf("rdzv-load: %d ranks in %.3f s (%d failed), %d procs, %d in "
	    "flight each\n", n, last - t0, failed, procs, l.maxinflight);
	return failed == 0 ? 0 : 1;
usage:
	fprintf(stderr, "usage: rdzv-load -n N [-p PROCS] [-c INFLIGHT] [-q] "
	    "(with DTRUN_RDZV_ADDR and DTRUN_RDZV_TOKEN set)\n");
	return 1;
}
