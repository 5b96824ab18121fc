/*
 * stacks.h -- capture the stacks of running ranks with a debugger found at
 * run time: elfutils' eu-stack (native frames, all threads; fast), else
 * gdb; for a Python rank also its Python frames, which gdb reads from the
 * interpreter with the gdb extension of Debian's python3.X-dbg.
 *
 * Each tool runs as a child with a time bound; one that runs past it is
 * killed and its rank marked "timed out". A traced rank is detached by the
 * tool, or by the kernel when the tool dies; it gets a SIGCONT afterwards
 * in any case, so no rank is ever left stopped.
 *
 * A rank is every process it runs (wrappers, workers): each is captured,
 * at most 16, under a "== process PID, parent PPID, state S: CMD" line;
 * dtrun picks the one doing the work (src/launcher/stacks/stackpick.c).
 */
#ifndef DT_STACKS_H
#define DT_STACKS_H

#include <sys/types.h>

#include <stdint.h>

struct event_base;
struct ap_stack;
struct stacks;

/* Called once per rank captured, then once with rank AP_NORANK (the end). */
typedef void (*stacks_done_fn)(void *arg, const struct ap_stack *);

struct stacks	*stacks_new(struct event_base *, stacks_done_fn, void *arg);

/* Queues rank (process pid) for the next stacks_run. */
void		 stacks_add(struct stacks *, uint32_t rank, pid_t pid);

/*
 * Captures every rank queued, a few at a time; each ends in a done call.
 * Returns 0, or -1 if a capture is already running (nothing queued then).
 */
int		 stacks_run(struct stacks *);

/* True while a capture runs. */
int		 stacks_busy(const struct stacks *);

/* A child was reaped: 1 if it was one of our tools (handled), else 0. */
int		 stacks_reaped(struct stacks *, pid_t, int status);

/* Kills any tool still running (its rank gets SIGCONT) and frees. */
void		 stacks_free(struct stacks *);

#endif
