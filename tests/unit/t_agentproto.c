/* t_agentproto.c -- every launcher <-> agent message, and bad payloads. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "agentproto.h"
#include "test.h"

/* Parses the single frame in b; returns its payload. */
static const uint8_t *
one_frame(struct dt_wbuf *b, uint8_t want_type, size_t *plen)
{
	const uint8_t	*pl = NULL;
	size_t		 used = 0;
	uint8_t		 type = 0;

	CHECK_INT(dt_frame_parse(b->p, b->len, AP_FRAME_MAX, &type, &pl, plen,
	    &used), 0);
	CHECK_INT(type, want_type);
	CHECK_INT(used, b->len);
	return pl;
}

TEST(ap_job_and_rank_roundtrip)
{
	struct dt_wbuf	 b;
	struct ap_job	 j = { 0 }, j2;
	struct ap_rank	 r = { 0 }, r2;
	char		*env[] = { "A=1", "B=" };
	char		*argv[] = { "python", "-u", "t.py" };
	const uint8_t	*pl;
	size_t		 n;

	dt_wbuf_init(&b);
	j.version = AP_VERSION;
	j.job_id = "abc";
	j.cwd = "/w";
	j.kill_grace_ms = 5000;
	j.nranks = 2;
	j.env = env;
	j.nenv = 2;
	CHECK_INT(ap_put_job(&b, &j), 0);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), 0);
	CHECK_STR(j2.job_id, "abc");
	CHECK_STR(j2.cwd, "/w");
	CHECK_INT(j2.kill_grace_ms, 5000);
	CHECK_INT(j2.nranks, 2);
	CHECK_INT(j2.nenv, 2);
	CHECK_STR(j2.env[1], "B=");
	ap_job_free(&j2);
	/* Every truncation of a valid payload is refused, and frees what it took. */
	while (n-- > 0)
		CHECK_INT(ap_get_job(pl, n, &j2), DT_ERR_PROTO);

	dt_wbuf_reset(&b);
	r.rank = 7;
	r.local_rank = 3;
	r.argv = argv;
	r.argc = 3;
	r.env = env;
	r.nenv = 1;
	CHECK_INT(ap_put_rank(&b, &r), 0);
	pl = one_frame(&b, AP_RANK, &n);
	CHECK_INT(ap_get_rank(pl, n, &r2), 0);
	CHECK_INT(r2.rank, 7);
	CHECK_INT(r2.local_rank, 3);
	CHECK_INT(r2.argc, 3);
	CHECK_STR(r2.argv[2], "t.py");
	CHECK(r2.argv[3] == NULL);
	CHECK_STR(r2.env[0], "A=1");
	ap_rank_free(&r2);
	dt_wbuf_free(&b);
}

TEST(ap_small_messages_roundtrip)
{
	struct dt_wbuf	 b;
	struct ap_hello	 h = { AP_VERSION, "node1", 42, 29500 }, h2;
	struct ap_stop	 s = { 15, 2500 }, s2;
	struct ap_exit	 x = { 3, AP_SIGNALED, 9 }, x2;
	struct ap_error	 e = { AP_NORANK, 2, "bad" }, e2;
	struct ap_output o;
	const uint8_t	*pl;
	size_t		 n;
	uint32_t	 a, c;

	dt_wbuf_init(&b);
	ap_put_hello(&b, &h);
	pl = one_frame(&b, AP_HELLO, &n);
	CHECK_INT(ap_get_hello(pl, n, &h2), 0);
	CHECK_STR(h2.hostname, "node1");
	CHECK_INT(h2.pid, 42);
	CHECK_INT(h2.free_port, 29500);
	ap_hello_free(&h2);

	dt_wbuf_reset(&b);
	ap_put_stop(&b, &s);
	pl = one_frame(&b, AP_STOP, &n);
	CHECK_INT(ap_get_stop(pl, n, &s2), 0);
	CHECK_INT(s2.signo, 15);
	CHECK_INT(s2.grace_ms, 2500);

	dt_wbuf_reset(&b);
	ap_put_exit(&b, &x);
	pl = one_frame(&b, AP_EXIT, &n);
	CHECK_INT(ap_get_exit(pl, n, &x2), 0);
	CHECK_INT(x2.rank, 3);
	CHECK_INT(x2.how, AP_SIGNALED);
	CHECK_INT(x2.code, 9);

	dt_wbuf_reset(&b);
	ap_put_error(&b, &e);
	pl = one_frame(&b, AP_ERROR, &n);
	CHECK_INT(ap_get_error(pl, n, &e2), 0);
	CHECK_STR(e2.msg, "bad");
	CHECK(e2.rank == AP_NORANK);
	ap_error_free(&e2);

	dt_wbuf_reset(&b);
	ap_put_output(&b, 5, AP_STDERR, "hi\n", 3);
	pl = one_frame(&b, AP_OUTPUT, &n);
	CHECK_INT(ap_get_output(pl, n, &o), 0);
	CHECK_INT(o.rank, 5);
	CHECK_INT(o.stream, AP_STDERR);
	CHECK_INT(o.len, 3);
	CHECK(memcmp(o.data, "hi\n", 3) == 0);

	dt_wbuf_reset(&b);
	ap_put_started(&b, 1, 99);
	pl = one_frame(&b, AP_STARTED, &n);
	CHECK_INT(ap_get_started(pl, n, &a, &c), 0);
	CHECK_INT(a, 1);
	CHECK_INT(c, 99);

	dt_wbuf_reset(&b);
	ap_put_signal(&b, 10);
	pl = one_frame(&b, AP_SIGNAL, &n);
	CHECK_INT(ap_get_u32(pl, n, &a), 0);
	CHECK_INT(a, 10);

	dt_wbuf_reset(&b);
	ap_put_empty(&b, AP_DONE);
	pl = one_frame(&b, AP_DONE, &n);
	CHECK_INT(ap_get_empty(pl, n), 0);
	dt_wbuf_free(&b);
}

TEST(ap_ports_roundtrip)
{
	struct dt_wbuf	 b;
	const uint8_t	*pl;
	size_t		 n;
	uint32_t	 want[3] = { 29500, 1, 65535 }, *got, k;
	uint8_t		 lying[6] = { 0, 0, 0, 2, 0x12, 0x34 };	/* says 2, has 1 */

	dt_wbuf_init(&b);
	ap_put_ports(&b, 3);
	pl = one_frame(&b, AP_PORTS, &n);
	CHECK_INT(ap_get_u32(pl, n, &k), 0);
	CHECK_INT(k, 3);
	dt_wbuf_reset(&b);
	ap_put_portlist(&b, want, 3);
	pl = one_frame(&b, AP_PORTLIST, &n);
	CHECK_INT(ap_get_portlist(pl, n, &got, &k), 0);
	CHECK_INT(k, 3);
	CHECK_INT(got[0], 29500);
	CHECK_INT(got[2], 65535);
	free(got);
	CHECK_INT(ap_get_portlist(lying, sizeof(lying), &got, &k),
	    DT_ERR_PROTO);
	CHECK(got == NULL);
	CHECK_STR(ap_type_name(AP_PORTLIST), "PORTLIST");
	dt_wbuf_free(&b);
}

TEST(ap_bad_payloads)
{
	uint8_t		 junk[16] = { 0, 0, 0, 1, 9 };	/* bad stream / how */
	struct ap_output o;
	struct ap_exit	 x;
	struct ap_rank	 r;
	uint8_t		 noargv[12] = { 0 };		/* rank 0, argc 0 */

	CHECK_INT(ap_get_output(junk, 5, &o), DT_ERR_PROTO);
	CHECK_INT(ap_get_exit(junk, 9, &x), DT_ERR_PROTO);
	CHECK_INT(ap_get_empty(junk, 1), DT_ERR_PROTO);
	CHECK_INT(ap_get_rank(noargv, 16 - 4, &r), DT_ERR_PROTO);
	CHECK_STR(ap_type_name(AP_OUTPUT), "OUTPUT");
	CHECK_STR(ap_type_name(200), "?");
}
