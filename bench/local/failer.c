/*
 * failer.c -- for the fail-fast benchmark: rank 0 waits DELAY seconds,
 * writes the CLOCK_REALTIME time (ns) to FILE and exits 1 at once; every
 * other rank sleeps. "failer FILE DELAY".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	const char	*r = getenv("RANK");
	struct timespec	 ts;
	char		 buf[32];
	int		 fd, n;

	if (r == NULL)
		r = getenv("OMPI_COMM_WORLD_RANK");
	if (argc < 3)
		return 2;
	if (r == NULL || atoi(r) != 0) {
		sleep(1000);
		return 0;
	}
	usleep((useconds_t)(atof(argv[2]) * 1e6));
	clock_gettime(CLOCK_REALTIME, &ts);
	n = snprintf(buf, sizeof(buf), "%lld\n",
	    (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if ((fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644)) >= 0) {
		(void)!write(fd, buf, n);
		close(fd);
	}
	_exit(1);
}
