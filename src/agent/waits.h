/*
 * waits.h -- where this host's ranks wait, sampled from /proc: for dtrun's
 * lock-step straggler watch (the rank the others wait for waits least).
 * While the watch is on (DTRUN_PROGRESS=agent) the agent looks at each
 * running rank's main thread WAITS_SAMPLE_MS apart, without stopping it
 * (its state, its blocking call and what that call's descriptor is),
 * classes each look (waitclass.h) and sends the counts, with the main
 * thread's CPU and run-queue time, once a second (a WAITS frame). A rank
 * that is a wrapper waiting on a child (sh -c, a launcher script) is
 * followed down to the child.
 */
#ifndef DT_WAITS_H
#define DT_WAITS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct ap_wait;
struct event_base;
struct waits;

#define WAITS_SAMPLE_MS	50	/* between looks, on average */
#define WAITS_SEND_MS	1000	/* how often the counts go to dtrun */
#define WAITS_THREADS_MAX 64	/* threads of a rank looked at, at most */

typedef void (*waits_send_fn)(void *arg, const struct ap_wait *,
    uint32_t n);

/* Samples the n ranks (global numbers ranks[0..n)) once they run. */
struct waits	*waits_new(struct event_base *, const uint32_t *ranks,
		    size_t n, waits_send_fn, void *arg);
/* rank runs as pid (0: it ended). */
void		 waits_started(struct waits *, uint32_t rank, pid_t pid);
void		 waits_free(struct waits *);

#endif
