/*
 * agentint.h -- the agent's insides, shared by its pieces: agent.c (the
 * conversation and the ranks), prepare.c (PREPARE: environment, setup,
 * interface, commands) and shutdown.c (how it stops, says DONE and
 * exits). Nothing outside src/agent includes it.
 */
#ifndef DT_AGENTINT_H
#define DT_AGENTINT_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/environ.h"
#include "common/wire.h"
#include "proto/agentproto.h"
#include "proto/phase.h"

struct agent;
struct rank;

/* One of a rank's output pipes. */
struct src {
	struct agent	*a;
	struct rank	*r;
	int		 fd;		/* -1 once at EOF */
	uint8_t		 stream;
};

struct rank {
	uint32_t	 rank;
	uint32_t	 local_rank;
	char		**argv;
	char		**env;		/* merged for execve (environ.h) */
	char		*path;		/* resolved argv[0] */
	pid_t		 pid;		/* 0 until started */
	int		 reaped;
	struct src	 out, err;
};

/*
 * How far the agent's end has come (shutdown.c). It only moves on, but
 * for a stopped attempt's, which the next attempt takes back to none.
 */
enum shut_phase {
	SHUT_NONE,		/* nothing asked it to stop */
	SHUT_STOPPING,		/* its ranks are being stopped: DONE once
				   all they started is gone */
	SHUT_FINISHING		/* the loop ends (phase AGP_FINISHING):
				   what is queued is flushed, then it exits */
};

/* Why it stops: the gravest cause so far is kept. */
enum shut_cause {
	SHUT_NOCAUSE,
	SHUT_BY_ATTEMPT,	/* dtrun's STOP, or what ranks left: the
				   next attempt (AGAIN) may follow DONE */
	SHUT_BY_TERM,		/* SIGTERM (dtrun-kill, the host going down,
				   the keeper gone): exit after DONE */
	SHUT_BY_LINK		/* the link to dtrun is down: nothing more is
				   sent, exit once all is gone */
};

struct agent {
	struct event_base *base;
	struct link	*link;
	char		 host[256];
	enum agent_phase phase;		/* where the conversation is: phase.h */
	enum shut_phase	 shut;		/* how far its end has come */
	enum shut_cause	 cause;		/* and why */
	struct ap_job	 job;		/* from AGP_JOB to AGP_RUNNING */
	struct ap_reasm	 reasm;		/* a JOB or RANK sent in parts */
	struct ap_rank	*msgs;		/* RANK messages as received */
	struct rank	*ranks;
	size_t		 nranks;
	size_t		 cap;		/* room in msgs and ranks */
	int		 ports_seen;	/* PORTS is taken once per attempt */
	int		 holding;	/* agent_flush_wb keeps a->wb for now */
	int		 start_asked;	/* START came while preparing (one
					   host): start once PREPARED is sent */
	struct dt_environ base_env;	/* environ + setup's + the job's env */
	struct setup	*setup;		/* the job's --setup, while it runs */
	char		**setup_env;	/* "K=V" it printed */
	size_t		 nsetup_env;
	char		*if_env[3];	/* "NCCL_SOCKET_IFNAME=eth1"...: our choice
					   (one per AP_IF_* bit) */
	size_t		 nif_env;
	int		 bad_frame;	/* dtrun sent one: exit 70, not 0 */
	size_t		 live;		/* started, not yet reaped */
	int		 pipes_paused;
	/*
	 * The ranks' pipes, in an epoll set of their own: the loop watches
	 * that one fd (pipes_ev), so pausing every pipe is one event_del.
	 * pipes_ep is valid while pipes_ev is not NULL.
	 */
	int		 pipes_ep;
	struct event	*pipes_ev;
	size_t		 link_high;	/* queued bytes that pause the pipes */
	int		 devnull;
	struct event	*ev_chld, *ev_term, *kill_timer, *recheck;
	struct event	*flush_ev;	/* sends what a->wb holds, from the loop */
	struct event	*ev_quit;
	struct stacks	*stk;		/* STACKS captures */
	struct hostcheck *chk;		/* dtrun --check's steps */
	int		 killed;	/* SIGKILL sent to everything */
	struct dt_wbuf	 wb;
	struct record	*rec;
	struct errfiles	*errf;		/* the ranks' error files (JOB's errfile) */
	struct rdzvrelay *relay;	/* the ranks' rendezvous, if we carry it */
	struct rdzvrelay *store;	/* their TCPStore, if we carry it */
	struct progress	*progress;	/* the steps ranks report, if dtrun
					   asked (DTRUN_PROGRESS=agent) */
	struct waits	*waits;		/* where ranks wait, if dtrun watches */
	pid_t		 keeper;	/* our parent, see keeper.h; 0: none */
	uint64_t	 beat_ms;	/* the launcher's heartbeat timeout; 0: none yet */
	struct event	*keep_ev;	/* our beats to the keeper (keeper.h) */
};

/* agent.c */
/* Moves the conversation on to phase ph (phase.c's table reads it). */
void	agent_to(struct agent *, enum agent_phase ph);
/* Sends what the encoders left in a->wb, if the link is up; pauses rank pipes if it is backed up. */
void	agent_flush_wb(struct agent *);
/* Sends an ERROR about rank (or AP_NORANK) with the status dtrun should exit with. */
void	agent_error(struct agent *, uint32_t rank, uint32_t code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Reads one chunk (drain 0) or all there is (drain 1) of a pipe, and forwards it. */
void	src_read(struct src *, int drain);
/* Closes one output pipe. */
void	src_close(struct src *);
/* Frees what one attempt built, so the next JOB starts from nothing. */
void	agent_forget(struct agent *);
/* START: every rank (prepare.c calls it for a START that came early). */
void	agent_start(struct agent *);

/* prepare.c */
/* PREPARE: interface, directory, setup, every command; PREPARED, or an ERROR. */
void	prepare_start(struct agent *);

/* shutdown.c */
/* True while the link to dtrun is up: what is sent goes. */
int	shut_linked(const struct agent *);
/* True while dtrun is still to hear news: linked, not finishing. */
int	shut_talking(const struct agent *);
/* Sends sig now, SIGKILL after grace_ms, to all it started, for cause. */
void	shut_stop(struct agent *, enum shut_cause, int sig, uint64_t grace_ms);
/* After anything that may end the attempt here: DONE once all is gone. */
void	shut_check(struct agent *);
/* The loop ends: AGP_FINISHING, then flush and exit (agent_run). */
void	shut_finish(struct agent *);
/* Drops the link without waiting for what is queued, and stops all. */
void	shut_cut(struct agent *);
/* Signals every rank's process group still ours, and all descendants. */
void	shut_signal_all(struct agent *, int sig, int descendants);
/* The link's callbacks: dtrun silent past its timeout; the link closed. */
void	shut_silent(void *arg);
void	shut_link_close(void *arg, int err, const char *why);
/* The event callbacks agent_run sets: SIGTERM, the kill grace, rechecks. */
void	shut_sigterm_cb(evutil_socket_t, short, void *);
void	shut_kill_timer_cb(evutil_socket_t, short, void *);
void	shut_recheck_cb(evutil_socket_t, short, void *);

#endif
