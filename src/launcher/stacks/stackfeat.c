/*
 * stackfeat.c -- stack reports on the job's hooks (hooks.h): SIGQUIT and
 * dtrun-kill --stacks ask for every rank's stack, --hang-timeout watches
 * for a job that writes nothing, and ranks that never joined the
 * rendezvous are shown where they are stuck before the job stops.
 */
#include <stdlib.h>

#include "launcher/cli/cli.h"
#include "launcher/job/hooks.h"
#include "launcher/job/jobend.h"
#include "launcher/plan/plan.h"
#include "launcher/stacks/stackask.h"
#include "util/xmalloc.h"

struct stackfeat {
	const struct job_view	*v;
	struct stackask		*stk;
};

static int
stackfeat_stopping(void *arg)
{
	return job_ctl_stopping(((struct stackfeat *)arg)->v->job);
}

/* A report for a hang or a start timeout is in: stop the job. */
static void
stackfeat_then(void *arg, enum stk_then then)
{
	struct stackfeat	*f = arg;
	struct job		*j = f->v->job;

	if (job_ctl_stopping(j) ||
	    (then == STK_THEN_HANG && f->v->o->on_hang_report))
		return;
	if (then == STK_THEN_HANG)
		jobend_hang(job_ctl_end(j), f->v->o->hang_timeout);
	/* STK_THEN_START: its cause and 125 were set when it timed out. */
	job_ctl_stop(j, 0);
}

static int
stackfeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	struct stackfeat	*f = xcalloc(1, sizeof(*f));
	struct stackask_cbs	 cb = { stackfeat_stopping, stackfeat_then, f };

	f->v = v;
	f->stk = stackask_new(v->base, v->o, v->plan, v->hosts, v->ranks,
	    v->id, v->attempt, v->output_dir, &cb);
	*state = f;
	return 0;
}

static void
stackfeat_close(void *arg)
{
	struct stackfeat	*f = arg;

	stackask_free(f->stk);
	free(f);
}

static void
stackfeat_started(void *arg)
{
	stackask_started(((struct stackfeat *)arg)->stk);
}

/* A rank spoke (its rendezvous) or wrote: the job is not hung. */
static void
stackfeat_alive(void *arg, size_t rank)
{
	stackask_alive(((struct stackfeat *)arg)->stk);
}

static void
stackfeat_output(void *arg, size_t rank, int stream, const uint8_t *p,
    size_t n)
{
	stackask_alive(((struct stackfeat *)arg)->stk);
}

static void
stackfeat_host_lost(void *arg, size_t host)
{
	stackask_host_gone(((struct stackfeat *)arg)->stk, host);
}

static void
stackfeat_stack(void *arg, size_t host, const struct ap_stack *k)
{
	stackask_stack(((struct stackfeat *)arg)->stk, host, k);
}

static void
stackfeat_stackask(void *arg)
{
	stackask_agent(((struct stackfeat *)arg)->stk);
}

static void
stackfeat_quit(void *arg)
{
	stackask_ask(((struct stackfeat *)arg)->stk, "got SIGQUIT",
	    STK_THEN_NONE, NULL);
}

/* Where the ranks that never joined are stuck; the job stops after. */
static int
stackfeat_start_timeout(void *arg, uint8_t *missing)
{
	stackask_ask(((struct stackfeat *)arg)->stk, "start timeout",
	    STK_THEN_START, missing);
	return 1;
}

struct stackask *
stackfeat_of(struct job *j)
{
	struct stackfeat	*f = job_feature_state(j, &stacks_feature);

	return f != NULL ? f->stk : NULL;
}

const struct job_feature stacks_feature = {
	.name = "stacks",
	.open = stackfeat_open,
	.close = stackfeat_close,
	.started = stackfeat_started,
	.rank_alive = stackfeat_alive,
	.output = stackfeat_output,
	.host_lost = stackfeat_host_lost,
	.stack = stackfeat_stack,
	.stackask = stackfeat_stackask,
	.quit = stackfeat_quit,
	.start_timeout = stackfeat_start_timeout,
};
