/*
 * rankenv.h -- the environment every rank gets. The job sends the host
 * part once per host (JOB message) and the rank part with each rank
 * (RANK); the agent lays both over its own environment, rank part last.
 * What they are made from is struct env_ctx (envctx.h), which netplan.h
 * fills.
 */
#ifndef DT_RANKENV_H
#define DT_RANKENV_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/plan/envctx.h"

struct opts;
struct strv;

/* True if the user set name: in dtrun's environment or with -x. */
int	env_user_set(const struct opts *, const char *name);
/*
 * Appends host h's defaults: variables its agent sets only where nothing
 * else does (JOB's defaults), torchrun's OMP_NUM_THREADS=1.
 */
void	env_defaults(const struct env_ctx *, int h, struct strv *);

/*
 * The two parts of a rank's environment: dtrun's variables,
 * the frameworks' (framework.h), and the user's -x.
 */
/* Appends the variables shared by every rank of host h, then the user's -x. */
void	env_host(const struct env_ctx *, int h, struct strv *);
/* Appends the variables of one rank (never one the user set with -x). */
void	env_rank(const struct env_ctx *, int rank, struct strv *);

/*
 * DTRUN_RANK_SEED of --seed: the (rank + 1)th output of a SplitMix64
 * generator seeded with seed, shifted right by one so that it fits a
 * signed 64-bit integer (TensorFlow, torch.manual_seed and Python take it).
 */
uint64_t env_rank_seed(uint64_t seed, unsigned rank);

#endif
