/*
 * attempt.c -- what one attempt of the job sets up around its agents, and
 * tears down (attempt.h).
 */
#include <string.h>
#include <unistd.h>

#include "launcher/job/attempt.h"
#include "launcher/cli/cli.h"
#include "launcher/plan/netplan.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/job/jobend.h"
#include "common/log.h"
#include "launcher/output/output.h"
#include "launcher/plan/plan.h"
#include "launcher/cli/prefix.h"
#include "common/port.h"
#include "launcher/job/ranks.h"
#include "launcher/output/status.h"
#include "launcher/sync/sync.h"
#include "launcher/watch/topview.h"

/*
 * A fresh MASTER_PORT (and MXNet's root port) for a restart: the last
 * attempt's may linger in TIME_WAIT, or still be held by what it left.
 */
static void
attempt_fresh_ports(struct attempt *r, struct job_attempt *a)
{
	int	ports[2], tries;

	for (tries = 0; tries < 8 && r->env.master_port == a->prev_port;
	    tries++) {
		port_pick(ports, 2);
		r->env.master_port = ports[0] != a->prev_port ? ports[0] :
		    ports[1];
	}
	a->master_port = r->env.master_port;
}

/* The attempt's output: prefixes, files, back-pressure. 0 or DT_ERR_*. */
static int
attempt_output(struct attempt *r, struct event_base *base,
    const struct opts *o, const struct plan *p, const struct job_attempt *a,
    const struct attempt_cbs *cb, struct dt_err *e)
{
	struct output_cfg	oc;
	size_t			i;
	int			rc;

	memset(&oc, 0, sizeof(oc));
	oc.prefix = o->prefix;
	oc.dir = a->output_dir;
	oc.attempt = a->n;
	oc.timestamp = o->timestamp;
	oc.escape = o->escape_output;
	/*
	 * On by default where people read it: a terminal, with enough ranks
	 * that their copies of one line drown the rest. A merged line has one
	 * prefix: it cannot say each rank's host.
	 */
	oc.collapse = (o->collapse > 0 || (o->collapse == 0 &&
	    p->nranks >= OUTPUT_COLLAPSE_RANKS && isatty(STDOUT_FILENO))) &&
	    !prefix_per_rank(o->prefix);
	if (o->collapse > 0 && !oc.collapse && a->n == 0)
		log_notice("--collapse is off: --prefix \"%s\" names each "
		    "rank's host or local rank (%%h, %%l)", o->prefix);
	oc.color[0] = status_color_ok(STDOUT_FILENO);
	oc.color[1] = status_color_ok(STDERR_FILENO);
	oc.pressure = cb->pressure;
	oc.closed = cb->closed;
	oc.arg = cb->arg;
	r->out = output_new(base, &oc, p->nranks);
	for (i = 0; i < p->nranks; i++) {
		if ((rc = output_rank(r->out, i, p->ranks[i].local_rank,
		    p->hosts[p->ranks[i].host].name, e)) != 0)
			return rc;
		output_rank_term(r->out, i, streams_term(&o->redirects,
		    &o->tee, o->ranks_filter, i, p->ranks[i].local_rank));
	}
	return 0;
}

/*
 * The ranks' environment, ports and rendezvous; the check and the sync.
 * Returns what failed ("" for a message of its own), or NULL.
 */
static const char *
attempt_prepare(struct attempt *r, struct event_base *base,
    const struct opts *o, const struct plan *p, const char *id,
    struct job_attempt *a, const struct attempt_cbs *cb, struct dt_err *e)
{
	if (env_prepare(&r->env, o, p, id, e) != 0)
		return "";
	r->env.attempt = a->n;
	r->env.max_restarts = a->max;
	attempt_fresh_ports(r, a);
	if (jobrdzv_start(&r->rdzv, base, o, p, &r->env, &cb->rdzv, e) != 0)
		return "rendezvous: ";
	/* --check; --preflight before a job of more than one host. */
	if (o->check || (o->preflight && p->nhosts > 1))
		r->chk = check_new(&cb->chk, o, p, !o->check, r->env.per_host ?
		    r->env.rank0_addr : NULL);
	/* Agents connect while the sync runs; the job goes out after both. */
	if (o->sync_dst != NULL && !o->check && (r->sync = sync_start(base, o,
	    p, cb->synced, cb->arg, e)) == NULL)
		return "";
	return NULL;
}

int
attempt_open(struct attempt *r, struct event_base *base, const struct opts *o,
    const struct plan *p, struct job_host **hosts, const char *id,
    struct job_attempt *a, const struct attempt_cbs *cb)
{
	struct dt_err	 e;
	const char	*what = "";
	char		 msg[1024];

	memset(r, 0, sizeof(*r));
	r->msg = (struct jobmsg){ o, p, &r->env, id };
	r->ranks = ranks_new(p->nranks);
	r->sig = signals_new(base, o->fwd_signals, &cb->sig);
	r->stk = stackask_new(base, o, p, hosts, r->ranks, id, a->n, a->output_dir,
	    &cb->stk);
	r->strag = straggle_new(base, o, p, r->stk, &cb->strag);
	r->top = topview_new(p, r->ranks, r->strag, a->n);
	dt_err_clear(&e);
	if (attempt_output(r, base, o, p, a, cb, &e) != 0 ||
	    (what = attempt_prepare(r, base, o, p, id, a, cb, &e)) != NULL) {
		log_error("%s%s", what, dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	r->st = status_new(!o->quiet, p->nhosts, p->nranks);
	return 0;
}

void
attempt_drain(struct attempt *r)
{
	status_free(r->st);
	r->st = NULL;
	sync_free(r->sync);
	r->sync = NULL;
	/* Wait for a slow reader as long as it lives: nothing is dropped. */
	output_finish(r->out, -1);
}

void
attempt_close(struct attempt *r)
{
	output_free(r->out);
	check_free(r->chk);
	jobrdzv_stop(&r->rdzv);
	ranks_free(r->ranks);
	env_release(&r->env);
	signals_free(r->sig);
	topview_free(r->top);
	straggle_free(r->strag);
	stackask_free(r->stk);
}
