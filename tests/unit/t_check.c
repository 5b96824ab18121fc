/*
 * t_check.c -- dtrun --check: NCCL's and Gloo's interface syntax, and the
 * table (the CHECK and CHECKED codec is in t_agentproto.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/check/check.h"
#include "common/err.h"
#include "agent/hostcheck.h"
#include "common/iface.h"
#include "test.h"

TEST(hostcheck_ifname_match_nccl_and_gloo_syntax)
{
	/* NCCL: prefixes. */
	CHECK(hostcheck_ifname_match("eth", "eth0", 1));
	CHECK(hostcheck_ifname_match("ib,eth", "eth1", 1));
	CHECK(!hostcheck_ifname_match("ib,eth", "ens5", 1));
	/* = exact names. */
	CHECK(hostcheck_ifname_match("=eth0", "eth0", 1));
	CHECK(!hostcheck_ifname_match("=eth", "eth0", 1));
	CHECK(!hostcheck_ifname_match("=eth0", "eth00", 1));
	/* ^ every interface but those; ^= but those exactly. */
	CHECK(!hostcheck_ifname_match("^docker,lo", "lo", 1));
	CHECK(hostcheck_ifname_match("^docker,lo", "eth0", 1));
	CHECK(!hostcheck_ifname_match("^docker,lo", "docker0", 1));
	CHECK(hostcheck_ifname_match("^=docker", "docker0", 1));
	CHECK(!hostcheck_ifname_match("^=docker0", "docker0", 1));
	/* Empty items match nothing. */
	CHECK(!hostcheck_ifname_match(",", "eth0", 1));
	CHECK(hostcheck_ifname_match(",eth", "eth0", 1));
	/* Gloo: exact names only. */
	CHECK(hostcheck_ifname_match("lo,eth0", "eth0", 0));
	CHECK(!hostcheck_ifname_match("eth", "eth0", 0));
	CHECK(!hostcheck_ifname_match("^lo", "eth0", 0));
}

TEST(hostcheck_ifname_names_what_there_is)
{
	struct iface	list[] = {
		{ "lo", "127.0.0.1", 1, 1 },
		{ "eth0", "10.0.0.2", 1, 0 },
		{ "eth0", "10.0.0.3", 1, 0 },	/* a second address */
		{ "ib0", "10.1.0.2", 0, 0 },	/* down */
	};
	struct iface	many[64];
	struct dt_err	e;
	size_t		i;

	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "eth", list, 4, &e),
	    0);
	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "ib", list, 4, &e),
	    DT_ERR_NOTFOUND);
	CHECK_STR(e.msg, "NCCL_SOCKET_IFNAME=ib selects no interface that is "
	    "up here (NCCL's syntax: prefixes, ^ excludes, = exact; up with "
	    "IPv4: lo eth0)");
	CHECK_INT(hostcheck_ifname("GLOO_SOCKET_IFNAME", "eth", list, 4, &e),
	    DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "Gloo's syntax: exact names") != NULL);
	CHECK_INT(hostcheck_ifname("GLOO_SOCKET_IFNAME", "lo", list, 4, NULL),
	    0);
	/* More interfaces than the message holds: cut, and nothing overflows. */
	for (i = 0; i < 64; i++) {
		snprintf(many[i].name, sizeof(many[i].name), "veth%02zuabcdef", i);
		snprintf(many[i].addr, sizeof(many[i].addr), "10.2.0.%zu", i);
		many[i].up = 1;
		many[i].loopback = 0;
	}
	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "x", many, 64, &e),
	    DT_ERR_NOTFOUND);
	CHECK_INT(strlen(e.msg), sizeof(e.msg) - 1);
	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "x", many, 64, NULL),
	    DT_ERR_NOTFOUND);
}

TEST(check_table_aligns_columns_and_escapes_cells)
{
	char	*cells[] = {
		"HOST", "IFACE", "RANK0",
		"a", "eth0", "ok",
		"long-host", NULL, "FAILED",
		"evil\033[2J", "lo", NULL,
	};
	char	*t = check_table(cells, 4, 3);

	CHECK_STR(t,
	    "HOST         IFACE  RANK0\n"
	    "a            eth0   ok\n"
	    "long-host    -      FAILED\n"
	    "evil\\x1b[2J  lo     -\n");
	free(t);
}

TEST(check_skew_allows_for_the_round_trip_and_the_agents_work)
{
	uint64_t	rtt;
	int64_t		skew;

	/* Sent at 1000, back 40 ms later, 30 of them the agent's work. */
	check_skew(1000, 40, 30, 1005, &rtt, &skew);
	CHECK_INT(rtt, 10);
	CHECK_INT(skew, 0);		/* it read it at our 1005 */
	check_skew(1000, 40, 30, 4005, &rtt, &skew);
	CHECK_INT(skew, 3000);		/* 3 s ahead */
	check_skew(UINT64_C(1700000000000), 2, 0, UINT64_C(1699999990001),
	    &rtt, &skew);
	CHECK_INT(skew, -10000);	/* 10 s behind */
	/* Work longer than the wait (clocks of different grain): no round trip. */
	check_skew(1000, 5, 7, 1000, &rtt, &skew);
	CHECK_INT(rtt, 0);
	CHECK_INT(skew, 0);
}

TEST(check_majority_counts_answers_and_breaks_ties_by_order)
{
	const char	*three[] = { "2.3.1", "2.1.0", "2.3.1", NULL, "2.3.1" };
	const char	*split[] = { "a", "b", "b", "a" };
	const char	*none[] = { NULL, NULL };
	const char	*many[] = { "x", "y", "z", "y", "w" };
	size_t		 n, ans;

	/* 3 against 1, a host without the answer not counted. */
	CHECK_INT(check_majority(three, 5, &n, &ans), 0);
	CHECK_INT(n, 3);
	CHECK_INT(ans, 4);
	CHECK(2 * n > ans);
	/* 2 against 2: no majority; the value seen first leads. */
	CHECK_INT(check_majority(split, 4, &n, &ans), 0);
	CHECK_INT(n, 2);
	CHECK_INT(ans, 4);
	CHECK(!(2 * n > ans));
	/* The most common, though not a majority. */
	CHECK_INT(check_majority(many, 5, &n, &ans), 1);
	CHECK_INT(n, 2);
	CHECK_INT(check_majority(none, 2, &n, &ans), -1);
	CHECK_INT(ans, 0);
	CHECK_INT(check_majority(none, 0, &n, &ans), -1);
}
