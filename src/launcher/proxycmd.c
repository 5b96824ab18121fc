/*
 * proxy.c -- a ProxyCommand, or a tunnel through a jump host's channel,
 * each seen by libssh2 as a socket: one end of a socket pair.
 *
 * The command is a child like tmux's jobs: started in its own process
 * group (a terminal's Ctrl-C is dtrun's to handle), its stderr logged line
 * by line under the host's name, killed and reaped when its host ends.
 *
 * The tunnel pumps bytes between its end of the pair and a direct-tcpip
 * channel, never blocking, at most a buffer each way: when one side does
 * not take bytes, the other is no longer read (the ssh window then stops
 * the far side). EOF travels both ways; when the session end has closed,
 * the channel is closed and the tunnel is finished.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "child.h"
#include "err.h"
#include "log.h"
#include "proxycmd.h"
#include "ssh2lib.h"
#include "sys.h"
#include "xmalloc.h"

extern char	**environ;

#define TUNNEL_BUF	(32 * 1024)

struct proxy_cmd {
	char		*name;
	pid_t		 pid;
	int		 reaped, status;
	int		 errfd;
	struct event	*ev;
	struct evbuffer	*err;
};

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

/* Logs the command's stderr lines, escaped, under its host's name. */
static void
proxy_cmd_lines(struct proxy_cmd *p, int all)
{
	char	*line, esc[1024];
	size_t	 n;

	while ((line = evbuffer_readln(p->err, &n, EVBUFFER_EOL_LF)) != NULL ||
	    (all && (line = evbuffer_readln(p->err, &n, EVBUFFER_EOL_ANY)) !=
	    NULL)) {
		log_error("%s: ProxyCommand: %s", p->name,
		    log_escape(esc, sizeof(esc), line));
		free(line);
	}
	if (all && evbuffer_get_length(p->err) > 0) {
		evbuffer_add(p->err, "", 1);
		log_error("%s: ProxyCommand: %s", p->name, log_escape(esc,
		    sizeof(esc), (char *)evbuffer_pullup(p->err, -1)));
		evbuffer_drain(p->err, evbuffer_get_length(p->err));
	}
}

/* Reads what the command wrote to its stderr. */
static void
proxy_cmd_read(struct proxy_cmd *p)
{
	int	n;

	if (p->errfd < 0)
		return;
	while ((n = evbuffer_read(p->err, p->errfd, 4096)) > 0)
		;
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		proxy_cmd_lines(p, 0);
		return;
	}
	proxy_cmd_lines(p, 1);
	event_del(p->ev);
	close(p->errfd);
	p->errfd = -1;
}

/* ARGSUSED */
static void
proxy_cmd_err_cb(evutil_socket_t fd, short what, void *arg)
{
	proxy_cmd_read(arg);
}

int
proxy_cmd_start(struct event_base *base, const char *name, const char *cmd,
    int *fd, struct proxy_cmd **out, struct dt_err *e)
{
	struct proxy_cmd *p;
	int		 sp[2], ep[2], rc;
	char		*line, *argv[4];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "socketpair: %s",
		    strerror(errno));
	if (pipe2(ep, O_CLOEXEC) == -1) {
		rc = errno;
		close(sp[0]);
		close(sp[1]);
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "pipe: %s",
		    strerror(rc));
	}
	/* As ssh does: exec, so the command is the process we kill. */
	xasprintf(&line, "exec %s", cmd);
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = line;
	argv[3] = NULL;
	p = xcalloc(1, sizeof(*p));
	rc = child_spawn(&p->pid, "/bin/sh", argv, environ, sp[1], sp[1],
	    ep[1]);
	free(line);
	close(sp[1]);
	close(ep[1]);
	if (rc != 0) {
		close(sp[0]);
		close(ep[0]);
		free(p);
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot run the "
		    "ProxyCommand: /bin/sh: %s", strerror(rc));
	}
	p->name = xstrdup(name);
	p->errfd = ep[0];
	dt_set_nonblock(ep[0]);
	dt_set_nonblock(sp[0]);
	p->err = evbuffer_new();
	p->ev = event_new(base, ep[0], EV_READ | EV_PERSIST, proxy_cmd_err_cb,
	    p);
	event_add(p->ev, NULL);
	*fd = sp[0];
	*out = p;
	return 0;
}

int
proxy_cmd_reaped(struct proxy_cmd *p, pid_t pid, int status)
{
	if (p == NULL || p->reaped || pid != p->pid)
		return 0;
	p->reaped = 1;
	p->status = status;
	return 1;
}

/* Reaps p if it has exited; 1 once reaped. */
static int
proxy_cmd_poll(struct proxy_cmd *p)
{
	if (!p->reaped && waitpid(p->pid, &p->status, WNOHANG) == p->pid)
		p->reaped = 1;
	return p->reaped;
}

int
proxy_cmd_ended(struct proxy_cmd *p, int fd, char *buf, size_t len)
{
	struct timespec	ts = { 0, 1000 * 1000 };
	char		c;
	int		i;

	if (p == NULL)
		return 0;
	/* Its socket at EOF: the exit follows within moments. */
	if (!p->reaped && recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		for (i = 0; i < 500 && !proxy_cmd_poll(p); i++)
			nanosleep(&ts, NULL);
	if (!proxy_cmd_poll(p))
		return 0;
	proxy_cmd_read(p);	/* its last words first */
	if (WIFSIGNALED(p->status))
		snprintf(buf, len, "was killed by signal %d",
		    WTERMSIG(p->status));
	else
		snprintf(buf, len, "exited with status %d",
		    WEXITSTATUS(p->status));
	return 1;
}

void
proxy_cmd_free(struct proxy_cmd *p)
{
	struct timespec	ts = { 0, 1000 * 1000 };
	int		i;

	if (p == NULL)
		return;
	if (!proxy_cmd_poll(p)) {
		kill(-p->pid, SIGTERM);
		for (i = 0; i < 200 && !proxy_cmd_poll(p); i++)
			nanosleep(&ts, NULL);
		if (!p->reaped) {
			kill(-p->pid, SIGKILL);
			waitpid(p->pid, &p->status, 0);
			p->reaped = 1;
		}
	}
	/* What the command left in its group (a pipeline's other half). */
	kill(-p->pid, SIGKILL);
	proxy_cmd_read(p);
	if (p->errfd >= 0)
		close(p->errfd);
	event_free(p->ev);
	evbuffer_free(p->err);
	free(p->name);
	free(p);
}

/* ARGSUSED */
static void
tunnel_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tunnel	*t = arg;

	t->cb(t->arg);
}

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

/* The last libssh2 error of ch's session, as "WHAT: MESSAGE". */
static void
tunnel_error(struct tunnel *t, const char *what, char *why, size_t len)
{
	char	*m = NULL;

	libssh2_session_last_error(t->s, &m, NULL, 0);
	snprintf(why, len, "%s: %s", what, m != NULL && *m ? m : "error");
}

/* Channel to fd; 1 if it moved bytes, -1 on a channel error. */
static int
tunnel_down(struct tunnel *t, char *why, size_t len)
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
			tunnel_error(t, "reading the forwarded connection",
			    why, len);
			return -1;
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

/* Fd to channel; 1 if it moved bytes, -1 on a channel error. */
static int
tunnel_up(struct tunnel *t, char *why, size_t len)
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
			tunnel_error(t, "writing to the forwarded connection",
			    why, len);
			return -1;
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

int
tunnel_pump(struct tunnel *t, char *why, size_t len)
{
	int	down, up, rc;

	why[0] = '\0';
	if (t->ch == NULL)
		return -1;
	if ((down = tunnel_down(t, why, len)) < 0 ||
	    (up = tunnel_up(t, why, len)) < 0) {
		event_del(t->ev);
		return -1;
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
		return -1;
	}
	tunnel_arm(t);
	return down | up;
}

int
tunnel_eof(struct tunnel *t)
{
	return t->ch_eof;
}

int
tunnel_held(struct tunnel *t)
{
	if (t == NULL || t->ch == NULL || t->nfd > 0 || t->ch_eof ||
	    t->fd_eof)
		return 0;
	return libssh2_poll_channel_read(t->ch, 0) > 0 ||
	    libssh2_channel_eof(t->ch) > 0;
}

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
