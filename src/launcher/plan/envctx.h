/*
 * envctx.h -- what a job's variables are made from (struct env_ctx), and
 * the frameworks it asks for (FW_*, fwname.h). Both netplan.c, which
 * fills it, and framework.c, which reads it, depend on this header and on
 * nothing of each other; rankenv.c puts them together. So the three
 * depend one way.
 */
#ifndef DT_ENVCTX_H
#define DT_ENVCTX_H

#include "launcher/cli/fwname.h"
#include "launcher/plan/plan.h"

struct opts;


/* Everything the variables are made from; env_prepare fills it for a job. */
struct env_ctx {
	const struct opts	*o;
	const struct plan	*plan;
	const char		*job_id;
	unsigned		 frameworks;	/* FW_* (fwname.h) */
	char			 master_addr[256];	/* rank 0's host, as ranks reach it */
	int			 per_host;	/* each host's agent chooses its interface */
	char			 rank0_addr[256];	/* what those agents route to */
	int			 master_port;
	char			 ifname[64];	/* the interface (this machine's); "" = unknown */
	char			 ifaddr[64];	/* its IPv4 address: where hosts reach us */
	int			 nccl_ifname;	/* export NCCL_SOCKET_IFNAME */
	int			 gloo_ifname;	/* export GLOO_SOCKET_IFNAME */
	int			 ps_port;	/* MXNet's DMLC_PS_ROOT_PORT */
	int			*worker_ports;	/* per rank, for TF_CONFIG; NULL without */
	const char		*rdzv_addr;	/* set: via the agents */
	int			 store;		/* dtrun serves PyTorch's TCPStore */
	int			 attempt;	/* restarts so far (DTRUN_RESTART_COUNT) */
	int			 max_restarts;	/* --max-restarts */
	int			 omp_default;	/* OMP_NUM_THREADS=1 where ranks share a host */
};

/* The address ranks use to reach host h (for TF_CONFIG, DMLC_NODE_HOST). */
static inline const char *
env_host_addr(const struct env_ctx *c, int h)
{
	return c->plan->local ? c->master_addr : c->plan->hosts[h].name;
}

#endif
