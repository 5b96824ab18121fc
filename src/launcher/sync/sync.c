/*
 * sync.c -- --sync-dst-dir: rsync the launcher's directory to every host.
 *
 * One rsync child per host, at most --ssh-fanout at once, each in its own
 * process group so a terminal's Ctrl-C reaches dtrun alone, which decides.
 * A child is finished only once it is reaped AND both its pipes are at
 * EOF. Its stdout carries --info=progress2 and --stats, read for the byte
 * counts; its stderr is kept for the message when it fails. The first
 * failure stops the others: the job never starts on hosts half in sync.
 *
 * Room launcher/sync/: --sync-dst-dir: rsync to every host before the job.
 * It includes only cli/, plan/, job/ and backend/ (t0041's rooms).
 */
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "launcher/backend/child.h"
#include "launcher/cli/cli.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/log.h"
#include "common/sys.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rundir.h"
#include "launcher/cli/sshconf.h"
#include "util/strv.h"
#include "launcher/sync/sync.h"
#include "util/xmalloc.h"

extern char **environ;

#define SYNC_FANOUT_DEFAULT	64
#define SYNC_ERR_MAX		4096	/* rsync's stderr kept per host */

struct sync;

/* One output pipe of an rsync. */
struct sync_pipe {
	struct sync_host	*sh;
	int			 fd;		/* -1 at EOF */
	struct event		*ev;
	struct evbuffer		*buf;
};

enum shstate { SH_QUEUED, SH_RUNNING, SH_DONE };

struct sync_host {
	struct sync		*s;
	const struct plan_host	*ph;
	enum shstate		 st;
	pid_t			 pid;		/* 0 once reaped */
	int			 status;
	struct sync_pipe	 out, err;
	unsigned long long	 bytes;		/* file data, from progress2 */
	unsigned long long	 sent;		/* on the wire, from --stats */
	struct timeval		 t0;
};

struct sync {
	struct event_base	*base;
	const struct opts	*o;
	const struct plan	*plan;
	void			(*done)(void *, int);
	void			*arg;
	struct sync_host	*hosts;
	size_t			 nhosts;
	size_t			 next;		/* next host to start */
	size_t			 nrunning;
	size_t			 nok;
	int			 fanout;
	int			 stopped;	/* done called, or sync_stop */
	int			 tty;
	int			 drawn;		/* a progress line is showing */
	int			 devnull;
	struct event		*ev_progress;
	struct event		*ev_kick;
	struct timeval		 t0;
};

static void	sync_kick(struct sync *);

/* Appends s to b as one word for rsync's -e: single-quoted, ' doubled. */
static void
rsync_word(struct evbuffer *b, const char *s)
{
	if (evbuffer_get_length(b) > 0)
		evbuffer_add(b, " ", 1);
	evbuffer_add(b, "'", 1);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			evbuffer_add(b, "''", 2);
		else
			evbuffer_add(b, s, 1);
	}
	evbuffer_add(b, "'", 1);
}

/* Appends s to b as one POSIX shell word. */
static void
buf_add_word(struct evbuffer *b, const char *s)
{
	char	*q = shell_quote(s);

	evbuffer_add(b, q, strlen(q));
	free(q);
}

/* Moves b's contents into a malloc'd string and empties b. */
static char *
buf_take(struct evbuffer *b)
{
	size_t	 n = evbuffer_get_length(b);
	char	*s = xmalloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	return s;
}

int
sync_check(const struct opts *o, struct dt_err *e)
{
	const char	*home = getenv("HOME"), *d = o->sync_dst, *p;
	size_t		 n;

	if (d == NULL) {
		if (o->nsync_exclude > 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--sync-"
			    "exclude needs --sync-dst-dir DIR (where to copy "
			    "this directory on the hosts)");
		return 0;
	}
	for (n = strlen(d); n > 1 && d[n - 1] == '/'; n--)
		;
	if (n == 0 || (n == 1 && (d[0] == '/' || d[0] == '.' || d[0] == '~')) ||
	    (n == 2 && strncmp(d, "~/", 2) == 0) ||
	    (home != NULL && strlen(home) == n && strncmp(d, home, n) == 0))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--sync-dst-dir "
		    "\"%s\": refusing to sync into a root or home directory "
		    "(rsync --delete would empty it); name a directory for "
		    "this job, e.g. ~/jobs/NAME", d);
	for (p = strchr(d, '%'); p != NULL; p = strchr(p + 2, '%'))
		if (p[1] != 'h' && p[1] != '%')
			break;
	if (p != NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--sync-dst-dir "
		    "\"%s\": only %%h (the host) and %%%% may follow %%", d);
	return 0;
}

/* s with every % doubled, so that an ssh's %-expansion gives s back. */
static char *
pct_escape(const char *s)
{
	struct evbuffer	*b = evbuffer_new();
	char		*r;

	for (; *s != '\0'; s++)
		evbuffer_add(b, *s == '%' ? "%%" : s, *s == '%' ? 2 : 1);
	r = buf_take(b);
	evbuffer_free(b);
	return r;
}

/*
 * The options for ssh(1) to reach t as dtrun does, one word each into w: all
 * that dtrun honours, and nothing from ssh_config. Jump hosts become a
 * ProxyCommand running such an ssh with -W for each of them, nested.
 */
static int
sync_ssh_words(const struct ssh_cli *c, const struct ssh_target *t,
    struct strv *w, int depth, struct dt_err *e)
{
	struct ssh_target	 jt;
	struct strv		 jw = { 0 };
	struct evbuffer		*b;
	char			**warn = NULL, *q, *cmd;
	size_t			 nwarn = 0, i;
	int			 rc;

	strv_addf(w, "-F");
	strv_addf(w, "/dev/null");
	strv_addf(w, "-l");
	strv_addf(w, "%s", t->user);
	strv_addf(w, "-p%d", t->port);
	for (i = 0; i < t->nidentities; i++) {
		strv_addf(w, "-i");
		strv_addf(w, "%s", t->identities[i]);
	}
	if (t->identities_only)
		strv_addf(w, "-oIdentitiesOnly=yes");
	strv_addf(w, "-oUserKnownHostsFile=%s", t->known_hosts);
	strv_addf(w, "-oStrictHostKeyChecking=%s",
	    t->strict == SSH_STRICT_NO ? "no" :
	    t->strict == SSH_STRICT_ACCEPT_NEW ? "accept-new" : "yes");
	strv_addf(w, "-oBatchMode=yes");
	strv_addf(w, "-oConnectTimeout=%d", (int)(t->connect_timeout + 0.999));
	if (t->proxy_command != NULL) {
		/* Already expanded: ssh must not expand it again. */
		q = pct_escape(t->proxy_command);
		strv_addf(w, "-oProxyCommand=%s", q);
		free(q);
	}
	if (t->proxy_jump == NULL)
		return 0;
	if (depth >= SSH_JUMP_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "ProxyJump: more "
		    "than %d jump hosts in front of %s (a ProxyJump loop in "
		    "ssh_config?)", SSH_JUMP_MAX, t->alias);
	rc = ssh_resolve_jump(c, t->proxy_jump, &jt, &warn, &nwarn, e);
	for (i = 0; i < nwarn; i++)
		free(warn[i]);
	free(warn);
	if (rc == 0)
		rc = sync_ssh_words(c, &jt, &jw, depth + 1, e);
	if (rc == 0) {
		/* A shell runs it; this ssh's %h %p are the next host's. */
		b = evbuffer_new();
		evbuffer_add_printf(b, "ssh");
		for (i = 0; i < jw.n; i++) {
			evbuffer_add(b, " ", 1);
			q = pct_escape(jw.v[i]);
			buf_add_word(b, q);
			free(q);
		}
		evbuffer_add_printf(b, " -W '[%%h]:%%p' ");
		buf_add_word(b, jt.hostname);
		cmd = buf_take(b);
		evbuffer_free(b);
		strv_addf(w, "-oProxyCommand=%s", cmd);
		free(cmd);
	}
	strv_free(&jw);
	ssh_target_free(&jt);
	return rc;
}

int
sync_argv(const struct opts *o, const struct plan_host *ph, int local,
    struct strv *v, struct dt_err *e)
{
	struct ssh_target	 t;
	struct evbuffer		*b;
	struct strv		 w = { 0 };
	char			 dir[PATH_MAX], *cmd, **warn = NULL;
	size_t			 nwarn = 0, i;
	int			 rc;

	strv_addf(v, "rsync");
	strv_addf(v, "-az");
	strv_addf(v, "--delete");
	strv_addf(v, "--info=progress2");
	strv_addf(v, "--stats");
	for (i = 0; i < o->nsync_exclude; i++)
		strv_addf(v, "--exclude=%s", o->sync_exclude[i]);
	run_dir(o, ph, local, dir, sizeof(dir));
	if (local) {
		strv_addf(v, "./");
		strv_addf(v, "%s/", dir);
		return 0;
	}

	/* Warnings were given when dtrun's own connection resolved. */
	rc = ssh_resolve(&o->ssh, ph->name, ph->user, ph->port, &t, &warn,
	    &nwarn, e);
	for (i = 0; i < nwarn; i++)
		free(warn[i]);
	free(warn);
	if (rc != 0) {
		ssh_target_free(&t);
		return rc;
	}
	b = evbuffer_new();
	rsync_word(b, "ssh");
	if ((rc = sync_ssh_words(&o->ssh, &t, &w, 0, e)) != 0) {
		strv_free(&w);
		evbuffer_free(b);
		ssh_target_free(&t);
		return rc;
	}
	for (i = 0; i < w.n; i++)
		rsync_word(b, w.v[i]);
	strv_free(&w);
	strv_addf(v, "-e");
	cmd = buf_take(b);
	strv_addf(v, "%s", cmd);
	free(cmd);

	/* rsync makes only the last directory: make its parents first. */
	evbuffer_add_printf(b, "mkdir -p -- ");
	buf_add_word(b, dir);
	evbuffer_add_printf(b, " && rsync");
	cmd = buf_take(b);
	strv_addf(v, "--rsync-path=%s", cmd);
	free(cmd);
	evbuffer_free(b);

	strv_addf(v, "./");
	strv_addf(v, "%s%s%s:%s/", strchr(t.hostname, ':') ? "[" : "",
	    t.hostname, strchr(t.hostname, ':') ? "]" : "", dir);
	ssh_target_free(&t);
	return 0;
}

/* Prints a line at the normal level (not under -q). */
static void
sync_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void
sync_note(const char *fmt, ...)
{
	char	msg[1024];
	va_list	ap;

	if (log_level < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("%s", msg);
}

/* Bytes as "812 B", "12.3 kB", "4.1 MB", "2.0 GB". */
static const char *
human(char *buf, size_t len, unsigned long long n)
{
	if (n < 1000)
		snprintf(buf, len, "%llu B", n);
	else if (n < 1000 * 1000)
		snprintf(buf, len, "%.1f kB", n / 1e3);
	else if (n < 1000ULL * 1000 * 1000)
		snprintf(buf, len, "%.1f MB", n / 1e6);
	else
		snprintf(buf, len, "%.1f GB", n / 1e9);
	return buf;
}

/* Seconds since tv. */
static double
since(const struct timeval *tv)
{
	struct timeval	now;

	gettimeofday(&now, NULL);
	return (now.tv_sec - tv->tv_sec) + (now.tv_usec - tv->tv_usec) / 1e6;
}

/* Reads "1,234,567" at p into *n; returns 1 if p held a number. */
static int
stats_count(const char *p, unsigned long long *n)
{
	int	any = 0;

	*n = 0;
	for (; isdigit((unsigned char)*p) || *p == ','; p++) {
		if (*p != ',') {
			*n = *n * 10 + (*p - '0');
			any = 1;
		}
	}
	return any;
}

/* One \r- or \n-ended piece of rsync's stdout. */
static void
sync_stdout_line(struct sync_host *sh, const char *line)
{
	unsigned long long	n;
	const char		*p = line + strspn(line, " ");

	if (strncmp(p, "Total bytes sent:", 17) == 0) {
		if (stats_count(p + 17 + strspn(p + 17, " "), &n))
			sh->sent = n;
		return;
	}
	/* progress2: "    3,000,000 100%  176.86MB/s    0:00:00 (xfr#1, ...)" */
	if (stats_count(p, &n) && strchr(p, '%') != NULL)
		sh->bytes = n;
}

/* The terminal's progress line: "dtrun: sync to DIR: 3/16 hosts, 12.3 MB". */
static void
sync_progress(struct sync *s, int final)
{
	unsigned long long	 bytes = 0;
	char			 line[1024], h[32];
	size_t			 i;
	int			 n;

	if (!s->tty)
		return;
	if (final) {
		if (s->drawn)
			(void)!write(STDERR_FILENO, "\r\033[K", 4);
		s->drawn = 0;
		return;
	}
	s->drawn = 1;
	for (i = 0; i < s->nhosts; i++)
		bytes += s->hosts[i].bytes;
	n = snprintf(line, sizeof(line), "\r\033[K%s: sync to %s: %zu/%zu "
	    "host%s done, %s copied", log_progname(), s->o->sync_dst, s->nok,
	    s->nhosts, s->nhosts == 1 ? "" : "s", human(h, sizeof(h), bytes));
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ?
		    (size_t)n : sizeof(line) - 1);
}

/* ARGSUSED */
static void
sync_progress_cb(evutil_socket_t fd, short what, void *arg)
{
	sync_progress(arg, 0);
}

/* Calls done once. */
static void
sync_finish(struct sync *s, int code)
{
	if (s->stopped)
		return;
	s->stopped = 1;
	if (s->ev_progress != NULL)
		event_del(s->ev_progress);
	sync_progress(s, 1);
	s->done(s->arg, code);
}

/* Gives up: done(code), and the other rsyncs are stopped. */
static void
sync_fail(struct sync *s, int code)
{
	sync_finish(s, code);
	sync_stop(s);
}

/*
 * True if an rsync stderr line is ssh failing to reach or log in to the
 * host. rsync's own exit code then depends on timing (255, or 12 when it
 * saw the stream close first), so the line decides.
 */
static int
ssh_failure_line(const char *line)
{
	static const char *const marks[] = {
		"Host key verification failed", "Permission denied (",
		"ssh: connect to host", "Could not resolve hostname",
		"Connection refused", "Connection timed out", NULL
	};
	size_t	i;

	for (i = 0; marks[i] != NULL; i++)
		if (strstr(line, marks[i]) != NULL)
			return 1;
	return 0;
}

/* Says why sh's rsync failed: its first line of stderr, then the rest. */
static void
sync_report(struct sync_host *sh)
{
	struct sync	*s = sh->s;
	char		*line;
	int		 code, n = 0, ssh_failed = 0;

	code = WIFEXITED(sh->status) ? WEXITSTATUS(sh->status) :
	    EXIT_SIGNAL(WTERMSIG(sh->status));
	sync_progress(s, 1);
	while ((line = evbuffer_readln(sh->err.buf, NULL,
	    EVBUFFER_EOL_ANY)) != NULL && *line == '\0')
		free(line);
	log_error("%s: sync to %s failed (rsync exit %d)%s%s", sh->ph->name,
	    s->o->sync_dst, code, line != NULL ? ": " : "",
	    line != NULL ? line : "");
	if (line != NULL)
		ssh_failed |= ssh_failure_line(line);
	free(line);
	while ((line = evbuffer_readln(sh->err.buf, NULL,
	    EVBUFFER_EOL_ANY)) != NULL) {
		if (*line != '\0' && n++ < 8)
			log_error("%s: %s", sh->ph->name, line);
		ssh_failed |= ssh_failure_line(line);
		free(line);
	}
	/* ssh failing to reach the host (255) is a lost host, as for an agent. */
	sync_fail(s, code == EXIT_LOST || ssh_failed ? EXIT_LOST : EXIT_CONFIG);
}

/* Once reaped and both pipes are at EOF, sh is done. */
static void
sync_host_check(struct sync_host *sh)
{
	struct sync		*s = sh->s;
	unsigned long long	 bytes = 0, sent = 0;
	char			 h1[32], h2[32];
	size_t			 i;

	if (sh->st != SH_RUNNING || sh->pid != 0 || sh->out.fd != -1 ||
	    sh->err.fd != -1)
		return;
	sh->st = SH_DONE;
	s->nrunning--;
	if (s->stopped)
		return;
	if (!WIFEXITED(sh->status) || WEXITSTATUS(sh->status) != 0) {
		sync_report(sh);
		return;
	}
	s->nok++;
	log_info("%s: in sync (%s of files copied, %s sent, %.2f s)",
	    sh->ph->name, human(h1, sizeof(h1), sh->bytes),
	    human(h2, sizeof(h2), sh->sent), since(&sh->t0));
	if (s->nok < s->nhosts) {
		sync_kick(s);
		return;
	}
	for (i = 0; i < s->nhosts; i++) {
		bytes += s->hosts[i].bytes;
		sent += s->hosts[i].sent;
	}
	sync_progress(s, 1);
	sync_note("synced this directory to %s on %zu host%s in %.2f s (%s of "
	    "files copied, %s sent)", s->o->sync_dst, s->nhosts,
	    s->nhosts == 1 ? "" : "s", since(&s->t0),
	    human(h1, sizeof(h1), bytes), human(h2, sizeof(h2), sent));
	sync_finish(s, 0);
}

/* Closes a pipe at EOF. */
static void
sync_pipe_close(struct sync_pipe *p)
{
	if (p->fd < 0)
		return;
	event_free(p->ev);
	p->ev = NULL;
	close(p->fd);
	p->fd = -1;
}

/* ARGSUSED */
static void
sync_pipe_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sync_pipe	*p = arg;
	struct sync_host	*sh = p->sh;
	char			 buf[8192], *line;
	size_t			 len, i;
	ssize_t			 n;
	unsigned char		*q;

	n = read(p->fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		sync_pipe_close(p);
		sync_host_check(sh);
		return;
	}
	if (p == &sh->err) {
		len = evbuffer_get_length(p->buf);
		if (len < SYNC_ERR_MAX)
			evbuffer_add(p->buf, buf, (size_t)n < SYNC_ERR_MAX -
			    len ? (size_t)n : SYNC_ERR_MAX - len);
		return;
	}
	evbuffer_add(p->buf, buf, n);
	for (;;) {
		len = evbuffer_get_length(p->buf);
		q = evbuffer_pullup(p->buf, len);
		for (i = 0; i < len && q[i] != '\r' && q[i] != '\n'; i++)
			;
		if (i == len) {
			/* No line is this long: drop it. */
			if (len > 4096)
				evbuffer_drain(p->buf, len);
			return;
		}
		line = xmalloc(i + 1);
		memcpy(line, q, i);
		line[i] = '\0';
		evbuffer_drain(p->buf, i + 1);
		sync_stdout_line(sh, line);
		free(line);
	}
}

/* Opens the pipe for one of the child's streams; returns the child's end or -1. */
static int
sync_pipe_open(struct sync_host *sh, struct sync_pipe *p)
{
	int	fds[2];

	p->sh = sh;
	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	p->fd = fds[0];
	p->buf = evbuffer_new();
	p->ev = event_new(sh->s->base, p->fd, EV_READ | EV_PERSIST,
	    sync_pipe_read_cb, p);
	event_add(p->ev, NULL);
	return fds[1];
}

/* Makes dir and its parents (mkdir -p); 0 or -1 with errno. */
static int
mkdir_p(const char *dir)
{
	char	 path[PATH_MAX], *p;

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = path + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0777) == -1 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0777) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

/* Starts sh's rsync; on failure, reports and finishes s. */
static void
sync_host_start(struct sync_host *sh)
{
	struct sync		*s = sh->s;
	struct strv		 v = { 0 };
	struct dt_err		 e;
	char			 msg[1024], dir[PATH_MAX];
	int			 ofd, efd, rc;

	if (sync_argv(s->o, sh->ph, s->plan->local || sh->ph->here, &v,
	    &e) != 0) {
		log_error("%s: %s", sh->ph->name, dt_err_str(&e, msg,
		    sizeof(msg)));
		sync_fail(s, EXIT_CONFIG);
		strv_free(&v);
		return;
	}
	if ((s->plan->local || sh->ph->here) &&
	    mkdir_p(run_dir(s->o, sh->ph, 1, dir, sizeof(dir))) == -1) {
		log_error("%s: sync to %s failed: cannot make %s: %s",
		    sh->ph->name, s->o->sync_dst, dir, strerror(errno));
		sync_fail(s, EXIT_CONFIG);
		strv_free(&v);
		return;
	}
	ofd = sync_pipe_open(sh, &sh->out);
	efd = sync_pipe_open(sh, &sh->err);
	if (ofd == -1 || efd == -1) {
		log_error("pipe: %s", strerror(errno));
		sync_fail(s, EXIT_CONFIG);
		strv_free(&v);
		return;
	}
	rc = child_spawn(&sh->pid, "rsync", v.v, environ, s->devnull, ofd,
	    efd);
	close(ofd);
	close(efd);
	strv_free(&v);
	gettimeofday(&sh->t0, NULL);
	sh->st = SH_RUNNING;
	s->nrunning++;
	if (rc != 0) {
		sh->pid = 0;
		log_error("%s: cannot run rsync here: %s%s", sh->ph->name,
		    strerror(rc), rc == ENOENT ? " (install rsync, e.g. "
		    "apt-get install rsync)" : "");
		sync_fail(s, EXIT_CONFIG);
		return;
	}
	log_debug("%s: rsync started (pid %d)", sh->ph->name, (int)sh->pid);
}

/* Starts queued hosts while fan-out slots are free. */
static void
sync_kick(struct sync *s)
{
	while (!s->stopped && s->next < s->nhosts &&
	    s->nrunning < (size_t)s->fanout)
		sync_host_start(&s->hosts[s->next++]);
}

/* ARGSUSED */
static void
sync_kick_cb(evutil_socket_t fd, short what, void *arg)
{
	sync_kick(arg);
}

struct sync *
sync_start(struct event_base *base, const struct opts *o,
    const struct plan *p, void (*done)(void *, int), void *arg,
    struct dt_err *e)
{
	struct sync	*s;
	struct timeval	 tv = { 0, 200 * 1000 };
	size_t		 i;

	s = xcalloc(1, sizeof(*s));
	if ((s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
		free(s);
		dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "/dev/null: %s",
		    strerror(errno));
		return NULL;
	}
	s->base = base;
	s->o = o;
	s->plan = p;
	s->done = done;
	s->arg = arg;
	s->fanout = o->ssh.fanout > 0 ? o->ssh.fanout : SYNC_FANOUT_DEFAULT;
	s->nhosts = p->nhosts;
	s->hosts = xcalloc(p->nhosts, sizeof(*s->hosts));
	for (i = 0; i < p->nhosts; i++) {
		s->hosts[i].s = s;
		s->hosts[i].ph = &p->hosts[i];
		s->hosts[i].out.fd = s->hosts[i].err.fd = -1;
	}
	s->tty = log_level >= 0 && isatty(STDERR_FILENO);
	gettimeofday(&s->t0, NULL);
	if (s->tty) {
		s->ev_progress = event_new(base, -1, EV_PERSIST,
		    sync_progress_cb, s);
		event_add(s->ev_progress, &tv);
	}
	log_info("syncing this directory to %s on %zu host%s", o->sync_dst,
	    p->nhosts, p->nhosts == 1 ? "" : "s");
	/* From the loop, so done is never called before we return. */
	s->ev_kick = evtimer_new(base, sync_kick_cb, s);
	event_active(s->ev_kick, EV_TIMEOUT, 0);
	return s;
}

int
sync_reaped(struct sync *s, pid_t pid, int status)
{
	size_t	i;

	if (s == NULL)
		return 0;
	for (i = 0; i < s->nhosts; i++) {
		if (s->hosts[i].pid == pid && pid > 0) {
			s->hosts[i].pid = 0;
			s->hosts[i].status = status;
			sync_host_check(&s->hosts[i]);
			return 1;
		}
	}
	return 0;
}

void
sync_stop(struct sync *s)
{
	size_t	i;

	if (s == NULL)
		return;
	s->stopped = 1;
	if (s->ev_progress != NULL)
		event_del(s->ev_progress);
	for (i = 0; i < s->nhosts; i++)
		if (s->hosts[i].pid > 0)
			kill(-s->hosts[i].pid, SIGTERM);
}

void
sync_free(struct sync *s)
{
	struct sync_host	*sh;
	size_t			 i;

	if (s == NULL)
		return;
	for (i = 0; i < s->nhosts; i++) {
		sh = &s->hosts[i];
		if (sh->pid > 0) {
			dt_kill_reap(sh->pid, NULL);
		}
		sync_pipe_close(&sh->out);
		sync_pipe_close(&sh->err);
		if (sh->out.buf != NULL)
			evbuffer_free(sh->out.buf);
		if (sh->err.buf != NULL)
			evbuffer_free(sh->err.buf);
	}
	if (s->ev_progress != NULL)
		event_free(s->ev_progress);
	event_free(s->ev_kick);
	close(s->devnull);
	free(s->hosts);
	free(s);
}
