/*
 * dtcomm.h -- libdtcomm: what a worker started by dtrun links to learn its
 * rank and get an NCCL communicator (pkg-config name: dtcomm).
 *
 *	struct dtcomm *c;
 *	ncclComm_t comm;
 *	if ((rc = dtcomm_init(&c)) != 0)
 *		errx(1, "%s", dtcomm_last_error());
 *	cudaSetDevice(dtcomm_local_rank(c));
 *	if ((rc = dtcomm_nccl_comm(c, &comm)) != 0) ...
 *
 * dtcomm_init reads its environment (dtcomm(3)):
 *	DTRUN_RDZV_ADDR		host:port of the job's rendezvous (required)
 *	DTRUN_RDZV_TOKEN	the job secret, hex (required; never on a
 *				command line)
 *	DTRUN_RANK		this worker's rank in dtrun's plan; when unset
 *				the worker joins by (host, local rank):
 *	DTRUN_HOST		host name as the launcher knows it (default:
 *				gethostname())
 *	DTRUN_LOCAL_RANK	local rank; else LOCAL_RANK, SLURM_LOCALID,
 *				OMPI_COMM_WORLD_LOCAL_RANK
 *	DTRUN_RDZV_TIMEOUT	seconds any one call may wait (default 1800,
 *				0: no limit; the launcher's own start timeout
 *				and abort notices still end every wait)
 *	DTRUN_NCCL_IDS		ids for ncclCommInitRankScalable (default 1)
 *	DTRUN_NCCL_LIBRARY	NCCL to dlopen (default libnccl.so.2)
 *
 * Every int function returns 0 (or the value asked for) on success, or a
 * negative error: dtrun's DT_ERR_* codes (the common ones are below) or a
 * DTCOMM_ERR_*. dtcomm_strerror names a code; dtcomm_last_error says what
 * failed last in the calling thread, in full. The library never prints
 * and never exits. One struct dtcomm must not be used by two threads at
 * once.
 */
#ifndef DTCOMM_H
#define DTCOMM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DTCOMM_ID_BYTES		128	/* sizeof(ncclUniqueId) */

/* Errors shared with dtrun (the same values as its DT_ERR_*). */
#define DTCOMM_ERR_INVAL	 -2	/* bad argument */
#define DTCOMM_ERR_RANGE	 -4	/* value too big for the buffer */
#define DTCOMM_ERR_PROTO	 -6	/* the rendezvous broke the protocol */
#define DTCOMM_ERR_AUTH		 -9	/* wrong DTRUN_RDZV_TOKEN */
#define DTCOMM_ERR_TIMEOUT	-10	/* DTRUN_RDZV_TIMEOUT passed */
#define DTCOMM_ERR_NOTFOUND	-11	/* no such key, or no rank for us */
#define DTCOMM_ERR_ABORTED	-14	/* the job is aborting */
#define DTCOMM_ERR_CLOSED	-15	/* the rendezvous went away */
/* libdtcomm's own. */
#define DTCOMM_ERR_NOENV	-100	/* not started by dtrun: no DTRUN_RDZV_* */
#define DTCOMM_ERR_NONCCL	-101	/* NCCL cannot be loaded */
#define DTCOMM_ERR_NCCL		-102	/* an NCCL call failed */

struct dtcomm;				/* opaque */

/*
 * Connects to the job's rendezvous, authenticates and joins. Returns 0
 * with *c set, or a negative error (*c NULL).
 */
int		 dtcomm_init(struct dtcomm **c);

/* This worker's rank, the job's size, and where it sits on its host. */
int		 dtcomm_rank(const struct dtcomm *c);
int		 dtcomm_size(const struct dtcomm *c);
int		 dtcomm_local_rank(const struct dtcomm *c);
int		 dtcomm_local_size(const struct dtcomm *c);
int		 dtcomm_node_rank(const struct dtcomm *c);
int		 dtcomm_num_nodes(const struct dtcomm *c);

/*
 * Copies the job's NCCL unique id (DTCOMM_ID_BYTES) into id. Rank 0 calls
 * ncclGetUniqueId and publishes it; every other rank waits for it, so all
 * get the same bytes. Rank 0 must stay alive while others use the id
 * (NCCL's bootstrap listens in it). Only rank 0 needs NCCL for this.
 */
int		 dtcomm_nccl_id(struct dtcomm *c, void *id);

/*
 * The ids for ncclCommInitRankScalable: DTRUN_NCCL_IDS of them (k), id i
 * made by the first rank of the i-th of k equal groups of ranks (so on
 * different hosts). Copies min(k, max) ids into ids and returns k.
 */
int		 dtcomm_nccl_ids(struct dtcomm *c, void *ids, int max);

/*
 * Makes this rank's NCCL communicator: ncclCommInitRank with the job's id,
 * or ncclCommInitRankScalable when DTRUN_NCCL_IDS > 1 and NCCL has it
 * (2.23 and later). comm_out points to an ncclComm_t. Select the CUDA
 * device first (usually cudaSetDevice(dtcomm_local_rank(c))).
 */
int		 dtcomm_nccl_comm(struct dtcomm *c, void *comm_out);

/* Waits until every rank of the job has called dtcomm_barrier. */
int		 dtcomm_barrier(struct dtcomm *c);

/* Sets key (1 to 256 bytes) to val[0..len) (at most 65536 bytes). */
int		 dtcomm_kv_set(struct dtcomm *c, const char *key,
		     const void *val, size_t len);

/*
 * Waits until key is set, then copies its value into buf[0..cap) and its
 * length into *len. A value longer than cap: DTCOMM_ERR_RANGE, *len set.
 */
int		 dtcomm_kv_get(struct dtcomm *c, const char *key, void *buf,
		     size_t cap, size_t *len);

/* Adds delta to the counter at key (missing: 0); *out gets the sum. */
int		 dtcomm_kv_add(struct dtcomm *c, const char *key,
		     long long delta, long long *out);

/*
 * A heartbeat: 0 while the rendezvous answers and the job is not aborting.
 * dtrun counts it as a sign of life for --hang-timeout.
 */
int		 dtcomm_heartbeat(struct dtcomm *c);

/*
 * Tells dtrun's straggler watch that this rank finished step (any
 * increasing count: steps, batches). Cheap (one datagram to the agent, no
 * wait) and safe to call every step; without DTRUN_PROGRESS (the watch is
 * off) it does nothing. Returns 0: a step that cannot be told (the
 * agent's queue is full) is dropped, never waited for.
 */
int		 dtcomm_step(struct dtcomm *c, unsigned long long step);

/* Leaves the job's rendezvous and frees c (NULL is fine). */
void		 dtcomm_free(struct dtcomm *c);

/* A short name for an error code. */
const char	*dtcomm_strerror(int err);

/* The full message of the last failure in this thread ("" if none). */
const char	*dtcomm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
