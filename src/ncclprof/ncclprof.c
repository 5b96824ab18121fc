/*
 * ncclprof.c -- dtrun's NCCL profiler plugin, libdtrun-ncclprof.so (the
 * agent names it in NCCL_PROFILER_PLUGIN where the user named none).
 *
 * For each collective a rank enqueues it keeps the communicator, NCCL's
 * sequence number of that collective in it, and the wall-clock time, and
 * sends them in batches as lines on the agent's progress socket
 * (DTRUN_PROGRESS, the one steps go to):
 *
 *	coll RANK NRANKS COMM SEQ NS
 *
 * RANK is the job's rank (DTRUN_RANK), NRANKS the communicator's size,
 * COMM its id in hex (the same on every rank of it), NS nanoseconds since
 * the epoch. The agent passes them on to dtrun, which compares the ranks'
 * arrivals at each collective and names the one the others wait for.
 *
 * What it costs the rank's thread is a clock read and a store under a
 * mutex; every COLL_BATCH collectives (or COLL_FLUSH_NS) one send that
 * never blocks: a full socket keeps the bytes it did not take for the
 * next send and drops the batches meanwhile, so nothing waits on the
 * agent. Without DTRUN_PROGRESS (no dtrun, or its watch off) it asks NCCL
 * for no event at all.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/sock.h"
#include "ncclprof/ncclabi.h"
#include "ncclprof/ncclprof.h"

#define COLL_BATCH	64
#define COLL_FLUSH_NS	100000000ULL	/* 100 ms */
#define COLL_LINE_MAX	96

#define EXPORT	__attribute__((visibility("default")))

struct comm_ctx {
	uint64_t	id;
	int		nranks;
};

struct coll_rec {
	uint64_t	comm, seq, ns;
	uint32_t	nranks;
};

static pthread_mutex_t	 lock = PTHREAD_MUTEX_INITIALIZER;
static struct coll_rec	 recs[COLL_BATCH];
static size_t		 nrecs;
static char		 out[COLL_BATCH * COLL_LINE_MAX];
static size_t		 nout;		/* bytes the socket did not take yet */
static uint64_t		 flushed_ns;
static int		 fd = -1;	/* -1: not tried; -2: none */
static long		 job_rank = -1;
static int		 ncomms;
static uint64_t		 sent, dropped, events;
static int		 handle;	/* every event's handle: nothing in it */

static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The agent's socket, "unix:@NAME" in DTRUN_PROGRESS; -2 if none. */
static int
coll_connect(void)
{
	const char		*v = getenv("DTRUN_PROGRESS");
	struct sockaddr_un	 sa;
	socklen_t		 len;
	int			 s;

	if (v == NULL || strncmp(v, "unix:@", 6) != 0 ||
	    (len = sock_abstract(&sa, v + 6)) == 0)
		return -2;
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) < 0)
		return -2;
	if (connect(s, (struct sockaddr *)&sa, len) != 0) {
		close(s);
		return -2;
	}
	return s;
}

/* Sends what is pending; what the socket does not take waits. Locked. */
static void
coll_send(void)
{
	ssize_t	n;

	while (nout > 0) {
		n = send(fd, out, nout, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			memmove(out, out + n, nout - (size_t)n);
			nout -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		close(fd);		/* the agent is gone */
		fd = -2;
		nout = 0;
		return;
	}
}

/* Formats the batch as lines and sends them. Locked. */
static void
coll_flush(uint64_t now)
{
	size_t	i;
	int	k;

	flushed_ns = now;
	if (nrecs == 0)
		return;
	if (fd == -1)
		fd = coll_connect();
	if (fd < 0) {
		nrecs = 0;
		return;
	}
	if (nout > 0)
		coll_send();
	if (nout > 0) {
		dropped += nrecs;	/* the agent is behind: this batch goes */
		nrecs = 0;
		return;
	}
	for (i = 0; i < nrecs; i++) {
		k = snprintf(out + nout, sizeof(out) - nout,
		    "coll %ld %u %llx %llu %llu\n", job_rank, recs[i].nranks,
		    (unsigned long long)recs[i].comm,
		    (unsigned long long)recs[i].seq,
		    (unsigned long long)recs[i].ns);
		if (k > 0 && (size_t)k < sizeof(out) - nout)
			nout += (size_t)k;
	}
	sent += nrecs;
	nrecs = 0;
	coll_send();
}

static nccl_result_t
coll_init(void **ctx, uint64_t comm_id, int *mask, const char *comm_name,
    int nnodes, int nranks, int rank, nccl_logger_t log)
{
	struct comm_ctx	*c;
	const char	*v;

	(void)comm_name, (void)nnodes, (void)rank, (void)log;
	*mask = 0;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NCCL_OK;		/* *ctx NULL: this comm is not watched */
	c->id = comm_id;
	c->nranks = nranks;
	*ctx = c;
	pthread_mutex_lock(&lock);
	if (job_rank < 0 && ((v = getenv("DTRUN_RANK")) != NULL ||
	    (v = getenv("RANK")) != NULL))
		job_rank = strtol(v, NULL, 10);
	ncomms++;
	if (job_rank >= 0 && fd != -2 && getenv("DTRUN_PROGRESS") != NULL)
		*mask = NCCL_PROFILE_COLL;
	pthread_mutex_unlock(&lock);
	return NCCL_OK;
}

static nccl_result_t
coll_start(void *ctx, void **h, struct nccl_event_descr *d)
{
	struct comm_ctx	*c = ctx;
	uint64_t	 now;

	*h = &handle;
	__atomic_add_fetch(&events, 1, __ATOMIC_RELAXED);
	if (c == NULL || d == NULL || !(d->type & NCCL_PROFILE_COLL))
		return NCCL_OK;
	now = now_ns();
	pthread_mutex_lock(&lock);
	recs[nrecs].comm = c->id;
	recs[nrecs].seq = d->coll.seq;
	recs[nrecs].ns = now;
	recs[nrecs].nranks = (uint32_t)c->nranks;
	if (++nrecs == COLL_BATCH || now - flushed_ns >= COLL_FLUSH_NS)
		coll_flush(now);
	pthread_mutex_unlock(&lock);
	return NCCL_OK;
}

static nccl_result_t
coll_stop(void *h)
{
	(void)h;
	return NCCL_OK;
}

static nccl_result_t
coll_state(void *h, int state, void *args)
{
	(void)h, (void)state, (void)args;
	return NCCL_OK;
}

static nccl_result_t
coll_finalize(void *ctx)
{
	pthread_mutex_lock(&lock);
	coll_flush(now_ns());
	/* DTRUN_NCCLPROF_DEBUG: what NCCL gave us, for a person checking. */
	if (ncomms == 1 && getenv("DTRUN_NCCLPROF_DEBUG") != NULL)
		fprintf(stderr, "dtrun-ncclprof: rank %ld: %llu events, %llu "
		    "collectives sent, %llu dropped, comm of %d rank(s)\n",
		    job_rank, (unsigned long long)events,
		    (unsigned long long)sent, (unsigned long long)dropped,
		    ctx != NULL ? ((struct comm_ctx *)ctx)->nranks : 0);
	if (--ncomms <= 0 && fd >= 0) {
		coll_send();		/* what is left, if it goes now */
		close(fd);
		fd = -1;
		nout = 0;
	}
	pthread_mutex_unlock(&lock);
	free(ctx);
	return NCCL_OK;
}

EXPORT const struct nccl_profiler_v5 ncclProfiler_v5 = {
	"dtrun", coll_init, coll_start, coll_stop, coll_state, coll_finalize
};

void
ncclprof_counts(uint64_t *nsent, uint64_t *ndropped)
{
	pthread_mutex_lock(&lock);
	*nsent = sent;
	*ndropped = dropped;
	pthread_mutex_unlock(&lock);
}

void
ncclprof_reset(void)
{
	pthread_mutex_lock(&lock);
	if (fd >= 0)
		close(fd);
	fd = -1;
	nrecs = nout = 0;
	job_rank = -1;
	ncomms = 0;
	sent = dropped = events = 0;
	flushed_ns = 0;
	pthread_mutex_unlock(&lock);
}
