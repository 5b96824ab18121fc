/*
 * summary.c -- the last line of a failed job (summary.h).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "launcher/job/summary.h"

const char *
summary_line(const struct summary *x, char *buf, size_t len)
{
	char	stopped[64];
	/* Ranks that failed or were lost first are not among those stopped. */
	int	other = x->cause == END_RANK ||
		    (x->cause == END_LOST && x->rank > 0);

	if (x->started == 0)
		snprintf(stopped, sizeof(stopped), "no rank had started");
	else if (x->stopped == 0)
		snprintf(stopped, sizeof(stopped), "no %srank was running",
		    other ? "other " : "");
	else
		snprintf(stopped, sizeof(stopped), "%zu%s rank%s %s stopped",
		    x->stopped, other ? " other" : "",
		    x->stopped == 1 ? "" : "s", x->stopped == 1 ? "was" : "were");
	switch (x->cause) {
	case END_RANK:
		snprintf(buf, len, "job failed: rank %d on %s %s first; %s",
		    x->rank, x->host, x->how, stopped);
		break;
	case END_TIMEOUT:
		snprintf(buf, len, "job failed: timed out after %g s "
		    "(--timeout); %s", x->timeout, stopped);
		break;
	case END_HANG:
		snprintf(buf, len, "job failed: hung, no rank wrote a line "
		    "for %g s (--hang-timeout); %s", x->timeout, stopped);
		break;
	case END_START:
		snprintf(buf, len, "job failed: %d rank%s never joined the "
		    "rendezvous within %g s (--start-timeout); %s", x->rank,
		    x->rank == 1 ? "" : "s", x->timeout, stopped);
		break;
	case END_STRAGGLER:
		snprintf(buf, len, "job failed: stopped for a straggler, %s "
		    "(--on-straggler stop); %s", x->how, stopped);
		break;
	case END_RDZV:
		snprintf(buf, len, "job failed: the rendezvous could not go "
		    "on (see above); %s", stopped);
		break;
	case END_SIGNAL:
		snprintf(buf, len, "job stopped by SIG%s; %s",
		    sigabbrev_np(x->signo), stopped);
		break;
	case END_LOST:
		if (!x->reached)	/* nothing there to lose */
			snprintf(buf, len, "job failed: never reached the agent "
			    "on %s (see above); %s", x->host, stopped);
		else if (x->rank > 0)
			snprintf(buf, len, "job failed: lost the agent on %s "
			    "and its %d running rank%s; %s", x->host, x->rank,
			    x->rank == 1 ? "" : "s", stopped);
		else
			snprintf(buf, len, "job failed: lost the agent on %s; "
			    "%s", x->host, stopped);
		break;
	default:
		return NULL;
	}
	return buf;
}
