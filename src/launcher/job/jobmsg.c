/*
 * jobmsg.c -- what each host's agent is told of the job (jobmsg.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/job/agents.h"
#include "launcher/cli/cli.h"
#include "common/dtlimits.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/plan/framework.h"
#include "launcher/job/jobmsg.h"
#include "common/log.h"
#include "launcher/plan/netplan.h"
#include "launcher/plan/rankenv.h"
#include "launcher/plan/plan.h"
#include "util/strv.h"
#include "launcher/plan/rundir.h"
#include "common/wire.h"

/* Every plan's ranks fit what an agent takes for one host. */
_Static_assert(AP_MAX_RANKS >= HF_RANKS_MAX, "AP_MAX_RANKS < HF_RANKS_MAX");

/*
 * A JOB or RANK for h could not be encoded (rc): say which limit it broke,
 * for rank (-1: the variables every rank shares). Returns the exit status.
 */
static int
jobmsg_failed(const struct job_host *h, int rc, int rank)
{
	char	what[64];

	if (rank < 0)
		snprintf(what, sizeof(what), "the variables (and --setup) for "
		    "%s", h->ph->name);
	else
		snprintf(what, sizeof(what), "rank %d's command line and "
		    "variables", rank);
	if (rc == DT_ERR_TOOBIG) {
		log_error("%s are too big to carry: at most %d strings of %d "
		    "KiB each, %d MiB in all (execve takes less: see ARG_MAX)",
		    what, AP_MAX_STRS, AP_MAX_STR / 1024, AP_MSG_MAX >> 20);
		return EXIT_CONFIG;
	}
	log_error("%s: out of memory", what);
	return EXIT_INTERNAL;
}

/* Encodes h's JOB into wb. 0 or DT_ERR_*. */
static int
jobmsg_job(const struct jobmsg *m, const struct job_host *h,
    struct dt_wbuf *wb)
{
	const struct plan_host	*ph = h->ph;
	struct strv		 env = { 0 }, defs = { 0 };
	struct ap_job		 aj;
	char			 cwd[4096], ifc[AP_IFACE_MAX];
	int			 rc;

	env_host(m->env, h->index, &env);
	env_defaults(m->env, h->index, &defs);
	memset(&aj, 0, sizeof(aj));
	aj.version = AP_VERSION;
	aj.job_id = (char *)m->id;
	/* Locally the agent inherits our directory; remote ones are told. */
	aj.cwd = m->plan->local || ph->here ||
	    getcwd(cwd, sizeof(cwd)) == NULL ? "" : cwd;
	if (m->o->sync_dst != NULL)
		aj.cwd = (char *)run_dir(m->o, ph, m->plan->local || ph->here,
		    cwd, sizeof(cwd));
	aj.kill_grace_ms = (uint64_t)(m->o->kill_grace * 1000);
	aj.nranks = ph->nranks;
	aj.env = env.v;
	aj.nenv = env.n;
	aj.setup = (char *)(m->o->setup != NULL ? m->o->setup : "");
	/* Over hosts, each agent chooses its own interface (netplan.h). */
	aj.ifvars = env_host_iface(m->env, h->index, ifc, sizeof(ifc));
	aj.iface = ifc;
	aj.rank0 = m->env->per_host ? (char *)m->env->rank0_addr : "";
	aj.pack = (uint8_t)h->be->pack;
	aj.defaults = defs.v;
	aj.ndefaults = defs.n;
	/* torch's @record writes the exception there: the summary shows it. */
	aj.errfile = (m->env->frameworks & FW_PYTORCH) != 0;
	rc = ap_put_job(wb, &aj);
	strv_free(&env);
	strv_free(&defs);
	return rc;
}

int
jobmsg_put(const struct jobmsg *m, struct job_host *h, struct dt_wbuf *wb)
{
	const struct plan_host	*ph = h->ph;
	struct strv		 renv = { 0 };
	struct ap_rank		 ar;
	int			 i, r, rc;

	if ((rc = jobmsg_job(m, h, wb)) != 0) {
		dt_wbuf_reset(wb);
		return jobmsg_failed(h, rc, -1);
	}
	/* JOB, RANKs and PREPARE in as few writes as the batch allows. */
	for (i = 0; i < ph->nranks; i++) {
		r = ph->ranks[i];
		env_rank(m->env, r, &renv);
		ar.rank = r;
		ar.local_rank = m->plan->ranks[r].local_rank;
		ar.argv = m->o->cmd;
		ar.argc = m->o->ncmd;
		ar.env = renv.v;
		ar.nenv = renv.n;
		rc = ap_put_rank(wb, &ar);
		strv_free(&renv);
		if (rc != 0) {
			dt_wbuf_reset(wb);
			return jobmsg_failed(h, rc, r);
		}
		if (wb->len > DT_WRITE_BATCH)
			agents_send(h, wb);
	}
	ap_put_empty(wb, AP_PREPARE);
	return 0;
}

void
jobmsg_ports(const struct jobmsg *m, struct env_ctx *env,
    const struct job_host *h, const int *ports, uint32_t n)
{
	uint32_t	k = 0;
	int		i, r;

	for (i = 0; i < h->ph->nranks && k < n; i++) {
		r = h->ph->ranks[i];
		if (m->plan->ranks[r].role == HF_ROLE_WORKER)
			env->worker_ports[r] = ports[k++];
	}
	log_info("%s: its agent chose %u free port%s for TF_CONFIG",
	    h->ph->name, n, n == 1 ? "" : "s");
}

void
jobmsg_ask_ports(const struct jobmsg *m, struct job_host **hosts,
    struct dt_wbuf *wb, size_t *pending)
{
	size_t	h;

	if (m->env->worker_ports == NULL || plan_on_loopback(m->plan))
		return;
	/* First: an ssh host's reply can be handled inside agents_send. */
	for (h = 0; h < m->plan->nhosts; h++)
		if (hosts[h]->ph->nworkers > 0)
			(*pending)++;
	for (h = 0; h < m->plan->nhosts; h++) {
		if (hosts[h]->ph->nworkers == 0)
			continue;
		ap_put_ports(wb, hosts[h]->ph->nworkers);
		agents_send(hosts[h], wb);
	}
}
