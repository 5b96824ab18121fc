/* child.c -- posix_spawn for dtrun's helpers, with their fds and signals. */
#include <sys/types.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

#include "child.h"

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
	return rc;
}
