/*
 * lagged.c -- the scale harness's transport with a network's delay. The
 * local launcher starts it in place of dtrun-agent (DTRUN_AGENT=lagged);
 * it starts the real agent (LAGGED_AGENT) on a socketpair and relays both
 * ways, holding each chunk LAGGED_MS milliseconds, so every round trip
 * between dtrun and that agent costs 2 x LAGGED_MS, as over a network.
 * With LAGGED_MS unset or 0 it is not there at all: it execs the agent.
 *
 * dtrun's end is our stdin/stdout (one socket); the agent's is the other
 * end of our socketpair, as its stdin and stdout. When either side closes,
 * what is held still goes to the other, then we close it too and wait for
 * the agent.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Bytes read at one time, held until due. */
struct chunk {
	struct chunk	*next;
	long long	 due;		/* CLOCK_MONOTONIC ms */
	size_t		 len, off;
	char		 data[65536];
};

/* One direction: from in to out, with what is held in between. */
struct way {
	int		 in, out;
	int		 eof;		/* in is closed */
	struct chunk	*head, *tail;
};

static long long
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads what in has into a chunk due in lag ms; 0, or -1 at its end. */
static int
way_read(struct way *w, long lag)
{
	struct chunk	*c = malloc(sizeof(*c));
	ssize_t		 n;

	if (c == NULL)
		exit(70);
	if ((n = read(w->in, c->data, sizeof(c->data))) <= 0) {
		free(c);
		if (n < 0 && errno == EINTR)
			return 0;
		w->eof = 1;
		return -1;
	}
	c->len = (size_t)n;
	c->off = 0;
	c->due = now_ms() + lag;
	c->next = NULL;
	if (w->tail != NULL)
		w->tail->next = c;
	else
		w->head = c;
	w->tail = c;
	return 0;
}

/* Writes every due chunk (blocking: the reader keeps up). */
static void
way_write(struct way *w, long long t)
{
	struct chunk	*c;
	ssize_t		 n;

	while ((c = w->head) != NULL && c->due <= t) {
		n = write(w->out, c->data + c->off, c->len - c->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			exit(0);	/* that side is gone: so are we */
		if ((c->off += (size_t)n) < c->len)
			continue;
		w->head = c->next;
		if (w->head == NULL)
			w->tail = NULL;
		free(c);
	}
}

int
main(void)
{
	const char	*agent = getenv("LAGGED_AGENT"), *ms = getenv("LAGGED_MS");
	char		*argv[] = { "dtrun-agent", NULL };
	struct way	 w[2];
	struct pollfd	 pf[2];
	long		 lag = ms != NULL ? atol(ms) : 0;
	long long	 t, next;
	int		 sv[2], i, st, timeout;
	pid_t		 pid;

	if (agent == NULL) {
		fprintf(stderr, "lagged: set LAGGED_AGENT to dtrun-agent\n");
		return 70;
	}
	if (lag <= 0) {
		execv(agent, argv);
		return 127;
	}
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return 70;
	if ((pid = fork()) == 0) {
		dup2(sv[1], 0);
		dup2(sv[1], 1);
		close(sv[0]);
		close(sv[1]);
		execv(agent, argv);
		_exit(127);
	}
	close(sv[1]);
	memset(w, 0, sizeof(w));
	w[0].in = 0;			/* dtrun -> agent */
	w[0].out = sv[0];
	w[1].in = sv[0];		/* agent -> dtrun */
	w[1].out = 1;
	while (!(w[0].eof && w[0].head == NULL) ||
	    !(w[1].eof && w[1].head == NULL)) {
		t = now_ms();
		next = -1;
		for (i = 0; i < 2; i++) {
			way_write(&w[i], t);
			if (w[i].eof && w[i].head == NULL && w[i].out == sv[0])
				shutdown(sv[0], SHUT_WR);
			if (w[i].head != NULL && (next < 0 ||
			    w[i].head->due < next))
				next = w[i].head->due;
			pf[i].fd = w[i].eof ? -1 : w[i].in;
			pf[i].events = POLLIN;
		}
		if (w[1].eof && w[1].head == NULL)
			break;		/* the agent is done: dtrun sees EOF */
		timeout = next < 0 ? -1 : (int)(next > t ? next - t : 0);
		if (poll(pf, 2, timeout) < 0 && errno != EINTR)
			return 70;
		for (i = 0; i < 2; i++)
			if (pf[i].fd >= 0 && (pf[i].revents & (POLLIN | POLLHUP |
			    POLLERR)))
				way_read(&w[i], lag);
	}
	close(sv[0]);
	close(1);
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
