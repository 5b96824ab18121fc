/*
 * sshhold.c -- an LD_PRELOAD library for tests: dtrun's libssh2 is made to
 * hold the agent's bytes with nothing left on the socket, the moment that
 * stalled the ssh launcher at 64 hosts, on demand instead of 2% of runs.
 *
 * Every libssh2 call reads the socket dry and keeps the whole packets it
 * found, whatever the call was for. Before the call DT_TEST_SSH_HOLD names
 * ("stderr": a read of a channel's stderr, as the launcher does after its
 * link's reads; "write": a write to a channel), this library waits until
 * the session's socket is readable (at most DT_TEST_SSH_HOLD_MS, default
 * 5000) and 100 ms more, so that the call itself takes the agent's next
 * packets off the socket, as a call made just after they arrived would. A
 * launcher that then waits on the socket for them waits for good (with
 * heartbeats off). It holds DT_TEST_SSH_HOLD_N times (default 1), and only
 * once the file DT_TEST_SSH_HOLD_ARM exists when that is set. It appends
 * "holding CALL" to the file DT_TEST_SSH_HOLD_LOG (when set) as it starts
 * to wait, so a test can make the agent speak only then, and "held CALL"
 * once the bytes came.
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libssh2.h>

#define MAXS	64

typedef int		 (*handshake_fn)(LIBSSH2_SESSION *, libssh2_socket_t);
typedef LIBSSH2_CHANNEL	*(*open_fn)(LIBSSH2_SESSION *, const char *,
			    unsigned int, unsigned int, unsigned int,
			    const char *, unsigned int);
typedef ssize_t		 (*read_fn)(LIBSSH2_CHANNEL *, int, char *, size_t);
typedef ssize_t		 (*write_fn)(LIBSSH2_CHANNEL *, int, const char *,
			    size_t);

/* Sessions and their sockets; channels and their sessions. */
static struct { LIBSSH2_SESSION *s; int fd; } sess[MAXS];
static struct { LIBSSH2_CHANNEL *ch; LIBSSH2_SESSION *s; } chans[MAXS];
static int	held;

/* The real libssh2 function called name. */
static void *
real(const char *name)
{
	void	*f = dlsym(RTLD_NEXT, name);

	if (f == NULL)
		abort();
	return f;
}

/* The socket under ch's session, or -1. */
static int
chan_fd(LIBSSH2_CHANNEL *ch)
{
	int	i, j;

	for (i = 0; i < MAXS; i++)
		if (chans[i].ch == ch)
			for (j = 0; j < MAXS; j++)
				if (sess[j].s == chans[i].s)
					return sess[j].fd;
	return -1;
}

/* Appends "what call" to DT_TEST_SSH_HOLD_LOG, if set. */
static void
say(const char *what, const char *call)
{
	const char	*path = getenv("DT_TEST_SSH_HOLD_LOG");
	FILE		*f;

	if (path != NULL && (f = fopen(path, "a")) != NULL) {
		fprintf(f, "%s %s\n", what, call);
		fclose(f);
	}
}

/* Waits for ch's socket to bring bytes, when this call is the one to hold. */
static void
hold(LIBSSH2_CHANNEL *ch, const char *call)
{
	const char	*mode = getenv("DT_TEST_SSH_HOLD");
	const char	*arm = getenv("DT_TEST_SSH_HOLD_ARM");
	const char	*v;
	struct pollfd	 p;
	int		 n, ms;

	if (mode == NULL || strcmp(mode, call) != 0)
		return;
	n = (v = getenv("DT_TEST_SSH_HOLD_N")) != NULL ? atoi(v) : 1;
	ms = (v = getenv("DT_TEST_SSH_HOLD_MS")) != NULL ? atoi(v) : 5000;
	if (held >= n || (arm != NULL && access(arm, F_OK) != 0))
		return;
	if ((p.fd = chan_fd(ch)) < 0)
		return;
	p.events = POLLIN;
	say("holding", call);
	if (poll(&p, 1, ms) == 1 && (p.revents & POLLIN)) {
		usleep(100 * 1000);
		held++;
		say("held", call);
	}
}

int
libssh2_session_handshake(LIBSSH2_SESSION *s, libssh2_socket_t fd)
{
	int	i;

	for (i = 0; i < MAXS; i++)
		if (sess[i].s == NULL || sess[i].s == s) {
			sess[i].s = s;
			sess[i].fd = fd;
			break;
		}
	return ((handshake_fn)real("libssh2_session_handshake"))(s, fd);
}

LIBSSH2_CHANNEL *
libssh2_channel_open_ex(LIBSSH2_SESSION *s, const char *type,
    unsigned int tlen, unsigned int win, unsigned int pkt, const char *msg,
    unsigned int mlen)
{
	LIBSSH2_CHANNEL	*ch;
	int		 i;

	ch = ((open_fn)real("libssh2_channel_open_ex"))(s, type, tlen, win,
	    pkt, msg, mlen);
	for (i = 0; ch != NULL && i < MAXS; i++)
		if (chans[i].ch == NULL || chans[i].ch == ch) {
			chans[i].ch = ch;
			chans[i].s = s;
			break;
		}
	return ch;
}

ssize_t
libssh2_channel_read_ex(LIBSSH2_CHANNEL *ch, int stream, char *buf,
    size_t len)
{
	if (stream == SSH_EXTENDED_DATA_STDERR)
		hold(ch, "stderr");
	return ((read_fn)real("libssh2_channel_read_ex"))(ch, stream, buf,
	    len);
}

ssize_t
libssh2_channel_write_ex(LIBSSH2_CHANNEL *ch, int stream, const char *buf,
    size_t len)
{
	hold(ch, "write");
	return ((write_fn)real("libssh2_channel_write_ex"))(ch, stream, buf,
	    len);
}
