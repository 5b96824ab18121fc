/*
 * tunnel.c -- a jump host's tunnel: a direct-tcpip channel of the jump
 * host's ssh session, seen by the next host's libssh2 session as a socket
 * (one end of a socket pair). (A ProxyCommand is the other way to reach a
 * host: proxycmd.c.)
 *
 * The tunnel pumps bytes between its end of the pair and the channel,
 * never blocking, at most a buffer each way: when one side does not take
 * bytes, the other is no longer read (the ssh window then stops the far
 * side). EOF travels both ways; when the session end has closed, the
 * channel is closed and the tunnel is finished.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/err.h"
#include "launcher/backend/ssh2lib.h"
#include "launcher/backend/tunnel.h"
#include "util/xmalloc.h"

#define TUNNEL_BUF	(32 * 1024)

struct tunnel {
	LIBSSH2_SESSION	*s;
	LIBSSH2_CHANNEL	*ch;
	int		 fd;		/* our end of the pair */
	struct event	*ev;
	void		(*cb)(void *);
	void		*arg;
	unsigned char	 to_ch[TUNNEL_BUF];	/* read from fd */
	size_t		 nch;
	unsigned char	 to_fd[TUNNEL_BUF];	/* read from the channel */
	size_t		 ofd, nfd;
	int		 fd_eof;	/* the session end closed */
	int		 ch_eof;	/* the channel sent EOF */
	int		 eof_sent;	/* EOF passed on to the channel */
	int		 wr_shut;	/* EOF passed on to fd */
};

/* ARGSUSED */
static void
tunnel_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tunnel	*t = arg;

	t->cb(t->arg);
}

/* A tunnel from a new socket pair to ch; see tunnel.h. */
struct tunnel *
tunnel_new(struct event_base *base, LIBSSH2_SESSION *s, LIBSSH2_CHANNEL *ch,
    int *fd, void (*cb)(void *), void *arg)
{
	struct tunnel	*t;
	int		 sp[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sp) == -1)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->s = s;
	t->ch = ch;
	t->fd = sp[1];
	t->cb = cb;
	t->arg = arg;
	t->ev = event_new(base, t->fd, 0, tunnel_ev_cb, t);
	*fd = sp[0];
	return t;
}

/* Waits for t's end to take or give bytes, as far as the buffers allow. */
static void
tunnel_arm(struct tunnel *t)
{
	short	what = 0;

	if (!t->fd_eof && t->nch < sizeof(t->to_ch))
		what |= EV_READ;
	if (!t->fd_eof && t->nfd > 0)
		what |= EV_WRITE;
	event_del(t->ev);
	if (what != 0) {
		event_assign(t->ev, event_get_base(t->ev), t->fd, what,
		    tunnel_ev_cb, t);
		event_add(t->ev, NULL);
	}
}

/* Fills e with the last libssh2 error of ch's session, as "WHAT: MESSAGE"; DT_ERR_IO. */
static int
tunnel_error(struct tunnel *t, const char *what, struct dt_err *e)
{
	char	*m = NULL;

	libssh2_session_last_error(t->s, &m, NULL, 0);
	return dt_errf(e, NULL, 0, 0, DT_ERR_IO, "%s: %s", what,
	    m != NULL && *m ? m : "error");
}

/* Channel to fd; 1 if it moved bytes, DT_ERR_IO on a channel error. */
static int
tunnel_down(struct tunnel *t, struct dt_err *e)
{
	ssize_t	n;
	int	progress = 0;

	for (;;) {
		if (t->nfd > 0) {
			/* No SIGPIPE when the session end has gone. */
			n = send(t->fd, t->to_fd + t->ofd, t->nfd,
			    MSG_NOSIGNAL);
			if (n > 0) {
				t->ofd += n;
				t->nfd -= n;
				progress = 1;
				continue;
			}
			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			/* The session end is gone: nobody to tell. */
			t->fd_eof = 1;
			t->nfd = 0;
			break;
		}
		if (t->ch_eof || t->fd_eof)
			break;
		t->ofd = 0;
		n = libssh2_channel_read(t->ch, (char *)t->to_fd,
		    sizeof(t->to_fd));
		if (n > 0) {
			t->nfd = n;
			progress = 1;
			continue;
		}
		if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
			return tunnel_error(t,
			    "reading the forwarded connection", e);
		}
		if (libssh2_channel_eof(t->ch)) {
			t->ch_eof = 1;
			progress = 1;
		}
		break;
	}
	if (t->ch_eof && t->nfd == 0 && !t->wr_shut && !t->fd_eof) {
		shutdown(t->fd, SHUT_WR);
		t->wr_shut = 1;
	}
	return progress;
}

/* Fd to channel; 1 if it moved bytes, DT_ERR_IO on a channel error. */
static int
tunnel_up(struct tunnel *t, struct dt_err *e)
{
	ssize_t	n;
	int	progress = 0;

	for (;;) {
		if (t->nch > 0) {
			n = libssh2_channel_write(t->ch, (char *)t->to_ch,
			    t->nch);
			if (n > 0) {
				memmove(t->to_ch, t->to_ch + n, t->nch - n);
				t->nch -= n;
				progress = 1;
				continue;
			}
			if (n == LIBSSH2_ERROR_EAGAIN)
				break;
			return tunnel_error(t,
			    "writing to the forwarded connection", e);
		}
		if (t->fd_eof)
			break;
		n = read(t->fd, t->to_ch + t->nch, sizeof(t->to_ch) - t->nch);
		if (n > 0) {
			t->nch += n;
			progress = 1;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		t->fd_eof = 1;		/* closed, or reset: the same to us */
		progress = 1;
		break;
	}
	return progress;
}

/* Moves bytes both ways; at the session end's close, closes the channel. */
int
tunnel_pump(struct tunnel *t, struct dt_err *e)
{
	int	down, up, rc;

	dt_err_clear(e);
	if (t->ch == NULL)
		return DT_ERR_CLOSED;
	if ((down = tunnel_down(t, e)) < 0 ||
	    (up = tunnel_up(t, e)) < 0) {
		event_del(t->ev);
		return e->code;
	}
	if (t->fd_eof) {
		/* The session is gone: its last bytes, EOF, then close. */
		event_del(t->ev);
		if (t->nch > 0)
			return down | up;
		if (!t->eof_sent) {
			rc = libssh2_channel_send_eof(t->ch);
			if (rc == LIBSSH2_ERROR_EAGAIN)
				return down | up;
			t->eof_sent = 1;
		}
		rc = libssh2_channel_close(t->ch);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return down | up;
		libssh2_channel_free(t->ch);
		t->ch = NULL;
		return DT_ERR_CLOSED;
	}
	tunnel_arm(t);
	return down | up;
}

/* Whether the channel has sent EOF. */
int
tunnel_eof(struct tunnel *t)
{
	return t->ch_eof;
}

/* Whether the session holds what tunnel_pump would move now. */
int
tunnel_held(struct tunnel *t)
{
	if (t == NULL || t->ch == NULL || t->nfd > 0 || t->ch_eof ||
	    t->fd_eof)
		return 0;
	return libssh2_poll_channel_read(t->ch, 0) > 0 ||
	    libssh2_channel_eof(t->ch) > 0;
}

/* Frees t and its channel. */
void
tunnel_free(struct tunnel *t)
{
	if (t == NULL)
		return;
	/* Non-blocking, an EAGAIN leaves it to libssh2_session_free. */
	if (t->ch != NULL)
		libssh2_channel_free(t->ch);
	event_free(t->ev);
	close(t->fd);
	free(t);
}
