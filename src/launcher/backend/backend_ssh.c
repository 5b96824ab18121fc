/*
 * backend_ssh.c -- agents on other hosts, reached over ssh with libssh2 in
 * non-blocking mode inside the job's one event loop.
 *
 * Per host: TCP connect, handshake, host key check against known_hosts,
 * public-key auth (ssh-agent, then -i/IdentityFile keys, then the default
 * keys; both in sshauth.c), then one channel running the agent (sshstart.c); the agent protocol flows over
 * its stdin/stdout and the agent's own complaints over its stderr. When an
 * operation says EAGAIN, we wait on the socket in the direction
 * libssh2_session_block_directions() names, then run the state machine
 * again. At most --ssh-fanout hosts are connecting at once.
 *
 * A host behind jump hosts (ProxyJump, -J) is reached through a chain of
 * connections of the same kind, each checked and authenticated like any
 * host (sshjump.c): the last opens a direct-tcpip channel to the host, and a tunnel
 * (tunnel.c) pumps it to one end of a socket pair, which is the host's
 * session's socket. Each host has its own chain, as ssh -J has: one session
 * carries one channel, so no write of one host's tunnel waits behind
 * another's (libssh2 cannot interleave partial writes of two channels),
 * and the fan-out slot bounds the connections a jump host sees at once. A
 * ProxyCommand (proxycmd.c) runs with the other end of a socket pair as
 * its stdin and stdout.
 *
 * The agent started is this build's exact dtrun-agent: the host's cache
 * (~/.cache/dtrun/ID/dtrun-agent) or a dtrun-agent on its PATH that prints
 * the same version. If neither is there the remote command exits 97, and
 * we upload ours over the same session (cat into a temp file, then rename)
 * and start it. The job's secret and environment travel inside the agent
 * protocol, never on a command line.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "launcher/backend/agentbin.h"
#include "launcher/cli/cli.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/job/job.h"
#include "common/link.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "launcher/backend/proxycmd.h"
#include "proto/agentproto.h"
#include "launcher/backend/resolve.h"
#include "common/sock.h"
#include "launcher/backend/ssh2lib.h"
#include "launcher/backend/sshauth.h"
#include "launcher/cli/sshconf.h"
#include "launcher/backend/sshint.h"
#include "util/strv.h"
#include "launcher/backend/tunnel.h"
#include "util/xmalloc.h"

#define FANOUT_DEFAULT	64

static struct {
	int		 init;
	int		 active;	/* connections holding a fan-out slot */
	int		 fanout;
	struct sshc	**queue;
	size_t		 nqueue, qhead;
} g;


/* Fails the connection: tells the job once, with the host named. */
void
sshc_fail(struct sshc *c, int code, const char *fmt, ...)
{
	char	msg[1024], how[64], full[1400];
	va_list	ap;

	if (c->st == SS_DEAD)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* A link that broke first is the cause of the error it made. */
	if (c->proxy != NULL && proxy_cmd_ended(c->proxy, c->fd, how,
	    sizeof(how)))
		snprintf(full, sizeof(full), "the ProxyCommand \"%s\" %s (%s)",
		    c->t.proxy_command, how, msg);
	else if (c->jump != NULL && c->jump->tun != NULL &&
	    tunnel_eof(c->jump->tun))
		snprintf(full, sizeof(full), "%s closed the connection to %s "
		    "port %d (%s)", c->jump->name, c->t.hostname, c->t.port,
		    msg);
	else
		snprintf(full, sizeof(full), "%s", msg);
	c->st = SS_DEAD;
	resolve_cancel(c->rs);
	c->rs = NULL;
	if (c->ev != NULL)
		event_del(c->ev);
	if (c->timer != NULL)
		event_del(c->timer);
	if (c->slot) {
		c->slot = 0;
		g.active--;
	}
	if (c->h != NULL)
		job_host_closed(c->h, code, full);
	else if (c->child != NULL && strncmp(full, "jump host ", 10) == 0)
		sshc_fail(c->child, code, "%s", full);	/* names its hop */
	else if (c->child != NULL)
		sshc_fail(c->child, code, "%s: %s", c->name, full);
}

/* The last libssh2 error, as text. */
const char *
ssh_errmsg(struct sshc *c)
{
	return ssh2lib_errmsg(c->s);
}

/* ARGSUSED */
static void
sshc_ev_cb(evutil_socket_t fd, short what, void *arg)
{
	sshc_step(arg);
}

/*
 * Whether libssh2 already holds something c's state would take now: data
 * for the channel it reads, or (running) that channel's end. Every libssh2
 * call reads the socket dry, a write's and a stderr read's too, and keeps
 * the whole packets it found, so those bytes may be waiting with nothing
 * left on the socket to wake us. Not while a packet waits to go out:
 * libssh2 sends it before it reads again, and EV_WRITE wakes us for it.
 */
static int
sshc_held(struct sshc *c)
{
	LIBSSH2_CHANNEL	*ch;

	if (c->s == NULL || (libssh2_session_block_directions(c->s) &
	    LIBSSH2_SESSION_BLOCK_OUTBOUND))
		return 0;
	switch (c->st) {
	case SS_PROBE:
		ch = c->ch;
		break;
	case SS_UP_WAIT:
		ch = c->up;
		break;
	case SS_RUNNING:
		if (c->link == NULL || link_paused(c->link) ||
		    link_closed(c->link))
			return 0;
		/* The end of the stream too: the link must hear it. */
		if (libssh2_channel_eof(c->ch) > 0)
			return 1;
		ch = c->ch;
		break;
	case SS_JUMP:
		return tunnel_held(c->tun);
	default:
		return 0;
	}
	/* Data on either stream: stdout is the link's, stderr is logged. */
	return ch != NULL && libssh2_poll_channel_read(ch, 1) > 0;
}

/*
 * Waits on the socket, then steps again: for what (EV_READ/EV_WRITE) when
 * given, else in the directions libssh2 says it is blocked on. Steps again
 * at once instead when libssh2 holds what c waits for, or the link asked
 * to move bytes while c was stepping: no new byte on the socket would
 * come to wake c for either.
 */
void
sshc_arm(struct sshc *c, short what)
{
	int	dirs;

	if (what == 0 && c->s != NULL) {
		dirs = libssh2_session_block_directions(c->s);
		if (dirs & LIBSSH2_SESSION_BLOCK_INBOUND)
			what |= EV_READ;
		if (dirs & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			what |= EV_WRITE;
	}
	/* A running channel must always hear the agent, unless paused. */
	if ((c->st == SS_RUNNING && !link_paused(c->link)) ||
	    c->st == SS_JUMP)
		what |= EV_READ;
	if (what == 0)
		what = EV_READ;
	event_del(c->ev);
	event_assign(c->ev, c->base, c->fd, what, sshc_ev_cb, c);
	event_add(c->ev, NULL);
	if (c->kicked || sshc_held(c)) {
		c->kicked = 0;
		event_active(c->ev, EV_READ, 0);
	}
}

/* The first bytes of what c's remote command sent and the link did not take, printable, for a message. */
static void
sshc_junk(struct sshc *c, char *buf, size_t len)
{
	unsigned char	p[40];
	size_t		n, i, o = 0;

	if (c->link == NULL || (n = link_peek(c->link, p, sizeof(p))) == 0)
		n = evbuffer_copyout(c->in, p, sizeof(p)) > 0 ?
		    evbuffer_get_length(c->in) : 0;
	for (i = 0; i < n && i < 40 && o + 5 < len; i++) {
		if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' &&
		    p[i] != '\\')
			buf[o++] = p[i];
		else
			o += snprintf(buf + o, len - o, "\\x%02x", p[i]);
	}
	buf[o] = '\0';
}

/* ARGSUSED */
static void
sshc_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sshc	*c = arg;
	static const char *const what_s[] = {
		[SS_QUEUED] = "waiting", [SS_RESOLVE] = "looking up the name",
		[SS_CONNECT] = "connecting",
		[SS_TUNNEL] = "waiting for its jump host",
		[SS_HANDSHAKE] = "in the ssh handshake",
		[SS_AUTH] = "authenticating", [SS_OPEN] = "opening a channel",
		[SS_EXEC] = "starting the agent",
		[SS_PROBE] = "starting the agent",
		[SS_UP_OPEN] = "uploading the agent",
		[SS_UP_EXEC] = "uploading the agent",
		[SS_UP_WRITE] = "uploading the agent",
		[SS_UP_EOF] = "uploading the agent",
		[SS_UP_WAIT] = "uploading the agent",
		[SS_FORWARD] = "opening a channel to the next host",
		[SS_JUMP] = "forwarding",
	};
	char		 junk[256];

	if (c->st == SS_DEAD || (c->st == SS_RUNNING && host_hello(c->h)))
		return;
	if (c->st == SS_RUNNING) {
		/* Output came, but not the agent's HELLO: say what it was. */
		sshc_junk(c, junk, sizeof(junk));
		sshc_fail(c, DT_ERR_TIMEOUT, "timed out after %g s waiting for "
		    "the agent's HELLO (ConnectTimeout); the remote command "
		    "sent \"%s\" instead (a login banner, or a ForceCommand?)",
		    c->t.connect_timeout, junk);
		return;
	}
	sshc_fail(c, DT_ERR_TIMEOUT, "timed out after %g s %s (ConnectTimeout)",
	    c->t.connect_timeout, what_s[c->st]);
}

/*
 * Bounds the phase c is now in by ConnectTimeout: armed afresh at every
 * new phase, from leaving the fan-out queue until the agent's HELLO.
 */
static void
sshc_phase(struct sshc *c)
{
	struct timeval	tv;

	if (c->st == c->timed || c->st == SS_QUEUED || c->st == SS_DEAD)
		return;
	c->timed = c->st;
	/* Behind jump hosts, each of them bounds its own phases. */
	if ((c->st == SS_RUNNING && host_hello(c->h)) || c->st == SS_TUNNEL ||
	    c->st == SS_JUMP) {
		event_del(c->timer);
		return;
	}
	tv.tv_sec = (time_t)c->t.connect_timeout;
	tv.tv_usec = (suseconds_t)((c->t.connect_timeout - tv.tv_sec) * 1e6);
	event_add(c->timer, &tv);
}

/* Starts queued connections while fan-out slots are free. */
static void
queue_kick(void)
{
	struct sshc	*c;

	while (g.qhead < g.nqueue && g.active < g.fanout) {
		c = g.queue[g.qhead++];
		if (c == NULL || c->st != SS_QUEUED)
			continue;
		c->slot = 1;
		g.active++;
		c->st = SS_CONNECT;
		sshc_step(c);
	}
}

/* Gives back c's fan-out slot. */
void
sshc_release(struct sshc *c)
{
	if (c->slot) {
		c->slot = 0;
		g.active--;
		queue_kick();
	}
}

/* Starts a non-blocking connect to the current address; 0, or -1 when none is left. */
static int
sshc_connect(struct sshc *c)
{
	int	inprogress;

	for (; c->ai_cur != NULL; c->ai_cur = c->ai_cur->ai_next) {
		if (c->fd >= 0)
			close(c->fd);
		if ((c->fd = sock_connect(c->ai_cur, &inprogress)) != -1)
			return 0;
	}
	return -1;
}

/* Collects the remote's stderr lines and logs them under the host's name. */
void
sshc_stderr(struct sshc *c, LIBSSH2_CHANNEL *ch)
{
	char		 buf[4096];
	ssize_t		 n;
	size_t		 len;
	char		*line;

	while ((n = libssh2_channel_read_stderr(ch, buf, sizeof(buf))) > 0) {
		if (c->st >= SS_UP_OPEN && c->st <= SS_UP_WAIT) {
			len = sizeof(c->up_err) - 1 - c->up_errlen;
			if ((size_t)n < len)
				len = n;
			memcpy(c->up_err + c->up_errlen, buf, len);
			c->up_errlen += len;
			continue;
		}
		evbuffer_add(c->err, buf, n);
		while ((line = evbuffer_readln(c->err, NULL,
		    EVBUFFER_EOL_LF)) != NULL) {
			log_error("%s: %s", c->t.alias, line);
			free(line);
		}
	}
}

/* Frames from the agent. */
static void
sshc_frame(void *arg, uint8_t type, const uint8_t *p, size_t n)
{
	struct sshc	*c = arg;

	job_host_frame(c->h, type, p, n);
	/* The agent is up: from here on the job's own bounds apply. */
	if (!c->dead && host_hello(c->h) && c->timer != NULL)
		event_del(c->timer);
}

/* The agent's link ended: its last complaints first, then why. */
static void
sshc_link_close(void *arg, int err, const char *why)
{
	struct sshc	*c = arg;
	char		 junk[256];

	if (c->dead || c->st == SS_DEAD)
		return;
	if (c->ch != NULL)
		sshc_stderr(c, c->ch);
	if (err == DT_ERR_PROTO && strcmp(why, LINK_TRUNCATED) == 0) {
		sshc_junk(c, junk, sizeof(junk));
		sshc_fail(c, DT_ERR_PROTO, "the ssh channel closed inside a "
		    "frame, after \"%s\"%s", junk, host_hello(c->h) ? "" :
		    " (a login banner, or a ForceCommand?)");
	} else if (err == 0) {
		c->st = SS_DEAD;
		event_del(c->ev);
		job_host_closed(c->h, 0, "the ssh channel closed");
	} else if (err == DT_ERR_CLOSED)
		sshc_fail(c, err, "%s", why);
	else
		sshc_fail(c, err, "agent: %s", why);
}

/* The link reads the channel: bytes read while probing first; EAGAIN until it runs. */
static ssize_t
sshc_io_read(void *arg, void *buf, size_t n)
{
	struct sshc	*c = arg;
	ssize_t		 r;

	if (c->st != SS_RUNNING) {
		errno = EAGAIN;
		return -1;
	}
	if (evbuffer_get_length(c->in) > 0)
		return evbuffer_remove(c->in, buf, n);
	r = libssh2_channel_read(c->ch, buf, n);
	if (r > 0)
		return r;
	/* 0 without EOF: only stderr or window news came. */
	if (r == 0 && libssh2_channel_eof(c->ch))
		return 0;
	if (r == 0 || r == LIBSSH2_ERROR_EAGAIN) {
		errno = EAGAIN;
		return -1;
	}
	snprintf(c->why, sizeof(c->why), "ssh: %s", ssh_errmsg(c));
	errno = EIO;
	return -1;
}

/* The link writes the channel; EAGAIN until it runs. */
static ssize_t
sshc_io_write(void *arg, const void *buf, size_t n)
{
	struct sshc	*c = arg;
	ssize_t		 r;

	if (c->st != SS_RUNNING) {
		errno = EAGAIN;
		return -1;
	}
	r = libssh2_channel_write(c->ch, buf, n);
	/*
	 * A write from outside a step (a frame sent because of another host,
	 * a signal, a timer) read the socket dry first: arm again, which
	 * looks at what libssh2 kept. Inside a step, the step arms at its end.
	 */
	if (c->busy == 0 && r != LIBSSH2_ERROR_EAGAIN && c->st == SS_RUNNING)
		sshc_arm(c, 0);
	if (r >= 0)
		return r;
	if (r == LIBSSH2_ERROR_EAGAIN) {
		errno = EAGAIN;
		return -1;
	}
	snprintf(c->why, sizeof(c->why), "ssh: %s", ssh_errmsg(c));
	errno = EPIPE;
	return -1;
}

/* The link has bytes to move: step now, or once the step under way arms at its end. */
static void
sshc_io_kick(void *arg)
{
	struct sshc	*c = arg;

	if (c->st != SS_RUNNING)
		return;
	if (c->busy == 0)
		sshc_step(c);
	else
		c->kicked = 1;
}

/* Why the channel broke, as the link reports it. */
static const char *
sshc_io_why(void *arg)
{
	struct sshc	*c = arg;

	return c->why[0] != '\0' ? c->why : "ssh: the channel broke";
}

/* RUNNING: the link moves the agent's bytes; the agent's stderr is logged. */
static void
sshc_run(struct sshc *c)
{
	c->kicked = 0;		/* this turn moves what the link asked to */
	link_io_ready(c->link);
	if (c->dead || c->st != SS_RUNNING)
		return;
	sshc_stderr(c, c->ch);
	if (c->st == SS_RUNNING)
		sshc_arm(c, 0);
}

/* Starts c's ssh session on c->fd; 0, or -1 (c failed). */
int
sshc_session_new(struct sshc *c)
{
	if ((c->s = libssh2_session_init_ex(NULL, NULL, NULL, c)) == NULL) {
		sshc_fail(c, DT_ERR_NOMEM, "out of memory");
		return -1;
	}
	libssh2_session_set_blocking(c->s, 0);
	c->st = SS_HANDSHAKE;
	return 0;
}

/* The name lookup is done: connect, or fail with its reason. */
static void
sshc_resolved(int rc, struct addrinfo *ai, void *arg)
{
	struct sshc	*c = arg;

	c->rs = NULL;
	if (rc == 0)
		c->ai = ai;
	else
		c->gai_rc = rc;
	c->st = SS_CONNECT;
	sshc_step(c);
}

/*
 * The states' steps: each does what its state needs and returns 1 to go
 * on with the state it moved c to, or 0 when c must wait (armed: an event
 * steps it again) or has failed.
 */

/* QUEUED, RESOLVE, TUNNEL, DEAD: something else steps c on. */
static int
sshc_st_wait(struct sshc *c)
{
	return 0;
}

/* Asks the resolver thread for c's address (once). */
static int
sshc_resolve(struct sshc *c)
{
	char	port[16];

	snprintf(port, sizeof(port), "%d", c->t.port);
	c->st = SS_RESOLVE;
	c->rs = resolve_start(c->base, c->t.hostname, port, sshc_resolved, c);
	return 0;
}

/* The TCP connect in progress finished: on to the next address, or the session. */
static int
sshc_connected(struct sshc *c)
{
	int	soerr = sock_connect_error(c->fd);

	if (soerr == EINPROGRESS) {
		sshc_arm(c, EV_WRITE);
		return 0;
	}
	if (soerr != 0) {
		c->ai_cur = c->ai_cur->ai_next;
		if (c->ai_cur != NULL && sshc_connect(c) == 0) {
			sshc_arm(c, EV_WRITE);
			return 0;
		}
		sshc_fail(c, DT_ERR_SYS, "cannot connect to %s port %d: %s",
		    c->t.hostname, c->t.port, strerror(soerr));
		return 0;
	}
	/*
	 * A host that vanishes without a word (power, a cut link) must not
	 * leave the job waiting forever: keepalives find the dead link, the
	 * read fails, and the job treats the host as lost.
	 * libssh2 writes a packet and its follower in two sends; with Nagle on,
	 * the second waits for the peer's delayed ACK (40 ms) at every step of
	 * the handshake, as OpenSSH's own client avoids with TCP_NODELAY.
	 */
	sock_keepalive(c->fd);
	sock_nodelay(c->fd);
	return sshc_session_new(c) == 0;
}

/* CONNECT: through the jump host, a ProxyCommand, or TCP to the resolved address. */
static int
sshc_st_connect(struct sshc *c)
{
	struct dt_err	e;

	if (c->jump != NULL) {
		/* Its jump host opens the way, then steps it. */
		c->st = SS_TUNNEL;
		c->jump->st = SS_CONNECT;
		sshc_step(c->jump);
		return 0;
	}
	if (c->t.proxy_command != NULL && c->proxy == NULL) {
		if (proxy_cmd_start(c->base, c->name, c->t.proxy_command,
		    &c->fd, &c->proxy, &e) != 0) {
			sshc_fail(c, e.code, "%s", e.msg);
			return 0;
		}
		log_debug("%s: ProxyCommand %s", c->name, c->t.proxy_command);
		return sshc_session_new(c) == 0;
	}
	if (c->ai == NULL && c->gai_rc == 0)
		return sshc_resolve(c);
	if (c->ai == NULL) {
		sshc_fail(c, DT_ERR_NOTFOUND, "cannot resolve %s: %s",
		    c->t.hostname, gai_strerror(c->gai_rc));
		return 0;
	}
	if (c->fd >= 0)
		return sshc_connected(c);
	c->ai_cur = c->ai;
	if (sshc_connect(c) != 0) {
		sshc_fail(c, DT_ERR_SYS, "connect: %s", strerror(errno));
		return 0;
	}
	sshc_arm(c, EV_WRITE);
	return 0;
}

/* HANDSHAKE: the ssh handshake, then the host key check. */
static int
sshc_st_handshake(struct sshc *c)
{
	struct dt_err	e;
	int		rc;

	rc = libssh2_session_handshake(c->s, c->fd);
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		sshc_arm(c, 0);
		return 0;
	}
	if (rc != 0) {
		sshc_fail(c, DT_ERR_PROTO, "ssh handshake failed: %s",
		    ssh_errmsg(c));
		return 0;
	}
	if ((rc = sshauth_hostkey(c->s, &c->t, &e)) != 0) {
		sshc_fail(c, rc, "%s", e.msg);
		return 0;
	}
	c->st = SS_AUTH;
	return 1;
}

/* AUTH: public-key auth (sshauth.h); then a channel for the agent, or (a jump host) onwards. */
static int
sshc_st_auth(struct sshc *c)
{
	struct dt_err	e;
	int		rc;

	if (c->auth == NULL)
		c->auth = sshauth_new(&c->t);
	if ((rc = sshauth_step(c->auth, c->s, &e)) == 0) {
		sshc_arm(c, 0);
		return 0;
	}
	if (rc < 0) {
		sshc_fail(c, rc, "%s", e.msg);
		return 0;
	}
	c->st = c->h != NULL ? SS_OPEN : SS_FORWARD;
	return 1;
}

/* RUNNING: the agent's link. */
static int
sshc_st_running(struct sshc *c)
{
	sshc_run(c);
	return 0;
}

/* Each state's step. */
static int (*const sshc_steps[])(struct sshc *) = {
	[SS_QUEUED] = sshc_st_wait,
	[SS_RESOLVE] = sshc_st_wait,
	[SS_CONNECT] = sshc_st_connect,
	[SS_TUNNEL] = sshc_st_wait,
	[SS_HANDSHAKE] = sshc_st_handshake,
	[SS_AUTH] = sshc_st_auth,
	[SS_OPEN] = sshc_st_open,
	[SS_EXEC] = sshc_st_exec,
	[SS_PROBE] = sshc_st_probe,
	[SS_UP_OPEN] = sshc_st_open,
	[SS_UP_EXEC] = sshc_st_up_exec,
	[SS_UP_WRITE] = sshc_st_up_write,
	[SS_UP_EOF] = sshc_st_up_eof,
	[SS_UP_WAIT] = sshc_st_up_wait,
	[SS_RUNNING] = sshc_st_running,
	[SS_FORWARD] = sshc_st_forward,
	[SS_JUMP] = sshc_st_jump,
	[SS_DEAD] = sshc_st_wait,
};

/* Runs c's state machine until it must wait. */
void
sshc_step(struct sshc *c)
{
	c->busy++;
	while (sshc_steps[c->st](c))
		;
	if (!c->dead)
		sshc_phase(c);
	c->busy--;
	if (c->dead && c->busy == 0) {
		/* freed during a callback: finish now */
		evbuffer_free(c->in);
		free(c);
	}
}

/* A connection, not started, on base. */
struct sshc *
sshc_new(struct event_base *base)
{
	struct sshc	*c = xcalloc(1, sizeof(*c));

	c->base = base;
	c->fd = -1;
	c->in = evbuffer_new();
	c->err = evbuffer_new();
	c->ev = event_new(base, -1, 0, sshc_ev_cb, c);
	c->timer = evtimer_new(base, sshc_timeout_cb, c);
	return c;
}

/* Logs what resolving a host found to warn about, and frees it. */
void
warnings_log(char **warn, size_t nwarn)
{
	size_t	i;

	for (i = 0; i < nwarn; i++) {
		log_warn("%s", warn[i]);
		free(warn[i]);
	}
	free(warn);
}

/*
 * Frees c's session, socket, proxy and events, then its jump hosts. The
 * socket is shut first, so that blocking libssh2 calls fail at once.
 */
static void
sshc_close(struct sshc *c)
{
	sshauth_free(c->auth);		/* its ssh-agent, before the session */
	c->auth = NULL;
	if (c->s != NULL) {
		/* Best effort: a blocking goodbye would hold up the exit. */
		libssh2_session_disconnect(c->s, "dtrun: job done");
		/*
		 * Non-blocking, session_free stops at EAGAIN and frees
		 * nothing. With the socket shut, blocking calls fail at once.
		 */
		if (c->fd >= 0)
			shutdown(c->fd, SHUT_RDWR);
		libssh2_session_set_blocking(c->s, 1);
		tunnel_free(c->tun);	/* its channel, before the session */
		c->tun = NULL;
		libssh2_session_free(c->s);
	}
	if (c->fd >= 0)
		close(c->fd);
	/* Its socket closed, a ProxyCommand may end by itself; else killed. */
	proxy_cmd_free(c->proxy);
	resolve_cancel(c->rs);
	if (c->ai != NULL)
		freeaddrinfo(c->ai);
	if (c->ev != NULL)
		event_free(c->ev);
	if (c->timer != NULL)
		event_free(c->timer);
	evbuffer_free(c->err);
	ssh_target_free(&c->t);
	if (c->jump != NULL) {
		sshc_close(c->jump);
		evbuffer_free(c->jump->in);
		free(c->jump);
		c->jump = NULL;
	}
}

static int
ssh_start(struct job_host *h, struct dt_err *e)
{
	struct sshc	 *c;
	char		**warn = NULL;
	size_t		  nwarn = 0;
	int		  rc;

	if (!g.init) {
		/* The first ssh host: only now is libssh2 loaded. */
		if ((rc = ssh2lib_load(e)) != 0)
			return rc;
		if (libssh2_init(0) != 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "libssh2 "
			    "will not start");
		g.init = 1;
		g.fanout = h->o->ssh.fanout > 0 ?
		    h->o->ssh.fanout : FANOUT_DEFAULT;
	}
	c = sshc_new(job_base(h));
	c->h = h;
	rc = ssh_resolve(&h->o->ssh, h->ph->name, h->ph->user,
	    h->ph->port, &c->t, &warn, &nwarn, e);
	warnings_log(warn, nwarn);
	if (rc == 0)
		rc = sshc_jumps(c, h->o, 0, e);
	/* The job's frames queue in the link until the channel runs. */
	if (rc == 0 && (c->link = link_new_io(job_base(h), &(struct link_io){
	    sshc_io_read, sshc_io_write, sshc_io_kick, sshc_io_why, c },
	    AP_FRAME_MAX, &(struct link_cbs){ sshc_frame, sshc_link_close,
	    NULL, c })) == NULL)
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	if (rc != 0) {
		sshc_close(c);
		evbuffer_free(c->in);
		free(c);
		return rc;
	}
	snprintf(c->name, sizeof(c->name), "%s", c->t.alias);
	h->priv = c;
	h->link = c->link;
	log_debug("%s: ssh %s@%s port %d", c->t.alias, c->t.user,
	    c->t.hostname, c->t.port);
	c->st = SS_QUEUED;
	g.queue = xreallocarray(g.queue, g.nqueue + 1, sizeof(*g.queue));
	g.queue[g.nqueue++] = c;
	queue_kick();
	return 0;
}

/* The kill op (job.h): drops h's connections; not dtrun-kill (killjob.c). */
static void
ssh_kill(struct job_host *h)
{
	struct sshc	*c;

	/*
	 * Dropping the connection makes the remote agent stop everything;
	 * behind jump hosts, dropping theirs makes each drop the next.
	 */
	for (c = h->priv; c != NULL; c = c->jump)
		if (c->fd >= 0)
			shutdown(c->fd, SHUT_RDWR);
}

static void
ssh_reaped(struct job_host *h, pid_t pid, int status)
{
	struct sshc	*c;

	for (c = h->priv; c != NULL; c = c->jump)
		if (proxy_cmd_reaped(c->proxy, pid, status))
			return;
}

/*
 * Takes c out of the fan-out queue and gives back its slot, so that a
 * later attempt (--max-restarts) starts from an empty queue.
 */
static void
ssh_unqueue(struct sshc *c)
{
	size_t	i;

	if (c->slot) {
		c->slot = 0;
		g.active--;
	}
	for (i = g.qhead; i < g.nqueue; i++)
		if (g.queue[i] == c)
			g.queue[i] = NULL;
	while (g.qhead < g.nqueue && g.queue[g.qhead] == NULL)
		g.qhead++;
	if (g.qhead == g.nqueue) {
		free(g.queue);
		g.queue = NULL;
		g.qhead = g.nqueue = 0;
	}
}

/*
 * The job stops while h still waits for a fan-out slot (--ssh-fanout):
 * it was never dialled, so nothing runs there and nothing will. Else its
 * agent is (or is being) reached, and hears STOP.
 */
static int
ssh_unreached(struct job_host *h)
{
	struct sshc	*c = h->priv;

	if (c == NULL || c->st != SS_QUEUED)
		return 0;
	ssh_unqueue(c);
	c->st = SS_DEAD;
	return 1;
}

static void
ssh_free(struct job_host *h)
{
	struct sshc	*c = h->priv;

	if (c == NULL)
		return;
	h->priv = NULL;
	ssh_unqueue(c);
	/* Inside its own callback the link defers this; it reads no more. */
	link_free(c->link);
	c->link = NULL;
	sshc_close(c);
	if (c->busy > 0)
		c->dead = 1;	/* a step is under way: it frees c */
	else {
		evbuffer_free(c->in);
		free(c);
	}
}

const struct backend backend_ssh = {
	.name = "ssh",
	.reuse = BE_REUSE_HOST,
	.pack = 1,
	.start = ssh_start,
	.unreached = ssh_unreached,
	.kill = ssh_kill,
	.reaped = ssh_reaped,
	.free = ssh_free,
};
