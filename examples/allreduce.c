/*
 * allreduce.c -- a complete NCCL worker on libdtcomm: every rank fills a
 * buffer with its rank + 1, sums it over all ranks with ncclAllReduce and
 * checks the result. Run it under dtrun, one rank per GPU:
 *
 *	dtrun -n 8 ./allreduce [COUNT]
 *
 * Build: cc allreduce.c $(pkg-config --cflags --libs dtcomm) \
 *	-I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnccl -lcudart
 */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <nccl.h>

#include <dtcomm.h>

#define CUDA_CHECK(x) do {						\
	cudaError_t _e = (x);						\
	if (_e != cudaSuccess) {					\
		fprintf(stderr, "allreduce: rank %d: %s: %s\n", rank,	\
		    #x, cudaGetErrorString(_e));			\
		exit(1);						\
	}								\
} while (0)

#define NCCL_CHECK(x) do {						\
	ncclResult_t _r = (x);						\
	if (_r != ncclSuccess) {					\
		fprintf(stderr, "allreduce: rank %d: %s: %s\n", rank,	\
		    #x, ncclGetErrorString(_r));			\
		exit(1);						\
	}								\
} while (0)

int
main(int argc, char **argv)
{
	struct dtcomm	*dc;
	ncclComm_t	 comm;
	cudaStream_t	 stream;
	float		*dbuf, *hbuf;
	size_t		 count = argc > 1 ? strtoul(argv[1], NULL, 10) : 1 << 20;
	size_t		 i, bad = 0;
	int		 rank = -1, size, ndev, rc;
	float		 want;

	if ((rc = dtcomm_init(&dc)) != 0) {
		fprintf(stderr, "allreduce: dtcomm_init: %s: %s\n",
		    dtcomm_strerror(rc), dtcomm_last_error());
		return 1;
	}
	rank = dtcomm_rank(dc);
	size = dtcomm_size(dc);
	CUDA_CHECK(cudaGetDeviceCount(&ndev));
	CUDA_CHECK(cudaSetDevice(dtcomm_local_rank(dc) % ndev));
	if ((rc = dtcomm_nccl_comm(dc, &comm)) != 0) {
		fprintf(stderr, "allreduce: rank %d: dtcomm_nccl_comm: %s: %s\n",
		    rank, dtcomm_strerror(rc), dtcomm_last_error());
		return 1;
	}

	if ((hbuf = malloc(count * sizeof(*hbuf))) == NULL)
		return 1;
	for (i = 0; i < count; i++)
		hbuf[i] = (float)(rank + 1);
	CUDA_CHECK(cudaStreamCreate(&stream));
	CUDA_CHECK(cudaMalloc((void **)&dbuf, count * sizeof(*dbuf)));
	CUDA_CHECK(cudaMemcpy(dbuf, hbuf, count * sizeof(*dbuf),
	    cudaMemcpyHostToDevice));
	NCCL_CHECK(ncclAllReduce(dbuf, dbuf, count, ncclFloat, ncclSum, comm,
	    stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	CUDA_CHECK(cudaMemcpy(hbuf, dbuf, count * sizeof(*dbuf),
	    cudaMemcpyDeviceToHost));

	want = (float)size * (float)(size + 1) / 2;
	for (i = 0; i < count; i++)
		if (hbuf[i] != want)
			bad++;
	printf("rank %d of %d: allreduce of %zu floats %s (each %g)\n", rank,
	    size, count, bad == 0 ? "ok" : "WRONG", (double)hbuf[0]);

	/* Nobody leaves before everyone has checked: rank 0 hosts NCCL's bootstrap. */
	if ((rc = dtcomm_barrier(dc)) != 0)
		fprintf(stderr, "allreduce: rank %d: dtcomm_barrier: %s\n",
		    rank, dtcomm_last_error());
	NCCL_CHECK(ncclCommDestroy(comm));
	CUDA_CHECK(cudaFree(dbuf));
	CUDA_CHECK(cudaStreamDestroy(stream));
	free(hbuf);
	dtcomm_free(dc);
	return bad == 0 && rc == 0 ? 0 : 1;
}
