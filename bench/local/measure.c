/*
 * measure.c -- runs a command and reports, in one line:
 *   exit=CODE wall_ms=MS peak_rss_kb=KB tree_rss_kb=KB end_ns=NS cpu_ms=MS
 *   peak_fds=N
 * peak_rss_kb is the command's own VmHWM, sampled every millisecond (it only
 * grows, so the last sample is its peak, not its children's); tree_rss_kb is
 * wait4's maxrss, the largest of it and the children it reaped; end_ns is
 * CLOCK_REALTIME when it exited; cpu_ms the command's own CPU time
 * (schedstat, read from its zombie, so not its children's); peak_fds the most
 * descriptors it had open, sampled every 16 ms. "measure CMD [ARGS...]".
 */
#include <sys/resource.h>
#include <sys/wait.h>

#include <dirent.h>
#include <unistd.h>

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

static long long
now(clockid_t c)
{
	struct timespec	ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* How many descriptors pid has open, or -1. */
static long
count_fds(pid_t pid)
{
	char		 path[64];
	DIR		*d;
	struct dirent	*e;
	long		 n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The CPU pid itself used, in ms: schedstat's nanoseconds on a CPU (stat's
 * user and system ticks are 10 ms coarse), or -1.
 */
static double
own_cpu_ms(pid_t pid)
{
	char			 path[64];
	unsigned long long	 ns;
	FILE			*f;
	int			 n;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fscanf(f, "%llu", &ns);
	fclose(f);
	return n == 1 ? ns / 1e6 : -1;
}

int
main(int argc, char **argv)
{
	char		 path[64], line[256];
	long long	 t0, t1, end;
	long		 hwm = -1, fds, peak_fds = -1;
	double		 cpu;
	unsigned	 loops = 0;
	siginfo_t	 si;
	struct rusage	 ru;
	struct timespec	 tick = { 0, 1000 * 1000 };
	pid_t		 pid;
	FILE		*f;
	int		 st;

	if (argc < 2)
		return 2;
	t0 = now(CLOCK_MONOTONIC);
	if (posix_spawnp(&pid, argv[1], NULL, NULL, argv + 1, environ) != 0)
		return 127;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT | WNOHANG) == -1)
			return 1;
		if (si.si_pid == pid)
			break;
		if (loops++ % 16 == 0 && (fds = count_fds(pid)) > peak_fds)
			peak_fds = fds;
		if ((f = fopen(path, "r")) != NULL) {
			while (fgets(line, sizeof(line), f) != NULL)
				if (strncmp(line, "VmHWM:", 6) == 0)
					hwm = atol(line + 6);
			fclose(f);
		}
		nanosleep(&tick, NULL);
	}
	end = now(CLOCK_REALTIME);
	t1 = now(CLOCK_MONOTONIC);
	cpu = own_cpu_ms(pid);		/* a zombie still has its own times */
	wait4(pid, &st, 0, &ru);
	fprintf(stderr, "exit=%d wall_ms=%.3f peak_rss_kb=%ld tree_rss_kb=%ld "
	    "end_ns=%lld cpu_ms=%.1f peak_fds=%ld\n", WIFEXITED(st) ?
	    WEXITSTATUS(st) : 128 + WTERMSIG(st), (t1 - t0) / 1e6, hwm,
	    ru.ru_maxrss, end, cpu, peak_fds);
	return 0;
}
