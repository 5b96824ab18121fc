/*
 * ranks.c -- an attempt's ranks as their agents report them (ranks.h).
 */
#include <stdlib.h>

#include "launcher/job/crashsig.h"
#include "launcher/job/ranks.h"
#include "launcher/job/rootcause.h"
#include "util/xmalloc.h"

enum rank_state { R_WAITING, R_RUNNING, R_EXITED };

struct ranks_one {
	enum rank_state	 state;
	pid_t		 pid;
	struct rootcause *rc;		/* its ERRFILE, until its EXIT */
	struct crashsig_tail err;	/* its stderr's last bytes, if asked */
};

struct ranks {
	struct ranks_one *r;
	size_t		 n;
	size_t		 nrunning;
	size_t		 nexited;
	size_t		 nstarted;	/* ranks that ever ran */
	size_t		 nstopped;	/* ran, and ended once we stopped */
};

struct ranks *
ranks_new(size_t n)
{
	struct ranks	*rk = xcalloc(1, sizeof(*rk));

	rk->r = xcalloc(n ? n : 1, sizeof(*rk->r));
	rk->n = n;
	return rk;
}

void
ranks_free(struct ranks *rk)
{
	size_t	i;

	if (rk == NULL)
		return;
	for (i = 0; i < rk->n; i++) {
		rootcause_free(rk->r[i].rc);
		crashsig_tail_free(&rk->r[i].err);
	}
	free(rk->r);
	free(rk);
}

int
ranks_started(struct ranks *rk, uint32_t r, pid_t pid)
{
	rk->r[r].pid = pid;
	if (rk->r[r].state != R_WAITING)
		return 0;
	rk->r[r].state = R_RUNNING;
	rk->nrunning++;
	rk->nstarted++;
	return 1;
}

void
ranks_ended(struct ranks *rk, uint32_t r, int stopping)
{
	if (rk->r[r].state == R_RUNNING) {
		rk->nrunning--;
		if (stopping)
			rk->nstopped++;
	}
	if (rk->r[r].state != R_EXITED)
		rk->nexited++;
	rk->r[r].state = R_EXITED;
}

int
ranks_running(const struct ranks *rk, uint32_t r)
{
	return rk->r[r].state == R_RUNNING;
}

pid_t
ranks_pid(const struct ranks *rk, uint32_t r)
{
	return rk->r[r].pid;
}

size_t
ranks_nrunning(const struct ranks *rk)
{
	return rk->nrunning;
}

size_t
ranks_live(const struct ranks *rk, int started)
{
	return rk->nrunning + (started ? rk->n - rk->nexited - rk->nrunning :
	    0);
}

void
ranks_counts(const struct ranks *rk, size_t *started, size_t *stopped)
{
	*started = rk->nstarted;
	*stopped = rk->nstopped;
}

void
ranks_errfile(struct ranks *rk, uint32_t r, struct rootcause *rc)
{
	rootcause_free(rk->r[r].rc);
	rk->r[r].rc = rc;
}

struct rootcause *
ranks_errfile_take(struct ranks *rk, uint32_t r)
{
	struct rootcause	*rc = rk->r[r].rc;

	rk->r[r].rc = NULL;
	return rc;
}

void
ranks_stderr(struct ranks *rk, uint32_t r, const void *p, size_t n)
{
	crashsig_tail_add(&rk->r[r].err, p, n);
}

char *
ranks_stderr_tail(const struct ranks *rk, uint32_t r, size_t *n)
{
	return crashsig_tail_text(&rk->r[r].err, n);
}
