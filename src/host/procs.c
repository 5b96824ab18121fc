/*
 * procs.c -- start one rank with vfork+execve (as fast as posix_spawn, but
 * lets the child set PR_SET_PDEATHSIG), and find what a job left behind.
 * In the vfork child only async-signal-safe calls run until execve.
 *
 * A host's agent holds two pipe ends per rank, so at thousands of ranks
 * its descriptor table is large, and a vforked child copies all of it and
 * execve walks it again to close what is close-on-exec: O(ranks) per
 * spawn, O(ranks^2) per host. After spawn_init, the child instead shares
 * the agent's table (CLONE_FILES) and its first act is close_range(...,
 * CLOSE_RANGE_UNSHARE) above a few low slots that spawn_init reserved: a
 * private table of those slots alone, into which the parent put the
 * rank's three descriptors. Kernels before 5.9 keep the vfork way.
 * Whatever is signalled here by pid is first pinned by its start time and
 * owner (proc_signal), so a pid reused meanwhile is never hit.
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <sys/syscall.h>

#include <linux/close_range.h>
#include <sched.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/procs.h"
#include "common/dtlimits.h"
#include "common/err.h"
#include "common/exitcodes.h"

/* What the child needs, in the parent's memory (both run on it). */
struct spawn_args {
	const char	*path;
	char *const	*argv;
	char *const	*envp;
	int		 fds[3];	/* its stdin, stdout, stderr */
	unsigned	 unshare_from;	/* 0: the table is its own already */
	pid_t		 parent;
	const int	*sigs;		/* to reset; NULL: every signal */
	int		 nsigs;
	volatile int	 child_errno;
};

/*
 * Inside spawn_batch_begin/end: signals are blocked already, and these are
 * the signals to reset in each child (any other has its default).
 */
static int	spawn_in_batch;
static int	spawn_sigs[NSIG];
static int	spawn_nsigs;
static pid_t	spawn_self;
static sigset_t	spawn_batch_old;	/* the mask to restore at its end */

/* Low descriptors kept for the child's three (spawn_init); -1: none. */
static int	spawn_slots[3] = { -1, -1, -1 };
static int	spawn_slot_max = -1;
/* The cloned child's stack: it only sets itself up and execs. */
static char	spawn_stack[64 * 1024] __attribute__((aligned(16)));

/*
 * Sets sig to its default in the kernel itself: glibc's sigaction refuses
 * the two signals it keeps for itself (32 and 33), which a process can
 * inherit ignored all the same. All zero is SIG_DFL, no flags, no mask,
 * whatever the architecture's layout of the kernel's struct.
 */
static void
spawn_sig_default(int sig)
{
	unsigned long	dfl[4] = { 0, 0, 0, 0 };

	syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)(NSIG / 8));
}

/* The child, after vfork or clone: only async-signal-safe calls. */
static int
spawn_child(void *arg)
{
	struct spawn_args	*sa = arg;
	sigset_t		 none;
	int			 sig;

	if (sa->unshare_from > 0 && syscall(SYS_close_range, sa->unshare_from,
	    ~0U, CLOSE_RANGE_UNSHARE) != 0) {
		sa->child_errno = errno;
		_exit(EXIT_NOTFOUND);
	}
	if (sa->sigs != NULL)
		for (sig = 0; sig < sa->nsigs; sig++)
			spawn_sig_default(sa->sigs[sig]);
	else
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				spawn_sig_default(sig);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * Under Yama's ptrace_scope 1 only an ancestor may trace: let the
	 * agent's children (gdb, eu-stack) take our stack too. Fails
	 * harmlessly where there is no Yama.
	 */
	prctl(PR_SET_PTRACER, sa->parent, 0, 0, 0);
	if (getppid() != sa->parent)	/* the agent died already */
		_exit(EXIT_NOTFOUND);
	if (dup2(sa->fds[0], 0) == -1 || dup2(sa->fds[1], 1) == -1 ||
	    dup2(sa->fds[2], 2) == -1) {
		sa->child_errno = errno;
		_exit(EXIT_NOTFOUND);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(sa->path, sa->argv, sa->envp);
	sa->child_errno = errno;
	_exit(EXIT_NOTFOUND);
}

int
spawn_init(int devnull)
{
	int	i, fd;

	if (spawn_slot_max >= 0)
		return 0;
	/* Both answer 0 where the kernel has CLOSE_RANGE_UNSHARE (5.9). */
	if (syscall(SYS_close_range, ~0U, ~0U, CLOSE_RANGE_UNSHARE) != 0)
		return -1;
	for (i = 0; i < 3; i++) {
		if ((fd = fcntl(devnull, F_DUPFD_CLOEXEC, 0)) == -1) {
			while (i > 0)
				close(spawn_slots[--i]);
			spawn_slots[0] = -1;
			return -1;
		}
		spawn_slots[i] = fd;
		if (fd > spawn_slot_max)
			spawn_slot_max = fd;
	}
	return 0;
}

/*
 * Clones the child onto the slots: each of the rank's descriptors dup'd
 * onto its slot, and the slots back on /dev/null after (else the agent
 * held the pipes' write ends, and never saw their end).
 */
static pid_t
spawn_clone(struct spawn_args *sa, int devnull)
{
	pid_t	pid = -1;
	int	i, e, fds[3];

	memcpy(fds, sa->fds, sizeof(fds));
	for (i = 0; i < 3; i++) {
		if (dup3(fds[i], spawn_slots[i], O_CLOEXEC) == -1)
			goto out;
		sa->fds[i] = spawn_slots[i];
	}
	sa->unshare_from = (unsigned)spawn_slot_max + 1;
	pid = clone(spawn_child, spawn_stack + sizeof(spawn_stack),
	    CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, sa);
out:
	e = errno;
	for (i = 0; i < 3; i++)
		dup3(devnull, spawn_slots[i], O_CLOEXEC);
	memcpy(sa->fds, fds, sizeof(fds));
	errno = e;
	return pid;
}

pid_t
spawn_rank(const char *path, char *const argv[], char *const envp[],
    int devnull, int outfd, int errfd)
{
	struct spawn_args	sa = { path, argv, envp, { devnull, outfd,
				    errfd }, 0, 0, NULL, 0, 0 };
	sigset_t		all, old;
	pid_t			pid;

	/* No handler of the agent's may run in the child before exec. */
	if (!spawn_in_batch) {
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, &old);
		sa.parent = getpid();
	} else {
		sa.parent = spawn_self;
		sa.sigs = spawn_sigs;
		sa.nsigs = spawn_nsigs;
	}
	if (spawn_slot_max >= 0)
		pid = spawn_clone(&sa, devnull);
	else if ((pid = vfork()) == 0)
		spawn_child(&sa);
	if (!spawn_in_batch)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1)
		return -errno;
	if (sa.child_errno != 0) {
		/* The child has exited; the SIGCHLD loop will reap it. */
		return -sa.child_errno;
	}
	return pid;
}

void
spawn_batch_begin(void)
{
	struct sigaction	sa;
	sigset_t		all;
	int			sig;

	if (spawn_in_batch++ > 0)
		return;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &spawn_batch_old);
	spawn_self = getpid();
	/* A signal caught or ignored here must start at its default there. */
	spawn_nsigs = 0;
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &sa) != 0 ||
		    sa.sa_handler != SIG_DFL || (sa.sa_flags & SA_SIGINFO))
			spawn_sigs[spawn_nsigs++] = sig;
	}
}

void
spawn_batch_end(void)
{
	if (spawn_in_batch == 0 || --spawn_in_batch > 0)
		return;
	sigprocmask(SIG_SETMASK, &spawn_batch_old, NULL);
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

/* Why argv0 cannot be run (err: ENOENT, EACCES, EISDIR), with the fix. */
static const char *
spawn_resolve_why(const char *argv0, int err)
{
	size_t	n = strlen(argv0);

	/* torchrun puts python in front of a script; dtrun runs the command. */
	if (n > 3 && strcmp(argv0 + n - 3, ".py") == 0 && err != EISDIR)
		return err == EACCES ? "is not executable; name the "
		    "interpreter: dtrun ... python3 train.py (or -m MODULE)" :
		    "not found; name the interpreter: dtrun ... python3 "
		    "train.py (or -m MODULE)";
	if (err == EACCES)
		return strchr(argv0, '/') != NULL ?
		    "is not executable (chmod +x it)" :
		    "is in PATH but not executable (chmod +x it)";
	if (err == EISDIR)
		return "is a directory, not a program";
	if (strchr(argv0, '/') != NULL)
		return "does not exist (check the path)";
	return "command not found in PATH (check the name, or give a path)";
}

/* *path = a copy of p; returns 0, or DT_ERR_NOMEM with e filled. */
static int
spawn_found(const char *p, char **path, struct dt_err *e)
{
	if ((*path = strdup(p)) == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
		if (e != NULL)
			e->errnum = ENOMEM;
		return DT_ERR_NOMEM;
	}
	return 0;
}

/* Fills e for argv0 that cannot be run for err; returns the DT_ERR_*. */
static int
spawn_unfound(const char *argv0, int err, struct dt_err *e)
{
	int	code = err == ENOENT ? DT_ERR_NOTFOUND : DT_ERR_INVAL;

	dt_errf(e, NULL, 0, 0, code, "%s", spawn_resolve_why(argv0, err));
	if (e != NULL)
		e->errnum = err;
	return code;
}

int
spawn_resolve(const char *argv0, const char *path_env, char **path,
    struct dt_err *e)
{
	const char	*p, *end;
	char		 buf[4096];
	int		 r, err, seen_eacces = 0;

	*path = NULL;
	if (argv0[0] == '\0')
		return spawn_unfound(argv0, ENOENT, e);
	if (strchr(argv0, '/') != NULL) {
		if ((err = check_exec(argv0)) != 0)
			return spawn_unfound(argv0, err, e);
		return spawn_found(argv0, path, e);
	}
	if (path_env == NULL)
		path_env = "/usr/local/bin:/usr/bin:/bin";
	for (p = path_env;; p = end + 1) {
		end = strchr(p, ':');
		if (end == NULL)
			end = p + strlen(p);
		if (end == p)
			r = snprintf(buf, sizeof(buf), "%s", argv0);
		else
			r = snprintf(buf, sizeof(buf), "%.*s/%s",
			    (int)(end - p), p, argv0);
		if (r > 0 && (size_t)r < sizeof(buf)) {
			r = check_exec(buf);
			if (r == 0)
				return spawn_found(buf, path, e);
			if (r == EACCES)
				seen_eacces = 1;
		}
		if (*end == '\0')
			break;
	}
	return spawn_unfound(argv0, seen_eacces ? EACCES : ENOENT, e);
}

int
proc_info(pid_t pid, struct proc_info *pi)
{
	char		 path[64], buf[1024], *p;
	struct stat	 st;
	unsigned long	 ppid, pgrp;
	int		 fd, i;
	ssize_t		 n;

	memset(pi, 0, sizeof(*pi));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	/* The owner of /proc/PID is the owner of the process. */
	n = fstat(fd, &st) == 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp ...": comm may hold anything, even ") ". */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' ||
	    sscanf(p + 2, "%c %lu %lu", &pi->state, &ppid, &pgrp) != 3)
		return -1;
	pi->ppid = (pid_t)ppid;
	pi->pgrp = (pid_t)pgrp;
	pi->uid = st.st_uid;
	/* Field N is N - 2 spaces after the ')'. */
	for (i = 0; i < 20 && p != NULL; i++) {
		p = strchr(p + 1, ' ');
		if (p != NULL && (i == 11 || i == 12))	/* utime, stime */
			pi->cpu += strtoull(p + 1, NULL, 10);
	}
	if (p == NULL)
		return -1;
	pi->start = strtoull(p + 1, NULL, 10);
	return 0;
}

unsigned long long
proc_starttime(pid_t pid)
{
	struct proc_info	pi;

	return proc_info(pid, &pi) == 0 ? pi.start : 0;
}

int
proc_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* pidfd_send_signal(2) by number, as proc_pidfd. */
static int
pidfd_signal(int fd, int sig)
{
#ifdef SYS_pidfd_send_signal
	return (int)syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0);
#else
	errno = ENOSYS;
	return -1;
#endif
}

int
proc_signal(pid_t pid, unsigned long long start, int sig)
{
	struct proc_info	pi;
	int			fd, rc;

	if (pid <= 1 || start == 0) {
		errno = EINVAL;
		return -1;
	}
	/*
	 * Pin the process first, then check it: if the pid was reused after
	 * pidfd_open, the signal below goes to the dead one and fails.
	 */
	if ((fd = proc_pidfd(pid)) == -1 && errno != ENOSYS)
		return -1;
	if (proc_info(pid, &pi) != 0 || pi.start != start ||
	    pi.uid != getuid() || pi.state == 'Z' || pi.state == 'X') {
		if (fd != -1)
			close(fd);
		errno = ESRCH;
		return -1;
	}
	/* Before Linux 5.3: checked just now, which is the best there is. */
	if (fd == -1)
		return kill(pid, sig);
	rc = pidfd_signal(fd, sig);
	close(fd);
	return rc;
}

/* True if the n bytes at env hold the entry want (a "NAME=VALUE" of wlen bytes). */
static int
env_has(const char *env, size_t n, const char *want, size_t wlen)
{
	const char	*p = env, *end = env + n, *z;

	while (p < end) {
		if ((z = memchr(p, '\0', end - p)) == NULL)
			z = end;
		if ((size_t)(z - p) == wlen && memcmp(p, want, wlen) == 0)
			return 1;
		p = z + 1;
	}
	return 0;
}

/* Reads /proc/PID/environ into a malloc'd buffer; NULL if unreadable. */
static char *
env_read(pid_t pid, size_t *len)
{
	char	 path[64], *buf = NULL, *nb;
	size_t	 cap = 0, n = 0;
	ssize_t	 r;
	int	 fd;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	for (;;) {
		if (n == cap) {
			/* An environment is at most a few MiB (ARG_MAX). */
			if (cap >= DT_ENVIRON_MAX ||
			    (nb = realloc(buf, cap ? cap * 2 : 16384)) == NULL)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 16384;
		}
		if ((r = read(fd, buf + n, cap - n)) <= 0)
			break;
		n += r;
	}
	close(fd);
	*len = n;
	return buf;
}

/* True if m picks pid (of which pi says what /proc says). */
static int
proc_matches(const struct proc_match *m, pid_t pid,
    const struct proc_info *pi)
{
	char	*env;
	size_t	 i, len;
	int	 hit = 0;

	for (i = 0; i < m->npgrps; i++)
		if (pi->pgrp == m->pgrps[i])
			return 1;
	if (m->env == NULL || (env = env_read(pid, &len)) == NULL)
		return 0;
	hit = env_has(env, len, m->env, strlen(m->env));
	free(env);
	return hit;
}

size_t
proc_signal_match(const struct proc_match *m, int sig)
{
	struct proc_info	 pi;
	DIR			*d;
	struct dirent		*de;
	char			*end;
	size_t			 found = 0;
	pid_t			 pid;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 1 || pid == getpid() ||
		    pid == m->skip[0] || pid == m->skip[1] ||
		    proc_info(pid, &pi) != 0 || pi.uid != getuid() ||
		    pi.state == 'Z' || pi.state == 'X' ||
		    !proc_matches(m, pid, &pi))
			continue;
		if (sig == 0 || proc_signal(pid, pi.start, sig) == 0)
			found++;
	}
	closedir(d);
	return found;
}

/* A descendant found by spawn_walk: the start time pins it down. */
struct desc {
	pid_t			 pid;
	unsigned long long	 start;
};

/* Appends the live children of parent (all its threads) to *v, growing it. */
static void
add_children(pid_t parent, struct desc **v, size_t *n, size_t *cap)
{
	char			 path[320], buf[4096];
	DIR			*d;
	struct dirent		*de;
	FILE			*f;
	char			*tok, *save;
	struct desc		*nv;
	struct proc_info	 pi;
	pid_t			 pid;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)parent);
	if ((d = opendir(path)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/children",
		    (int)parent, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(buf, sizeof(buf), f) != NULL) {
			for (tok = strtok_r(buf, " \n", &save); tok != NULL;
			    tok = strtok_r(NULL, " \n", &save)) {
				/*
				 * Still parent's child when we look: then the
				 * start time is that child's, not a reuser's.
				 */
				pid = (pid_t)atoi(tok);
				if (proc_info(pid, &pi) != 0 ||
				    pi.ppid != parent)
					continue;
				if (*n == *cap) {
					nv = reallocarray(*v, *cap ? *cap * 2 :
					    64, sizeof(**v));
					if (nv == NULL)
						continue;
					*cap = *cap ? *cap * 2 : 64;
					*v = nv;
				}
				(*v)[*n].pid = pid;
				(*v)[(*n)++].start = pi.start;
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
	struct proc_info	pi;

	return proc_info(pid, &pi) != 0 || pi.state == 'Z' || pi.state == 'X';
}

/* Lists root's live descendants, breadth first; returns how many. */
static size_t
spawn_walk(pid_t root, struct desc **out)
{
	struct desc	*v = NULL;
	size_t		 n = 0, cap = 0, i, live = 0;

	add_children(root, &v, &n, &cap);
	for (i = 0; i < n; i++)		/* n grows as we walk */
		add_children(v[i].pid, &v, &n, &cap);
	for (i = 0; i < n; i++)
		if (!is_dead(v[i].pid))
			v[live++] = v[i];
	*out = v;
	return live;
}

size_t
spawn_descendants(pid_t **pids)
{
	struct desc	*v;
	pid_t		*p = NULL;
	size_t		 n, i;

	n = spawn_walk(getpid(), &v);
	if (n > 0 && (p = calloc(n, sizeof(*p))) != NULL)
		for (i = 0; i < n; i++)
			p[i] = v[i].pid;
	free(v);
	*pids = p;
	return p == NULL ? 0 : n;
}

size_t
spawn_kill_descendants(int sig, size_t *sent)
{
	return spawn_kill_below(getpid(), sig, sent);
}

size_t
spawn_kill_below(pid_t root, int sig, size_t *sent)
{
	struct desc	*v;
	size_t		 n, i, ok = 0;

	n = spawn_walk(root, &v);
	for (i = 0; i < n; i++)
		if (proc_signal(v[i].pid, v[i].start, sig) == 0)
			ok++;
	free(v);
	if (sent != NULL)
		*sent = ok;
	return n;
}

size_t
spawn_sweep_strays(int (*ours)(pid_t), size_t *sent)
{
	struct desc	*v = NULL;
	size_t		 n = 0, cap = 0, i, k = 0, live = 0, ok = 0;

	add_children(getpid(), &v, &n, &cap);
	for (i = 0; i < n; i++)
		if (!ours(v[i].pid))
			v[k++] = v[i];
	n = k;
	for (i = 0; i < n; i++)		/* n grows as we walk */
		add_children(v[i].pid, &v, &n, &cap);
	for (i = 0; i < n; i++) {
		if (is_dead(v[i].pid))
			continue;
		live++;
		if (proc_signal(v[i].pid, v[i].start, SIGKILL) == 0)
			ok++;
	}
	/* Our strays that died, now or before: theirs come to us next. */
	for (i = 0; i < k; i++)
		waitpid(v[i].pid, NULL, WNOHANG);
	free(v);
	if (sent != NULL)
		*sent = ok;
	return live;
}

/* True if pid is among v[0..n). */
static int
pid_listed(const pid_t *v, size_t n, pid_t pid)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (v[i] == pid)
			return 1;
	return 0;
}

/*
 * Appends to v (n of cap used) each live process of our uid in process
 * group pgrp that is not listed yet: what a rank started and the agent
 * (a subreaper) inherited when its parent died.
 */
static size_t
add_pgrp(pid_t pgrp, pid_t *v, size_t n, size_t cap)
{
	struct proc_info	 pi;
	DIR			*d;
	struct dirent		*de;
	char			*end;
	pid_t			 pid;

	if ((d = opendir("/proc")) == NULL)
		return n;
	while (n < cap && (de = readdir(d)) != NULL) {
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid <= 1 || proc_info(pid, &pi) != 0 ||
		    pi.pgrp != pgrp || pi.uid != getuid() || pi.state == 'Z' ||
		    pi.state == 'X' || pid_listed(v, n, pid))
			continue;
		v[n++] = pid;
	}
	closedir(d);
	return n;
}

size_t
proc_tree(pid_t root, pid_t **pids)
{
	struct desc	*v;
	pid_t		*p;
	size_t		 n, i, k = 0;

	*pids = NULL;
	n = spawn_walk(root, &v);
	/* Room for the root, its descendants and a few of its group more. */
	if ((p = calloc(n + 1 + PROC_TREE_PGRP, sizeof(*p))) == NULL) {
		free(v);
		return 0;
	}
	if (!is_dead(root))
		p[k++] = root;
	for (i = 0; i < n; i++)
		p[k++] = v[i].pid;
	free(v);
	k = add_pgrp(root, p, k, n + 1 + PROC_TREE_PGRP);
	*pids = p;
	return k;
}
