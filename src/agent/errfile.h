/*
 * errfile.h -- torchrun's TORCHELASTIC_ERROR_FILE on the agent's side.
 *
 * torch.distributed.elastic.multiprocessing.errors.record writes a rank's
 * uncaught exception (JSON: message, traceback, time) to the file that
 * variable names. Each rank gets a file of its own beside the job records,
 * in their owner-only directory: $XDG_RUNTIME_DIR/dtrun/JOBID.PID.rank.N.json
 * (or under /tmp/dtrun-UID: record.h). When a rank fails, the agent sends
 * what it wrote (ERRFILE, agentproto.h) before its EXIT; the files go away
 * with the attempt.
 */
#ifndef DT_ERRFILE_H
#define DT_ERRFILE_H

#include <stdint.h>

struct dt_err;
struct dt_wbuf;
struct errfiles;

/* The variable's name; a file's name is in record.h. */
#define ERRFILE_VAR	"TORCHELASTIC_ERROR_FILE"

/*
 * This agent's error files for job_id, in *efp. Returns 0, or a negative
 * DT_ERR_* with e filled and *efp NULL (the record directory cannot be
 * had, say): the job then runs without error files.
 */
int		 errfiles_new(const char *job_id, struct errfiles **efp,
		    struct dt_err *e);
/*
 * Returns "TORCHELASTIC_ERROR_FILE=PATH" (malloc'd) for rank, with no
 * file left at PATH from before; NULL when out of memory.
 */
char		*errfiles_var(struct errfiles *, uint32_t rank);
/*
 * If rank wrote its file: appends an ERRFILE frame to b with its first
 * bytes and removes it. Returns 1 if a frame was appended, else 0.
 */
int		 errfiles_send(struct errfiles *, uint32_t rank,
		     struct dt_wbuf *b);
/* Removes every rank's file, and frees. */
void		 errfiles_free(struct errfiles *);

#endif
