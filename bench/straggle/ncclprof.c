/*
 * ncclprof.c -- what dtrun's NCCL profiler plugin costs a rank per
 * collective: the time of NCCL's startEvent + stopEvent calls, with the
 * plugin loaded as NCCL loads it (dlopen of NCCL_PROFILER_PLUGIN) and
 * sending to a socket that a reader drains (an agent that keeps up), and
 * the same loop with the plugin asked for nothing (no DTRUN_PROGRESS).
 *
 *	ncclprof PLUGIN.so [N]
 *
 * Prints "plugin: on X ns, off Y ns per collective (N collectives)".
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ncclprof/ncclabi.h"

static int	lfd;

/* The agent's side: read everything, as fast as it comes. */
static void *
drain(void *arg)
{
	char	buf[65536];
	int	fd = accept(lfd, NULL, NULL);

	(void)arg;
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static double
now_s(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ns per collective of n through p (the plugin set up or not). */
static double
run(const struct nccl_profiler_v5 *p, long n)
{
	struct nccl_event_descr	 d;
	void			*ctx = NULL, *h;
	double			 t0;
	long			 i;
	int			 mask;

	memset(&d, 0, sizeof(d));
	p->init(&ctx, 42, &mask, "bench", 1, 8, 0, NULL);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		d.type = NCCL_PROFILE_COLL;
		d.coll.seq = (uint64_t)i;
		p->start_event(ctx, &h, &d);
		p->stop_event(h);
	}
	t0 = now_s() - t0;
	p->finalize(ctx);
	return t0 * 1e9 / (double)n;
}

int
main(int argc, char **argv)
{
	const struct nccl_profiler_v5	*p;
	struct sockaddr_un		 sa;
	pthread_t			 th;
	char				 addr[128];
	void				*lib;
	long				 n = argc > 2 ? atol(argv[2]) : 2000000;
	double				 on, off;

	if (argc < 2 || (lib = dlopen(argv[1], RTLD_NOW)) == NULL ||
	    (p = dlsym(lib, "ncclProfiler_v5")) == NULL) {
		fprintf(stderr, "usage: ncclprof PLUGIN.so [N]\n");
		return 2;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
	    "dtrun-bench-ncclprof.%d", (int)getpid());
	if ((lfd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct
	    sockaddr_un, sun_path) + 1 + strlen(sa.sun_path + 1))) != 0 ||
	    listen(lfd, 1) != 0) {
		perror("ncclprof: socket");
		return 1;
	}
	pthread_create(&th, NULL, drain, NULL);
	snprintf(addr, sizeof(addr), "unix:@%s", sa.sun_path + 1);
	setenv("DTRUN_PROGRESS", addr, 1);
	setenv("DTRUN_RANK", "0", 1);
	on = run(p, n);
	unsetenv("DTRUN_PROGRESS");
	off = run(p, n);
	printf("plugin: on %.1f ns, off %.1f ns per collective (%ld "
	    "collectives; goal <= 1000 ns)\n", on, off, n);
	return 0;
}
