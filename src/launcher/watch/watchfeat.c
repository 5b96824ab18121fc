/*
 * watchfeat.c -- the watch on the job's hooks (hooks.h): the straggler
 * watch reads each rank's lines and reported steps; dtrun top's view keeps
 * each rank's usage, and its socket (kept from attempt to attempt) shows
 * the attempt running now.
 */
#include <stdlib.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "launcher/job/hooks.h"
#include "launcher/job/jobend.h"
#include "launcher/stacks/stackask.h"
#include "launcher/watch/straggle.h"
#include "launcher/watch/topsrv.h"
#include "launcher/watch/topview.h"
#include "util/xmalloc.h"

struct watchfeat {
	const struct job_view	*v;
	struct topsrv		*srv;		/* dtrun top's socket, or NULL */
	struct straggle		*strag;		/* or NULL: --straggler-threshold 0 */
	struct topview		*top;
};

static void *
watchfeat_job_open(struct event_base *base, const struct opts *o,
    const char *id)
{
	return topsrv_new(base, id);
}

static void
watchfeat_job_close(void *kept)
{
	topsrv_free(kept);
}

/* --on-straggler stop: who was too slow. */
static void
watchfeat_stop(void *arg, const char *who)
{
	struct watchfeat	*f = arg;
	struct job		*j = f->v->job;

	if (job_ctl_stopping(j))
		return;
	jobend_straggler(job_ctl_end(j), who);
	job_ctl_stop(j, 0);
}

static int
watchfeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	struct watchfeat	*f = xcalloc(1, sizeof(*f));
	struct straggle_cbs	 cb = { watchfeat_stop, f };

	f->v = v;
	f->srv = kept;
	f->strag = straggle_new(v->base, v->o, v->plan, stackfeat_of(v->job),
	    &cb);
	f->top = topview_new(v->plan, v->ranks, f->strag, v->attempt);
	topsrv_describe(f->srv, v->plan, v->o->cmd, v->o->ncmd);
	topsrv_attach(f->srv, f->top);
	*state = f;
	return 0;
}

static void
watchfeat_close(void *arg)
{
	struct watchfeat	*f = arg;

	topsrv_attach(f->srv, NULL);
	topview_free(f->top);
	straggle_free(f->strag);
	free(f);
}

static void
watchfeat_started(void *arg)
{
	straggle_started(((struct watchfeat *)arg)->strag);
}

static void
watchfeat_output(void *arg, size_t rank, int stream, const uint8_t *p,
    size_t n)
{
	straggle_output(((struct watchfeat *)arg)->strag, rank,
	    (const char *)p, n);
}

/* A rank's reported step (the pace), and its usage (dtrun top). */
static void
watchfeat_colls(void *arg, size_t host, uint64_t now_ns,
    const struct ap_coll *v, uint32_t n)
{
	struct watchfeat	*f = arg;

	straggle_colls(f->strag, host, now_ns, v, n);
}

/* Where a host's ranks waited: the lock-step watch. */
static void
watchfeat_waits(void *arg, size_t host, const struct ap_wait *v, uint32_t n)
{
	struct watchfeat	*f = arg;

	straggle_waits(f->strag, host, v, n);
}

static void
watchfeat_progress(void *arg, const struct ap_progress *g, uint64_t now)
{
	struct watchfeat	*f = arg;

	if (g->flags & AP_PROG_STEP)
		straggle_step(f->strag, g->rank, g->step, g->age_ms);
	if (g->flags & AP_PROG_USAGE)
		topview_usage(f->top, g->rank, g->cpu_ms, g->rss_kb, now);
}

const struct job_feature watch_feature = {
	.name = "watch",
	.job_open = watchfeat_job_open,
	.job_close = watchfeat_job_close,
	.note = "dtrun top shows it",
	.open = watchfeat_open,
	.close = watchfeat_close,
	.started = watchfeat_started,
	.output = watchfeat_output,
	.progress = watchfeat_progress,
	.colls = watchfeat_colls,
	.waits = watchfeat_waits,
};
