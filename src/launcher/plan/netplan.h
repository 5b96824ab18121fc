/*
 * netplan.h -- a job's network plan, the facts its variables are made
 * from: the interface NCCL and Gloo bind to (this machine's, or each
 * host's own, chosen by its agent), MASTER_ADDR and free ports, all kept
 * in struct env_ctx (envctx.h). rankenv.h makes the ranks' variables of it.
 */
#ifndef DT_NETPLAN_H
#define DT_NETPLAN_H

#include <stddef.h>

#include "launcher/plan/envctx.h"

struct ap_iface;
struct dt_err;
struct opts;
struct plan;

/*
 * Fills c for a job: the frameworks, the network interface (--iface or
 * chosen; logged with -v), MASTER_ADDR, and free ports. Returns 0, or
 * DT_ERR_NOTFOUND with e naming the interfaces there are. env_release
 * frees what it allocated.
 */
int	env_prepare(struct env_ctx *c, const struct opts *, const struct plan *,
	    const char *job_id, struct dt_err *e);
void	env_release(struct env_ctx *c);

/*
 * For host h's JOB: writes its --iface candidates into cands ("" = by the
 * route to c->rank0_addr) and returns the AP_IF_* variables its agent is to
 * set; 0 and "" when dtrun chose for every host (a job on this machine).
 */
unsigned env_host_iface(const struct env_ctx *, int h, char *cands,
	    size_t len);
/*
 * Host h's agent said what it chose (IFACE): -v shows it. Returns 0, or -1
 * after logging why it had none and the fix: the job must not start.
 */
int	env_host_chose(const struct env_ctx *, int h, const struct ap_iface *);

#endif
