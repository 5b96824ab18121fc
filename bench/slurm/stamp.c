/*
 * stamp.c -- a benchmark rank: writes the wall clock (ns) to DIR/start.RANK
 * as it starts (RANK, else SLURM_PROCID). With FAIL_RANK=R, rank R then
 * waits FAIL_AFTER_MS, writes DIR/fail and exits 1; the other ranks sleep
 * until killed. Without FAIL_RANK every rank exits 0 at once.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Writes the current wall clock in ns to path. */
static void
put_now(const char *path)
{
	struct timespec	ts;
	char		buf[32];
	int		fd, n;

	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld\n",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) == -1)
		exit(70);
	if (write(fd, buf, n) != n)
		exit(70);
	close(fd);
}

int
main(int argc, char **argv)
{
	const char	*rank = getenv("RANK"), *fail = getenv("FAIL_RANK");
	const char	*after = getenv("FAIL_AFTER_MS");
	char		 path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: stamp DIR\n");
		return 2;
	}
	if (rank == NULL)
		rank = getenv("SLURM_PROCID");
	if (rank == NULL)
		rank = "0";
	snprintf(path, sizeof(path), "%s/start.%s", argv[1], rank);
	put_now(path);
	if (fail == NULL)
		return 0;
	if (strcmp(fail, rank) != 0)
		for (;;)
			pause();
	usleep((after ? atoi(after) : 300) * 1000);
	snprintf(path, sizeof(path), "%s/fail", argv[1]);
	put_now(path);
	return 1;
}
