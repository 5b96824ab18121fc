/*
 * env.c -- what each rank finds in its environment: PyTorch's env://
 * variables, dtrun's own DTRUN_*, and the user's -x. CUDA_VISIBLE_DEVICES
 * is left alone: hiding devices per rank breaks CUDA IPC between ranks.
 */
#include <stddef.h>

#include "cli.h"
#include "env.h"
#include "plan.h"
#include "strv.h"

void
env_host(const struct env_ctx *c, int h, struct strv *sv)
{
	const struct plan	*p = c->plan;

	strv_setf(sv, "WORLD_SIZE", "%d", p->nworkers);
	strv_setf(sv, "LOCAL_WORLD_SIZE", "%d", p->hosts[h].nworkers);
	strv_setf(sv, "NODE_RANK", "%d", h);
	strv_setf(sv, "GROUP_RANK", "%d", h);
	strv_setf(sv, "NNODES", "%zu", p->nhosts);
	strv_setf(sv, "ROLE_WORLD_SIZE", "%d", p->nworkers);
	strv_setf(sv, "MASTER_ADDR", "%s", c->master_addr);
	strv_setf(sv, "MASTER_PORT", "%d", c->master_port);
	strv_setf(sv, "DTRUN_JOB_ID", "%s", c->job_id);
	strv_setf(sv, "DTRUN_HOST", "%s", p->hosts[h].name);
	strv_setf(sv, "DTRUN_WORLD_SIZE", "%d", p->nworkers);
	strv_setf(sv, "DTRUN_NODE_RANK", "%d", h);
	strv_setf(sv, "DTRUN_NNODES", "%zu", p->nhosts);
	/* The secret travels in the agent protocol, never on a command line. */
	strv_setf(sv, "DTRUN_RDZV_ADDR", "%s", c->rdzv_addr);
	strv_setf(sv, "DTRUN_RDZV_TOKEN", "%s", c->rdzv_token);
	/* -x comes last so the user can override anything above. */
	strv_addv(sv, c->o->exports, c->o->nexports);
}

/* Adds one DMLC_* variable (hf_plan_dmlc_env's callback). */
static int
env_dmlc(const char *name, const char *value, void *arg)
{
	strv_setf(arg, name, "%s", value);
	return 0;
}

void
env_rank(const struct env_ctx *c, int r, struct strv *sv)
{
	int	local = c->plan->ranks[r].local_rank;

	/* MXNet's parameter servers (-s): roles and the scheduler's address. */
	hf_plan_dmlc_env(&c->plan->hf, r, env_dmlc, sv);
	if (c->plan->ranks[r].role != HF_ROLE_WORKER) {
		strv_setf(sv, "DTRUN_ROLE", "%s", c->plan->ranks[r].role ==
		    HF_ROLE_SERVER ? "server" : "scheduler");
		return;
	}
	strv_setf(sv, "RANK", "%d", r);
	strv_setf(sv, "LOCAL_RANK", "%d", local);
	strv_setf(sv, "ROLE_RANK", "%d", r);
	strv_setf(sv, "DTRUN_RANK", "%d", r);
	strv_setf(sv, "DTRUN_LOCAL_RANK", "%d", local);
}
