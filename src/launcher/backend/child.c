/* child.c -- posix_spawn for dtrun's helpers, with their fds and signals. */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <time.h>
#include <unistd.h>

#include "host/procs.h"
#include "launcher/backend/child.h"
#include "util/xmalloc.h"

/*
 * Every helper started here: dtrun as its local agent's subreaper
 * (backend_local.c) tells its own children from the orphans it adopts by
 * this list. It never shrinks: an adopted orphan that took the pid of a
 * helper reaped long before (the pids wrapped around meanwhile) would be
 * spared, a double accident left as it is.
 */
static pid_t	*child_pids;
static size_t	 child_npids, child_cap;

/* Starts path as child.h says: own group, clean signals, given fds. */
int
child_spawn(pid_t *pid, const char *path, char *const argv[],
    char *const envp[], int in, int out, int err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t	 at;
	sigset_t		 none, all;
	int			 rc;

	posix_spawn_file_actions_init(&fa);
	if (in < 0)
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY,
		    0);
	else
		posix_spawn_file_actions_adddup2(&fa, in, 0);
	posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (err >= 0)
		posix_spawn_file_actions_adddup2(&fa, err, 2);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawnp(pid, path, &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc == 0) {
		if (child_npids == child_cap) {
			child_cap = child_cap ? child_cap * 2 : 16;
			child_pids = xreallocarray(child_pids, child_cap,
			    sizeof(*child_pids));
		}
		child_pids[child_npids++] = *pid;
	}
	return rc;
}

int
child_ours(pid_t pid)
{
	size_t	i;

	for (i = 0; i < child_npids; i++)
		if (child_pids[i] == pid)
			return 1;
	return 0;
}

/*
 * Without pidfds (Linux before 5.3) looks every millisecond, with one more
 * look after the last sleep so a child that exits on time is not missed.
 */
static int
child_wait_poll(pid_t pid, int *status, int ms)
{
	struct timespec	ts = { 0, 1000 * 1000 };
	int		i;

	for (i = 0; i <= ms; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		if (i < ms)
			nanosleep(&ts, NULL);
	}
	return -1;
}

/*
 * A pidfd turns readable when the child exits: one poll, woken at once,
 * where a loop of short sleeps would add up to a millisecond to every
 * run's end. The child is ours and unreaped, so its pid is not reused.
 */
int
child_wait(pid_t pid, int *status, int ms)
{
	struct pollfd	pfd;
	struct timespec	now;
	long long	end;
	int		fd, n;

	if ((fd = proc_pidfd(pid)) < 0)
		return child_wait_poll(pid, status, ms);
	pfd.fd = fd;
	pfd.events = POLLIN;
	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + ms;
	/* Another child's SIGCHLD interrupts the poll: wait what is left. */
	while ((n = poll(&pfd, 1, ms)) == -1 && errno == EINTR) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (int)(end - (now.tv_sec * 1000LL + now.tv_nsec / 1000000));
		if (ms < 0)
			ms = 0;
	}
	close(fd);
	if (n <= 0)
		return -1;
	return waitpid(pid, status, 0) == pid ? 0 : -1;
}
