/*
 * storeload.c -- N simulated torch 1.13 ranks running init_process_group
 * (env://, TORCHELASTIC_USE_AGENT_STORE=True) against a TCPStore server:
 *
 *	storeload -p PORT [-H HOST] [-b nccl|gloo] [-n N] [-t SECONDS]
 *
 * One TCP connection a rank, all in this process, event-driven; each plays
 * bench/store/play.c's script. Connects them all first, then times from
 * the first byte sent to the last rank done, and prints
 *	storeload: BACKEND N ranks in MS ms (Q queries, P barrier polls)
 * Exits 0 when every rank got through with the right values, 1 when one
 * failed (why on stderr), 2 on a timeout ("storeload: timeout ...").
 * (torch 1.13 also opens a second, silent connection a rank for watch_key
 * callbacks; left out: it carries nothing, and two a rank would not fit
 * 16k ranks under the machine's open-files limit.)
 */
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "play.h"

#define CONNECTING	256	/* connects in flight at once */

struct conn {
	int		 fd;
	int		 up;		/* connected */
	int		 reply;		/* a reply is awaited */
	int		 wout;		/* EPOLLOUT is on */
	size_t		 off;		/* of out, sent */
	struct dt_wbuf	 out;
	struct tp_rank	 r;
};

static struct tp_job	 job;
static struct conn	*conns;
static int		 ep;
static uint32_t		*sleepq;	/* ranks asleep, by wake time */
static long long	*sleepdue;
static size_t		 qhead, qlen;
static long long	 t_last;

static void
die(const char *what, uint32_t i)
{
	fprintf(stderr, "storeload: rank %u: %s: %s\n", i, what,
	    errno ? strerror(errno) : "failed");
	exit(1);
}

/* Sets which events fd i waits for. */
static void
watch(uint32_t i, int op, uint32_t ev)
{
	struct epoll_event	e = { .events = ev, .data.u32 = i };

	if (epoll_ctl(ep, op, conns[i].fd, &e) != 0)
		die("epoll_ctl", i);
}

/* Sends what conn i holds; waits for EPOLLOUT when the socket is full. */
static void
flush(uint32_t i)
{
	struct conn	*c = &conns[i];
	ssize_t		 n;

	while (c->off < c->out.len) {
		n = send(c->fd, c->out.p + c->off, c->out.len - c->off,
		    MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			die("send", i);
		c->off += (size_t)n;
	}
	if (c->off == c->out.len) {
		dt_wbuf_reset(&c->out);
		c->off = 0;
	}
	if ((c->off < c->out.len) != c->wout) {
		c->wout = !c->wout;
		watch(i, EPOLL_CTL_MOD, EPOLLIN | (c->wout ? EPOLLOUT : 0));
	}
}

/* Runs rank i's script up to its next reply, sleep or end. */
static void
drive(uint32_t i)
{
	struct conn	*c = &conns[i];

	switch (tp_run(&job, &c->r, &c->out)) {
	case TP_REPLY:
		c->reply = 1;
		break;
	case TP_SLEEP:
		sleepq[(qhead + qlen) % job.world] = i;
		sleepdue[(qhead + qlen++) % job.world] = tp_now_ns() +
		    TP_POLL_MS * 1000000LL;
		break;
	case TP_DONE:
		t_last = tp_now_ns();
		break;
	case TP_FAIL:
		fprintf(stderr, "storeload: %s\n", job.why);
		exit(1);
	}
	flush(i);
}

/* Bytes came for rank i: feed them, and go on where a reply is whole. */
static void
readable(uint32_t i)
{
	static uint8_t	 buf[256 * 1024];
	struct conn	*c = &conns[i];
	ssize_t		 n;
	size_t		 off = 0, used;
	int		 rc;

	if ((n = recv(c->fd, buf, sizeof(buf), 0)) < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return;
		die("recv", i);
	}
	if (n == 0)
		die("the server closed the connection", i);
	while (off < (size_t)n) {
		if (!c->reply) {
			errno = 0;
			die("bytes came that no query asked for", i);
		}
		rc = tp_feed(&job, &c->r, buf + off, (size_t)n - off, &used);
		off += used;
		if (rc < 0) {
			fprintf(stderr, "storeload: %s\n", job.why);
			exit(1);
		}
		if (rc == 1) {
			c->reply = 0;
			drive(i);
		}
	}
}

/* Opens conn i's socket and starts its connect. */
static void
dial(uint32_t i, const struct sockaddr_in *sa)
{
	struct conn	*c = &conns[i];
	int		 one = 1;

	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0)) < 0)
		die("socket (raise the open-files limit?)", i);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 &&
	    errno != EINPROGRESS)
		die("connect", i);
	watch(i, EPOLL_CTL_ADD, EPOLLOUT);
}

/* Connects every rank, CONNECTING at a time. */
static void
connect_all(const struct sockaddr_in *sa, long long deadline)
{
	struct epoll_event	ev[512];
	uint32_t		next = 0, up = 0, i;
	int			n, k, err;
	socklen_t		len;

	while (up < job.world) {
		while (next < job.world && next - up < CONNECTING)
			dial(next++, sa);
		if (tp_now_ns() > deadline) {
			printf("storeload: timeout connecting (%u of %u up)\n",
			    up, job.world);
			exit(2);
		}
		n = epoll_wait(ep, ev, 512, 100);
		for (k = 0; k < n; k++) {
			i = ev[k].data.u32;
			len = sizeof(err);
			if (getsockopt(conns[i].fd, SOL_SOCKET, SO_ERROR, &err,
			    &len) != 0 || err != 0) {
				errno = err;
				die("connect", i);
			}
			if (!conns[i].up) {
				conns[i].up = 1;
				up++;
				watch(i, EPOLL_CTL_MOD, EPOLLIN);
			}
		}
	}
}

/* Wakes the sleepers whose poll is due; returns ms to the next, or 50. */
static int
wake(void)
{
	long long	t = tp_now_ns();

	while (qlen > 0 && sleepdue[qhead] <= t) {
		uint32_t	i = sleepq[qhead];

		qhead = (qhead + 1) % job.world;
		qlen--;
		drive(i);
	}
	if (qlen == 0)
		return 50;
	return (int)((sleepdue[qhead] - t) / 1000000) + 1;
}

static void
usage(void)
{
	fprintf(stderr, "usage: storeload -p PORT [-H HOST] [-b nccl|gloo] "
	    "[-n N] [-t SECONDS]\n");
	exit(1);
}

int
main(int argc, char **argv)
{
	struct epoll_event	 ev[1024];
	struct sockaddr_in	 sa;
	struct rlimit		 rl;
	const char		*host = "127.0.0.1";
	long long		 t0, deadline;
	double			 tmo = 120;
	uint32_t		 i;
	int			 c, n, k, port = 0, be = TP_NCCL;

	job.world = 1024;
	while ((c = getopt(argc, argv, "b:H:n:p:t:")) != -1) {
		switch (c) {
		case 'b': if ((be = tp_backend(optarg)) < 0) usage(); break;
		case 'H': host = optarg; break;
		case 'n': job.world = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'p': port = atoi(optarg); break;
		case 't': tmo = atof(optarg); break;
		default: usage();
		}
	}
	if (port <= 0 || job.world == 0 || optind != argc)
		usage();
	job.be = (enum tp_backend)be;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		usage();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	conns = calloc(job.world, sizeof(*conns));
	sleepq = calloc(job.world, sizeof(*sleepq));
	sleepdue = calloc(job.world, sizeof(*sleepdue));
	if (conns == NULL || sleepq == NULL || sleepdue == NULL ||
	    (ep = epoll_create1(0)) < 0)
		die("no memory", 0);
	deadline = tp_now_ns() + (long long)(tmo * 1e9);
	connect_all(&sa, deadline);

	t0 = tp_now_ns();
	for (i = 0; i < job.world; i++) {
		dt_wbuf_init(&conns[i].out);
		tp_rank_init(&conns[i].r, i);
		drive(i);
	}
	while (job.done < job.world) {
		if (tp_now_ns() > deadline) {
			printf("storeload: timeout: %s %u ranks, %u done after "
			    "%.0f s\n", be == TP_NCCL ? "nccl" : "gloo",
			    job.world, job.done, tmo);
			return 2;
		}
		n = epoll_wait(ep, ev, 1024, wake());
		for (k = 0; k < n; k++) {
			i = ev[k].data.u32;
			if (ev[k].events & EPOLLOUT)
				flush(i);
			if (ev[k].events & (EPOLLIN | EPOLLERR | EPOLLHUP))
				readable(i);
		}
	}
	printf("storeload: %s %u ranks in %.1f ms (%llu queries, %llu barrier "
	    "polls)\n", be == TP_NCCL ? "nccl" : "gloo", job.world,
	    (t_last - t0) / 1e6, (unsigned long long)job.queries,
	    (unsigned long long)job.polls);
	return 0;
}
