/*
 * killfloor.c -- the floor for fail-fast at scale: starts N sleeping
 * processes, then times SIGTERM to all of them and reaping them all, the
 * least a launcher must wait for when it stops N processes. Prints the
 * milliseconds. "killfloor N".
 */
#include <sys/wait.h>

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int
main(int argc, char **argv)
{
	char		*av[] = { "sleep", "1000", NULL };
	struct timespec	 a, b;
	pid_t		*pids;
	int		 n, i;

	if (argc != 2 || (n = atoi(argv[1])) < 1)
		return 2;
	if ((pids = calloc(n, sizeof(*pids))) == NULL)
		return 70;
	for (i = 0; i < n; i++)
		if (posix_spawnp(&pids[i], "sleep", NULL, NULL, av, environ) != 0)
			return 70;
	usleep(200 * 1000);		/* every one asleep */
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.1f\n", (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6);
	return 0;
}
