/*
 * stackrep.h -- the merged, STAT-style report of every rank's stack.
 *
 * Agents send each rank's stack as their tools printed it (src/agent/
 * stacks.h). Each is reduced to a signature, the main thread's frames,
 * innermost first: Python frames ("train_step (train.py:42)") when there
 * are any, else native function names. Ranks with the same signature form
 * a group; the smallest groups (the outliers) are listed first, each as
 * "ranks 0-2,4-7 (7): all_reduce <- train_step (train.py:42) <- ...".
 * The full stacks go to a file.
 */
#ifndef DT_STACKREP_H
#define DT_STACKREP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stk_report;

/* A report for ranks 0..nranks-1; none has a stack yet. */
struct stk_report *stk_report_new(size_t nranks);

/*
 * Records rank's stack (status: enum ap_stack_status; tool and text as
 * the agent sent them) captured on host, process pid.
 */
void	stk_report_rank(struct stk_report *, uint32_t rank, const char *host,
	    pid_t pid, int status, const char *tool, const char *text);

/* Marks rank as expected but unanswered, with why ("the agent on X was lost"). */
void	stk_report_missing(struct stk_report *, uint32_t rank, const char *why);

/*
 * Writes every rank's full stack to path (a new file, 0600; one there is
 * removed first, a link is never followed). Returns 0,
 * or -1 with errno set.
 */
int	stk_report_write(const struct stk_report *, const char *path);

/*
 * Formats the merged lines, outliers first, into a malloc'd vector of
 * malloc'd strings (*n of them; NULL-terminated). Ranks with nothing
 * recorded are left out. Returns NULL only when out of memory.
 */
char	**stk_report_lines(const struct stk_report *, size_t *n);

/* How many ranks have a stack (or a reason for none) recorded. */
size_t	stk_report_count(const struct stk_report *);

void	stk_report_free(struct stk_report *);

/* Writes the sorted ranks v[0..n) as "0-2,4,7-9" into buf (cut with "..."). */
void	stk_ranges(char *buf, size_t len, const uint32_t *v, size_t n);

#endif
