/*
 * t_waitclass.c -- the class of one look at a rank (agent/waitclass.c):
 * the table's rules one by one, and then samples recorded from real gloo
 * DDP jobs on this machine (tests/data/peerwait/MODE.txt, one look a line:
 * "RANK STATE CALL FD OTHERS", as tests/sh/pwrecord.py wrote them), classed
 * and counted per rank as the agent does: the rank the others wait for
 * waits least on its peers, and its own samples say why.
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "agent/waitclass.h"
#include "test.h"

TEST(waitclass_rules)
{
	struct wc_sample	s = { 'R', WC_CALL_NONE, WC_FD_NONE, 0 };

	CHECK_INT(wc_classify(&s), WC_WORK);
	s.state = 'S';
	CHECK_INT(wc_classify(&s), WC_OTHER);	/* asleep, no call: a fault */
	s.call = WC_CALL_FUTEX;
	CHECK_INT(wc_classify(&s), WC_PEER);
	s.others_running = 1;			/* its pool computes */
	CHECK_INT(wc_classify(&s), WC_WORK);
	s.others_running = 0;
	s.call = WC_CALL_READ;
	s.fd = WC_FD_SOCKET;
	CHECK_INT(wc_classify(&s), WC_PEER);
	s.fd = WC_FD_PIPE;
	CHECK_INT(wc_classify(&s), WC_INPUT);
	s.call = WC_CALL_POLL;
	CHECK_INT(wc_classify(&s), WC_INPUT);
	s.fd = WC_FD_FILE;
	CHECK_INT(wc_classify(&s), WC_INPUT);
	s.fd = WC_FD_OTHER;			/* an eventfd, say */
	CHECK_INT(wc_classify(&s), WC_OTHER);
	s.call = WC_CALL_SLEEP;
	s.fd = WC_FD_NONE;
	CHECK_INT(wc_classify(&s), WC_INPUT);
	s.call = WC_CALL_EPOLL;
	CHECK_INT(wc_classify(&s), WC_OTHER);
	s.state = 'D';
	CHECK_INT(wc_classify(&s), WC_INPUT);	/* its disk */
	s.state = 'T';
	s.call = WC_CALL_OTHER;
	CHECK_INT(wc_classify(&s), WC_OTHER);
}

TEST(waitclass_calls_and_fds)
{
	CHECK_INT(wc_call_of(SYS_futex), WC_CALL_FUTEX);
	CHECK_INT(wc_call_of(SYS_recvfrom), WC_CALL_READ);
	CHECK_INT(wc_call_of(SYS_ppoll), WC_CALL_POLL);
	CHECK_INT(wc_call_of(SYS_clock_nanosleep), WC_CALL_SLEEP);
	CHECK_INT(wc_call_of(SYS_wait4), WC_CALL_WAIT);
	CHECK_INT(wc_call_of(SYS_getpid), WC_CALL_OTHER);
	CHECK_INT(wc_fd_of("socket:[12345]"), WC_FD_SOCKET);
	CHECK_INT(wc_fd_of("pipe:[7]"), WC_FD_PIPE);
	CHECK_INT(wc_fd_of("/data/shard-3"), WC_FD_FILE);
	CHECK_INT(wc_fd_of("anon_inode:[eventfd]"), WC_FD_OTHER);
	CHECK_STR(wc_call_name(WC_CALL_POLL), "poll");
}

/* A recorded call's name as pwrecord.py wrote it, as the agent reads it. */
static enum wc_call
wc_call_named(const char *s)
{
	static const struct {
		const char	*name;
		enum wc_call	 call;
	} v[] = {
		{ "-", WC_CALL_NONE }, { "futex", WC_CALL_FUTEX },
		{ "read", WC_CALL_READ }, { "readv", WC_CALL_READ },
		{ "pread64", WC_CALL_READ }, { "recvfrom", WC_CALL_READ },
		{ "recvmsg", WC_CALL_READ }, { "poll", WC_CALL_POLL },
		{ "ppoll", WC_CALL_POLL }, { "select", WC_CALL_POLL },
		{ "pselect6", WC_CALL_POLL }, { "epoll_wait", WC_CALL_EPOLL },
		{ "epoll_pwait", WC_CALL_EPOLL }, { "nanosleep", WC_CALL_SLEEP },
		{ "clock_nanosleep", WC_CALL_SLEEP }, { "wait4", WC_CALL_WAIT },
		{ "waitid", WC_CALL_WAIT },
	};
	size_t	i;

	for (i = 0; i < sizeof(v) / sizeof(*v); i++)
		if (strcmp(v[i].name, s) == 0)
			return v[i].call;
	return WC_CALL_OTHER;
}

static enum wc_fd
wc_fd_named(const char *s)
{
	/*
	 * The recorder wrote "socket" for both kinds; every socket a main
	 * thread waited on there was a unix one (the DataLoader's).
	 */
	if (strcmp(s, "socket") == 0 || strcmp(s, "unix") == 0)
		return WC_FD_UNIX;
	if (strcmp(s, "tcp") == 0)
		return WC_FD_SOCKET;
	if (strcmp(s, "pipe") == 0)
		return WC_FD_PIPE;
	if (strcmp(s, "file") == 0)
		return WC_FD_FILE;
	if (strcmp(s, "-") == 0 || strcmp(s, "none") == 0)
		return WC_FD_NONE;
	return WC_FD_OTHER;
}

#define WC_RANKS	8

/* MODE.txt's looks, classed and counted per rank into n[rank][class]. */
static int
wc_load(const char *mode, unsigned n[WC_RANKS][4], unsigned *total)
{
	struct wc_sample	 s;
	char			 path[512], line[256], st[8], call[32], fd[32];
	unsigned		 rank;
	int			 others, k = 0;
	FILE			*f;

	memset(n, 0, sizeof(unsigned) * WC_RANKS * 4);
	memset(total, 0, sizeof(unsigned) * WC_RANKS);
	snprintf(path, sizeof(path), "%s/peerwait/%s.txt", t_datadir, mode);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#' || sscanf(line, "%u %7s %31s %31s %d", &rank,
		    st, call, fd, &others) != 5 || rank >= WC_RANKS)
			continue;
		s.state = st[0];
		s.call = wc_call_named(call);
		s.fd = wc_fd_named(fd);
		s.others_running = others;
		n[rank][wc_classify(&s)]++;
		total[rank]++;
		k++;
	}
	fclose(f);
	return k;
}

/* rank's share of class c, in percent. */
#define WC_PCT(n, t, r, c) ((t)[r] ? 100 * (n)[r][c] / (t)[r] : 0)

/*
 * In MODE, rank slow waits on its peers less than every other rank by at
 * least gap points, and (class c) it is the rank with most of class c.
 */
static void
wc_check_mode(const char *mode, unsigned slow, unsigned gap, int c)
{
	unsigned	n[WC_RANKS][4], total[WC_RANKS], r, ranks = 0;

	CHECK(wc_load(mode, n, total) > 0);
	for (r = 0; r < WC_RANKS; r++)
		if (total[r] > 0)
			ranks++;
	CHECK(ranks >= 4);
	for (r = 0; r < WC_RANKS; r++) {
		if (r == slow || total[r] == 0)
			continue;
		if (WC_PCT(n, total, slow, WC_PEER) + gap >
		    WC_PCT(n, total, r, WC_PEER))
			t_fail(__FILE__, __LINE__, "%s: rank %u waits on peers "
			    "%u%%, rank %u %u%%: not %u points apart", mode,
			    slow, WC_PCT(n, total, slow, WC_PEER), r,
			    WC_PCT(n, total, r, WC_PEER), gap);
		if (c >= 0 && WC_PCT(n, total, slow, c) <= WC_PCT(n, total, r, c))
			t_fail(__FILE__, __LINE__, "%s: rank %u's class %d "
			    "%u%% is not above rank %u's %u%%", mode, slow, c,
			    WC_PCT(n, total, slow, c), r, WC_PCT(n, total, r, c));
	}
}

/* The lowest and highest peer-wait share (%) of MODE's ranks. */
static int
wc_spread(const char *mode, unsigned *lo, unsigned *hi)
{
	unsigned	n[WC_RANKS][4], total[WC_RANKS], r;

	*lo = 100;
	*hi = 0;
	if (wc_load(mode, n, total) <= 0)
		return -1;
	for (r = 0; r < WC_RANKS; r++) {
		if (total[r] == 0)
			continue;
		if (WC_PCT(n, total, r, WC_PEER) < *lo)
			*lo = WC_PCT(n, total, r, WC_PEER);
		if (WC_PCT(n, total, r, WC_PEER) > *hi)
			*hi = WC_PCT(n, total, r, WC_PEER);
	}
	return 0;
}

TEST(waitclass_recorded_ddp)
{
	unsigned	lo, hi;

	/* 40 looks a rank: gaps of a few points are noise at this size. */
	wc_check_mode("compute", 3, 5, WC_WORK);
	wc_check_mode("compute-f2", 3, 15, WC_WORK);
	wc_check_mode("cpu", 3, 10, -1);
	wc_check_mode("input", 3, 40, WC_INPUT);
	/* Balanced, and all equally slow: they wait alike. */
	CHECK(wc_spread("balanced", &lo, &hi) == 0);
	CHECK(hi > 10 && hi - lo < 9);
	CHECK(wc_spread("allslow", &lo, &hi) == 0);
	CHECK(hi - lo < 9);
}
