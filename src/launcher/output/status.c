/*
 * status.c -- the terminal side of a job. While the job starts, one line on
 * stderr, redrawn in place ("\r... \033[K"), counts hosts and ranks; it
 * is cleared before any message of ours and for good once output flows or
 * every rank runs, so it never mixes with forwarded lines. When stderr is
 * not a terminal nothing of it is written. Colours and the failure summary
 * live here too, so job.c only says what happened.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "launcher/output/status.h"
#include "util/xmalloc.h"

struct status {
	int	 on;		/* drawing: a terminal, not -q, not done */
	int	 shown;		/* the line is on the screen */
	size_t	 nhosts;
	size_t	 nranks;
	size_t	 count[ST_NCOUNTS];
};

/* The status being drawn, for the log hook (one job per process). */
static struct status	*status_active;

/* Erases the line if it is on the screen. */
static void
status_erase(struct status *st)
{
	static const char	erase[] = "\r\033[K";

	if (st == NULL || !st->shown)
		return;
	(void)!write(STDERR_FILENO, erase, sizeof(erase) - 1);
	st->shown = 0;
}

/* Called by log.c before each message: our messages get a clean line. */
static void
status_log_hook(void)
{
	status_erase(status_active);
}

/* Draws the line with the current counts. */
static void
status_draw(struct status *st)
{
	char	buf[256];
	int	n;

	n = snprintf(buf, sizeof(buf), "\r%s: starting: hosts %zu/%zu "
	    "connected, %zu/%zu ready; ranks %zu/%zu started",
	    log_progname(), st->count[ST_CONNECTED], st->nhosts,
	    st->count[ST_READY], st->nhosts, st->count[ST_STARTED],
	    st->nranks);
	if (st->count[ST_JOINED] > 0 && n > 0 && (size_t)n < sizeof(buf))
		n += snprintf(buf + n, sizeof(buf) - n, ", %zu/%zu joined",
		    st->count[ST_JOINED], st->nranks);
	if (n < 0 || (size_t)n >= sizeof(buf) - 4)
		return;
	memcpy(buf + n, "\033[K", 3);
	(void)!write(STDERR_FILENO, buf, n + 3);
	st->shown = 1;
}

struct status *
status_new(int show, size_t nhosts, size_t nranks)
{
	struct status	*st = xcalloc(1, sizeof(*st));

	st->nhosts = nhosts;
	st->nranks = nranks;
	st->on = show && isatty(STDERR_FILENO);
	if (st->on) {
		status_active = st;
		log_hook = status_log_hook;
		status_draw(st);
	}
	return st;
}

void
status_connected(struct status *st, const char *host, const char *agent_host,
    unsigned pid)
{
	log_info("%s: agent pid %u on %s connected", host, pid, agent_host);
	status_add(st, ST_CONNECTED);
}

void
status_add(struct status *st, enum status_count what)
{
	st->count[what]++;
	if (!st->on)
		return;
	if (st->count[ST_STARTED] == st->nranks)
		status_done(st);
	else
		status_draw(st);
}

void
status_done(struct status *st)
{
	if (!st->on)
		return;
	status_erase(st);
	st->on = 0;
	status_active = NULL;
	log_hook = NULL;
}

void
status_free(struct status *st)
{
	if (st == NULL)
		return;
	status_done(st);
	free(st);
}

const char *
status_rank_color(int rank)
{
	static const char *const palette[] = {
		"\033[36m", "\033[32m", "\033[33m", "\033[35m", "\033[34m",
		"\033[96m", "\033[92m", "\033[93m", "\033[95m", "\033[94m",
	};

	return palette[(unsigned)rank % (sizeof(palette) / sizeof(palette[0]))];
}

int
status_color_ok(int fd)
{
	const char	*nc = getenv("NO_COLOR"), *term = getenv("TERM");

	if (nc != NULL && nc[0] != '\0')
		return 0;
	if (term != NULL && strcmp(term, "dumb") == 0)
		return 0;
	return isatty(fd);
}

const char *
status_summary(const struct status_end *x, char *buf, size_t len)
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
