/*
 * t_check.c -- dtrun --check: the CHECK and CHECKED codec, NCCL's and
 * Gloo's interface syntax, and the table.
 */
#include <stdlib.h>
#include <string.h>

#include "agentproto.h"
#include "check.h"
#include "err.h"
#include "hostcheck.h"
#include "iface.h"
#include "test.h"
#include "wire.h"

/* The payload of the one frame in b, which must be of type want. */
static const uint8_t *
only_frame(struct dt_wbuf *b, uint8_t want, size_t *plen)
{
	const uint8_t	*pl = NULL;
	size_t		 used = 0;
	uint8_t		 type = 0;

	CHECK_INT(dt_frame_parse(b->p, b->len, AP_FRAME_MAX, &type, &pl, plen,
	    &used), 0);
	CHECK_INT(type, want);
	CHECK_INT(used, b->len);
	return pl;
}

TEST(ap_check_and_checked_roundtrip)
{
	struct dt_wbuf		 b;
	char			*env[] = { "PATH=/x:/y", "NCCL_SOCKET_IFNAME=^lo",
				    NULL };
	char			*kv[] = { "version=0.1.0", "gpu=GPU 0: H100", NULL };
	struct ap_check		 c = { AP_CHK_GATHER, AP_CHK_FAST | AP_CHK_LISTEN,
				    UINT64_C(1700000000123), "gpu01=ib0,eth0",
				    "10.0.0.1", "python3", env, 2 }, c2;
	struct ap_checked	 k = { AP_CHK_PROBE, UINT64_C(1700000000456),
				    UINT64_C(5000000000), kv, 2 }, k2;
	const uint8_t		*pl;
	size_t			 n;

	dt_wbuf_init(&b);
	CHECK_INT(ap_put_check(&b, &c), 0);
	pl = only_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), 0);
	CHECK_INT(c2.step, AP_CHK_GATHER);
	CHECK_INT(c2.flags, AP_CHK_FAST | AP_CHK_LISTEN);
	CHECK(c2.now_ms == UINT64_C(1700000000123));
	CHECK_STR(c2.iface, "gpu01=ib0,eth0");
	CHECK_STR(c2.target, "10.0.0.1");
	CHECK_STR(c2.cmd, "python3");
	CHECK_INT(c2.nenv, 2);
	CHECK_STR(c2.env[1], "NCCL_SOCKET_IFNAME=^lo");
	CHECK(c2.env[2] == NULL);
	ap_check_free(&c2);

	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_checked(&b, &k), 0);
	pl = only_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), 0);
	CHECK_INT(k2.step, AP_CHK_PROBE);
	CHECK(k2.now_ms == UINT64_C(1700000000456));
	CHECK(k2.took_ms == UINT64_C(5000000000));	/* 64 bits */
	CHECK_INT(k2.nkv, 2);
	CHECK_STR(k2.kv[1], "gpu=GPU 0: H100");
	ap_checked_free(&k2);
	CHECK_STR(ap_type_name(AP_CHECK), "CHECK");
	CHECK_STR(ap_type_name(AP_CHECKED), "CHECKED");
	CHECK_INT(AP_VERSION, 5);
	dt_wbuf_free(&b);
}

TEST(ap_check_refuses_bad_steps_flags_and_tails)
{
	struct dt_wbuf		 b;
	struct ap_check		 c = { 3, 0, 0, "", "", "", NULL, 0 }, c2;
	struct ap_checked	 k = { 0, 0, 0, NULL, 0 }, k2;
	const uint8_t		*pl;
	uint8_t			*p;
	size_t			 n;

	dt_wbuf_init(&b);
	ap_put_check(&b, &c);		/* step 3: no such step */
	pl = only_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), DT_ERR_PROTO);
	c.step = AP_CHK_PROBE;
	c.flags = 0x80;			/* a flag nobody knows */
	dt_wbuf_reset(&b);
	ap_put_check(&b, &c);
	pl = only_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), DT_ERR_PROTO);
	c.flags = 0;
	dt_wbuf_reset(&b);
	ap_put_check(&b, &c);
	pl = only_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), 0);
	ap_check_free(&c2);
	CHECK_INT(ap_get_check(pl, n - 1, &c2), DT_ERR_PROTO);	/* cut short */

	dt_wbuf_reset(&b);
	ap_put_checked(&b, &k);		/* step 0 */
	pl = only_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), DT_ERR_PROTO);
	/* A count of answers over AP_CHK_KV_MAX is refused before reading them. */
	k.step = AP_CHK_GATHER;
	dt_wbuf_reset(&b);
	ap_put_checked(&b, &k);
	p = b.p + b.len - 4;
	p[0] = 0xff;
	pl = only_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), DT_ERR_PROTO);
	k.nkv = AP_CHK_KV_MAX + 1;
	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_checked(&b, &k), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	dt_wbuf_free(&b);
}

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
	char		why[512];

	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "eth", list, 4, why,
	    sizeof(why)), 0);
	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "ib", list, 4, why,
	    sizeof(why)), -1);
	CHECK_STR(why, "NCCL_SOCKET_IFNAME=ib selects no interface that is up "
	    "here (NCCL's syntax: prefixes, ^ excludes, = exact; up with IPv4: "
	    "lo eth0)");
	CHECK_INT(hostcheck_ifname("GLOO_SOCKET_IFNAME", "eth", list, 4, why,
	    sizeof(why)), -1);
	CHECK(strstr(why, "Gloo's syntax: exact names") != NULL);
	CHECK_INT(hostcheck_ifname("GLOO_SOCKET_IFNAME", "lo", list, 4, why,
	    sizeof(why)), 0);
	/* Nothing fits a tiny buffer, and nothing overflows it. */
	CHECK_INT(hostcheck_ifname("NCCL_SOCKET_IFNAME", "x", list, 4, why, 8),
	    -1);
	CHECK_INT(strlen(why), 7);
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
