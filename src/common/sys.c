/* sys.c -- small process-wide settings the binaries share. */
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sys.h"

/* Buffers below this come from the heap: an OUTPUT frame's chain is 128 KiB. */
#define DT_MMAP_MIN	(4 * 1024 * 1024)
/* Free heap kept, not given back: a few links' and sinks' worth of chains. */
#define DT_HEAP_KEEP	(16 * 1024 * 1024)
/* Heap growth mapped ahead, in one mapping huge pages can back. */
#define DT_HEAP_PAD	(32 * 1024 * 1024)
#define DT_HUGE_PAGE	(2 * 1024 * 1024)
/* Output carried before the heap goes on huge pages: a flood, not a job's chatter. */
#define DT_HEAP_HUGE_AFTER	(128 * 1024)

void
dt_raise_nofile(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

uint64_t
dt_nofile_limit(void)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return UINT64_MAX;
	return rl.rlim_cur;
}

int
dt_nofile(int err)
{
	return err == EMFILE || err == ENFILE;
}

char *
dt_nofile_msg(char *buf, size_t len, const char *what, int err)
{
	struct rlimit	rl;

	if (err == ENFILE) {
		snprintf(buf, len, "%s: the system's table of open files is "
		    "full (ENFILE): raise fs.file-max (sysctl), or run fewer "
		    "ranks", what);
		return buf;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = rl.rlim_max = 0;
	snprintf(buf, len, "%s: out of file descriptors at the open-files "
	    "limit of %llu (hard limit %llu): raise it (ulimit -n, "
	    "LimitNOFILE= or limits.conf), or run fewer ranks", what, (unsigned long long)rl.rlim_cur,
	    (unsigned long long)rl.rlim_max);
	return buf;
}

/* The heap's span mapped ahead by dt_malloc_steady, for dt_heap_fed. */
static uintptr_t heap_lo, heap_hi;

void
dt_malloc_steady(void)
{
	uintptr_t	 at, top, mask = ~(uintptr_t)(DT_HUGE_PAGE - 1);
	void		*p;

#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	/* Setting either stops glibc's sliding thresholds; they are hints only. */
	mallopt(M_MMAP_THRESHOLD, DT_MMAP_MIN);
	mallopt(M_TRIM_THRESHOLD, DT_HEAP_KEEP);
#endif
#ifdef M_TOP_PAD
	/* The next growth maps DT_HEAP_PAD more: address space, no memory. */
	mallopt(M_TOP_PAD, DT_HEAP_PAD);
#endif
	if ((p = malloc(256 * 1024)) == NULL)
		return;
	at = (uintptr_t)p;
	free(p);		/* glibc trims the top back to the pad */
	top = (uintptr_t)sbrk(0);
	/* Not from the brk heap (a sanitizer's allocator): leave it. */
	if (at < top && top - at <= 2 * DT_HEAP_PAD) {
		heap_lo = (at + DT_HUGE_PAGE - 1) & mask;
		heap_hi = top & mask;
	}
}

/*
 * Advises the span dt_malloc_steady mapped ahead onto transparent huge
 * pages (used where THP is "madvise" or "always"): a fault there maps 2
 * MiB, not 4 KiB. Measured on a VM that takes ~22 us a fault: the log
 * path's buffers (a packing agent's link queue, dtrun's sinks, --collapse's
 * held lines) touch tens of MiB: 4 ranks x 250k lines took 15-16% less
 * time, 27-33% with --collapse (64 ranks: 16%). Not from the start:
 * zeroing a 2 MiB page costs a short job more than its few small faults
 * (dtrun -n 1 true took 2 ms longer). Growth past the span is a new
 * mapping, on small pages.
 */
void
dt_heap_fed(size_t n)
{
	static uint64_t	fed;
	static int	done;

	if (done || (fed += n) < DT_HEAP_HUGE_AFTER)
		return;
	done = 1;
	if (heap_hi > heap_lo)
		(void)madvise((void *)heap_lo, heap_hi - heap_lo, MADV_HUGEPAGE);
}

uint64_t
dt_clock_ms(clockid_t c)
{
	struct timespec	ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
dt_clock_ns(clockid_t c)
{
	struct timespec	ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int
dt_ms_left(double deadline)
{
	double	left;

	if (deadline == 0)
		return -1;
	left = deadline - dt_clock_s(CLOCK_MONOTONIC);
	return left <= 0 ? 0 : left > 1e6 ? 1000000000 : (int)(left * 1000) + 1;
}

int
dt_poll_until(int fd, short events, double deadline)
{
	struct pollfd	pfd;
	int		n;

	pfd.fd = fd;
	pfd.events = events;
	for (;;) {
		n = poll(&pfd, 1, dt_ms_left(deadline));
		if (n > 0)
			return 0;
		if (n == 0)
			return DT_ERR_TIMEOUT;
		if (errno != EINTR)
			return DT_ERR_SYS;
	}
}

void
dt_kill_reap(pid_t pid, int *status)
{
	kill(-pid, SIGKILL);
	while (waitpid(pid, status, 0) == -1 && errno == EINTR)
		;
}

struct timeval
dt_timeval(double secs)
{
	struct timeval	tv;

	tv.tv_sec = (time_t)secs;
	tv.tv_usec = (suseconds_t)((secs - (double)tv.tv_sec) * 1e6);
	return tv;
}

double
dt_clock_s(clockid_t c)
{
	struct timespec	ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
dt_set_nonblock(int fd)
{
	int	fl = fcntl(fd, F_GETFL);

	if (fl != -1 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
dt_reserve_open(void)
{
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* One waiting connection shed with *reserve: 1, 0 (none), -1 (no reserve). */
static int
dt_accept_shed(int lfd, int *reserve)
{
	int	c, err;

	if (*reserve < 0 && (*reserve = dt_reserve_open()) < 0)
		return -1;
	close(*reserve);
	c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	err = errno;
	if (c >= 0)
		close(c);
	*reserve = dt_reserve_open();
	if (c >= 0 || err == EINTR || err == ECONNABORTED)
		return 1;
	/*
	 * Still none (the freed slot is past a lowered limit, or another
	 * process took the system's): rest, never spin.
	 */
	return dt_nofile(err) ? -1 : 0;
}

int
dt_accept_some(int lfd, int flags, int max, int *reserve,
    void (*take)(void *, int), int (*shed)(void *), void *arg)
{
	int	c, i, r;

	for (i = 0; i < max; i++) {
		if ((c = accept4(lfd, NULL, NULL, flags)) >= 0) {
			take(arg, c);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (!dt_nofile(errno))
			return 0;
		if ((shed != NULL && shed(arg)) ||
		    (r = dt_accept_shed(lfd, reserve)) > 0)
			continue;
		return r < 0 ? -1 : 0;
	}
	return 0;
}
