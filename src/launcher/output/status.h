/*
 * status.h -- what dtrun shows while a job starts and says when it ends: a
 * live status line on a terminal (hosts connected, ready, ranks started),
 * colours for the rank prefixes, and the one-line summary of a failed job.
 */
#ifndef DT_STATUS_H
#define DT_STATUS_H

#include <stddef.h>

struct status;

enum status_count {
	ST_CONNECTED,		/* hosts whose agent said HELLO */
	ST_READY,		/* hosts that checked their commands */
	ST_STARTED,		/* ranks started */
	ST_JOINED,		/* ranks that joined the rendezvous */
	ST_NCOUNTS
};

/*
 * Makes the status line of a job of nranks ranks on nhosts hosts. It is
 * drawn on stderr only when stderr is a terminal and show is set (not -q);
 * otherwise every call below is a no-op, so callers need not check.
 */
struct status	*status_new(int show, size_t nhosts, size_t nranks);
/* A host's agent is there: counts it, and says so with -v. */
void		 status_connected(struct status *, const char *host,
		     const char *agent_host, unsigned pid);
/* Counts one more of what; once every rank started, the line goes away. */
void		 status_add(struct status *, enum status_count what);
/* Output flows or the job ends: clears the line for good. */
void		 status_done(struct status *);
void		 status_free(struct status *);

/*
 * The SGR escape ("\033[36m") that colours rank's prefix: a small palette
 * without red, which reads as an error.
 */
const char	*status_rank_color(int rank);
/* True if output to fd should be coloured: a terminal, NO_COLOR unset or empty, TERM not dumb. */
int		 status_color_ok(int fd);

#endif
