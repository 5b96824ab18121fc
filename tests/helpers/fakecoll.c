/*
 * fakecoll.c -- a rank that drives NCCL_PROFILER_PLUGIN as NCCL 2.28 would,
 * with no GPU: it loads the plugin, opens one communicator of WORLD_SIZE
 * ranks and enqueues N collectives, the s-th at START_NS + s * GAP_MS on
 * the wall clock (every rank alike, as ranks in lock-step arrive), rank
 * SLOW LATE_MS after that:
 *
 *	fakecoll N GAP_MS SLOW LATE_MS START_NS|sync
 *
 * sync: the ranks meet first in the working directory (each writes
 * ready.RANK; rank 0, once all are there, writes START_NS 200 ms ahead to
 * start), so however late a loaded machine starts one, all begin together.
 * Exits 3 when no plugin is named or it has no ncclProfiler_v5.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncclprof/ncclabi.h"

/* Waits 10 ms. */
static void
nap(void)
{
	struct timespec	ts = { 0, 10000000 };

	nanosleep(&ts, NULL);
}

/* The ranks meet in the working directory; the start every rank reads. */
static unsigned long long
meet(int rank, int world)
{
	struct timespec		 ts;
	unsigned long long	 start = 0;
	char			 name[64];
	FILE			*f;
	int			 r;

	snprintf(name, sizeof(name), "ready.%d", rank);
	if ((f = fopen(name, "w")) != NULL)
		fclose(f);
	if (rank == 0) {
		for (r = 0; r < world; r++) {
			snprintf(name, sizeof(name), "ready.%d", r);
			while (access(name, F_OK) != 0)
				nap();
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		start = (unsigned long long)ts.tv_sec * 1000000000ULL +
		    (unsigned long long)ts.tv_nsec + 200000000ULL;
		if ((f = fopen("start.tmp", "w")) != NULL) {
			fprintf(f, "%llu\n", start);
			fclose(f);
			rename("start.tmp", "start");
		}
		return start;
	}
	while ((f = fopen("start", "r")) == NULL)
		nap();
	if (fscanf(f, "%llu", &start) != 1)
		start = 0;
	fclose(f);
	return start;
}

int
main(int argc, char **argv)
{
	const struct nccl_profiler_v5	*p;
	struct nccl_event_descr		 d = { 0 };
	struct timespec			 at;
	const char			*path = getenv("NCCL_PROFILER_PLUGIN");
	unsigned long long		 start, t;
	void				*lib, *ctx = NULL, *h;
	long				 n, gap, slow, late, s;
	int				 rank, world, mask = 0;

	if (argc != 6) {
		fprintf(stderr, "usage: fakecoll N GAP_MS SLOW LATE_MS "
		    "START_NS\n");
		return 2;
	}
	n = atol(argv[1]), gap = atol(argv[2]), slow = atol(argv[3]);
	late = atol(argv[4]);
	rank = atoi(getenv("RANK") ? getenv("RANK") : "0");
	world = atoi(getenv("WORLD_SIZE") ? getenv("WORLD_SIZE") : "1");
	if (path == NULL || (lib = dlopen(path, RTLD_NOW)) == NULL ||
	    (p = dlsym(lib, "ncclProfiler_v5")) == NULL) {
		printf("no plugin (NCCL_PROFILER_PLUGIN=%s)\n",
		    path ? path : "");
		return 3;
	}
	if (p->init(&ctx, 0x5eedULL, &mask, "fake", 1, world, rank, NULL) != 0)
		return 1;
	start = strcmp(argv[5], "sync") == 0 ? meet(rank, world) :
	    strtoull(argv[5], NULL, 10);
	for (s = 0; s < n; s++) {
		t = start + (unsigned long long)s * (unsigned long long)gap *
		    1000000ULL + (rank == slow ? (unsigned long long)late *
		    1000000ULL : 0);
		at.tv_sec = (time_t)(t / 1000000000ULL);
		at.tv_nsec = (long)(t % 1000000000ULL);
		while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at,
		    NULL) != 0)
			;
		if (mask & NCCL_PROFILE_COLL) {
			d.type = NCCL_PROFILE_COLL;
			d.coll.seq = (uint64_t)s;
			d.coll.func = "AllReduce";
			p->start_event(ctx, &h, &d);
			p->stop_event(h);
		}
	}
	p->finalize(ctx);
	printf("rank %d: %ld collectives, plugin %s, mask %d\n", rank, n,
	    p->name, mask);
	return 0;
}
