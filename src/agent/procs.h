/* procs.h -- starting one rank and finding/killing what it left behind. */
#ifndef DT_PROCS_H
#define DT_PROCS_H

#include <sys/types.h>

/*
 * Starts path with argv/envp in a new process group, stdin from /dev/null
 * (devnull), stdout/stderr onto outfd/errfd, and SIGKILL if the agent
 * dies (PR_SET_PDEATHSIG). Returns the pid, or -errno if it could not
 * start (the exec's own error included).
 */
pid_t	spawn_rank(const char *path, char *const argv[], char *const envp[],
	    int devnull, int outfd, int errfd);

/*
 * Finds argv0 the way execvp would, using path_env as PATH (NULL: the
 * default path). Returns a malloc'd path, or NULL with *err set to ENOENT
 * (not found), EACCES (not executable) or EISDIR.
 */
char	*spawn_resolve(const char *argv0, const char *path_env, int *err);

/*
 * Lists every live descendant of this process (children, their children...)
 * by reading /proc/self/task/T/children recursively. Returns the count and
 * a malloc'd array in *pids (NULL when none).
 */
size_t	spawn_descendants(pid_t **pids);

/* Sends sig to every descendant; returns how many there were. */
size_t	spawn_kill_descendants(int sig);

#endif
