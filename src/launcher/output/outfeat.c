/*
 * outfeat.c -- the output on the job's hooks (hooks.h): every rank's lines
 * to dtrun's stdout and stderr and --output-dir, and the terminal's status
 * line while the job starts, which goes before the first line of output.
 * It asks the core to pause the agents while its writes back up, and tells
 * it when stdout loses its reader.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "common/err.h"
#include "launcher/job/agents.h"
#include "launcher/job/hooks.h"
#include "common/log.h"
#include "launcher/output/output.h"
#include "launcher/plan/plan.h"
#include "launcher/cli/prefix.h"
#include "launcher/output/status.h"
#include "launcher/cli/streams.h"
#include "util/xmalloc.h"

struct outfeat {
	const struct job_view	*v;
	struct output		*out;
	struct status		*st;		/* the terminal's status line */
};

static void
outfeat_pressure(void *arg, int on)
{
	struct outfeat	*f = arg;

	job_ctl_pause(f->v->job, on);
}

static void
outfeat_closed(void *arg, int stream)
{
	struct outfeat	*f = arg;

	job_ctl_stream_lost(f->v->job, stream);
}

/* How the attempt's output is written: prefixes, files, collapse. */
static void
outfeat_cfg(struct output_cfg *oc, const struct job_view *v, void *arg)
{
	const struct opts	*o = v->o;

	memset(oc, 0, sizeof(*oc));
	oc->prefix = o->prefix;
	oc->dir = v->output_dir;
	oc->attempt = v->attempt;
	oc->timestamp = o->timestamp;
	oc->escape = o->escape_output;
	/*
	 * On by default where people read it: a terminal, with enough ranks
	 * that their copies of one line drown the rest. A merged line has one
	 * prefix: it cannot say each rank's host.
	 */
	oc->collapse = (o->collapse > 0 || (o->collapse == 0 &&
	    v->plan->nranks >= OUTPUT_COLLAPSE_RANKS &&
	    isatty(STDOUT_FILENO))) && !prefix_per_rank(o->prefix);
	if (o->collapse > 0 && !oc->collapse && v->attempt == 0)
		log_notice("--collapse is off: --prefix \"%s\" names each "
		    "rank's host or local rank (%%h, %%l)", o->prefix);
	oc->color[0] = status_color_ok(STDOUT_FILENO);
	oc->color[1] = status_color_ok(STDERR_FILENO);
	oc->pressure = outfeat_pressure;
	oc->closed = outfeat_closed;
	oc->arg = arg;
}

static int
outfeat_open(const struct job_view *v, void *kept, void **state,
    struct dt_err *e)
{
	const struct opts	*o = v->o;
	const struct plan	*p = v->plan;
	struct output_cfg	 oc;
	struct outfeat		*f = xcalloc(1, sizeof(*f));
	size_t			 i;
	int			 rc;

	*state = f;
	f->v = v;
	outfeat_cfg(&oc, v, f);
	f->out = output_new(v->base, &oc, p->nranks);
	for (i = 0; i < p->nranks; i++) {
		if ((rc = output_rank(f->out, i, p->ranks[i].local_rank,
		    p->hosts[p->ranks[i].host].name, e)) != 0)
			return rc;
		output_rank_term(f->out, i, streams_term(&o->redirects,
		    &o->tee, o->ranks_filter, i, p->ranks[i].local_rank));
	}
	f->st = status_new(!o->quiet, p->nhosts, p->nranks);
	return 0;
}

/* The status line goes; the output is all written, for a slow reader too. */
static void
outfeat_drain(void *arg)
{
	struct outfeat	*f = arg;

	status_free(f->st);
	f->st = NULL;
	/* Wait for a slow reader as long as it lives: nothing is dropped. */
	output_finish(f->out, -1);
}

static void
outfeat_close(void *arg)
{
	struct outfeat	*f = arg;

	status_free(f->st);
	output_free(f->out);
	free(f);
}

static void
outfeat_connected(void *arg, size_t host, const struct ap_hello *hello)
{
	struct outfeat	*f = arg;

	status_connected(f->st, f->v->hosts[host]->ph->name, hello->hostname,
	    hello->pid);
}

static void
outfeat_prepared(void *arg, size_t host)
{
	status_add(((struct outfeat *)arg)->st, ST_READY);
}

static void
outfeat_rank_started(void *arg, size_t rank)
{
	status_add(((struct outfeat *)arg)->st, ST_STARTED);
}

static void
outfeat_rank_joined(void *arg, size_t rank)
{
	status_add(((struct outfeat *)arg)->st, ST_JOINED);
}

/* A rank's bytes: the status line is cleared for good before them. */
static void
outfeat_output(void *arg, size_t rank, int stream, const uint8_t *p,
    size_t n)
{
	struct outfeat	*f = arg;

	status_done(f->st);
	output_feed(f->out, (int)rank, stream, p, n);
}

static void
outfeat_rank_ended(void *arg, size_t rank)
{
	output_rank_end(((struct outfeat *)arg)->out, (int)rank);
}

static void
outfeat_quiet(void *arg)
{
	status_done(((struct outfeat *)arg)->st);
}

const struct job_feature output_feature = {
	.name = "output",
	.open = outfeat_open,
	.drain = outfeat_drain,
	.close = outfeat_close,
	.connected = outfeat_connected,
	.prepared = outfeat_prepared,
	.rank_started = outfeat_rank_started,
	.rank_joined = outfeat_rank_joined,
	.output = outfeat_output,
	.rank_ended = outfeat_rank_ended,
	.quiet = outfeat_quiet,
};
