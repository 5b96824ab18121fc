/*
 * proxycmd.c -- a ProxyCommand, seen by libssh2 as a socket: one end of a
 * socket pair, the other the command's stdin and stdout. (A jump host's
 * channel is the other way to reach a host: tunnel.c.)
 *
 * The command is a child like tmux's jobs: started in its own process
 * group (a terminal's Ctrl-C is dtrun's to handle), its stderr logged line
 * by line under the host's name, killed and reaped when its host ends.
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

#include "launcher/backend/child.h"
#include "common/err.h"
#include "common/log.h"
#include "launcher/backend/proxycmd.h"
#include "common/sys.h"
#include "util/xmalloc.h"

extern char	**environ;

struct proxy_cmd {
	char		*name;
	pid_t		 pid;
	int		 reaped, status;
	int		 errfd;
	struct event	*ev;
	struct evbuffer	*err;
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

/* Starts the command on a socket pair; see proxycmd.h. */
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

/* Takes pid's exit status if pid is p's command. */
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

/* Whether the command has ended, and how, into buf. */
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

/* Ends the command and its group, reaps it, frees p. */
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
			dt_kill_reap(p->pid, &p->status);
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
