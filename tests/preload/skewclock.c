/*
 * skewclock.c -- an LD_PRELOAD library for tests: in a process named
 * dtrun-agent, CLOCK_REALTIME reads DT_TEST_SKEW_MS milliseconds off (a
 * host whose clock is wrong), so dtrun --check's skew check can be tried
 * for real. Every other clock, and every other process, is left alone.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int	(*clock_fn)(clockid_t, struct timespec *);

int
clock_gettime(clockid_t c, struct timespec *ts)
{
	static clock_fn	 real;
	const char	*v;
	long long	 ms, ns;
	int		 rc;

	if (real == NULL && (real = (clock_fn)dlsym(RTLD_NEXT,
	    "clock_gettime")) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	rc = real(c, ts);
	if (rc != 0 || c != CLOCK_REALTIME ||
	    strcmp(program_invocation_short_name, "dtrun-agent") != 0 ||
	    (v = getenv("DT_TEST_SKEW_MS")) == NULL)
		return rc;
	ms = atoll(v);
	ns = (long long)ts->tv_sec * 1000000000LL + ts->tv_nsec +
	    ms * 1000000LL;
	ts->tv_sec = (time_t)(ns / 1000000000LL);
	ts->tv_nsec = (long)(ns % 1000000000LL);
	return 0;
}
