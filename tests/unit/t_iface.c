/* t_iface.c -- choosing the network interface, from made-up lists. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/iface.h"
#include "test.h"

static const struct iface	box[] = {
	{ "lo", "127.0.0.1", 1, 1 },
	{ "docker0", "172.17.0.1", 1, 0 },
	{ "veth12ab", "172.17.0.5", 1, 0 },
	{ "eth0", "169.254.3.4", 1, 0 },
	{ "eth1", "10.1.0.7", 0, 0 },
	{ "ib0", "10.2.0.7", 1, 0 },
	{ "eth0", "192.168.1.5", 1, 0 },
};
#define NBOX	(sizeof(box) / sizeof(box[0]))

TEST(iface_local_takes_loopback)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_choose(box, NBOX, NULL, 1, &ch, &e), 0);
	CHECK_STR(ch.name, "lo");
	CHECK_STR(ch.addr, "127.0.0.1");
	CHECK(strstr(ch.why, "this machine") != NULL);
}

TEST(iface_remote_skips_bridges_down_and_link_local)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_choose(box, NBOX, NULL, 0, &ch, &e), 0);
	CHECK_STR(ch.name, "ib0");
	CHECK_STR(ch.addr, "10.2.0.7");
	/* Only loopback, bridges, link-local and down: nothing to take. */
	CHECK_INT(iface_choose(box, 5, NULL, 0, &ch, &e), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "give one with --iface") != NULL);
	CHECK(strstr(e.msg, "eth1 10.1.0.7 (down)") != NULL);
	CHECK_INT(iface_choose(box + 6, 1, NULL, 0, &ch, &e), 0);
	CHECK_STR(ch.addr, "192.168.1.5");
}

TEST(iface_given)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_choose(box, NBOX, "docker0", 0, &ch, &e), 0);
	CHECK_STR(ch.addr, "172.17.0.1");
	CHECK_STR(ch.why, "given with --iface");
	/* --iface wins over "every host is local" too. */
	CHECK_INT(iface_choose(box, NBOX, "ib0", 1, &ch, &e), 0);
	CHECK_STR(ch.name, "ib0");
	CHECK_INT(iface_choose(box, NBOX, "eth1", 0, &ch, &e), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "--iface eth1: the interface is down") != NULL);
	CHECK_INT(iface_choose(box, 2, "wlan0", 0, &ch, &e), DT_ERR_NOTFOUND);
	CHECK_STR(e.msg, "--iface wlan0: no such interface with an IPv4 "
	    "address (interfaces: lo 127.0.0.1, docker0 172.17.0.1)");
}

TEST(iface_only_loopback)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_choose(box, 1, NULL, 0, &ch, &e), DT_ERR_NOTFOUND);
	CHECK_INT(iface_choose(NULL, 0, NULL, 1, &ch, &e), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "(interfaces: none)") != NULL);
}

TEST(iface_list_has_loopback)
{
	struct iface	*l;
	struct dt_err	 e;
	size_t		 n, i;
	int		 lo = 0;

	CHECK_INT(iface_list(&l, &n, &e), 0);
	for (i = 0; i < n; i++)
		if (l[i].loopback && strcmp(l[i].addr, "127.0.0.1") == 0)
			lo = 1;
	CHECK(lo);
	free(l);
}

TEST(iface_route_to_loopback_is_lo)
{
	struct iface		*list;
	struct iface_choice	 ch;
	struct dt_err		 e;
	size_t			 n;

	CHECK_INT(iface_list(&list, &n, &e), 0);
	CHECK_INT(iface_route(list, n, "127.0.0.3", &ch, &e), 0);
	CHECK(strcmp(ch.name, "lo") == 0);
	CHECK_STR(ch.addr, "127.0.0.1");
	CHECK(strstr(ch.why, "127.0.0.3") != NULL);
	free(list);
}

TEST(iface_route_source_not_in_list)
{
	static const struct iface	only[] = { { "eth9", "10.9.9.9", 1, 0 } };
	struct iface_choice		 ch;
	struct dt_err			 e;

	CHECK_INT(iface_route(only, 1, "127.0.0.1", &ch, &e), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "127.0.0.1") != NULL);
	CHECK(strstr(e.msg, "eth9") != NULL);
}

TEST(iface_route_unresolvable)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_route(NULL, 0, "no-such-host.invalid", &ch, &e),
	    DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "no-such-host.invalid") != NULL);
}

TEST(iface_spec_host_own_items_win)
{
	char		buf[128];
	struct dt_err	e;

	CHECK_INT(iface_spec_host("gpu01=ens5,ib0,gpu01=eth2,eth0", "gpu01",
	    buf, sizeof(buf), &e), 0);
	CHECK_STR(buf, "ens5,eth2");
	CHECK_INT(iface_spec_host("gpu01=ens5,ib0,gpu01=eth2,eth0", "gpu02",
	    buf, sizeof(buf), &e), 0);
	CHECK_STR(buf, "ib0,eth0");
	CHECK_INT(iface_spec_host("gpu01=ens5", "gpu0", buf, sizeof(buf), &e),
	    0);
	CHECK_STR(buf, "");
	CHECK_INT(iface_spec_host(NULL, "gpu0", buf, sizeof(buf), &e), 0);
	CHECK_STR(buf, "");
}

TEST(iface_spec_host_bad_items)
{
	static const char *const bad[] = { "", "eth0,", ",eth0", "=eth0",
	    "h=", "h=a=b", "eth0,,ib0" };
	char		buf[64];
	struct dt_err	e;
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(iface_spec_host(bad[i], "h", buf, sizeof(buf), &e),
		    DT_ERR_PARSE);
		CHECK(strstr(e.msg, "HOST=IFACE") != NULL);
	}
}

TEST(iface_pick_first_candidate_up)
{
	struct iface_choice	ch;
	struct dt_err		e;

	CHECK_INT(iface_pick(box, NBOX, "wlan0,eth1,ib0", "10.0.0.1", &ch, &e),
	    0);
	CHECK_STR(ch.name, "ib0");
	CHECK_STR(ch.addr, "10.2.0.7");
	CHECK(strstr(ch.why, "wlan0,eth1,ib0") != NULL);
	CHECK_INT(iface_pick(box, NBOX, "wlan0,eth1", "10.0.0.1", &ch, &e),
	    DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "eth1 10.1.0.7 (down)") != NULL);
}

TEST(iface_pick_one_name_as_given)
{
	struct iface_choice	ch;
	struct dt_err		e;

	/* One name is --iface as it always was: its reason, its messages. */
	CHECK_INT(iface_pick(box, NBOX, "docker0", "10.0.0.1", &ch, &e), 0);
	CHECK_STR(ch.name, "docker0");
	CHECK_STR(ch.why, "given with --iface");
	CHECK_INT(iface_pick(box, NBOX, "eth1", NULL, &ch, &e),
	    DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "--iface eth1: the interface is down") != NULL);
}

TEST(iface_pick_by_route_or_guess)
{
	struct iface		*list;
	struct iface_choice	 ch;
	struct dt_err		 e;
	size_t			 n;

	CHECK_INT(iface_list(&list, &n, &e), 0);
	CHECK_INT(iface_pick(list, n, "", "127.0.0.1", &ch, &e), 0);
	CHECK_STR(ch.name, "lo");
	CHECK_STR(ch.why, "the route to 127.0.0.1");
	free(list);
	/* rank 0's name does not resolve here: the guess for a host. */
	CHECK_INT(iface_pick(box, NBOX, "", "no-such-host.invalid", &ch, &e),
	    0);
	CHECK_STR(ch.name, "ib0");
	CHECK(strstr(ch.why, "no-such-host.invalid does not resolve") != NULL);
	/* A name that is a loopback address here: this host's own name. */
	CHECK_INT(iface_pick(box, NBOX, "", "localhost", &ch, &e), 0);
	CHECK_STR(ch.name, "ib0");
	CHECK(strstr(ch.why, "localhost is a loopback address here") != NULL);
	/* A 127.x literal means the loopback. */
	CHECK_INT(iface_pick(box, NBOX, "", "127.0.0.1", &ch, &e), 0);
	CHECK_STR(ch.name, "lo");
	CHECK_INT(iface_pick(box, 1, NULL, NULL, &ch, &e), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "give one with --iface") != NULL);
}
