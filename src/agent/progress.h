/*
 * progress.h -- the steps this host's ranks report (DTRUN_PROGRESS), for
 * dtrun's straggler watch. The agent listens on a stream socket in the
 * abstract namespace and gives each rank DTRUN_PROGRESS=unix:@NAME; a
 * rank connects once and writes a line "RANK STEP MS\n" per step (decimal,
 * MS its CLOCK_MONOTONIC milliseconds, which may be left out: the shipped
 * dtrun_progress.py, or dtcomm_step() of libdtcomm). Only a connection
 * from a process of our user is kept, and only a line for a rank of this
 * host counts. dtrun's NCCL profiler plugin writes a line per collective
 * there too. Once a second the last step of each rank that stepped goes
 * to dtrun, and every PROGRESS_USAGE_MS every running rank's CPU time and
 * memory too (dtrun top).
 */
#ifndef DT_PROGRESS_H
#define DT_PROGRESS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct ap_coll;
struct ap_progress;
struct dt_err;
struct event_base;
struct progress;

#define PROGRESS_SEND_MS	1000	/* how often the steps go to dtrun */
#define PROGRESS_USAGE_MS	5000	/* and the ranks' CPU and memory */
#define PROGRESS_MSG_MAX	128	/* bytes of one line */
/* Connections kept at once: a few per rank (its children may report). */
#define PROGRESS_CONNS(n)	(4 * (n) + 64)
#define PROGRESS_PROCS_MAX	64	/* processes of a rank counted */

/* Sends the n ranks' steps to dtrun (a PROGRESS); arg is the agent's. */
typedef void (*progress_send_fn)(void *arg, const struct ap_progress *,
    uint32_t n);

/* Sends the ranks' arrivals at NCCL collectives to dtrun (a COLLS). */
typedef void (*progress_colls_fn)(void *arg, const struct ap_coll *,
    uint32_t n);

/*
 * Listens for the steps of the n ranks (global numbers ranks[0..n)) of
 * job_id, writing "unix:@NAME" into addr. NULL on failure, e filled.
 */
struct progress	*progress_new(struct event_base *, const char *job_id,
		    const uint32_t *ranks, size_t n, progress_send_fn,
		    void *arg, char *addr, size_t addrlen, struct dt_err *e);
/* rank runs as pid (the root of its processes): its usage is sent too. */
void		 progress_started(struct progress *, uint32_t rank, pid_t pid);
/*
 * Lines "coll RANK NRANKS COMM SEQ NS" (dtrun's NCCL profiler plugin)
 * are kept and sent with the steps, through fn.
 */
void		 progress_on_colls(struct progress *, progress_colls_fn fn);
/* Sends what is new at once: the ranks are done. */
void		 progress_flush(struct progress *);
void		 progress_free(struct progress *);

#endif
