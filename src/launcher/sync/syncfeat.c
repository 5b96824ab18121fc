/*
 * syncfeat.c -- --sync-dst-dir on the job's hooks (hooks.h): the copies
 * start with the attempt, the agents connect meanwhile, and the job goes
 * on past HELLO only once every copy is done; a failed copy ends it.
 */
#include <stdlib.h>

#include "launcher/cli/cli.h"
#include "launcher/job/hooks.h"
#include "launcher/sync/sync.h"
#include "util/xmalloc.h"

struct syncfeat {
	const struct job_view	*v;
	struct sync		*sync;
};

/* Every copy is done (code 0), or one failed. */
static void
syncfeat_done(void *arg, int code)
{
	struct syncfeat	*f = arg;

	if (code != 0)
		job_ctl_fail(f->v->job, code);
	job_ctl_release(f->v->job, JG_CONNECT);
}

static int
syncfeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	struct syncfeat	*f;

	if (v->o->sync_dst == NULL || v->o->check)
		return 0;
	f = xcalloc(1, sizeof(*f));
	f->v = v;
	*state = f;
	job_ctl_hold(v->job, JG_CONNECT);
	if ((f->sync = sync_start(v->base, v->o, v->plan, syncfeat_done, f,
	    e)) == NULL)
		return -1;
	return 0;
}

/* Kills the copies still running; the loop is over. */
static void
syncfeat_drain(void *arg)
{
	struct syncfeat	*f = arg;

	sync_free(f->sync);
	f->sync = NULL;
}

static void
syncfeat_close(void *arg)
{
	struct syncfeat	*f = arg;

	sync_free(f->sync);
	free(f);
}

static int
syncfeat_reaped(void *arg, pid_t pid, int status)
{
	return sync_reaped(((struct syncfeat *)arg)->sync, pid, status);
}

static void
syncfeat_stopping(void *arg)
{
	sync_stop(((struct syncfeat *)arg)->sync);
}

const struct job_feature sync_feature = {
	.name = "sync",
	.open = syncfeat_open,
	.drain = syncfeat_drain,
	.close = syncfeat_close,
	.reaped = syncfeat_reaped,
	.stopping = syncfeat_stopping,
};
