/*
 * jobint.h -- the insides of the job's core, shared by job.c (phases,
 * fail-fast, the attempt's life) and jobframe.c (each agent frame).
 */
#ifndef DT_JOBINT_H
#define DT_JOBINT_H

#include <stddef.h>

#include "launcher/job/agents.h"
#include "launcher/job/attempt.h"
#include "launcher/job/jobend.h"
#include "common/wire.h"

/*
 * Where an attempt is. Each phase waits for every host's reply to what
 * the one before sent; job_advance moves on once it is in. A stop (a
 * failure, a signal, a timeout) can come in any phase and is the last.
 */
enum job_phase {
	JP_CONNECTING,		/* agents starting: every HELLO, and the sync */
	JP_CHECKING,		/* --check, --preflight: every CHECKED */
	JP_PORTS,		/* PORTS sent where needed: every PORTLIST */
	JP_PREPARING,		/* JOB, RANKs, PREPARE sent: every PREPARED */
	JP_RUNNING,		/* START sent: ranks run until they end */
	JP_STOPPING		/* STOP sent: every DONE (or link lost) */
};

struct job {
	struct event_base	*base;
	const struct opts	*o;
	const struct plan	*plan;
	const char		*id;
	struct job_scope	*scope;
	struct job_host		**hosts;	/* the plan's, in its order */
	struct attempt		 run;		/* what it set up around the agents */
	struct dt_wbuf		 wb;
	struct jobend		 je;		/* how it ends: exit status, summary */
	enum job_phase		 phase;
	size_t			 nat[HP_NPHASES]; /* hosts in each phase (host_to) */
	size_t			 nports_pending; /* PORTLIST replies owed */
	int			 started;	/* all PREPARED, START sent (and maybe
						   stopped since) */
	int			 start_sent;	/* START went with PREPARE (one host) */
	struct event		*ev_timeout;
	struct event		*ev_watchdog;
	int			 held[JG_NGATES]; /* job_ctl_hold's, not released */
	int			 start_report;	/* a feature shows why ranks never
						   joined, then stops the job */
	struct job_attempt	*att;		/* this attempt, for restarts */
};

/* job.c: what the frame handlers move the job with. */
void	host_to(struct job_host *h, enum host_phase to);
int	job_stopping(const struct job *j);
size_t	job_live(const struct job *j);
void	job_stop(struct job *j, int sig, double grace);
void	job_fail(struct job *j, int code);
void	job_advance(struct job *j);
void	job_host_done(struct job_host *h);
void	job_host_silent(void *arg);

#endif
