/* procs.h -- starting one rank and finding/killing what it left behind. */
#ifndef DT_PROCS_H
#define DT_PROCS_H

#include <sys/types.h>

struct dt_err;

/* What /proc says about one process. */
struct proc_info {
	pid_t			 ppid;
	pid_t			 pgrp;
	char			 state;		/* 'R', 'S', ... 'Z' */
	unsigned long long	 cpu;		/* fields 14 + 15: clock ticks of
						   CPU used, user and system */
	unsigned long long	 start;		/* field 22: clock ticks after boot */
	uid_t			 uid;		/* owner of /proc/PID */
};

/* Reads /proc/PID/stat and its owner into *pi; 0, or -1 if pid is gone. */
int	proc_info(pid_t, struct proc_info *pi);

/* Field 22 of /proc/PID/stat (start time in clock ticks), or 0. */
unsigned long long proc_starttime(pid_t);

/*
 * pidfd_open(2) by number (glibc has the wrapper only since 2.36, and the
 * agent must run on older hosts): readable once pid exits. -1 with errno,
 * ENOSYS where the kernel has none (before 5.3).
 */
int	proc_pidfd(pid_t);

/*
 * Sends sig to pid only if it is still the process that started at start
 * and belongs to our uid; never to pid 1 or below. The check and the
 * signal go through one pidfd (Linux 5.3), so a pid reused in between is
 * never hit. Returns 0 when sent, else -1 (the process is not that one,
 * or gone).
 */
int	proc_signal(pid_t pid, unsigned long long start, int sig);

/* Which processes proc_signal_match picks, besides being ours and alive. */
struct proc_match {
	const char	*env;		/* "NAME=VALUE" in their environment */
	const pid_t	*pgrps;		/* or in one of these process groups */
	size_t		 npgrps;
	pid_t		 skip[2];	/* never these (nor pid 1, nor us) */
};

/*
 * Sends sig (proc_signal) to each live process of our uid that m picks;
 * with sig 0 only counts them. Returns how many there were.
 */
size_t	proc_signal_match(const struct proc_match *m, int sig);

/*
 * Brackets a batch of spawn_rank calls (a host's ranks): signals stay
 * blocked from begin to end, not blocked and restored per rank, and the
 * signals whose disposition is not the default are read once at begin,
 * so each child resets those few rather than every signal (a system call
 * each). No handler may be set in between. Batches nest.
 */
void	spawn_batch_begin(void);
void	spawn_batch_end(void);

/*
 * Starts path with argv/envp in a new process group, stdin from /dev/null
 * (devnull), stdout/stderr onto outfd/errfd, and SIGKILL if the agent
 * dies (PR_SET_PDEATHSIG); the agent and its children may ptrace it
 * (PR_SET_PTRACER, for stacks.c). Returns the pid, or -errno if it could not
 * start (the exec's own error included).
 */
pid_t	spawn_rank(const char *path, char *const argv[], char *const envp[],
	    int devnull, int outfd, int errfd);

/*
 * Makes spawn_rank's cost independent of how many descriptors are open
 * (see procs.c): reserves three low descriptors on devnull, so call it
 * first thing, while the table is small. Returns 0, or -1 where the
 * kernel lacks CLOSE_RANGE_UNSHARE (spawn_rank then vforks as before).
 */
int	spawn_init(int devnull);

/*
 * Finds argv0 the way execvp would, using path_env as PATH (NULL: the
 * default path), into *path (malloc'd). Returns 0, or DT_ERR_NOTFOUND
 * (nowhere), DT_ERR_INVAL (not executable, or a directory) or
 * DT_ERR_NOMEM with *path NULL and e (may be NULL) filled: its msg says
 * what is wrong with argv0 and the fix ("is not executable (chmod +x
 * it)"), for a message that names argv0 first; its errnum is ENOENT,
 * EACCES, EISDIR or ENOMEM.
 */
int	spawn_resolve(const char *argv0, const char *path_env, char **path,
	    struct dt_err *e);

/*
 * Lists every live descendant of this process (children, their children...)
 * by reading /proc/self/task/T/children recursively. Returns the count and
 * a malloc'd array in *pids (NULL when none).
 */
size_t	spawn_descendants(pid_t **pids);

/*
 * Lists root (if alive), then its live descendants breadth first, then up
 * to PROC_TREE_PGRP other live processes of ours in process group root
 * (a rank's group: what its children left when they died). Returns the
 * count and a malloc'd array in *pids (NULL when none).
 */
#define PROC_TREE_PGRP	64
size_t	proc_tree(pid_t root, pid_t **pids);

/*
 * Sends sig to every descendant (proc_signal); returns how many there
 * were, and in *sent (if not NULL) how many could be signalled.
 */
size_t	spawn_kill_descendants(int sig, size_t *sent);
/* The same for root's descendants (root itself is left alone). */
size_t	spawn_kill_below(pid_t root, int sig, size_t *sent);

/*
 * For a subreaper with children of its own: SIGKILLs each child that
 * ours() does not claim (an orphan it adopted) and everything below it,
 * and reaps those children that are dead. Returns how many such processes
 * were alive, and in *sent (if not NULL) how many could be signalled;
 * call it until it returns 0, as what they leave comes to us in turn.
 */
size_t	spawn_sweep_strays(int (*ours)(pid_t), size_t *sent);

#endif
