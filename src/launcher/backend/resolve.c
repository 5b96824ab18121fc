/*
 * resolve.c -- getaddrinfo() in a thread, answered through the event loop.
 *
 * Each lookup has its own pipe: the thread fills in its struct resolve,
 * then writes one byte; the loop's read event hands the answer over and
 * frees everything. The callback, cancelling and freeing all happen in the
 * loop's thread, so no lock is needed. A cancelled lookup cannot be stopped
 * inside getaddrinfo(): it finishes, and the loop frees it unseen. (No
 * state is kept per process: an event base freed and another allocated at
 * the same address must never find a stale event.)
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "launcher/backend/resolve.h"
#include "util/xmalloc.h"

struct resolve {
	char		*host, *port;
	resolve_cb	*cb;
	void		*arg;
	int		 cancelled;
	int		 fd[2];		/* the thread writes one byte when done */
	struct event	*ev;
	int		 rc;		/* written by the thread, read after the pipe */
	struct addrinfo	*ai;
};

static void
lookup(struct resolve *r, int flags)
{
	struct addrinfo	hints;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = flags;
	r->ai = NULL;
	r->rc = getaddrinfo(r->host, r->port, &hints, &r->ai);
}

/* In the loop: hands r's result over, or drops it if nobody wants it. */
static void
finish(struct resolve *r)
{
	if (!r->cancelled)
		r->cb(r->rc, r->ai, r->arg);
	else if (r->rc == 0)
		freeaddrinfo(r->ai);
	if (r->ev != NULL)
		event_free(r->ev);
	if (r->fd[0] >= 0)
		close(r->fd[0]);
	if (r->fd[1] >= 0)
		close(r->fd[1]);
	free(r->host);
	free(r->port);
	free(r);
}

/* ARGSUSED */
static void
done_cb(evutil_socket_t fd, short what, void *arg)
{
	finish(arg);
}

static void *
thread_main(void *arg)
{
	struct resolve	*r = arg;
	ssize_t		 n;
	char		 c = 0;

	lookup(r, 0);
	do
		n = write(r->fd[1], &c, 1);
	while (n == -1 && errno == EINTR);
	return NULL;
}

/* Runs the lookup in a thread; -1 if no pipe or thread could be had. */
static int
spawn(struct event_base *base, struct resolve *r)
{
	pthread_attr_t	at;
	pthread_t	tid;
	sigset_t	all, old;
	int		rc;

	if (pipe2(r->fd, O_CLOEXEC) == -1) {
		r->fd[0] = r->fd[1] = -1;
		return -1;
	}
	r->ev = event_new(base, r->fd[0], EV_READ, done_cb, r);
	if (r->ev == NULL || event_add(r->ev, NULL) == -1)
		return -1;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	/* Signals are the loop's business, never the resolver's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&tid, &at, thread_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	if (rc != 0) {
		event_free(r->ev);
		r->ev = NULL;
		return -1;
	}
	return 0;
}

struct resolve *
resolve_start(struct event_base *base, const char *host, const char *port,
    resolve_cb *cb, void *arg)
{
	struct resolve	*r;
	struct timeval	 now = { 0, 0 };

	r = xcalloc(1, sizeof(*r));
	r->host = xstrdup(host);
	r->port = xstrdup(port);
	r->cb = cb;
	r->arg = arg;
	r->fd[0] = r->fd[1] = -1;
	lookup(r, AI_NUMERICHOST);
	if (r->rc == 0 || spawn(base, r) == -1) {
		/* A number, or no thread: answer from here, on the next turn. */
		if (r->rc != 0)
			lookup(r, 0);
		event_base_once(base, -1, EV_TIMEOUT, done_cb, r, &now);
	}
	return r;
}

void
resolve_cancel(struct resolve *r)
{
	if (r != NULL)
		r->cancelled = 1;
}
