/* sys.h -- small process-wide settings the binaries share. */
#ifndef DT_SYS_H
#define DT_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/time.h>
#include <time.h>

/* Raises the soft open-file limit to the hard one: many ranks mean many pipes. */
void	dt_raise_nofile(void);

/* The soft open-files limit, or UINT64_MAX where there is none. */
uint64_t dt_nofile_limit(void);

/* Whether err (an errno) means this process or the system ran out of descriptors. */
int	dt_nofile(int err);

/*
 * Fills buf with why what failed for want of descriptors (err: EMFILE or
 * ENFILE), with the limit and the fix; returns buf.
 */
char	*dt_nofile_msg(char *buf, size_t len, const char *what, int err);

/*
 * Keeps freed stream buffers in the heap: a fixed mmap threshold stops
 * glibc from mapping and unmapping (and faulting in afresh) the chains of
 * every output chunk. Retains at most DT_HEAP_KEEP freed bytes, and maps
 * the heap's next 32 MiB ahead (address space only) for dt_heap_fed.
 */
void	dt_malloc_steady(void);

/*
 * Counts n more bytes of ranks' output this process carries; once they
 * make a flood (128 KiB), advises the heap dt_malloc_steady
 * mapped ahead onto transparent huge pages, once.
 */
void	dt_heap_fed(size_t n);

/* Milliseconds on clock c (CLOCK_MONOTONIC for waits, CLOCK_REALTIME for skew). */
uint64_t dt_clock_ms(clockid_t c);
/* Nanoseconds on clock c (the hosts' wall clocks, for NCCL's arrivals). */
uint64_t dt_clock_ns(clockid_t c);

/*
 * Seconds on clock c, to the nanosecond, as a double: deadlines and idle
 * times (CLOCK_MONOTONIC, or CLOCK_MONOTONIC_COARSE where a tick is enough).
 */
double	dt_clock_s(clockid_t c);

/*
 * Milliseconds left until deadline (dt_clock_s(CLOCK_MONOTONIC) seconds),
 * rounded up, as poll() takes them: 0 once it has passed, -1 for a
 * deadline of 0 (none).
 */
int	dt_ms_left(double deadline);

/*
 * Waits until fd is ready for events (POLLIN, POLLOUT) or deadline (as
 * dt_ms_left's) passes; a signal does not end the wait. Returns 0 when
 * ready, DT_ERR_TIMEOUT, or DT_ERR_SYS with errno set.
 */
int	dt_poll_until(int fd, short events, double deadline);

/*
 * Kills the process group led by pid (SIGKILL: whatever the leader
 * started goes too) and reaps the leader, its status into *status (may be
 * NULL). The leader must be our child, not yet reaped, so the group's id
 * is still ours.
 */
void	dt_kill_reap(pid_t pid, int *status);

/* secs (>= 0) as a struct timeval, for event_add and friends. */
struct timeval dt_timeval(double secs);

/*
 * Accepts up to max connections waiting on lfd (flags as accept4's),
 * giving each to take. A listener out of descriptors (EMFILE, ENFILE)
 * would wake its level-triggered event at once, forever: then shed (may
 * be NULL) is asked to close one the caller holds (1: it did), else a
 * waiting connection is shed with *reserve, a descriptor kept for the
 * purpose (dt_reserve_open; -1: none), closed, the connection accepted
 * and closed, and the reserve opened again. Returns 0, or -1 when nothing
 * could be shed: the caller rests its listener a while.
 */
int	dt_accept_some(int lfd, int flags, int max, int *reserve,
	    void (*take)(void *, int), int (*shed)(void *), void *arg);

/* A reserve descriptor for dt_accept_some (/dev/null), or -1. */
int	dt_reserve_open(void);

/* Sets O_NONBLOCK on fd (kept if it is set already). */
void	dt_set_nonblock(int fd);

#endif
