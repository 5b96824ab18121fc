/*
 * summary.h -- the last line of a failed job: who failed first and how,
 * and how many other ranks were stopped. jobend.c fills it; the words are
 * made here, in one place, so every cause reads alike.
 */
#ifndef DT_SUMMARY_H
#define DT_SUMMARY_H

#include <stddef.h>

/* How a failed job ended, for its summary. */
struct summary {
	enum { END_NONE, END_RANK, END_TIMEOUT, END_SIGNAL, END_LOST,
	    END_HANG, END_START, END_RDZV, END_STRAGGLER } cause;
	int		 rank;		/* END_RANK; END_START: how many never
					   joined the rendezvous; END_LOST:
					   how many ran on the host lost */
	const char	*host;		/* END_RANK, END_LOST */
	int		 reached;	/* END_LOST: its agent had said hello */
	char		 how[128];	/* END_RANK: "exited with code 3";
					   END_STRAGGLER: "rank 5 on gpu07" */
	double		 timeout;	/* END_TIMEOUT, END_HANG, END_START */
	int		 signo;		/* END_SIGNAL */
	size_t		 started;	/* ranks that ever ran */
	size_t		 stopped;	/* of those, ended once we stopped */
};

/*
 * Formats the last line of a failed job into buf, e.g. "job failed: rank 2
 * on localhost exited with code 3 first; 3 other ranks were stopped".
 * Returns buf, or NULL for END_NONE (nothing to say).
 */
const char	*summary_line(const struct summary *, char *buf, size_t len);

#endif
