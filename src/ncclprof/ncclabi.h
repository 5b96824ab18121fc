/*
 * ncclabi.h -- the part of NCCL's profiler plugin interface, version 5
 * (NCCL 2.28: ext-profiler/example/nccl/profiler_v5.h), that dtrun's
 * plugin uses, declared here with the same layout: a plugin is loaded by
 * NCCL at run time and needs no NCCL header to build. NCCL looks up the
 * symbol ncclProfiler_v5 in the library NCCL_PROFILER_PLUGIN names.
 */
#ifndef DT_NCCLABI_H
#define DT_NCCLABI_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int nccl_result_t;		/* ncclResult_t: 0 is ncclSuccess */
#define NCCL_OK		0
typedef void (*nccl_logger_t)(int level, unsigned long flags,
    const char *file, int line, const char *fmt, ...);

/* Event types (the activation mask's bits). */
#define NCCL_PROFILE_GROUP	(1 << 0)
#define NCCL_PROFILE_COLL	(1 << 1)	/* a collective, as enqueued */

/* ncclProfilerEventDescr_v5_t: only coll's leading fields are read. */
struct nccl_event_descr {
	uint64_t	 type;
	void		*parent;
	int		 rank;
	union {
		struct {
			uint64_t	 seq;		/* seqNumber: per comm */
			const char	*func;		/* "AllReduce", ... */
			const void	*sendbuf;
			void		*recvbuf;
			size_t		 count;
			int		 root;
			const char	*datatype;
			uint8_t		 nchannels;
			uint8_t		 nwarps;
			const char	*algo;
			const char	*proto;
			void		*parent_group;
		} coll;
		char	 pad[128];	/* the other kinds: larger, unread */
	};
};

/* ncclProfiler_v5_t. */
struct nccl_profiler_v5 {
	const char	*name;
	nccl_result_t	(*init)(void **ctx, uint64_t comm_id, int *mask,
			    const char *comm_name, int nnodes, int nranks,
			    int rank, nccl_logger_t log);
	nccl_result_t	(*start_event)(void *ctx, void **handle,
			    struct nccl_event_descr *d);
	nccl_result_t	(*stop_event)(void *handle);
	nccl_result_t	(*record_event_state)(void *handle, int state,
			    void *args);
	nccl_result_t	(*finalize)(void *ctx);
};

#endif
