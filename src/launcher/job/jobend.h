/*
 * jobend.h -- how an attempt ends. The first cause wins: it sets dtrun's
 * exit status, the summary's last line ("job failed: rank 2 on a exited
 * with code 3 first; ..."), torchrun's Root Cause block when the failing
 * rank left an error file, and what --max-restarts is told (job.h's
 * struct job_attempt). The job decides when to stop; this only keeps
 * what to say.
 */
#ifndef DT_JOBEND_H
#define DT_JOBEND_H

#include <stddef.h>
#include <sys/types.h>

#include "launcher/job/crashsig.h"
#include "launcher/job/rootcause.h"
#include "launcher/job/summary.h"

struct ap_exit;
struct opts;

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
	const struct features *features; /* the job's (hooks.h) */
	/* Filled by job_run. */
	enum job_cause	 cause;
	int		 signaled;	/* dtrun got a stop signal: no restart */
	char		 what[512];	/* the summary: "rank 1 on a exited ..." */
	char		 host[256];	/* where it happened, or "" */
	char		**lost;		/* names of the hosts lost (xmalloc'd) */
	size_t		 nlost;
	int		 master_port;
	struct crashsig	 sig;		/* cause JC_RANK: the failure's; else none */
};

/* Frees what job_run put in a. */
void	job_attempt_free(struct job_attempt *a);


struct jobend {
	int			 exit_set;
	int			 exit_code;
	enum job_cause		 cause;		/* for --max-restarts */
	struct summary	 end;		/* for the summary */
	struct rootcause	*root;		/* the first failure's error file */
	struct rootcause_who	 who;
	struct crashsig		 sig;		/* the first failed rank's */
	int			 signals;	/* stop signals dtrun got */
};

/* Notes c for --max-restarts if nothing ended the attempt yet; call it before jobend_exit. */
void	jobend_cause(struct jobend *, enum job_cause c);
/* The first cause of the end sets the exit status. */
void	jobend_exit(struct jobend *, int code);
/*
 * Records the first cause of a failed end for the summary (call it
 * before jobend_exit); returns where to fill its details, or NULL if the
 * end already had a cause.
 */
struct summary *jobend_begin(struct jobend *, int cause);

/*
 * A rank failed first (x, on host, its pid and local rank; live: the
 * ranks a stop now stops): says how it ended ("exited with code 3", "was
 * killed by signal 9 (Killed)"), keeps that for the summary and, if it
 * left one, its error file (*rc, taken when it is the first), and its
 * signature (crashsig.h) from that file's traceback, else from tail (the
 * end of its stderr, or NULL). Returns the exit status it means
 * (jobend_exit's to set).
 */
int	jobend_rank(struct jobend *, const struct opts *, const struct ap_exit *x,
	    const char *host, int local_rank, pid_t pid, struct rootcause **rc,
	    const char *tail, size_t live);

/*
 * The events that end an attempt: each says so (live: how many ranks a
 * stop now stops), is recorded if it is the first cause, and returns
 * the exit status it means.
 */
int	jobend_timeout(struct jobend *, double timeout, size_t live);
/* A stop signal (INT, TERM, HUP); returns the signal to stop the ranks with: SIGKILL from the second. */
int	jobend_signal(struct jobend *, int sig, size_t live, int stopping);
/* Ranks (n of them) never joined within --start-timeout; msg: the rendezvous' words. */
int	jobend_start(struct jobend *, const char *msg, double timeout, int n);
/* The rendezvous server failed (out of descriptors); msg: its words. */
int	jobend_rdzv(struct jobend *, const char *msg);
/* --hang-timeout found no rank writing. */
int	jobend_hang(struct jobend *, double timeout);
/* --on-straggler stop: who ("rank 5 on gpu07") was too slow. */
int	jobend_straggler(struct jobend *, const char *who);
/*
 * dtrun's stdout lost its reader (--output-dir: dir, or NULL): returns 0
 * when the job goes on (the files get everything, or it ended already),
 * else EXIT_PIPE, as SIGPIPE ends a pipeline's writer.
 */
int	jobend_pipe(struct jobend *, const char *dir, size_t running, int over);

/*
 * The attempt is over (started, stopped: its ranks that ever ran, and
 * those stopped): prints the Root Cause block and the summary, and fills
 * a's cause, summary and host; frees the error file.
 */
void	jobend_report(struct jobend *, struct job_attempt *a, size_t started,
	    size_t stopped);

#endif
