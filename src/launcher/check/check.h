/*
 * check.h -- dtrun --check and --preflight: ask every host's agent, over
 * the connections a run uses, what it has for the job (CHECK/CHECKED,
 * agentproto.h), print one table and the problems, each with its fix.
 *
 * --check runs the whole check and exits: 0 when all is well, else
 * CHECK_EXIT. --preflight runs the fast part (agent, interface,
 * reachability of rank 0's host, command, socket interface variables)
 * before a job of more than one host; a problem ends the job with
 * CHECK_EXIT before any rank starts.
 */
#ifndef DT_CHECK_H
#define DT_CHECK_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

struct check;
struct job_feature;
struct job_host;
struct opts;
struct plan;

/* The check on the job's hooks (checkfeat.c). */
extern const struct job_feature check_feature;

#define CHECK_EXIT		78	/* problems found (sysexits' EX_CONFIG) */
#define CHECK_SKEW_MAX_MS	1000	/* a clock further off is a problem */
#define CHECK_TABLE_FULL	16	/* more hosts: the table is summarised */

/* How the check talks to the job that runs it; arg is the job's. */
struct check_cbs {
	/*
	 * The check is over: code 0 goes on with the job (--preflight) or
	 * ends it well (--check); any other code ends it with that status,
	 * no rank started.
	 */
	void	(*done)(void *arg, int code);
	/* A table is about to be printed: clear the terminal's status line. */
	void	(*quiet)(void *arg);
	void	*arg;
};

/*
 * A check of p's hosts; fast: the --preflight subset. rank0: the address
 * the hosts route to for rank 0's host, as the run's (env's rank0_addr), or
 * NULL when dtrun chooses for them.
 */
struct check	*check_new(const struct check_cbs *, const struct opts *,
		    const struct plan *, int fast, const char *rank0);

/* Every agent said HELLO: send each its first step (hosts: the job's, in node-rank order). */
void		 check_begin(struct check *, struct job_host **hosts);

/*
 * A CHECKED from h's agent. Returns 0, DT_ERR_PROTO when it is malformed
 * or out of turn, or DT_ERR_NOMEM. Once every answer is in, the check
 * calls its done callback.
 */
int		 check_frame(struct check *, struct job_host *h,
		    const uint8_t *p, size_t n);

void		 check_free(struct check *);

/*
 * The round trip and clock skew of one step: sent at our wall-clock time
 * sent, answered elapsed ms later after the agent worked took ms on it,
 * and read there at its wall-clock time at. *skew > 0: its clock is ahead.
 */
void		 check_skew(uint64_t sent, uint64_t elapsed, uint64_t took,
		    uint64_t at, uint64_t *rtt, int64_t *skew);

/*
 * The most common of the n strings v (a NULL one, a host without that
 * answer, is not counted): the index of its first holder, with *count
 * holders among the *answered. Ties go to the value seen first. -1 when
 * none answered. A strict majority is 2 * *count > *answered.
 */
ssize_t		 check_majority(const char *const *v, size_t n, size_t *count,
		    size_t *answered);

/*
 * Writes the rows of a table (ncol strings each, NULL shown as "-")
 * with every column as wide as its widest cell, to buf (malloc'd, one
 * line per row). Cells are escaped for the terminal. NULL when out of
 * memory.
 */
char		*check_table(char *const *cells, size_t nrows, size_t ncol);

#endif
