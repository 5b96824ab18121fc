/*
 * ncclprof.h -- dtrun's NCCL profiler plugin (ncclprof.c). NCCL sees only
 * ncclProfiler_v5 (ncclabi.h); these are for the tests and the benchmark,
 * which link its object directly.
 */
#ifndef DT_NCCLPROF_H
#define DT_NCCLPROF_H

#include <stdint.h>

struct nccl_profiler_v5;

extern const struct nccl_profiler_v5 ncclProfiler_v5;

/* Collectives sent to the agent so far, and dropped (it was behind). */
void	ncclprof_counts(uint64_t *sent, uint64_t *dropped);
/* Forgets the connection, counts and rank (the next init starts over). */
void	ncclprof_reset(void);

#endif
