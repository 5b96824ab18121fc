/*
 * bigpipe.c -- "bigpipe CMD [ARGS...]": grows its stdout pipe to 1 MiB, as
 * dtrun grows the pipes it writes to (output.c), then runs CMD: the log
 * bench's floor with the same pipe, so the two can be told apart.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bigpipe CMD [ARGS...]\n");
		return 2;
	}
	if (fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1024 * 1024) == -1)
		perror("bigpipe: F_SETPIPE_SZ");
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
