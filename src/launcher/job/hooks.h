/*
 * hooks.h -- how a feature lives on the job's core. The core (job/) runs
 * the agents, the phases, fail-fast and the end; everything else a run
 * does (the output and the status line, stack reports, the straggler
 * watch and dtrun top, the check, the sync, and the next) is a feature:
 * one table of hooks (struct job_feature) that the core calls at the
 * moments below, with the feature's own state. A feature sees the attempt
 * through a read-only view (struct job_view) and asks the core for the
 * little it may (job_ctl_*): stop the job with a cause, hold a phase,
 * pause the agents. The core includes no feature's header: the features
 * are listed once, in main.c, and a new one is its own folder and one
 * line there.
 *
 * Every hook may be NULL. Within one moment the features are called in
 * the order of the list; drain and close go the other way, so the output,
 * first in the list, is written out last.
 */
#ifndef DT_HOOKS_H
#define DT_HOOKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ap_coll;
struct ap_hello;
struct ap_progress;
struct ap_stack;
struct ap_wait;
struct dt_err;
struct env_ctx;
struct event_base;
struct job;
struct job_host;
struct jobend;
struct opts;
struct plan;
struct ranks;

/* What a feature sees of one attempt: it reads, never writes. */
struct job_view {
	struct event_base	*base;
	const struct opts	*o;
	const struct plan	*plan;
	const char		*id;		/* the job's */
	int			 attempt;	/* 0, then 1 after the first restart */
	const char		*output_dir;	/* this attempt's, or NULL */
	struct job_host		**hosts;	/* the plan's, in its order */
	const struct ranks	*ranks;		/* who started, runs, ended */
	const struct env_ctx	*env;		/* what the ranks' variables are made of */
	struct job		*job;		/* for job_ctl_* */
};

struct job_feature {
	const char	*name;

	/*
	 * Once per job, around all its attempts: what the feature keeps from
	 * one to the next (dtrun top's socket), or NULL. note: said when the
	 * ranks start ("started 4 ranks ... (job ID; NOTE)") if it keeps one.
	 */
	void	*(*job_open)(struct event_base *, const struct opts *,
		    const char *id);
	void	 (*job_close)(void *kept);
	const char *note;

	/*
	 * Once per attempt, before any host is reached: sets *state, what
	 * every other hook gets (NULL: the feature sits this attempt out).
	 * Returns 0, or nonzero with e filled: the attempt does not start,
	 * the features after it are not opened, and those opened (with what
	 * this one set in *state) are drained and closed.
	 */
	int	(*open)(const struct job_view *, void *kept, void **state,
		    struct dt_err *e);
	/* The loop is over: write out what is pending. */
	void	(*drain)(void *);
	void	(*close)(void *);

	/* Hosts: an agent said HELLO; every agent did; one is PREPARED; one is lost. */
	void	(*connected)(void *, size_t host, const struct ap_hello *);
	void	(*all_connected)(void *);
	void	(*prepared)(void *, size_t host);
	void	(*host_lost)(void *, size_t host);

	/* START went to every host. */
	void	(*started)(void *);
	/* Ranks: one runs; joined the rendezvous; spoke to it; wrote; ended. */
	void	(*rank_started)(void *, size_t rank);
	void	(*rank_joined)(void *, size_t rank);
	void	(*rank_alive)(void *, size_t rank);
	void	(*output)(void *, size_t rank, int stream, const uint8_t *,
		    size_t);
	void	(*rank_ended)(void *, size_t rank);
	/*
	 * The ranks of host's arrivals at NCCL collectives (checked to be
	 * host's), host's wall clock at now_ns as its agent sent them.
	 */
	void	(*colls)(void *, size_t host, uint64_t now_ns,
		    const struct ap_coll *, uint32_t n);
	/*
	 * Where host's ranks waited (checked to be host's), sampled by its
	 * agent over the last second.
	 */
	void	(*waits)(void *, size_t host, const struct ap_wait *,
		    uint32_t n);
	/* A rank's progress (its step, its usage), checked to be h's; now: CLOCK_MONOTONIC ms. */
	void	(*progress)(void *, const struct ap_progress *, uint64_t now);

	/*
	 * The frames that are a feature's: CHECKED (returns 0, or a DT_ERR_*:
	 * malformed or out of turn), STACK, STACKASK and STORE. A CHECKED
	 * that no feature takes is a protocol error; a STORE is dropped.
	 */
	int	(*checked)(void *, struct job_host *, const uint8_t *, size_t);
	void	(*stack)(void *, size_t host, const struct ap_stack *);
	void	(*stackask)(void *);
	/* STORE: a rank's TCPStore bytes on h's channel chan; none: it closed. */
	void	(*store)(void *, struct job_host *, uint32_t chan,
		    const uint8_t *, size_t);

	/* dtrun got SIGQUIT. */
	void	(*quit)(void *);
	/*
	 * Ranks never joined within --start-timeout (missing[rank] set, or
	 * NULL; taken): returns 1 if the feature stops the job itself once
	 * it has shown why (their stacks). Nobody: the job stops at once.
	 */
	int	(*start_timeout)(void *, uint8_t *missing);
	/* A child exited: returns 1 if it was the feature's. */
	int	(*reaped)(void *, pid_t, int status);
	/* Something is about to be printed: clear what is drawn. */
	void	(*quiet)(void *);
	/* STOP goes out to the agents: start nothing new. */
	void	(*stopping)(void *);
};

/*
 * The phases a feature may hold back: JG_CONNECT, the job's going on
 * once every agent said HELLO (the sync's copies); JG_CHECK, its going on
 * to the ports and PREPARE (the check's answers).
 */
enum job_gate { JG_CONNECT, JG_CHECK, JG_NGATES };

/* What a job's features keep across its attempts (hooks.c). */
struct features;

/* Opens list's features (NULL-terminated) for one job; job_close at free. */
struct features	*features_new(const struct job_feature *const *list,
		    struct event_base *, const struct opts *, const char *id);
void		 features_free(struct features *);

/* What a feature may ask of the job (job.c). True once the job stops. */
int	job_ctl_stopping(const struct job *);
/* The first cause wins: code becomes the exit status, and the job stops. */
void	job_ctl_fail(struct job *, int code);
/*
 * Stops the job unless it is stopping: code 0 leaves the exit status as
 * it is (a cause recorded in job_ctl_end's first, or a good end).
 */
void	job_ctl_stop(struct job *, int code);
/* Where a feature records its cause of the end (jobend.h), before it stops. */
struct jobend *job_ctl_end(struct job *);
/* Hold phase g back until as many releases; a release moves the job on. */
void	job_ctl_hold(struct job *, enum job_gate g);
void	job_ctl_release(struct job *, enum job_gate g);
/* Stop (1) or resume (0) reading every agent: the output backs up. */
void	job_ctl_pause(struct job *, int on);
/* Before a feature prints: every feature's quiet hook. */
void	job_ctl_quiet(struct job *);
/* dtrun's stdout (1) or stderr (2) lost its reader. */
void	job_ctl_stream_lost(struct job *, int stream);
/* Feature f's state in this attempt, or NULL (for a feature built on another). */
void	*job_feature_state(const struct job *, const struct job_feature *f);

#endif
