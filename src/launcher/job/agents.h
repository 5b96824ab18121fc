/*
 * agents.h -- every host's agent and the way to reach it, kept across the
 * job's attempts.
 *
 * A struct job_host is one host and its agent's connection. It outlives an
 * attempt: the scope (struct job_scope) holds every host ever met, and
 * agents_attach hands an attempt its hosts in the plan's order, the agents
 * of the last attempt kept where they are still up and idle (restarts cost
 * no new connection). What a host is in one attempt (struct host_attempt)
 * is cleared at once when the attempt takes it. The job (job.h) moves a
 * host's phase; backends read it through host_hello and host_done.
 */
#ifndef DT_AGENTS_H
#define DT_AGENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/phase.h"

struct dt_err;
struct dt_wbuf;
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
	/*
	 * May be NULL. Closes h's link, so its agent starts to exit, without
	 * waiting for it: free follows. Hanging up every host first lets
	 * their agents end together, not one after another in free.
	 */
	void		(*hangup)(struct job_host *);
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

/* What a host is in one attempt; agents_attach clears it all at once. */
struct host_attempt {
	enum host_phase	 phase;		/* moved by the job alone (job.c host_to) */
	int		 hello;		/* its HELLO came (it may be done since) */
	int		 free_port;	/* from HELLO */
	int		 got_ports;	/* PORTLIST received */
	int		 lost;		/* its link broke, it went silent, or
					   its agent was killed */
};

/* One host and its agent. */
struct job_host {
	struct job_scope	*scope;
	struct job		*job;		/* the attempt; NULL between them */
	const struct opts	*o;
	char			*name;		/* the plan host's, kept */
	int			 index;		/* node rank in the attempt */
	const struct plan_host	*ph;		/* the attempt's plan host */
	const struct backend	*be;
	void			*priv;		/* the backend's */
	struct link		*link;		/* to the agent, made by start */
	char			*agent_host;	/* hostname the agent reported */
	pid_t			 agent_pid;	/* pid the agent reported */
	int			 idle;		/* its agent said DONE and waits */
	int			 down;		/* its link closed or was cut */
	struct host_attempt	 at;
};

/* True once h's agent said HELLO in this attempt. */
int	host_hello(const struct job_host *h);
/* True once h is done in this attempt: its agent said DONE, or it is lost. */
int	host_done(const struct job_host *h);

/*
 * The hosts and agents of a job's attempts, on one event base. NULL if
 * out of memory or libevent will not start.
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

/* The event base every part of the job uses. */
struct event_base *job_base(struct job_host *);
struct event_base *agents_base(struct job_scope *);
/* Every host of h's attempt, in node-rank order, for backends that start all at once (srun). */
struct job_host	**job_hosts(struct job_host *h, size_t *n);

/*
 * Gives attempt j its hosts, in p's order (returned; p->nhosts of them):
 * the scope's, their agents kept where still up and idle, their
 * host_attempt cleared. Hosts p dropped are disconnected.
 */
struct job_host	**agents_attach(struct job_scope *, struct job *j,
		    const struct plan *p);
/*
 * The attempt is over: its hosts go back to the scope. An agent that
 * said DONE stays for the next attempt where its backend allows; any
 * other is disconnected now, so that nothing of the attempt runs on.
 */
void		 agents_detach(struct job_scope *);

/*
 * Queues wb's frames to h's agent and empties wb; they are dropped when h
 * is done or has no link. Sending to an ssh host can read and handle other
 * hosts' frames before it returns, and their handlers may encode into the
 * same wb and send: h's bytes go from a buffer of their own, so no host is
 * ever sent another's frames. Exits if an encoder ran out of memory.
 */
void		 agents_send(struct job_host *h, struct dt_wbuf *wb);
/*
 * Reaches h's agent for a new attempt: a kept one is asked to start over
 * (AGAIN; it answers HELLO), a new one is started by the backend.
 * Returns 0, or DT_ERR_* with e filled.
 */
int		 agents_reach(struct job_host *h, struct dt_err *e);
/*
 * h's agent said HELLO: from now on the link beats (on across attempts,
 * while the agent is kept) and calls silent(h) if the agent goes quiet
 * past --heartbeat-timeout; a first HEARTBEAT tells the agent the timeout.
 * Nothing without a heartbeat timeout.
 */
void		 agents_beat(struct job_host *h, void (*silent)(void *));
/* Stops (1) or resumes (0) reading every agent of the attempt not done: output backs up. */
void		 agents_pause(struct job_scope *, int on);
/* A child exited: each backend of the attempt reaps what is its own. */
void		 agents_reaped(struct job_scope *, pid_t pid, int status);

#endif
