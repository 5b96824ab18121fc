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
 *	rank RANK PID STARTTIME		(one per rank; each is its own process group)
 *
 * STARTTIME is field 22 of /proc/PID/stat, so a reused PID is never mistaken
 * for one of ours.
 */
#ifndef DT_RECORD_H
#define DT_RECORD_H

#include <stdint.h>
#include <sys/types.h>

struct record;

/* Starts a record; NULL if the directory cannot be used (the job still runs). */
struct record	*record_open(const char *job_id, const char *host);
void		 record_add(struct record *, uint32_t rank, pid_t pid);
/* Writes the file (atomically, by rename). */
void		 record_commit(struct record *);
/* Deletes the file and frees. */
void		 record_remove(struct record *);

/* The directory records live in, for this user; made 0700 if missing. NULL if unusable. */
const char	*record_dir(void);
/* Field 22 of /proc/PID/stat (start time in clock ticks), or 0. */
unsigned long long proc_starttime(pid_t);

#endif
