/*
 * job.h -- one job: its hosts' agents, its ranks, and the fail-fast policy.
 *
 * The job never touches a worker process: it talks to one agent per host
 * through a backend (local pipe, ssh, srun) and reacts to what they report.
 */
#ifndef DT_JOB_H
#define DT_JOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agentproto.h"

struct dt_err;
struct event_base;
struct job;
struct job_host;
struct job_scope;
struct link;
struct opts;
struct plan;
struct plan_host;

/*
 * One way of reaching hosts' agents (pdsh-style operations table). A
 * backend reaches; the link talks: start makes h->link (link.h), over
 * whatever stream the backend has (a socketpair, an ssh channel, srun's
 * TCP), and from then on the job sends, pauses and hears frames through
 * it alone; the backend only moves bytes. What start makes (h->priv,
 * h->link) lives until free: for a backend that says reuse, across the
 * job's attempts while its agent stays up.
 */
struct backend {
	const char	*name;
	int		 reuse;		/* BE_REUSE_*: idle agents serve the next attempt */
	/*
	 * Each byte of its stream costs (ssh: sshd encrypts it, libssh2
	 * decrypts it 16 bytes a call): its agents pack what they send.
	 */
	int		 pack;
	/*
	 * Starts reaching the agent of h and sets h->link, which queues what
	 * the job sends until the agent is there; its frames go to
	 * job_host_frame, its end to job_host_closed. 0 or DT_ERR_*.
	 */
	int		(*start)(struct job_host *, struct dt_err *);
	/*
	 * May be NULL. The job stops before h's agent is reached: returns 1
	 * if the backend gives it up (nothing will run there; the job counts
	 * the host done), 0 if the agent is still to come and hear STOP.
	 */
	int		(*unreached)(struct job_host *);
	/*
	 * May be NULL. What the job learned of h's agent, for a backend that
	 * acts on it without reading frames: JN_HELLO once it is up, JN_ERROR
	 * before an error it reported is acted on.
	 */
	void		(*news)(struct job_host *, int what);
	/* Last resort when an agent does not answer: tear the connection down. */
	void		(*kill)(struct job_host *);
	/* A child process exited: the backend reaps what is its own. */
	void		(*reaped)(struct job_host *, pid_t, int status);
	void		(*free)(struct job_host *);
};

enum { JN_HELLO, JN_ERROR };	/* backend.news */
enum {
	BE_REUSE_NONE,		/* every attempt reaches its agents anew */
	BE_REUSE_HOST,		/* each idle agent is kept, others reached anew */
	BE_REUSE_ALL		/* all are kept if all can be (srun's one step) */
};

extern const struct backend backend_local;
extern const struct backend backend_ssh;
extern const struct backend backend_slurm;

/*
 * One host and its agent. It outlives an attempt (job_scope): index, ph,
 * job and the per-attempt flags below are set afresh by each job_run.
 */
struct job_host {
	struct job_scope	*scope;
	struct job		*job;		/* the attempt; NULL between them */
	const struct opts	*o;
	char			*name;		/* the plan host's, kept */
	int			 index;		/* node rank */
	const struct plan_host	*ph;
	const struct backend	*be;
	void			*priv;		/* the backend's */
	struct link		*link;		/* to the agent, made by start */
	char			*agent_host;	/* hostname the agent reported */
	pid_t			 agent_pid;	/* pid the agent reported */
	int			 hello;
	int			 free_port;	/* from HELLO */
	int			 got_ports;	/* PORTLIST received */
	int			 prepared;
	int			 done;		/* DONE received, or link lost */
	int			 stk_waiting;	/* STACKS sent, its end not back */
	int			 lost;		/* its link broke, it went silent, or
						   its agent was killed */
	int			 idle;		/* its agent said DONE and waits */
	int			 down;		/* its link closed or was cut */
};

/* What ended an attempt first, for --max-restarts (restart.h). */
enum job_cause {
	JC_NONE,	/* it ended well, or for a reason that is not retried */
	JC_RANK,	/* a rank failed */
	JC_LOST,	/* a host or its agent was lost */
	JC_HANG,	/* --hang-timeout */
};

/* One run of the whole job: what restart.c gives job_run and gets back. */
struct job_attempt {
	int		 n;		/* 0, then 1 after the first restart */
	int		 max;		/* --max-restarts */
	const char	*output_dir;	/* this attempt's, or NULL */
	double		 timeout;	/* what is left of --timeout; 0 = none */
	int		 prev_port;	/* the last attempt's MASTER_PORT, or 0 */
	/* Filled by job_run. */
	enum job_cause	 cause;
	int		 signaled;	/* dtrun got a stop signal: no restart */
	char		 what[512];	/* the summary: "rank 1 on a exited ..." */
	char		 host[256];	/* where it happened, or "" */
	char		**lost;		/* names of the hosts lost (xmalloc'd) */
	size_t		 nlost;
	int		 master_port;
};

/* The event base every part of the job uses. */
struct event_base *job_base(struct job_host *);
/* Every host of h's attempt, in node-rank order, for backends that start all at once (srun). */
struct job_host	**job_hosts(struct job_host *h, size_t *n);

/*
 * What outlives one attempt: the event base and every host's connection
 * to its agent, so that a restart reuses the agents that are still up.
 * Returns NULL if out of memory or libevent will not start.
 */
struct job_scope *job_scope_new(const struct opts *);
/*
 * Between attempts: moves the idle agents' bytes, and their links'
 * heartbeats, which cut off an agent gone silent (the next attempt
 * connects again). Returns how many seconds may pass before the next call.
 */
double	 job_scope_tick(struct job_scope *);
/* Closes every link (the agents exit) and frees. */
void	 job_scope_free(struct job_scope *);
/* A frame arrived from h's agent. */
void	job_host_frame(struct job_host *, uint8_t type, const uint8_t *, size_t);
/* h's agent link ended; err 0 = clean EOF. */
void	job_host_closed(struct job_host *, int err, const char *why);

/*
 * Runs one attempt of the job to the end and fills a's results; returns
 * dtrun's exit status. Call it with job_hold_signals(1) in force: it
 * takes the stop signals once its handlers are in, and leaves them held
 * (pending, not lost) when it returns.
 */
int	job_run(struct job_scope *, const struct opts *, const struct plan *,
	    const char *job_id, struct job_attempt *a);
/* Frees what job_run put in a. */
void	job_attempt_free(struct job_attempt *a);

/*
 * For --check and --preflight (check.h). Queues b's frames to h's agent
 * and empties b.
 */
void	job_host_send(struct job_host *h, struct dt_wbuf *b);
/*
 * The check is over: code 0 goes on with the job (--preflight) or ends
 * it well (--check); any other code ends it with that status, no rank
 * started.
 */
void	job_checked(struct job *, int code);
/* Clears the terminal's status line before a table is printed. */
void	job_status_done(struct job *);

/* Holds (1) or lets through (0) the signals dtrun handles. */
void	job_hold_signals(int on);

/* Makes a unique job id into buf. */
void	job_make_id(char *buf, size_t len);

#endif
