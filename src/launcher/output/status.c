/*
 * status.c -- the terminal side of a job. While the job starts, one line on
 * stderr, redrawn in place ("\r... \033[K"), counts hosts and ranks; it
 * is cleared before any message of ours and for good once output flows or
 * every rank runs, so it never mixes with forwarded lines. When stderr is
 * not a terminal nothing of it is written. The ranks' colours live here
 * too; the failure summary's words are job/summary.c's.
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
