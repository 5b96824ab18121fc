/*
 * job.h -- one job: its hosts' agents, its ranks, and the fail-fast policy.
 *
 * The job never touches a worker process: it talks to one agent per host
 * (agents.h) through a backend (local pipe, ssh, srun) and reacts to what
 * they report. job.c is the core: every host's phase (phase.h) and the
 * attempt's, the fail-fast policy, the exit status. Signals (signals.h)
 * and the rendezvous (jobrdzv.h) call back into it; everything else a run
 * does is a feature on its hooks (hooks.h: the output, stack reports, the
 * watch, the check, the sync).
 */
#ifndef DT_JOB_H
#define DT_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/job/agents.h"
#include "launcher/job/jobend.h"

struct job;
struct opts;
struct plan;

/* A frame arrived from h's agent. */
void	job_host_frame(struct job_host *, uint8_t type, const uint8_t *, size_t);
/* h's agent link ended; err 0 = clean EOF. */
void	job_host_closed(struct job_host *, int err, const char *why);

/*
 * Runs one attempt of the job to the end and fills a's results; returns
 * dtrun's exit status. Call it with signals_hold(1) in force: it
 * takes the stop signals once its handlers are in, and leaves them held
 * (pending, not lost) when it returns.
 */
int	job_run(struct job_scope *, const struct opts *, const struct plan *,
	    const char *job_id, struct job_attempt *a);

#endif
