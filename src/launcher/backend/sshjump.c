/*
 * sshjump.c -- a host behind jump hosts (ProxyJump, -J; backend_ssh.c): the
 * chain of connections in front of it, each a connection of its own, and
 * a jump host's part once up: it opens a direct-tcpip channel onwards and
 * pumps it through a tunnel (tunnel.c) to the next session's socket.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "launcher/cli/cli.h"
#include "common/log.h"
#include "launcher/backend/tunnel.h"
#include "launcher/backend/sshint.h"

/* JUMP: moves the tunnel's bytes until neither side has more. */
static void
sshc_pump(struct sshc *c)
{
	struct dt_err	e;
	int		rc;

	while ((rc = tunnel_pump(c->tun, &e)) > 0)
		;
	if (rc == 0) {
		sshc_arm(c, 0);
		return;
	}
	if (rc != DT_ERR_CLOSED) {
		/* The connection to the host is lost, whatever broke it. */
		sshc_fail(c, DT_ERR_CLOSED, "%s", e.msg);
		return;
	}
	/* The host's session closed, and the channel after it. */
	c->st = SS_DEAD;
	event_del(c->ev);
}

/* The tunnel's end of the socket pair is ready: pump. */
static void
sshc_tunnel_cb(void *arg)
{
	sshc_step(arg);
}

/*
 * FORWARD: opens a direct-tcpip channel from the jump host c to its
 * child's host and port, and starts the child's session over it.
 */
static void
sshc_forward(struct sshc *c)
{
	struct sshc	*n = c->child;
	LIBSSH2_CHANNEL	*ch;

	/* The name is looked up there, as ssh -W does. */
	ch = libssh2_channel_direct_tcpip_ex(c->s, n->t.hostname, n->t.port,
	    "127.0.0.1", 65535);
	if (ch == NULL) {
		if (libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN)
			sshc_arm(c, 0);
		else
			sshc_fail(c, DT_ERR_CLOSED, "cannot reach %s port %d "
			    "from there: %s", n->t.hostname, n->t.port,
			    ssh_errmsg(c));
		return;
	}
	if ((c->tun = tunnel_new(c->base, c->s, ch, &n->fd, sshc_tunnel_cb,
	    c)) == NULL) {
		libssh2_channel_free(ch);
		sshc_fail(c, DT_ERR_SYS, "socketpair: %s", strerror(errno));
		return;
	}
	log_debug("%s: through %s", n->t.alias, c->name);
	c->st = SS_JUMP;
	if (sshc_session_new(n) == 0)
		sshc_step(n);
	if (c->st == SS_JUMP)
		sshc_pump(c);
}

/* FORWARD: a jump host opens the channel to the next host. */
int
sshc_st_forward(struct sshc *c)
{
	sshc_forward(c);
	return 0;
}

/* JUMP: a jump host pumps its tunnel. */
int
sshc_st_jump(struct sshc *c)
{
	sshc_pump(c);
	return 0;
}

/*
 * Makes the chain of jump hosts in front of c, as c->t.proxy_jump says, the
 * nearest first; depth counts those already in front. 0, or DT_ERR_*.
 */
int
sshc_jumps(struct sshc *c, const struct opts *o, int depth, struct dt_err *e)
{
	struct sshc	 *j;
	char		**warn = NULL;
	size_t		  nwarn = 0;
	int		  rc;

	if (c->t.proxy_jump == NULL)
		return 0;
	if (depth >= SSH_JUMP_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "ProxyJump: more "
		    "than %d jump hosts in front of %s (a ProxyJump loop in "
		    "ssh_config?)", SSH_JUMP_MAX, c->t.alias);
	j = sshc_new(c->base);
	j->child = c;
	c->jump = j;
	rc = ssh_resolve_jump(&o->ssh, c->t.proxy_jump, &j->t, &warn, &nwarn,
	    e);
	warnings_log(warn, nwarn);
	if (rc != 0)
		return rc;
	snprintf(j->name, sizeof(j->name), "jump host %s", j->t.alias);
	log_debug("%s: via %s: ssh %s@%s port %d", c->t.alias, j->name,
	    j->t.user, j->t.hostname, j->t.port);
	return sshc_jumps(j, o, depth + 1, e);
}
