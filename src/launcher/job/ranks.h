/*
 * ranks.h -- an attempt's ranks as their agents report them: waiting,
 * running, exited; each one's pid, the error file it left (torch's
 * @record, ERRFILE) and, when asked, the tail of its stderr; and the counts the job's messages and summary use.
 */
#ifndef DT_RANKS_H
#define DT_RANKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rootcause;
struct ranks;

/* n ranks, all waiting. */
struct ranks	*ranks_new(size_t n);
/* Frees the table and the error files it still holds. */
void		 ranks_free(struct ranks *);

/* STARTED: rank r runs as pid. Returns 1 if it was not running before. */
int		 ranks_started(struct ranks *, uint32_t r, pid_t pid);
/*
 * Rank r ended. One that ran and ends once the job is stopping counts as
 * stopped: the summary says how many were, not how many might have been.
 */
void		 ranks_ended(struct ranks *, uint32_t r, int stopping);
int		 ranks_running(const struct ranks *, uint32_t r);
pid_t		 ranks_pid(const struct ranks *, uint32_t r);	/* 0: never started */
size_t		 ranks_nrunning(const struct ranks *);
/*
 * How many ranks a stop now would stop: those running, and once START is
 * out (started), those a host may have started but not reported yet.
 */
size_t		 ranks_live(const struct ranks *, int started);
/* Ranks that ever ran; of those, how many were stopped. */
void		 ranks_counts(const struct ranks *, size_t *started,
		    size_t *stopped);

/* Keeps rc (taken) as r's error file, replacing one kept. */
void		 ranks_errfile(struct ranks *, uint32_t r, struct rootcause *rc);
/* r's error file, taken; NULL if it left none. */
struct rootcause *ranks_errfile_take(struct ranks *, uint32_t r);

/* Keeps the last bytes of what r wrote to stderr (crashsig.h). */
void		 ranks_stderr(struct ranks *, uint32_t r, const void *p,
		    size_t n);
/* Those bytes as a string (malloc'd, *n its length); NULL if none were kept. */
char		*ranks_stderr_tail(const struct ranks *, uint32_t r, size_t *n);

#endif
