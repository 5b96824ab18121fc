/*
 * dtnccl.h -- NCCL loaded with dlopen() at run time, so libdtcomm builds
 * and runs where there is no NCCL; only these calls fail there. nccl.h is
 * not needed: the few types used are declared here.
 */
#ifndef DT_DTNCCL_H
#define DT_DTNCCL_H

#include <stdint.h>

#define DTNCCL_ID_BYTES		128

struct dt_err;

/*
 * Loads NCCL once per process (DTRUN_NCCL_LIBRARY, else libnccl.so.2).
 * Returns 0, or DTCOMM_ERR_NONCCL with *e saying why.
 */
int	 dtnccl_load(struct dt_err *e);

/* ncclGetUniqueId. Returns 0, or DTCOMM_ERR_NONCCL / DTCOMM_ERR_NCCL. */
int	 dtnccl_unique_id(uint8_t id[DTNCCL_ID_BYTES], struct dt_err *e);

/*
 * ncclCommInitRank with ids[0] when nids is 1, else
 * ncclCommInitRankScalable with nids ids. comm_out is an ncclComm_t *.
 */
int	 dtnccl_comm_init(void *comm_out, int nranks, int rank,
	     const uint8_t *ids, int nids, struct dt_err *e);

#endif
