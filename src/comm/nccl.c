/*
 * nccl.c -- the few NCCL entry points libdtcomm uses, found with dlsym in
 * the NCCL that dlopen finds, once per process.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "comm/dtcomm.h"
#include "comm/dtnccl.h"

/* ncclUniqueId, passed by value to ncclCommInitRank. */
typedef struct {
	char	internal[DTNCCL_ID_BYTES];
} nccl_id_t;

typedef int	(*get_id_fn)(nccl_id_t *);
typedef int	(*init_rank_fn)(void **, int, nccl_id_t, int);
typedef int	(*init_scalable_fn)(void **, int, int, int, nccl_id_t *, void *);
typedef const char *(*strerror_fn)(int);
typedef const char *(*last_error_fn)(void *);

static struct {
	void			*dl;
	get_id_fn		 get_id;
	init_rank_fn		 init_rank;
	init_scalable_fn	 init_scalable;
	strerror_fn		 strerror;
	last_error_fn		 last_error;
	char			 why[512];
} nccl;

static pthread_once_t	nccl_once = PTHREAD_ONCE_INIT;

/* dlopen()s NCCL and looks up its symbols; records why on failure. */
static void
nccl_open(void)
{
	const char	*lib = getenv("DTRUN_NCCL_LIBRARY");
	const char	*err;

	if (lib == NULL || *lib == '\0')
		lib = "libnccl.so.2";
	if ((nccl.dl = dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) == NULL) {
		err = dlerror();
		snprintf(nccl.why, sizeof(nccl.why), "cannot load NCCL (%s): "
		    "%s; install NCCL or set DTRUN_NCCL_LIBRARY", lib,
		    err != NULL ? err : "unknown error");
		return;
	}
	nccl.get_id = (get_id_fn)dlsym(nccl.dl, "ncclGetUniqueId");
	nccl.init_rank = (init_rank_fn)dlsym(nccl.dl, "ncclCommInitRank");
	nccl.init_scalable = (init_scalable_fn)dlsym(nccl.dl,
	    "ncclCommInitRankScalable");
	nccl.strerror = (strerror_fn)dlsym(nccl.dl, "ncclGetErrorString");
	nccl.last_error = (last_error_fn)dlsym(nccl.dl, "ncclGetLastError");
	if (nccl.get_id == NULL || nccl.init_rank == NULL) {
		snprintf(nccl.why, sizeof(nccl.why), "%s is not NCCL: it has "
		    "no ncclGetUniqueId or ncclCommInitRank", lib);
		dlclose(nccl.dl);
		nccl.dl = NULL;
	}
}

int
dtnccl_load(struct dt_err *e)
{
	pthread_once(&nccl_once, nccl_open);
	if (nccl.dl == NULL)
		return dt_errf(e, NULL, 0, 0, DTCOMM_ERR_NONCCL, "%s", nccl.why);
	return 0;
}

/* Turns an ncclResult_t into an error with NCCL's own words. */
static int
nccl_fail(const char *call, int res, struct dt_err *e)
{
	const char	*what = nccl.strerror != NULL ? nccl.strerror(res) :
			    "unknown error";
	const char	*last = nccl.last_error != NULL ?
			    nccl.last_error(NULL) : NULL;

	return dt_errf(e, NULL, 0, 0, DTCOMM_ERR_NCCL, "%s failed: %s%s%s",
	    call, what,
	    last != NULL && *last != '\0' ? ": " : "",
	    last != NULL ? last : "");
}

int
dtnccl_unique_id(uint8_t id[DTNCCL_ID_BYTES], struct dt_err *e)
{
	nccl_id_t	u;
	int		rc;

	if ((rc = dtnccl_load(e)) != 0)
		return rc;
	memset(&u, 0, sizeof(u));
	if ((rc = nccl.get_id(&u)) != 0)
		return nccl_fail("ncclGetUniqueId", rc, e);
	memcpy(id, u.internal, DTNCCL_ID_BYTES);
	return 0;
}

int
dtnccl_comm_init(void *comm_out, int nranks, int rank, const uint8_t *ids,
    int nids, struct dt_err *e)
{
	nccl_id_t	*v;
	int		 rc;

	if ((rc = dtnccl_load(e)) != 0)
		return rc;
	if (nids <= 1 || nccl.init_scalable == NULL) {
		nccl_id_t	u;

		memcpy(u.internal, ids, DTNCCL_ID_BYTES);
		if ((rc = nccl.init_rank(comm_out, nranks, u, rank)) != 0)
			return nccl_fail("ncclCommInitRank", rc, e);
		return 0;
	}
	if ((v = calloc(nids, sizeof(*v))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	memcpy(v, ids, (size_t)nids * DTNCCL_ID_BYTES);
	rc = nccl.init_scalable(comm_out, nranks, rank, nids, v, NULL);
	free(v);
	if (rc != 0)
		return nccl_fail("ncclCommInitRankScalable", rc, e);
	return 0;
}
