/*
 * env.h -- the environment every rank gets. The job sends the host part
 * once per host (JOB message) and the rank part with each rank (RANK); the
 * agent lays both over its own environment, rank part last.
 */
#ifndef DT_ENV_H
#define DT_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "envctx.h"

struct ap_iface;
struct dt_err;
struct opts;
struct plan;
struct strv;


/*
 * Fills c for a job: the frameworks, the network interface (--iface or
 * chosen; logged with -v), MASTER_ADDR, and free ports. Returns 0, or
 * DT_ERR_NOTFOUND with e naming the interfaces there are. env_release
 * frees what it allocated.
 */
int	env_prepare(struct env_ctx *c, const struct opts *, const struct plan *,
	    const char *job_id, struct dt_err *e);
void	env_release(struct env_ctx *c);

/* True if the user set name: in dtrun's environment or with -x. */
int	env_user_set(const struct opts *, const char *name);
/*
 * Appends host h's defaults: variables its agent sets only where nothing
 * else does (JOB's defaults), torchrun's OMP_NUM_THREADS=1.
 */
void	env_defaults(const struct env_ctx *, int h, struct strv *);

/* True if -x gave the variable of kv's first n bytes ("NAME="). */
int	env_exported(const struct opts *, const char *kv, size_t n);

/*
 * The two parts of a rank's environment (envvars.c): dtrun's variables,
 * the frameworks' (framework.h), and the user's -x.
 */
/* Appends the variables shared by every rank of host h, then the user's -x. */
void	env_host(const struct env_ctx *, int h, struct strv *);
/* Appends the variables of one rank (never one the user set with -x). */
void	env_rank(const struct env_ctx *, int rank, struct strv *);

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

/*
 * DTRUN_RANK_SEED of --seed: the (rank + 1)th output of a SplitMix64
 * generator seeded with seed, shifted right by one so that it fits a
 * signed 64-bit integer (TensorFlow, torch.manual_seed and Python take it).
 */
uint64_t env_rank_seed(uint64_t seed, unsigned rank);

#endif
