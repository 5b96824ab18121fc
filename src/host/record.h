/*
 * record.h -- the agent's note of its running job, read by dtrun-kill.
 *
 * One file per agent, $XDG_RUNTIME_DIR/dtrun/JOBID.PID (or
 * /tmp/dtrun-UID/JOBID.PID), removed when the agent exits:
 *
 *	dtrun-job 1
 *	job JOBID
 *	host HOSTNAME
 *	agent PID STARTTIME
 *	keeper PID STARTTIME		(the agent's keeper, see keeper.h; optional)
 *	rank RANK PID STARTTIME		(one per rank; each is its own process group)
 *	launcher			(dtrun's own record, see below)
 *
 * dtrun with --max-restarts keeps a record too, its own pid on the agent
 * line and a "launcher" line: dtrun-kill stops such a dtrun before any
 * agent, so that a job being stopped is never started again.
 *
 * Beside it, the agent's ranks' error files (errfile.h), named JOBID.PID
 * RECORD_ERRFILE_MID RANK RECORD_ERRFILE_SUF.
 *
 * STARTTIME is field 22 of /proc/PID/stat, so a reused PID is never mistaken
 * for one of ours. The directory must be ours and mode 0700: a directory
 * someone else made first (/tmp is shared) could feed dtrun-kill forged
 * records, so it is refused, and said so.
 */
#ifndef DT_RECORD_H
#define DT_RECORD_H

#include <sys/stat.h>
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>

struct dt_err;
struct record;

/* An error file's name: JOBID.PID RECORD_ERRFILE_MID RANK RECORD_ERRFILE_SUF. */
#define RECORD_ERRFILE_MID	".rank."
#define RECORD_ERRFILE_SUF	".json"

/*
 * Starts a record of this agent (keeper: its keeper's pid, or 0) in *rp.
 * Returns 0, or a negative DT_ERR_* with e filled and *rp NULL: the job
 * then runs without one, and e says why (a directory not ours, say).
 */
int		 record_open(const char *job_id, const char *host, pid_t keeper,
		    struct record **rp, struct dt_err *e);
void		 record_add(struct record *, uint32_t rank, pid_t pid);
/* Marks the record as dtrun's own (the "agent" is the launcher). */
void		 record_launcher(struct record *);
/* Writes the file (atomically, by rename). */
void		 record_commit(struct record *);
/* Deletes the file and frees. */
void		 record_remove(struct record *);
/*
 * For the keeper (or dtrun, its local agent's keeper), once the agent it
 * kept is gone and reaped: deletes what that agent left (SIGKILL runs
 * none of its code): its records, those named JOBID.AGENT whose keeper
 * line is keeper (0: none), and its ranks' error files.
 */
void		 record_remove_dead(pid_t agent, pid_t keeper);

/*
 * The directory records live in, for this user, in *dir (static); made
 * 0700 if missing. Returns 0, or a negative DT_ERR_* with e (may be NULL)
 * naming the directory, the reason and the fix.
 */
int		 record_dir(const char **dir, struct dt_err *e);

/*
 * Checks what lstat said of dir: a directory owned by uid, mode 0700 (no
 * group or other bits). Returns 0, or DT_ERR_INVAL with e filled.
 */
int		 record_dir_check(const char *dir, const struct stat *st,
		    uid_t uid, struct dt_err *e);

/* A record as read back by dtrun-kill. */
struct record_info {
	char			 job[128];
	pid_t			 agent;
	unsigned long long	 agent_start;
	pid_t			 keeper;	/* 0: none recorded */
	int			 launcher;	/* dtrun's own record */
	unsigned long long	 keeper_start;
	size_t			 nranks;
	pid_t			*pid;		/* each rank's, its process group */
	unsigned long long	*start;
};

/*
 * Reads a record from f into ri (which must be zeroed or parsed before).
 * Returns 0, or -1 with why filled in: not a record, or one naming what
 * an agent never writes (pid 1 or below, a negative group, no start
 * time), which must never be signalled. ri->job is set when known.
 */
int		 record_parse(FILE *f, struct record_info *ri, char *why,
		    size_t len);
/* Frees what record_parse allocated and zeroes ri. */
void		 record_info_free(struct record_info *ri);

#endif
