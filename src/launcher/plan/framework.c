/*
 * framework.c -- each framework's variables. Ranks are host-major (plan.h),
 * so a rank's local rank and its host's index are all any of them need.
 * Names follow what each stack's own launcher sets: torchrun, TensorFlow's
 * MultiWorkerMirroredStrategy, ps-lite's launcher, horovodrun, mpirun.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/plan/envctx.h"
#include "common/err.h"
#include "launcher/plan/framework.h"
#include "launcher/cli/opts.h"
#include "launcher/plan/plan.h"
#include "util/strv.h"
#include "util/xmalloc.h"

/* What each framework adds, by its FW_* bit (fwname.h names them). */
struct fw {
	unsigned	 bit;
	void		(*host)(const struct env_ctx *, int, struct strv *);
	void		(*rank)(const struct env_ctx *, int, struct strv *);
};

/*
 * torchrun makes a failed NCCL collective end the rank instead of hanging
 * it: the agent's own value, else 1 (local_elastic_agent.py), under the
 * name torch 2.2 reads and the one before it. -x still wins (rankenv.c).
 */
static void
fw_pytorch_nccl(struct strv *sv)
{
	static const char *const name[] = { "TORCH_NCCL_ASYNC_ERROR_HANDLING",
	    "NCCL_ASYNC_ERROR_HANDLING" };
	const char	*v;
	size_t		 i;

	for (i = 0; i < 2; i++)
		strv_setf(sv, name[i], "%s", (v = getenv(name[i])) != NULL ?
		    v : "1");
}

/* PyTorch's env:// and the variables torchrun sets. */
static void
fw_pytorch_host(const struct env_ctx *c, int h, struct strv *sv)
{
	const struct plan	*p = c->plan;

	strv_setf(sv, "WORLD_SIZE", "%d", p->nworkers);
	strv_setf(sv, "LOCAL_WORLD_SIZE", "%d", p->hosts[h].nworkers);
	strv_setf(sv, "NODE_RANK", "%d", h);
	strv_setf(sv, "GROUP_RANK", "%d", h);
	strv_setf(sv, "GROUP_WORLD_SIZE", "%zu", p->nnodes);
	strv_setf(sv, "NNODES", "%zu", p->nnodes);
	strv_setf(sv, "ROLE_WORLD_SIZE", "%d", p->nworkers);
	/* torchrun's role, when none is named, is "default". */
	strv_setf(sv, "ROLE_NAME", "%s", c->o->role != NULL ? c->o->role :
	    "default");
	strv_setf(sv, "TORCHELASTIC_RUN_ID", "%s", c->job_id);
	/*
	 * "True" makes every rank a client of a TCPStore the agent hosts
	 * (torch/distributed/rendezvous.py): dtrun's store, which each
	 * host's agent carries; DTRUN_STORE=agent asks the agent, which
	 * then points MASTER_ADDR and MASTER_PORT at itself. "False": rank
	 * 0 hosts it at MASTER_ADDR:MASTER_PORT, as with env:// alone.
	 */
	strv_setf(sv, "TORCHELASTIC_USE_AGENT_STORE", c->store ? "True" :
	    "False");
	if (c->store)
		strv_setf(sv, "DTRUN_STORE", "agent");
	strv_setf(sv, "MASTER_ADDR", "%s", c->master_addr);
	strv_setf(sv, "MASTER_PORT", "%d", c->master_port);
	fw_pytorch_nccl(sv);
}

/* PyTorch: one rank. */
static void
fw_pytorch_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	strv_setf(sv, "RANK", "%d", r);
	strv_setf(sv, "LOCAL_RANK", "%d", c->plan->ranks[r].local_rank);
	strv_setf(sv, "ROLE_RANK", "%d", r);
}

/* Appends s to buf; with esc, as the body of a JSON string. */
static void
json_add(char **buf, size_t *len, size_t *cap, const char *s, int esc)
{
	for (; *s != '\0'; s++) {
		if (*len + 8 > *cap) {
			*cap = *cap * 2 + 64;
			*buf = xreallocarray(*buf, *cap, 1);
		}
		if (esc && (*s == '"' || *s == '\\'))
			(*buf)[(*len)++] = '\\';
		if (esc && (unsigned char)*s < 0x20)
			*len += snprintf(*buf + *len, 7, "\\u%04x", *s);
		else
			(*buf)[(*len)++] = *s;
	}
	(*buf)[*len] = '\0';
}

char *
fw_tf_config(const struct env_ctx *c, int r)
{
	const struct plan	*p = c->plan;
	char			*buf = NULL, tail[64];
	size_t			 len = 0, cap = 0, i;

	json_add(&buf, &len, &cap, "{\"cluster\":{\"worker\":[", 0);
	for (i = 0; i < (size_t)p->nworkers; i++) {
		json_add(&buf, &len, &cap, i == 0 ? "\"" : ",\"", 0);
		json_add(&buf, &len, &cap, env_host_addr(c, p->ranks[i].host),
		    1);
		snprintf(tail, sizeof(tail), ":%d\"", c->worker_ports[i]);
		json_add(&buf, &len, &cap, tail, 0);
	}
	snprintf(tail, sizeof(tail), "]},\"task\":{\"type\":\"worker\","
	    "\"index\":%d}}", r);
	json_add(&buf, &len, &cap, tail, 0);
	return buf;
}

/* TensorFlow: TF_CONFIG for MultiWorkerMirroredStrategy, every rank a worker. */
static void
fw_tensorflow_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	char	*tf = fw_tf_config(c, r);

	strv_setf(sv, "TF_CONFIG", "%s", tf);
	free(tf);
}

/*
 * MXNet / ps-lite: every rank is a worker. With -s, the placement adds
 * parameter servers and a scheduler, and each process's own DMLC_* (from
 * hf_plan_dmlc_env, in the rank part) override these host-wide ones.
 */
static void
fw_mxnet_host(const struct env_ctx *c, int h, struct strv *sv)
{
	strv_setf(sv, "DMLC_ROLE", "worker");
	strv_setf(sv, "DMLC_NUM_WORKER", "%d", c->plan->nworkers);
	strv_setf(sv, "DMLC_NUM_SERVER", "0");
	strv_setf(sv, "DMLC_PS_ROOT_URI", "%s", c->master_addr);
	strv_setf(sv, "DMLC_PS_ROOT_PORT", "%d", c->ps_port);
	strv_setf(sv, "DMLC_NODE_HOST", "%s", env_host_addr(c, h));
	/* Over hosts, each host's agent sets its own. */
	if (c->ifname[0] != '\0' && !c->per_host)
		strv_setf(sv, "DMLC_INTERFACE", "%s", c->ifname);
}

/* MXNet: one worker. */
static void
fw_mxnet_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	strv_setf(sv, "DMLC_WORKER_ID", "%d", r);
}

/* Horovod: what horovodrun gives each process. */
static void
fw_horovod_host(const struct env_ctx *c, int h, struct strv *sv)
{
	strv_setf(sv, "HOROVOD_SIZE", "%d", c->plan->nworkers);
	strv_setf(sv, "HOROVOD_LOCAL_SIZE", "%d", c->plan->hosts[h].nworkers);
	strv_setf(sv, "HOROVOD_HOSTNAME", "%s", c->plan->hosts[h].name);
}

/*
 * Horovod: one rank. The "cross" communicator of local rank L holds the
 * L-th rank of every host that has one: its size is the number of hosts
 * with more than L ranks, and its rank counts those before this host.
 */
static void
fw_horovod_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	const struct plan	*p = c->plan;
	int			 local = p->ranks[r].local_rank;
	int			 host = p->ranks[r].host;
	size_t			 h;
	int			 cross_rank = 0, cross_size = 0;

	for (h = 0; h < p->nhosts; h++) {
		if (p->hosts[h].nworkers <= local)
			continue;
		if ((int)h < host)
			cross_rank++;
		cross_size++;
	}
	strv_setf(sv, "HOROVOD_RANK", "%d", r);
	strv_setf(sv, "HOROVOD_LOCAL_RANK", "%d", local);
	strv_setf(sv, "HOROVOD_CROSS_RANK", "%d", cross_rank);
	strv_setf(sv, "HOROVOD_CROSS_SIZE", "%d", cross_size);
}

/* MPI-style: what Open MPI's and MPICH's launchers export, read by many tools. */
static void
fw_mpi_host(const struct env_ctx *c, int h, struct strv *sv)
{
	strv_setf(sv, "OMPI_COMM_WORLD_SIZE", "%d", c->plan->nworkers);
	strv_setf(sv, "OMPI_COMM_WORLD_LOCAL_SIZE", "%d",
	    c->plan->hosts[h].nworkers);
	strv_setf(sv, "PMI_SIZE", "%d", c->plan->nworkers);
	strv_setf(sv, "MPI_LOCALNRANKS", "%d", c->plan->hosts[h].nworkers);
}

/*
 * MPI-style: one rank. Open MPI's OMPI_COMM_WORLD_NODE_RANK is not the
 * host's index but the rank among the processes of every job on the node:
 * with one job per node, the local rank.
 */
static void
fw_mpi_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	int	local = c->plan->ranks[r].local_rank;

	strv_setf(sv, "OMPI_COMM_WORLD_RANK", "%d", r);
	strv_setf(sv, "OMPI_COMM_WORLD_LOCAL_RANK", "%d", local);
	strv_setf(sv, "OMPI_COMM_WORLD_NODE_RANK", "%d", local);
	strv_setf(sv, "PMI_RANK", "%d", r);
	strv_setf(sv, "MPI_LOCALRANKID", "%d", local);
}

static const struct fw fws[] = {
	{ FW_PYTORCH,		fw_pytorch_host,	fw_pytorch_rank },
	{ FW_TENSORFLOW,	NULL,			fw_tensorflow_rank },
	{ FW_MXNET,		fw_mxnet_host,		fw_mxnet_rank },
	{ FW_HOROVOD,		fw_horovod_host,	fw_horovod_rank },
	{ FW_MPI,		fw_mpi_host,		fw_mpi_rank },
};
#define NFWS	(sizeof(fws) / sizeof(fws[0]))

/* Runs the host (rank_part 0) or rank builders of c's frameworks for index i. */
static void
fw_each(const struct env_ctx *c, int rank_part, int i, struct strv *sv)
{
	void	(*fn)(const struct env_ctx *, int, struct strv *);
	size_t	  f;

	for (f = 0; f < NFWS; f++) {
		fn = rank_part ? fws[f].rank : fws[f].host;
		if ((c->frameworks & fws[f].bit) && fn != NULL)
			fn(c, i, sv);
	}
}

void
fw_host(const struct env_ctx *c, int h, struct strv *sv)
{
	fw_each(c, 0, h, sv);
}

void
fw_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	fw_each(c, 1, r, sv);
}
