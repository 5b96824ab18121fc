/*
 * stackcoll.c -- a stack that waits in a collective, said as one (see
 * stackcoll.h).
 *
 * Python: the innermost frames in torch.distributed's own files
 * (distributed_c10d.py, and c10d_logger.py's wrapper in torch 2.x), after
 * any built-in they call, are the collective; its operation is the
 * innermost one's function (all_reduce: allreduce). The backend is what
 * the same thread's native frames name (ProcessGroupGloo, ...NCCL, ...MPI,
 * ...UCC), else what the process's other threads name (gloo's transport
 * loop, NCCL's proxy), and is left out when none or several are named:
 * torch 1.13's main thread waits in c10d::Work::wait, which says nothing.
 * Native: the outermost frame that is a library's entry point
 * (MPI_Allreduce, ncclAllReduce, gloo::allreduce; one table) is the
 * collective, and everything it called goes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/stacks/stackcoll.h"

#define SEP	" <- "

/* torch.distributed's Python functions, and the operation each is. */
static const struct {
	const char	*fn, *op;
} py_ops[] = {
	{ "all_reduce", "allreduce" }, { "all_reduce_coalesced", "allreduce" },
	{ "all_gather", "allgather" }, { "all_gather_into_tensor", "allgather" },
	{ "_all_gather_base", "allgather" }, { "all_gather_object", "allgather" },
	{ "all_gather_coalesced", "allgather" },
	{ "broadcast", "broadcast" }, { "broadcast_object_list", "broadcast" },
	{ "reduce", "reduce" }, { "reduce_scatter", "reduce_scatter" },
	{ "reduce_scatter_tensor", "reduce_scatter" },
	{ "_reduce_scatter_base", "reduce_scatter" },
	{ "all_to_all", "alltoall" }, { "all_to_all_single", "alltoall" },
	{ "barrier", "barrier" }, { "monitored_barrier", "barrier" },
	{ "gather", "gather" }, { "gather_object", "gather" },
	{ "scatter", "scatter" }, { "scatter_object_list", "scatter" },
	{ "send", "send" }, { "isend", "send" }, { "recv", "recv" },
	{ "irecv", "recv" },
};

/* What a native stack names as the process group's backend. */
static const struct {
	const char	*mark, *name;
} backends[] = {
	{ "ProcessGroupGloo", "gloo" }, { "gloo::", "gloo" },
	{ "ProcessGroupNCCL", "NCCL" }, { "nccl", "NCCL" },
	{ "ProcessGroupMPI", "MPI" }, { "MPI_", "MPI" },
	{ "ProcessGroupUCC", "UCC" },
};

/* Native entry points of the communication libraries, and their operations. */
static const struct {
	const char	*fn, *backend, *op;
} native_ops[] = {
	{ "MPI_Allreduce", "MPI", "allreduce" }, { "MPI_Bcast", "MPI", "broadcast" },
	{ "MPI_Barrier", "MPI", "barrier" }, { "MPI_Reduce", "MPI", "reduce" },
	{ "MPI_Allgather", "MPI", "allgather" }, { "MPI_Alltoall", "MPI", "alltoall" },
	{ "MPI_Gather", "MPI", "gather" }, { "MPI_Scatter", "MPI", "scatter" },
	{ "MPI_Reduce_scatter", "MPI", "reduce_scatter" },
	{ "MPI_Send", "MPI", "send" }, { "MPI_Recv", "MPI", "recv" },
	{ "MPI_Sendrecv", "MPI", "sendrecv" }, { "MPI_Wait", "MPI", "wait" },
	{ "MPI_Waitall", "MPI", "wait" },
	{ "ncclAllReduce", "NCCL", "allreduce" }, { "ncclBroadcast", "NCCL", "broadcast" },
	{ "ncclBcast", "NCCL", "broadcast" }, { "ncclReduce", "NCCL", "reduce" },
	{ "ncclAllGather", "NCCL", "allgather" },
	{ "ncclReduceScatter", "NCCL", "reduce_scatter" },
	{ "ncclSend", "NCCL", "send" }, { "ncclRecv", "NCCL", "recv" },
	{ "ncclGroupEnd", "NCCL", "group" }, { "ncclCommInitRank", "NCCL", "init" },
	{ "gloo::allreduce", "gloo", "allreduce" }, { "gloo::broadcast", "gloo", "broadcast" },
	{ "gloo::barrier", "gloo", "barrier" }, { "gloo::allgather", "gloo", "allgather" },
	{ "gloo::reduce", "gloo", "reduce" }, { "gloo::gather", "gloo", "gather" },
	{ "gloo::scatter", "gloo", "scatter" }, { "gloo::alltoall", "gloo", "alltoall" },
};

/* The end of the frame at p: its separator, or the string's end. */
static const char *
frame_end(const char *p)
{
	const char	*e = strstr(p, SEP);

	return e != NULL ? e : p + strlen(p);
}

/* True if the frame p..e is torch.distributed's own ("fn (distributed_c10d.py:N)"). */
static int
py_c10d(const char *p, const char *e)
{
	const char	*f = memchr(p, '(', e - p);

	return f != NULL && (strncmp(f, "(distributed_c10d.py:", 21) == 0 ||
	    strncmp(f, "(c10d_logger.py:", 16) == 0);
}

/* The operation of torch.distributed's function at p (to its " ("), or NULL. */
static const char *
py_op(const char *p)
{
	const char	*sp = strstr(p, " (");
	size_t		 n = sp != NULL ? (size_t)(sp - p) : strlen(p), i;

	for (i = 0; i < sizeof(py_ops) / sizeof(py_ops[0]); i++)
		if (strlen(py_ops[i].fn) == n && strncmp(p, py_ops[i].fn, n) == 0)
			return py_ops[i].op;
	return NULL;
}

/* The one backend text names (backends[]), or NULL: none, or several. */
static const char *
backend_in(const char *text)
{
	const char	*found = NULL;
	size_t		 i;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (strstr(text, backends[i].mark) == NULL)
			continue;
		if (found != NULL && strcmp(found, backends[i].name) != 0)
			return NULL;
		found = backends[i].name;
	}
	return found;
}

const char *
stk_backend(const char *native, const char *text)
{
	const char	*b;

	if ((b = backend_in(native)) != NULL || text == NULL)
		return b;
	return backend_in(text);
}

/* "waiting in a collective (BACKEND OP)" and then rest ("" or the outer frames). */
static char *
coll_say(const char *backend, const char *op, const char *rest)
{
	char	*s;

	if (asprintf(&s, "waiting in a collective (%s%s%s)%s%s",
	    backend != NULL ? backend : "", backend != NULL && op[0] != '\0' ?
	    " " : "", op, rest[0] != '\0' ? SEP : "", rest) == -1)
		return NULL;
	return s;
}

/* The Python signature py, its collective said as one; NULL (*none set) when it is in none. */
static char *
coll_python(const char *py, const char *backend, int *none)
{
	const char	*p = py, *e, *op = NULL;
	int		 c10d = 0;

	*none = 0;
	/* Built-ins the collective called (no file): part of it. */
	for (; *p != '\0'; p = *e != '\0' ? e + strlen(SEP) : e) {
		e = frame_end(p);
		if (memchr(p, '(', e - p) != NULL)
			break;
	}
	for (; *p != '\0' && py_c10d(p, frame_end(p));
	    p = *e != '\0' ? e + strlen(SEP) : e) {
		e = frame_end(p);
		if (op == NULL)
			op = py_op(p);
		c10d = 1;
	}
	if (!c10d || op == NULL) {
		*none = 1;
		return NULL;
	}
	return coll_say(backend, op, p);
}

/* The native signature, its outermost collective entry said as one; NULL (*none) when none. */
static char *
coll_native(const char *native, int *none)
{
	const char	*p, *e, *after = NULL;
	size_t		 i, k = 0, n;

	*none = 1;
	for (p = native; *p != '\0'; p = *e != '\0' ? e + strlen(SEP) : e) {
		e = frame_end(p);
		n = e - p;
		for (i = 0; i < sizeof(native_ops) / sizeof(native_ops[0]); i++)
			if (strlen(native_ops[i].fn) == n &&
			    strncmp(p, native_ops[i].fn, n) == 0) {
				*none = 0;
				k = i;
				after = *e != '\0' ? e + strlen(SEP) : e;
			}
	}
	if (*none)
		return NULL;
	return coll_say(native_ops[k].backend, native_ops[k].op, after);
}

char *
stk_collective(const char *py, const char *native, const char *backend)
{
	char	*s;
	int	 none;

	s = py[0] != '\0' ? coll_python(py, backend, &none) :
	    coll_native(native, &none);
	if (!none)
		return s;
	return strdup(py[0] != '\0' ? py : native);
}
