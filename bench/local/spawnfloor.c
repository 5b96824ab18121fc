/*
 * spawnfloor.c -- the floor for launching: posix_spawn N copies of a
 * command and wait for them all. "spawnfloor N CMD [ARGS...]".
 */
#include <sys/wait.h>

#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>

extern char **environ;

int
main(int argc, char **argv)
{
	int	n, i, st, bad = 0;
	pid_t	pid;

	if (argc < 3) {
		fprintf(stderr, "usage: spawnfloor N CMD [ARGS...]\n");
		return 2;
	}
	n = atoi(argv[1]);
	for (i = 0; i < n; i++)
		if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0)
			return 1;
	for (i = 0; i < n; i++)
		if (wait(&st) == -1 || st != 0)
			bad = 1;
	return bad;
}
