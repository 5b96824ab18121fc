/*
 * procs.c -- start one rank with vfork+execve (as fast as posix_spawn, but
 * lets the child set PR_SET_PDEATHSIG), and find what a job left behind.
 * In the vfork child only async-signal-safe calls run until execve.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procs.h"

pid_t
spawn_rank(const char *path, char *const argv[], char *const envp[],
    int devnull, int outfd, int errfd)
{
	sigset_t		all, old;
	struct sigaction	dfl;
	volatile int		child_errno = 0;
	pid_t			pid, parent = getpid();
	int			sig;

	/* No handler of the agent's may run in the child before exec. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = vfork();
	if (pid == 0) {
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				sigaction(sig, &dfl, NULL);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)	/* the agent died already */
			_exit(127);
		if (dup2(devnull, 0) == -1 || dup2(outfd, 1) == -1 ||
		    dup2(errfd, 2) == -1) {
			child_errno = errno;
			_exit(127);
		}
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execve(path, argv, envp);
		child_errno = errno;
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		return -errno;
	if (child_errno != 0) {
		/* The child has exited; the SIGCHLD loop will reap it. */
		return -child_errno;
	}
	return pid;
}

/* Checks that p is an executable regular file; returns 0 or an errno. */
static int
check_exec(const char *p)
{
	struct stat	st;

	if (stat(p, &st) == -1)
		return errno == ENOTDIR ? ENOENT : errno;
	if (S_ISDIR(st.st_mode))
		return EISDIR;
	if (access(p, X_OK) == -1)
		return EACCES;
	return 0;
}

char *
spawn_resolve(const char *argv0, const char *path_env, int *err)
{
	const char	*p, *e;
	char		 buf[4096];
	int		 r, seen_eacces = 0;

	*err = ENOENT;
	if (argv0[0] == '\0')
		return NULL;
	if (strchr(argv0, '/') != NULL) {
		if ((*err = check_exec(argv0)) != 0)
			return NULL;
		return strdup(argv0);
	}
	if (path_env == NULL)
		path_env = "/usr/local/bin:/usr/bin:/bin";
	for (p = path_env;; p = e + 1) {
		e = strchr(p, ':');
		if (e == NULL)
			e = p + strlen(p);
		if (e == p)
			r = snprintf(buf, sizeof(buf), "%s", argv0);
		else
			r = snprintf(buf, sizeof(buf), "%.*s/%s", (int)(e - p),
			    p, argv0);
		if (r > 0 && (size_t)r < sizeof(buf)) {
			r = check_exec(buf);
			if (r == 0) {
				*err = 0;
				return strdup(buf);
			}
			if (r == EACCES)
				seen_eacces = 1;
		}
		if (*e == '\0')
			break;
	}
	*err = seen_eacces ? EACCES : ENOENT;
	return NULL;
}

/* Appends the children of pid (all its threads) to *v, growing it. */
static void
add_children(pid_t pid, pid_t **v, size_t *n, size_t *cap)
{
	char		 path[320], buf[4096];
	DIR		*d;
	struct dirent	*de;
	FILE		*f;
	char		*tok, *save;
	pid_t		*nv;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children",
		    (int)pid, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(buf, sizeof(buf), f) != NULL) {
			for (tok = strtok_r(buf, " \n", &save); tok != NULL;
			    tok = strtok_r(NULL, " \n", &save)) {
				if (*n == *cap) {
					*cap = *cap ? *cap * 2 : 64;
					nv = realloc(*v, *cap * sizeof(**v));
					if (nv == NULL)
						continue;
					*v = nv;
				}
				(*v)[(*n)++] = (pid_t)atoi(tok);
			}
		}
		fclose(f);
	}
	closedir(d);
}

/* True if pid is a zombie (dead, not yet reaped) or gone. */
static int
is_dead(pid_t pid)
{
	char	path[64], buf[512], *p;
	FILE	*f;
	int	dead = 1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL && p[1] == ' ')
		dead = p[2] == 'Z' || p[2] == 'X';
	fclose(f);
	return dead;
}

size_t
spawn_descendants(pid_t **pids)
{
	pid_t	*v = NULL;
	size_t	 n = 0, cap = 0, i, live = 0;

	add_children(getpid(), &v, &n, &cap);
	for (i = 0; i < n; i++)		/* n grows as we walk: breadth first */
		add_children(v[i], &v, &n, &cap);
	for (i = 0; i < n; i++)
		if (!is_dead(v[i]))
			v[live++] = v[i];
	if (live == 0) {
		free(v);
		v = NULL;
	}
	*pids = v;
	return live;
}

size_t
spawn_kill_descendants(int sig)
{
	pid_t	*v;
	size_t	 n, i;

	n = spawn_descendants(&v);
	for (i = 0; i < n; i++)
		kill(v[i], sig);
	free(v);
	return n;
}
