/*
 * restart.h -- --max-restarts: run the whole job again after it failed.
 *
 * An attempt that ends because a rank failed, a host or its agent was lost
 * (its link broke, it went silent, its agent got SIGTERM or lost its
 * keeper) or --hang-timeout found it hung is followed by another, while
 * the budget lasts: one budget for the whole job, never per host. Nothing
 * else restarts: a stop signal to dtrun (INT, TERM, HUP; dtrun-kill), the
 * end of --timeout (which bounds all attempts together), configuration and
 * usage errors (2, 126, 127), an internal error (70), ranks that never
 * joined the rendezvous (125), a closed stdout (141). Nor does an attempt
 * whose first failed rank failed as the last attempt's did (crashsig.h:
 * the same exit code or signal, exception and last frames), unless
 * --restart-on-same-failure: it would only fail again.
 *
 * Every attempt is a fresh job run (job.h): new agents and links, a new
 * rendezvous secret and round, new MASTER_PORT and framework ports; only
 * the job id stays. Before attempt K (K >= 1) dtrun waits --restart-delay
 * SECS * 2^(K-1), at most max(SECS, 300) seconds; INT, TERM or HUP during
 * that wait end the job at once with 128+N. A lost host's place goes to
 * a spare while one is left (--spares: its ranks, NODE_RANK and local
 * ranks); otherwise lost hosts are dropped when the others still take -n
 * ranks (or --min-np), or else tried again. The exit status is the last
 * attempt's.
 */
#ifndef DT_RESTART_H
#define DT_RESTART_H

struct job_feature;
struct opts;
struct plan;

/* Longest wait between attempts, unless --restart-delay asks for more. */
#define RESTART_DELAY_CAP	300

/*
 * Runs the job with the features of list (NULL-terminated; hooks.h),
 * again after failures as o asks; returns dtrun's exit status.
 */
int	restart_run(const struct opts *o, struct plan *p, const char *job_id,
	    const struct job_feature *const *list);

#endif
