/*
 * stackcoll.h -- a stack that waits in a collective, said as one: "waiting
 * in a collective (gloo allreduce) <- train_step (train.py:21)". In
 * lock-step training most ranks of a hung or slow job are in one; the
 * collective's own frames (torch.distributed's Python, gloo's, NCCL's or
 * MPI's functions) say nothing the reader needs, the operation and the
 * caller do.
 */
#ifndef DT_STACKCOLL_H
#define DT_STACKCOLL_H

/*
 * The backend a process's stacks name ("gloo", "NCCL", "MPI", "UCC"): its
 * main thread's native signature first, else its whole stack text (every
 * thread; may be NULL). NULL when they name none, or several.
 */
const char *stk_backend(const char *native, const char *text);

/*
 * The signature of a process from its Python and native signatures
 * (stacksig.h; each "" when it has none) and its backend (stk_backend, or
 * NULL): the Python one when there is one, else the native one, with a
 * collective's frames said as above. Returns a malloc'd string, or NULL
 * when out of memory.
 */
char	*stk_collective(const char *py, const char *native,
	    const char *backend);

#endif
