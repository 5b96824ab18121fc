/*
 * checkfeat.c -- the check on the job's hooks (hooks.h): --check, and
 * --preflight before a job of more than one host. It holds the job before
 * its ports and PREPARE until every host answered; then --preflight lets
 * it go on, and --check, or a problem found, ends it.
 */
#include <stdlib.h>

#include "launcher/check/check.h"
#include "launcher/cli/cli.h"
#include "launcher/job/hooks.h"
#include "launcher/plan/envctx.h"
#include "launcher/plan/plan.h"
#include "util/xmalloc.h"

struct checkfeat {
	const struct job_view	*v;
	struct check		*chk;
};

/* The check is over (check.h's done). */
static void
checkfeat_done(void *arg, int code)
{
	struct checkfeat	*f = arg;
	struct job		*j = f->v->job;

	if (code != 0 || f->v->o->check)
		job_ctl_stop(j, code);
	else
		job_ctl_release(j, JG_CHECK);
}

static void
checkfeat_quiet(void *arg)
{
	job_ctl_quiet(((struct checkfeat *)arg)->v->job);
}

static int
checkfeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	struct checkfeat	*f;
	struct check_cbs	 cb = { checkfeat_done, checkfeat_quiet, NULL };

	if (!v->o->check && !(v->o->preflight && v->plan->nhosts > 1))
		return 0;
	f = xcalloc(1, sizeof(*f));
	f->v = v;
	cb.arg = f;
	f->chk = check_new(&cb, v->o, v->plan, !v->o->check,
	    v->env->per_host ? v->env->rank0_addr : NULL);
	job_ctl_hold(v->job, JG_CHECK);
	*state = f;
	return 0;
}

static void
checkfeat_close(void *arg)
{
	struct checkfeat	*f = arg;

	check_free(f->chk);
	free(f);
}

/* Every agent said HELLO: the check's first step goes out. */
static void
checkfeat_all_connected(void *arg)
{
	struct checkfeat	*f = arg;

	check_begin(f->chk, f->v->hosts);
}

static int
checkfeat_checked(void *arg, struct job_host *h, const uint8_t *p, size_t n)
{
	return check_frame(((struct checkfeat *)arg)->chk, h, p, n);
}

const struct job_feature check_feature = {
	.name = "check",
	.open = checkfeat_open,
	.close = checkfeat_close,
	.all_connected = checkfeat_all_connected,
	.checked = checkfeat_checked,
};
