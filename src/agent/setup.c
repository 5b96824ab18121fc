/*
 * setup.c -- run dtrun's --setup command on this host and collect what it
 * prints. Its stdout is kept whole up to SETUP_OUT_MAX (past that the
 * setup fails: it was meant to print variables), its stderr's tail for the
 * message if it fails. The shell's exit ends it, and whatever it left
 * running is killed then: see setup.h, which also says how dtrun --check
 * (hostcheck.c) uses it for its probe.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/err.h"
#include "common/evfd.h"
#include "common/wire.h"
#include "host/procs.h"
#include "agent/setup.h"

/* One of the setup's pipes. */
struct spipe {
	struct setup	*s;
	int		 fd;		/* -1 once closed */
	struct event	*ev;
};

struct setup {
	pid_t		 pid;		/* its shell, and its process group */
	int		 reaped;
	int		 status;
	int		 overflow;	/* stdout went past SETUP_OUT_MAX */
	struct spipe	 out, err;
	struct dt_wbuf	 obuf;		/* stdout, a C string */
	char		 ebuf[2 * SETUP_ERR_KEEP];
	size_t		 elen;
	setup_done_fn	 done;
	void		*arg;
};

/* Closes one pipe. */
static void
spipe_close(struct spipe *p)
{
	dt_event_close(&p->ev, &p->fd);
}

/* Keeps n bytes of stdout; past the bound the setup is killed. */
static void
setup_keep_out(struct setup *s, const char *p, size_t n)
{
	if (s->overflow)
		return;
	if (s->obuf.len + n > SETUP_OUT_MAX ||
	    dt_wbuf_text(&s->obuf, p, n) != 0) {
		s->overflow = 1;
		setup_kill(s);
	}
}

/* Keeps the last SETUP_ERR_KEEP bytes (at least) of stderr. */
static void
setup_keep_err(struct setup *s, const char *p, size_t n)
{
	if (n > SETUP_ERR_KEEP) {
		p += n - SETUP_ERR_KEEP;
		n = SETUP_ERR_KEEP;
	}
	if (s->elen + n > sizeof(s->ebuf)) {
		memmove(s->ebuf, s->ebuf + s->elen - SETUP_ERR_KEEP,
		    SETUP_ERR_KEEP);
		s->elen = SETUP_ERR_KEEP;
	}
	memcpy(s->ebuf + s->elen, p, n);
	s->elen += n;
}

/* Reads what the pipe has now; closes it at EOF. */
static void
spipe_read(struct spipe *p)
{
	char	buf[65536];
	ssize_t	n;

	while (p->fd >= 0) {
		n = read(p->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			spipe_close(p);
			return;
		}
		if (p == &p->s->out)
			setup_keep_out(p->s, buf, n);
		else
			setup_keep_err(p->s, buf, n);
	}
}

/* ARGSUSED */
static void
spipe_read_cb(evutil_socket_t fd, short what, void *arg)
{
	spipe_read(arg);
}

/* Opens a pipe whose read end we watch; *wfd gets the blocking write end. */
static int
spipe_open(struct event_base *base, struct setup *s, struct spipe *p,
    int *wfd)
{
	int	fds[2];

	p->s = s;
	p->fd = -1;
	if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == -1)
		return errno;
	fcntl(fds[1], F_SETFL, 0);
	p->fd = fds[0];
	*wfd = fds[1];
	if ((p->ev = event_new(base, p->fd, EV_READ | EV_PERSIST,
	    spipe_read_cb, p)) == NULL || event_add(p->ev, NULL) != 0)
		return ENOMEM;
	return 0;
}

/* Starts cmd; see setup.h. */
struct setup *
setup_start(struct event_base *base, const char *cmd, char *const env[],
    int devnull, setup_done_fn done, void *arg, struct dt_err *e)
{
	struct setup	*s;
	char		*argv[4];
	int		 ofd = -1, efd = -1, err;
	pid_t		 pid = -1;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "%s", strerror(ENOMEM));
		return NULL;
	}
	s->done = done;
	s->arg = arg;
	s->out.fd = s->err.fd = -1;
	argv[0] = "sh";
	argv[1] = "-c";
	argv[2] = (char *)cmd;
	argv[3] = NULL;
	if ((err = spipe_open(base, s, &s->out, &ofd)) == 0 &&
	    (err = spipe_open(base, s, &s->err, &efd)) == 0) {
		pid = spawn_rank("/bin/sh", argv, env, devnull, ofd, efd);
		err = pid < 0 ? (int)-pid : 0;
	}
	if (ofd >= 0)
		close(ofd);
	if (efd >= 0)
		close(efd);
	if (err != 0) {
		dt_errf(e, NULL, 0, 0, err == ENOMEM ? DT_ERR_NOMEM :
		    DT_ERR_SYS, "%s", strerror(err));
		spipe_close(&s->out);
		spipe_close(&s->err);
		free(s);
		return NULL;
	}
	s->pid = pid;
	return s;
}

/* Takes the exit of the setup's shell, kills what it left, then done. */
int
setup_reaped(struct setup *s, pid_t pid, int status)
{
	if (s == NULL || s->reaped || pid != s->pid)
		return 0;
	s->reaped = 1;
	s->status = status;
	/*
	 * What the shell left behind may hold the pipes open forever: kill
	 * it, then take what was written (the pipes keep it). No rank runs
	 * before the setup ends, so every descendant of ours is the setup's;
	 * they are signalled through pidfds, never by a reusable number.
	 */
	spawn_kill_descendants(SIGKILL, NULL);
	spipe_read(&s->out);
	spipe_read(&s->err);
	spipe_close(&s->out);
	spipe_close(&s->err);
	s->done(s->arg);
	return 1;
}

/* True until the shell is reaped. */
int
setup_running(const struct setup *s)
{
	return s != NULL && !s->reaped;
}

/* SIGKILL to the setup's process group, while its shell is ours. */
void
setup_kill(struct setup *s)
{
	/* Not reaped: the group's leader is our zombie at worst, so the id is ours. */
	if (s != NULL && !s->reaped && s->pid > 0)
		kill(-s->pid, SIGKILL);
}

/* How it ended, as a DT_ERR_* and words. */
int
setup_result(const struct setup *s, struct dt_err *e)
{
	if (s->overflow)
		return dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG, "wrote over %d MiB "
		    "on stdout (it should print NAME=VALUE lines)",
		    SETUP_OUT_MAX >> 20);
	if (WIFSIGNALED(s->status))
		return dt_errf(e, NULL, 0, 0, DT_ERR_ABORTED, "was killed by "
		    "signal %d (%s)", WTERMSIG(s->status),
		    strsignal(WTERMSIG(s->status)));
	if (WEXITSTATUS(s->status) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_ABORTED, "exited with %d",
		    WEXITSTATUS(s->status));
	return 0;
}

/* All it printed on stdout. */
const char *
setup_stdout(const struct setup *s, size_t *len)
{
	*len = s->obuf.len;
	return s->obuf.p != NULL ? (const char *)s->obuf.p : "";
}

/* The last bytes of its stderr. */
const char *
setup_stderr(const struct setup *s, size_t *len)
{
	*len = s->elen;
	return s->ebuf;
}

/* Kills it if it still runs; frees it. */
void
setup_free(struct setup *s)
{
	if (s == NULL)
		return;
	setup_kill(s);
	spipe_close(&s->out);
	spipe_close(&s->err);
	dt_wbuf_free(&s->obuf);
	free(s);
}
