/*
 * t_ncclprof.c -- dtrun's NCCL profiler plugin (src/ncclprof), driven as
 * NCCL 2.28 drives a v5 plugin, with made-up events: it asks for
 * collectives only, and only under dtrun's watch; each collective goes to
 * the agent's socket as a line with the job's rank, the communicator and
 * NCCL's sequence number; other events and other kinds cost nothing; the
 * layout of the descriptor is NCCL's.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sock.h"
#include "ncclprof/ncclabi.h"
#include "ncclprof/ncclprof.h"
#include "test.h"

/* A listening abstract socket for DTRUN_PROGRESS; its fd. */
static int
np_listen(const char *name)
{
	struct sockaddr_un	sa;
	socklen_t		len = sock_abstract(&sa, name);
	int			fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, len) != 0 ||
	    listen(fd, 4) != 0)
		return -1;
	return fd;
}

/* Everything the plugin's connection carried (it is closed by now). */
static char *
np_read_all(int lfd)
{
	static char	buf[65536];
	size_t		n = 0;
	ssize_t		k;
	int		fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	while ((k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	return buf;
}

TEST(ncclprof_descriptor_layout_is_nccls)
{
	/* uint64_t type, void *parentObj, int rank, then the union. */
	CHECK_INT((int)offsetof(struct nccl_event_descr, coll.seq), 24);
	CHECK_INT((int)offsetof(struct nccl_event_descr, coll.func), 32);
	CHECK_INT((int)offsetof(struct nccl_profiler_v5, finalize), 40);
}

TEST(ncclprof_sends_each_collective_with_rank_comm_and_seq)
{
	const struct nccl_profiler_v5	*p = &ncclProfiler_v5;
	struct nccl_event_descr		 d;
	char				 name[64], want[128], *got, *line;
	void				*ctx = NULL, *h = NULL;
	uint64_t			 sent, dropped;
	int				 lfd, mask = -1, i, n = 0;

	snprintf(name, sizeof(name), "dtrun-t-ncclprof.%d", (int)getpid());
	CHECK((lfd = np_listen(name)) >= 0);
	snprintf(want, sizeof(want), "unix:@%s", name);
	setenv("DTRUN_PROGRESS", want, 1);
	setenv("DTRUN_RANK", "3", 1);
	ncclprof_reset();
	CHECK_INT(p->init(&ctx, 0xabcdef, &mask, "c", 1, 4, 1, NULL), 0);
	CHECK_INT(mask, NCCL_PROFILE_COLL);
	memset(&d, 0, sizeof(d));
	for (i = 0; i < 100; i++) {
		d.type = NCCL_PROFILE_COLL;
		d.coll.seq = (uint64_t)i;
		d.coll.func = "AllReduce";
		CHECK_INT(p->start_event(ctx, &h, &d), 0);
		CHECK(h != NULL);
		CHECK_INT(p->record_event_state(h, 0, NULL), 0);
		CHECK_INT(p->stop_event(h), 0);
		/* A group event, asked for or not, is no collective. */
		d.type = NCCL_PROFILE_GROUP;
		CHECK_INT(p->start_event(ctx, &h, &d), 0);
	}
	CHECK_INT(p->finalize(ctx), 0);
	ncclprof_counts(&sent, &dropped);
	CHECK_INT((int)sent, 100);
	CHECK_INT((int)dropped, 0);
	got = np_read_all(lfd);
	CHECK(got != NULL);
	for (line = got; got != NULL && *line != '\0'; n++) {
		unsigned long long ns;
		char		   *nl = strchr(line, '\n');

		snprintf(want, sizeof(want), "coll 3 4 abcdef %d ", n);
		CHECK(strncmp(line, want, strlen(want)) == 0);
		CHECK(sscanf(line + strlen(want), "%llu", &ns) == 1 &&
		    ns > 1700000000ULL * 1000000000ULL);
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	CHECK_INT(n, 100);
	close(lfd);
	unsetenv("DTRUN_PROGRESS");
	unsetenv("DTRUN_RANK");
	ncclprof_reset();
}

TEST(ncclprof_asks_for_nothing_without_dtruns_watch)
{
	const struct nccl_profiler_v5	*p = &ncclProfiler_v5;
	void				*ctx = NULL;
	int				 mask = -1;

	unsetenv("DTRUN_PROGRESS");
	setenv("DTRUN_RANK", "0", 1);
	ncclprof_reset();
	CHECK_INT(p->init(&ctx, 1, &mask, "c", 1, 2, 0, NULL), 0);
	CHECK_INT(mask, 0);
	CHECK_INT(p->finalize(ctx), 0);
	unsetenv("DTRUN_RANK");
	ncclprof_reset();
}
