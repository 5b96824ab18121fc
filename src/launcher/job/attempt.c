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
#include "common/port.h"
#include "launcher/job/ranks.h"

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

/*
 * The ranks' environment, ports and rendezvous. Returns what failed ("" for
 * a message of its own), or NULL.
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
	return NULL;
}

int
attempt_open(struct attempt *r, struct event_base *base, const struct opts *o,
    const struct plan *p, struct job_host **hosts, const char *id,
    struct job_attempt *a, struct job *j, const struct attempt_cbs *cb)
{
	struct dt_err	 e;
	const char	*what = "";
	char		 msg[1024];

	memset(r, 0, sizeof(*r));
	r->msg = (struct jobmsg){ o, p, &r->env, id };
	r->ranks = ranks_new(p->nranks);
	r->sig = signals_new(base, o->fwd_signals, &cb->sig);
	r->view = (struct job_view){ base, o, p, id, a->n, a->output_dir,
	    hosts, r->ranks, &r->env, j };
	dt_err_clear(&e);
	if ((what = attempt_prepare(r, base, o, p, id, a, cb, &e)) != NULL ||
	    hooks_open(&r->hooks, a->features, &r->view, &e) != 0) {
		log_error("%s%s", what != NULL ? what : "",
		    dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	return 0;
}

void
attempt_drain(struct attempt *r)
{
	hooks_drain(&r->hooks);
}

void
attempt_close(struct attempt *r)
{
	hooks_close(&r->hooks);
	jobrdzv_stop(&r->rdzv);
	ranks_free(r->ranks);
	env_release(&r->env);
	signals_free(r->sig);
}
