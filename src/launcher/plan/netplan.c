/*
 * netplan.c -- the network facts a job's variables are made from (struct
 * env_ctx, envctx.h): the interface for NCCL and Gloo (this machine's, or
 * what each host's agent is to choose and then says it chose),
 * MASTER_ADDR, and free ports; and torchrun's OMP_NUM_THREADS default.
 * rankenv.c turns them into each rank's environment. Its functions keep
 * the env_ prefix of the env_ctx they fill.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/cli/cli.h"
#include "common/err.h"
#include "common/iface.h"
#include "common/log.h"
#include "launcher/plan/netplan.h"
#include "launcher/plan/plan.h"
#include "common/port.h"
#include "launcher/plan/rankenv.h"
#include "util/xmalloc.h"

/*
 * A job on this machine alone: the loopback, or --iface (its items for
 * "localhost", or the bare ones), whose address is then MASTER_ADDR.
 */
static int
env_net_local(struct env_ctx *c, const struct iface *list, size_t n,
    struct iface_choice *ch, struct dt_err *e)
{
	char	cands[512];
	int	rc;

	if ((rc = iface_spec_host(c->o->iface, c->plan->hosts[0].name, cands,
	    sizeof(cands), e)) != 0)
		return rc;
	if (cands[0] == '\0')
		rc = iface_choose(list, n, NULL, 1, ch, e);
	else
		rc = iface_pick(list, n, cands, NULL, ch, e);
	if (rc != 0)
		return rc;
	snprintf(c->master_addr, sizeof(c->master_addr), "%s",
	    cands[0] == '\0' ? "127.0.0.1" : ch->addr);
	return 0;
}

/* Warns about --iface HOST=IFACE items naming no host of the job. */
static void
env_iface_hosts(const struct env_ctx *c, const char *me)
{
	const struct plan	*p = c->plan;
	const char		*item, *eq, *end;
	size_t			 h, l;

	for (item = c->o->iface; *item != '\0'; item = *end ? end + 1 : end) {
		end = item + strcspn(item, ",");
		if ((eq = memchr(item, '=', end - item)) == NULL)
			continue;
		l = eq - item;
		for (h = 0; h < p->nhosts; h++)
			if (strlen(p->hosts[h].name) == l &&
			    strncmp(p->hosts[h].name, item, l) == 0)
				break;
		if (h == p->nhosts && (strlen(me) != l ||
		    strncmp(me, item, l) != 0))
			log_warn("--iface %.*s: no host of this job is named "
			    "%.*s (write HOST as -H or the hostfile does)",
			    (int)(end - item), item, (int)l, item);
	}
}

/*
 * A job over hosts: each host's agent chooses its own interface by its
 * candidates or by its route to rank 0's address (rank0_addr): rank 0's
 * host as given, which each host resolves as its ranks resolve
 * MASTER_ADDR (no lookup here: a slow one would hold up every host). A
 * loopback name for rank 0 with hosts elsewhere means rank 0 runs here:
 * then this machine's interface address stands for it, as MASTER_ADDR too.
 * Our own choice (this machine's candidates, else the old guess) is where
 * the rendezvous is reached.
 */
static int
env_net_hosts(struct env_ctx *c, const struct iface *list, size_t n,
    struct iface_choice *ch, struct dt_err *e)
{
	const struct plan	*p = c->plan;
	const char		*r0 = p->hosts[0].name;
	char			 me[256], cands[512];
	int			 all = plan_on_loopback(p), here, rc = -1;

	c->per_host = 1;
	if (gethostname(me, sizeof(me)) != 0)
		me[0] = '\0';
	if (c->o->iface != NULL) {
		env_iface_hosts(c, me);
		if ((rc = iface_spec_host(c->o->iface, me, cands,
		    sizeof(cands), e)) != 0)
			return rc;
		/* Ours only if this machine has one: others may differ. */
		rc = cands[0] == '\0' ? -1 :
		    iface_pick(list, n, cands, NULL, ch, e);
	}
	if (rc != 0 && (rc = iface_choose(list, n, NULL, all, ch, e)) != 0)
		return rc;
	here = plan_loopback_name(r0) && !all;
	snprintf(c->master_addr, sizeof(c->master_addr), "%s",
	    here ? ch->addr : r0);
	/* Every host on this machine: they all route to its loopback. */
	snprintf(c->rank0_addr, sizeof(c->rank0_addr), "%s",
	    here ? ch->addr : all ? "127.0.0.1" : r0);
	return 0;
}

/* Picks the interface and MASTER_ADDR; says why with -v. */
static int
env_network(struct env_ctx *c, struct dt_err *e)
{
	struct iface		*list;
	struct iface_choice	 ch;
	size_t			 n;
	int			 rc;

	if ((rc = iface_list(&list, &n, e)) != 0)
		return rc;
	if (c->plan->local)
		rc = env_net_local(c, list, n, &ch, e);
	else
		rc = env_net_hosts(c, list, n, &ch, e);
	free(list);
	if (rc != 0)
		return rc;
	snprintf(c->ifname, sizeof(c->ifname), "%s", ch.name);
	snprintf(c->ifaddr, sizeof(c->ifaddr), "%s", ch.addr);
	c->nccl_ifname = !env_user_set(c->o, "NCCL_SOCKET_IFNAME");
	c->gloo_ifname = !env_user_set(c->o, "GLOO_SOCKET_IFNAME");
	log_info("network: %s%s (%s): %s; MASTER_ADDR=%s%s%s%s",
	    c->per_host ? "this machine: " : "", ch.name, ch.addr, ch.why,
	    c->master_addr, c->per_host ? "; each host chooses its own "
	    "interface" : "",
	    c->nccl_ifname ? "" : "; NCCL_SOCKET_IFNAME is yours",
	    c->gloo_ifname ? "" : "; GLOO_SOCKET_IFNAME is yours");
	return 0;
}

/* Host h's --iface candidates and the AP_IF_* variables its agent sets. */
unsigned
env_host_iface(const struct env_ctx *c, int h, char *cands, size_t len)
{
	struct dt_err	e;
	unsigned	vars = 0;

	cands[0] = '\0';
	if (!c->per_host)
		return 0;
	/* Checked when the options were read. */
	(void)iface_spec_host(c->o->iface, c->plan->hosts[h].name, cands, len,
	    &e);
	if (c->frameworks & (FW_PYTORCH | FW_HOROVOD))
		vars |= (c->nccl_ifname ? AP_IF_NCCL : 0) |
		    (c->gloo_ifname ? AP_IF_GLOO : 0);
	if (c->frameworks & FW_MXNET)
		vars |= AP_IF_DMLC;
	return vars;
}

/* Logs host h's choice (IFACE); -1 when it had none. */
int
env_host_chose(const struct env_ctx *c, int h, const struct ap_iface *f)
{
	const char	*host = c->plan->hosts[h].name;

	if (f->ok) {
		log_info("host %s: %s (%s): %s", host, f->name, f->addr,
		    f->why);
		return 0;
	}
	log_error("%s: no network interface to use: %s; give this host its "
	    "own with --iface %s=IFACE", host, f->why, host);
	return -1;
}

/*
 * torchrun's OMP_NUM_THREADS=1 where ranks share a host and the user set
 * none (torch/distributed/run.py): each rank's OpenMP would otherwise take
 * every core. Said once, as torchrun does, not at every restart.
 */
static const char omp_note[] = "OMP_NUM_THREADS=1 for ranks that share a "
    "host, as torchrun sets it, so they do not overload it; tune it with -x "
    "OMP_NUM_THREADS=N (a host's own or --setup's value wins too)";

/* Sets c->omp_default where ranks share a host; says so once. */
static void
env_omp(struct env_ctx *c)
{
	static int	 told;
	size_t		 h;

	if (!(c->frameworks & FW_PYTORCH) ||
	    env_user_set(c->o, "OMP_NUM_THREADS"))
		return;
	for (h = 0; h < c->plan->nhosts; h++)
		if (c->plan->hosts[h].nworkers > 1)
			c->omp_default = 1;
	if (!c->omp_default || told++)
		return;
	/* For a person at a terminal; a job's log stays quiet when it works. */
	if (isatty(STDERR_FILENO))
		log_notice("%s", omp_note);
	else
		log_info("%s", omp_note);
}

/* Whether -x or --env-file sets name. */
static int
env_exported(const struct opts *o, const char *name)
{
	size_t	i, n = strlen(name);

	for (i = 0; i < o->nexports; i++)
		if (strncmp(o->exports[i], name, n) == 0 &&
		    o->exports[i][n] == '=')
			return 1;
	return 0;
}

/*
 * dtrun serves PyTorch's TCPStore unless told not to: --store rank0, or
 * a store the user points at himself (-x MASTER_ADDR, MASTER_PORT or
 * TORCHELASTIC_USE_AGENT_STORE, --master-addr, --master-port).
 */
static int
env_store(const struct opts *o)
{
	return (o->frameworks & FW_PYTORCH) && !o->store_rank0 &&
	    !env_exported(o, "MASTER_ADDR") && !env_exported(o, "MASTER_PORT") &&
	    !env_exported(o, "TORCHELASTIC_USE_AGENT_STORE");
}

/* Fills c: frameworks, network, ports, the OpenMP default. */
int
env_prepare(struct env_ctx *c, const struct opts *o, const struct plan *p,
    const char *job_id, struct dt_err *e)
{
	size_t	n = 2, i;
	int	*ports, rc;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->plan = p;
	c->job_id = job_id;
	c->frameworks = o->frameworks;
	c->store = env_store(o);
	if ((rc = env_network(c, e)) != 0)
		return rc;
	/* One call, so every port differs: master, MXNet's root, workers. */
	if (c->frameworks & FW_TENSORFLOW)
		n += p->nworkers;
	ports = xcalloc(n, sizeof(*ports));
	port_pick(ports, n);
	c->master_port = ports[0];
	c->ps_port = ports[1];
	if (c->frameworks & FW_TENSORFLOW) {
		c->worker_ports = xcalloc(p->nworkers, sizeof(int));
		memcpy(c->worker_ports, ports + 2, p->nworkers * sizeof(int));
	}
	free(ports);
	env_omp(c);
	log_info("rendezvous: MASTER_ADDR=%s MASTER_PORT=%d", c->master_addr,
	    c->master_port);
	for (i = 0; c->worker_ports != NULL && i < (size_t)p->nworkers; i++)
		log_debug("TF_CONFIG: rank %zu listens on %s:%d", i,
		    env_host_addr(c, p->ranks[i].host), c->worker_ports[i]);
	return 0;
}

/* Frees what env_prepare allocated. */
void
env_release(struct env_ctx *c)
{
	free(c->worker_ports);
	c->worker_ports = NULL;
}
