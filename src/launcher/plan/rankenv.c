/*
 * rankenv.c -- a rank's environment, in the two parts the agent protocol
 * carries: the host part (JOB) and the rank part (RANK). dtrun's own
 * DTRUN_* here, the frameworks' from framework.c, the user's -x last,
 * which wins over everything. CUDA_VISIBLE_DEVICES is set per host, never
 * per rank (hiding devices per rank breaks CUDA IPC between ranks), and
 * only where --include/--exclude picked device ids, as DeepSpeed's launcher
 * does: then LOCAL_RANK i is the i-th of the devices left.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "common/environ.h"
#include "launcher/plan/framework.h"
#include "hostfile/hostfile.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rankenv.h"
#include "util/strv.h"

/* True if the user set name: in dtrun's environment or with -x. */
int
env_user_set(const struct opts *o, const char *name)
{
	return getenv(name) != NULL ||
	    dt_env_find(o->exports, o->nexports, name) != NULL;
}

/* The host part: DTRUN_*, the frameworks', Slurm's, the interface, then -x. */
void
env_host(const struct env_ctx *c, int h, struct strv *sv)
{
	const struct plan	*p = c->plan;

	strv_setf(sv, "DTRUN_JOB_ID", "%s", c->job_id);
	strv_setf(sv, "DTRUN_HOST", "%s", p->hosts[h].name);
	strv_setf(sv, "DTRUN_WORLD_SIZE", "%d", p->nworkers);
	strv_setf(sv, "DTRUN_LOCAL_WORLD_SIZE", "%d", p->hosts[h].nworkers);
	strv_setf(sv, "DTRUN_NODE_RANK", "%d", h);
	strv_setf(sv, "DTRUN_NNODES", "%zu", p->nnodes);
	/*
	 * The ranks reach the rendezvous through their agent, which gives
	 * them its socket's address: no rank holds the job secret
	 * (doc/agent-protocol.md, "The rendezvous through the agent").
	 */
	if (c->rdzv_addr != NULL)
		strv_setf(sv, "DTRUN_RDZV_ADDR", "agent");
	/* The agent gives the ranks its socket for their steps (progress.h). */
	if (c->o->straggler_threshold > 0)
		strv_setf(sv, "DTRUN_PROGRESS", "agent");
	/* And NCCL's arrivals at collectives, through our plugin. */
	if (c->o->straggler_threshold > 0 && !c->o->no_nccl_profiler)
		strv_setf(sv, "DTRUN_NCCL_PROFILER", "agent");
	if (c->o->seeded)
		strv_setf(sv, "DTRUN_SEED", "%llu",
		    (unsigned long long)c->o->seed);
	strv_setf(sv, "DTRUN_RESTART_COUNT", "%d", c->attempt);
	strv_setf(sv, "DTRUN_MAX_RESTARTS", "%d", c->max_restarts);
	/* What torchrun gives its workers, for code that reads them. */
	if (c->frameworks & FW_PYTORCH) {
		strv_setf(sv, "TORCHELASTIC_RESTART_COUNT", "%d", c->attempt);
		strv_setf(sv, "TORCHELASTIC_MAX_RESTARTS", "%d",
		    c->max_restarts);
	}
	fw_host(c, h, sv);
	/*
	 * Under Slurm the ranks inherit the agent step's SLURM_* (one task
	 * per node): tools that read them (Lightning, submitit) would take
	 * every rank for task 0 of 1. Say what each rank really is.
	 */
	if (c->o->launcher == LAUNCH_SLURM) {
		strv_setf(sv, "SLURM_NTASKS", "%d", p->nworkers);
		strv_setf(sv, "SLURM_NPROCS", "%d", p->nworkers);
		strv_setf(sv, "SLURM_STEP_NUM_TASKS", "%d", p->nworkers);
		strv_setf(sv, "SLURM_NTASKS_PER_NODE", "%d", p->hosts[h].nworkers);
		strv_setf(sv, "SLURM_STEP_TASKS_PER_NODE", "%d",
		    p->hosts[h].nworkers);
		strv_setf(sv, "SLURM_NODEID", "%d", h);
	}
	/*
	 * NCCL and Gloo (PyTorch, Horovod) bind to the chosen interface: ours
	 * on this machine, else each host's agent sets its own.
	 */
	if ((c->frameworks & (FW_PYTORCH | FW_HOROVOD)) && c->ifname[0] &&
	    !c->per_host) {
		if (c->nccl_ifname)
			strv_setf(sv, "NCCL_SOCKET_IFNAME", "%s", c->ifname);
		if (c->gloo_ifname)
			strv_setf(sv, "GLOO_SOCKET_IFNAME", "%s", c->ifname);
	}
	/* DeepSpeed's --include w:2,3: the ranks see devices 2 and 3 only. */
	if (p->hosts[h].devices != NULL)
		strv_setf(sv, "CUDA_VISIBLE_DEVICES", "%s", p->hosts[h].devices);
	/* -x comes last so the user can override anything above. */
	strv_addv(sv, c->o->exports, c->o->nexports);
}

/* Host h's defaults: set by its agent only where nothing else sets them. */
void
env_defaults(const struct env_ctx *c, int h, struct strv *sv)
{
	if (c->omp_default && c->plan->hosts[h].nworkers > 1)
		strv_setf(sv, "OMP_NUM_THREADS", "1");
}

/* Adds one DMLC_* variable (hf_plan_dmlc_env's callback). */
static int
env_dmlc(const char *name, const char *value, void *arg)
{
	strv_setf(arg, name, "%s", value);
	return 0;
}

/* The rank part: DTRUN_RANK and the rest, laid over the host part, -x's dropped. */
void
env_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	size_t	first = sv->n;

	/* MXNet's parameter servers (-s): roles and the scheduler's address. */
	hf_plan_dmlc_env(&c->plan->hf, r, env_dmlc, sv);
	if (c->plan->ranks[r].role != HF_ROLE_WORKER) {
		strv_setf(sv, "DTRUN_ROLE", "%s", c->plan->ranks[r].role ==
		    HF_ROLE_SERVER ? "server" : "scheduler");
	} else {
		strv_setf(sv, "DTRUN_RANK", "%d", r);
		strv_setf(sv, "DTRUN_LOCAL_RANK", "%d",
		    c->plan->ranks[r].local_rank);
		if (c->o->seeded)
			strv_setf(sv, "DTRUN_RANK_SEED", "%llu",
			    (unsigned long long)env_rank_seed(c->o->seed, r));
		fw_rank(c, r, sv);
		if (c->o->launcher == LAUNCH_SLURM) {
			strv_setf(sv, "SLURM_PROCID", "%d", r);
			strv_setf(sv, "SLURM_LOCALID", "%d",
			    c->plan->ranks[r].local_rank);
		}
	}
	/*
	 * The rank part is laid over the host part: drop what -x set, for
	 * servers and the scheduler too (-x DMLC_PS_ROOT_PORT=P moves it).
	 */
	if (sv->n > first)
		sv->n = first + dt_env_drop(sv->v + first, sv->n - first,
		    c->o->exports, c->o->nexports);
}

/* DTRUN_RANK_SEED: SplitMix64's (rank + 1)th output, shifted to fit an int64. */
uint64_t
env_rank_seed(uint64_t seed, unsigned rank)
{
	uint64_t	z = seed + (uint64_t)(rank + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) >> 1;
}
