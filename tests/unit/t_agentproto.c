/* t_agentproto.c -- every launcher <-> agent message, and bad payloads. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "proto/agentproto.h"
#include "test.h"
#include "t_agent.h"



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
	j.setup = ". venv/bin/activate && env";
	CHECK_INT(ap_put_job(&b, &j), 0);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), 0);
	CHECK_STR(j2.job_id, "abc");
	CHECK_STR(j2.setup, ". venv/bin/activate && env");
	CHECK_STR(j2.cwd, "/w");
	CHECK_INT(j2.kill_grace_ms, 5000);
	CHECK_INT(j2.nranks, 2);
	CHECK_INT(j2.nenv, 2);
	CHECK_STR(j2.env[1], "B=");
	/* Not asked: the interface fields are empty. */
	CHECK_STR(j2.iface, "");
	CHECK_STR(j2.rank0, "");
	CHECK_INT(j2.ifvars, 0);
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

TEST(ap_heartbeat_roundtrip_and_bounds)
{
	struct dt_wbuf	 b;
	const uint8_t	*pl;
	uint8_t		 zero[8] = { 0 };
	size_t		 n;
	uint64_t	 ms;

	dt_wbuf_init(&b);
	CHECK_INT(ap_put_heartbeat(&b, 15000), 0);
	pl = one_frame(&b, AP_HEARTBEAT, &n);
	CHECK_INT(ap_get_heartbeat(pl, n, &ms), 0);
	CHECK(ms == 15000);
	CHECK_INT(ap_get_heartbeat(pl, n - 1, &ms), DT_ERR_PROTO);
	CHECK_INT(ap_get_heartbeat(zero, sizeof(zero), &ms), DT_ERR_PROTO);
	dt_wbuf_reset(&b);
	ap_put_heartbeat(&b, AP_HEARTBEAT_MAX_MS + 1);
	pl = one_frame(&b, AP_HEARTBEAT, &n);
	CHECK_INT(ap_get_heartbeat(pl, n, &ms), DT_ERR_PROTO);
	CHECK_STR(ap_type_name(AP_HEARTBEAT), "HEARTBEAT");
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
	uint32_t	 k;
	int		 want[3] = { 29500, 1, 65535 }, *got;
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

/* An ERROR over the decoder's limit is cut, never sent whole to be refused. */
TEST(ap_error_too_long_is_cut)
{
	struct dt_wbuf	 b;
	struct ap_error	 e = { AP_NORANK, 2, NULL }, d;
	char		*msg = malloc(3 * AP_ERRMSG_MAX);
	const uint8_t	*pl;
	size_t		 plen, used;
	uint8_t		 type;

	memset(msg, 'x', 3 * AP_ERRMSG_MAX - 1);
	msg[3 * AP_ERRMSG_MAX - 1] = '\0';
	e.msg = msg;
	dt_wbuf_init(&b);
	CHECK_INT(ap_put_error(&b, &e), 0);
	CHECK_INT(dt_frame_parse(b.p, b.len, AP_FRAME_MAX, &type, &pl, &plen,
	    &used), 0);
	CHECK_INT(ap_get_error(pl, plen, &d), 0);
	CHECK_INT(strlen(d.msg), AP_ERRMSG_MAX);
	ap_error_free(&d);
	dt_wbuf_free(&b);
	free(msg);
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

/*
 * Joins the frames in b as the agent does; returns the number of frames,
 * and the whole message's type and payload (valid while ra lives).
 */
static int
join_frames(struct dt_wbuf *b, struct ap_reasm *ra, uint8_t *type,
    const uint8_t **p, size_t *n)
{
	const uint8_t	*pl;
	size_t		 off = 0, plen, used;
	int		 frames = 0, rc = 0;

	while (off < b->len) {
		CHECK_INT(dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
		    type, &pl, &plen, &used), 0);
		off += used;
		frames++;
		*p = pl;
		*n = plen;
		rc = ap_reasm_feed(ra, *type, p, n);
		CHECK_INT(rc, off < b->len ? 0 : 1);
		if (rc < 0)
			break;
	}
	return frames;
}

TEST(ap_times_are_64_bit)
{
	struct dt_wbuf	 b;
	struct ap_job	 j = { 0 }, j2;
	struct ap_stop	 s = { 15, BIG_GRACE_MS }, s2;
	const uint8_t	*pl;
	size_t		 n;

	dt_wbuf_init(&b);
	j.version = AP_VERSION;
	j.job_id = "id";
	j.cwd = "";
	j.kill_grace_ms = BIG_GRACE_MS;
	j.nranks = 1;
	CHECK(j.kill_grace_ms == BIG_GRACE_MS);	/* the field holds it */
	CHECK_INT(ap_put_job(&b, &j), 0);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), 0);
	CHECK(j2.kill_grace_ms == BIG_GRACE_MS);
	ap_job_free(&j2);

	dt_wbuf_reset(&b);
	CHECK(s.grace_ms == BIG_GRACE_MS);
	CHECK_INT(ap_put_stop(&b, &s), 0);
	pl = one_frame(&b, AP_STOP, &n);
	CHECK_INT(ap_get_stop(pl, n, &s2), 0);
	CHECK(s2.grace_ms == BIG_GRACE_MS);
	CHECK_INT(s2.signo, 15);

	dt_wbuf_reset(&b);
	s.grace_ms = UINT64_MAX;
	CHECK_INT(ap_put_stop(&b, &s), 0);
	pl = one_frame(&b, AP_STOP, &n);
	CHECK_INT(ap_get_stop(pl, n, &s2), 0);
	CHECK(s2.grace_ms == UINT64_MAX);
	dt_wbuf_free(&b);
}

/* A JOB whose rank count lies (t_agent.h). */
void
t_job_claiming(struct dt_wbuf *b, uint32_t nranks)
{
	struct ap_job	j = { 0 };
	uint8_t		*q;

	j.version = AP_VERSION;
	j.job_id = "id";
	j.cwd = "";
	j.kill_grace_ms = 1000;
	j.nranks = 1;
	CHECK_INT(ap_put_job(b, &j), 0);
	/*
	 * No variables, setup or interface: the payload ends "u32 nranks,
	 * u32 0 (env), u32 0 (setup), u32 0 (iface), u32 0 (rank0), u8 0
	 * (ifvars), u8 0 (pack), u32 0 (defaults), u8 0 (errfile)".
	 */
	q = b->p + b->len - 27;
	q[0] = nranks >> 24;
	q[1] = nranks >> 16;
	q[2] = nranks >> 8;
	q[3] = nranks;
}

TEST(ap_job_rank_count_is_bounded)
{
	struct dt_wbuf	 b;
	struct ap_job	 j = { 0 }, j2;
	const uint8_t	*pl;
	size_t		 n;

	dt_wbuf_init(&b);
	t_job_claiming(&b, UINT32_MAX);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), DT_ERR_PROTO);

	dt_wbuf_reset(&b);
	t_job_claiming(&b, AP_MAX_RANKS + 1);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), DT_ERR_PROTO);

	dt_wbuf_reset(&b);
	t_job_claiming(&b, AP_MAX_RANKS);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), 0);
	CHECK_INT(j2.nranks, AP_MAX_RANKS);
	ap_job_free(&j2);

	/* And the encoder will not send what the agent refuses. */
	dt_wbuf_reset(&b);
	j.version = AP_VERSION;
	j.job_id = "id";
	j.cwd = "";
	j.nranks = AP_MAX_RANKS + 1;
	CHECK_INT(ap_put_job(&b, &j), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	dt_wbuf_free(&b);
}

/* Strings of a given size (t_agent.h). */
char **
t_strs(size_t n, size_t len, int env)
{
	char	**v = calloc(n + 1, sizeof(*v));
	size_t	  i, k;

	for (i = 0; i < n; i++) {
		v[i] = malloc(len + 32);
		if (env) {
			k = snprintf(v[i], 32, "V%zu=", i);
			memset(v[i] + k, 'a' + i % 26, len);
			v[i][k + len] = '\0';
		} else
			snprintf(v[i], 32, "%zu", i);
	}
	return v;
}

TEST(ap_rank_over_a_frame_goes_in_parts)
{
	struct dt_wbuf	 b;
	struct ap_reasm	 ra;
	struct ap_rank	 r = { 0 }, r2;
	const uint8_t	*pl;
	size_t		 n, i;
	uint8_t		 type;
	int		 frames;

	/* What execve takes: 100,000 arguments, ten 120 KB variables. */
	r.rank = 3;
	r.local_rank = 1;
	r.argv = t_strs(100000, 0, 0);
	r.argc = 100000;
	r.env = t_strs(10, 120 * 1024, 1);
	r.nenv = 10;
	dt_wbuf_init(&b);
	ap_reasm_init(&ra);
	CHECK_INT(ap_put_rank(&b, &r), 0);
	CHECK(b.len > AP_FRAME_MAX);
	frames = join_frames(&b, &ra, &type, &pl, &n);
	CHECK(frames >= 2);
	CHECK_INT(type, AP_RANK);
	CHECK_INT(ap_get_rank(pl, n, &r2), 0);
	CHECK_INT(r2.rank, 3);
	CHECK_INT(r2.argc, 100000);
	CHECK_INT(r2.nenv, 10);
	for (i = 0; i < r.argc; i++)
		if (strcmp(r2.argv[i], r.argv[i]) != 0)
			break;
	CHECK_INT(i, r.argc);
	for (i = 0; i < r.nenv; i++)
		CHECK_STR(r2.env[i], r.env[i]);
	ap_rank_free(&r2);

	/* A small message after it comes through as it is. */
	dt_wbuf_reset(&b);
	ap_put_empty(&b, AP_PREPARE);
	CHECK_INT(join_frames(&b, &ra, &type, &pl, &n), 1);
	CHECK_INT(type, AP_PREPARE);
	CHECK_INT(n, 0);

	dt_strv_free(r.argv);
	dt_strv_free(r.env);
	ap_reasm_free(&ra);
	dt_wbuf_free(&b);
}

TEST(ap_put_refuses_what_cannot_be_carried)
{
	struct dt_wbuf	 b;
	struct ap_rank	 r = { 0 };
	struct ap_job	 j = { 0 };

	dt_wbuf_init(&b);
	ap_put_empty(&b, AP_START);		/* what was there stays */
	r.argv = t_strs(1, 0, 0);
	r.argc = 1;
	r.env = t_strs(1, AP_MAX_STR, 1);	/* "V0=" and AP_MAX_STR */
	r.nenv = 1;
	CHECK_INT(ap_put_rank(&b, &r), DT_ERR_TOOBIG);
	CHECK_INT(b.len, DT_FRAME_HDR);
	dt_strv_free(r.env);

	/* 70 strings of 250 KiB: over AP_MSG_MAX in all. */
	j.version = AP_VERSION;
	j.job_id = "id";
	j.cwd = "";
	j.env = t_strs(70, 250 * 1024, 1);
	j.nenv = 70;
	CHECK_INT(ap_put_job(&b, &j), DT_ERR_TOOBIG);
	CHECK_INT(b.len, DT_FRAME_HDR);
	dt_strv_free(j.env);
	dt_strv_free(r.argv);
	dt_wbuf_free(&b);
}

TEST(ap_reasm_refuses_bad_parts)
{
	struct ap_reasm	 ra;
	uint8_t		*big = calloc(1, AP_FRAME_MAX);
	const uint8_t	*p;
	size_t		 n, i;

	ap_reasm_init(&ra);
	/* An empty part. */
	p = big;
	n = 0;
	CHECK_INT(ap_reasm_feed(&ra, AP_CONT, &p, &n), DT_ERR_PROTO);
	ap_reasm_free(&ra);
	/* Parts that end in a message never sent in parts. */
	p = big;
	n = 10;
	CHECK_INT(ap_reasm_feed(&ra, AP_CONT, &p, &n), 0);
	CHECK_INT(ap_reasm_feed(&ra, AP_STOP, &p, &n), DT_ERR_PROTO);
	ap_reasm_free(&ra);
	/* More than AP_MSG_MAX in all. */
	for (i = 0; i < AP_MSG_MAX / (AP_FRAME_MAX - DT_FRAME_HDR); i++) {
		p = big;
		n = AP_FRAME_MAX - DT_FRAME_HDR;
		CHECK_INT(ap_reasm_feed(&ra, AP_CONT, &p, &n), 0);
	}
	p = big;
	n = AP_FRAME_MAX - DT_FRAME_HDR;
	CHECK_INT(ap_reasm_feed(&ra, AP_CONT, &p, &n), DT_ERR_PROTO);
	ap_reasm_free(&ra);
	free(big);
}

TEST(wire_frame_end_parts_splits_and_bounds)
{
	struct dt_wbuf	 b;
	const uint8_t	*pl;
	size_t		 st, plen, used, off, total;
	uint8_t		 type, data[250];
	int		 frames;

	for (st = 0; st < sizeof(data); st++)
		data[st] = st;
	dt_wbuf_init(&b);
	st = dt_frame_begin(&b, 9);
	dt_wbuf_put(&b, data, sizeof(data));
	CHECK_INT(dt_frame_end_parts(&b, st, 100, 8, 1000), 0);
	/* 95 payload bytes a frame: 95 + 95 + 60, types 8 8 9. */
	for (off = 0, total = 0, frames = 0; off < b.len; off += used) {
		CHECK_INT(dt_frame_parse(b.p + off, b.len - off, 100, &type,
		    &pl, &plen, &used), 0);
		CHECK(memcmp(pl, data + total, plen) == 0);
		CHECK_INT(type, off + used < b.len ? 8 : 9);
		total += plen;
		frames++;
	}
	CHECK_INT(frames, 3);
	CHECK_INT(total, sizeof(data));

	dt_wbuf_reset(&b);
	st = dt_frame_begin(&b, 9);
	dt_wbuf_put(&b, data, sizeof(data));
	CHECK_INT(dt_frame_end_parts(&b, st, 100, 8, 249), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	dt_wbuf_free(&b);
}

TEST(ap_job_carries_the_interface_choice)
{
	struct dt_wbuf	 b;
	struct ap_job	 j = { 0 }, j2;
	const uint8_t	*pl;
	uint8_t		*last;
	size_t		 n;
	char		*big;

	dt_wbuf_init(&b);
	j.version = AP_VERSION;
	j.job_id = "id";
	j.cwd = "";
	j.nranks = 1;
	j.iface = "ens5,eth0";
	j.rank0 = "10.9.0.1";
	j.ifvars = AP_IF_NCCL | AP_IF_DMLC;
	CHECK_INT(ap_put_job(&b, &j), 0);
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), 0);
	CHECK_STR(j2.iface, "ens5,eth0");
	CHECK_STR(j2.rank0, "10.9.0.1");
	CHECK_INT(j2.ifvars, AP_IF_NCCL | AP_IF_DMLC);
	ap_job_free(&j2);
	while (n-- > 0)
		CHECK_INT(ap_get_job(pl, n, &j2), DT_ERR_PROTO);
	/* A variable this version does not know is refused. */
	last = b.p + b.len - 1;
	*last = 0x08;
	pl = one_frame(&b, AP_JOB, &n);
	CHECK_INT(ap_get_job(pl, n, &j2), DT_ERR_PROTO);
	/* Over the limit: nothing is appended. */
	dt_wbuf_reset(&b);
	big = calloc(1, AP_IFACE_MAX + 2);
	memset(big, 'e', AP_IFACE_MAX + 1);
	j.iface = big;
	CHECK_INT(ap_put_job(&b, &j), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	free(big);
	dt_wbuf_free(&b);
}

TEST(ap_iface_roundtrip_and_bad)
{
	struct dt_wbuf	 b;
	struct ap_iface	 f = { 1, "eth1", "10.9.0.2", "the route to 10.9.0.1" };
	struct ap_iface	 f2;
	const uint8_t	*pl;
	size_t		 n;

	dt_wbuf_init(&b);
	CHECK_INT(ap_put_iface(&b, &f), 0);
	pl = one_frame(&b, AP_IFACE, &n);
	CHECK_INT(ap_get_iface(pl, n, &f2), 0);
	CHECK_INT(f2.ok, 1);
	CHECK_STR(f2.name, "eth1");
	CHECK_STR(f2.addr, "10.9.0.2");
	CHECK_STR(f2.why, "the route to 10.9.0.1");
	ap_iface_free(&f2);
	while (n-- > 0)
		CHECK_INT(ap_get_iface(pl, n, &f2), DT_ERR_PROTO);
	CHECK_STR(ap_type_name(AP_IFACE), "IFACE");

	/* None: only why. */
	dt_wbuf_reset(&b);
	f.ok = 0;
	f.name = f.addr = "";
	f.why = "--iface ib0: no such interface (interfaces: lo 127.0.0.1)";
	CHECK_INT(ap_put_iface(&b, &f), 0);
	pl = one_frame(&b, AP_IFACE, &n);
	CHECK_INT(ap_get_iface(pl, n, &f2), 0);
	CHECK_INT(f2.ok, 0);
	CHECK(strstr(f2.why, "ib0") != NULL);
	ap_iface_free(&f2);

	/* A choice without a name, a refusal without a reason, ok = 2. */
	dt_wbuf_reset(&b);
	f.ok = 1;
	CHECK_INT(ap_put_iface(&b, &f), 0);
	pl = one_frame(&b, AP_IFACE, &n);
	CHECK_INT(ap_get_iface(pl, n, &f2), DT_ERR_PROTO);
	dt_wbuf_reset(&b);
	f.ok = 0;
	f.why = "";
	CHECK_INT(ap_put_iface(&b, &f), 0);
	pl = one_frame(&b, AP_IFACE, &n);
	CHECK_INT(ap_get_iface(pl, n, &f2), DT_ERR_PROTO);
	dt_wbuf_reset(&b);
	f.ok = 2;
	f.name = "eth1";
	f.addr = "10.9.0.2";
	f.why = "x";
	CHECK_INT(ap_put_iface(&b, &f), 0);
	pl = one_frame(&b, AP_IFACE, &n);
	CHECK_INT(ap_get_iface(pl, n, &f2), DT_ERR_PROTO);
	dt_wbuf_free(&b);
}

TEST(ap_check_and_checked_roundtrip)
{
	struct dt_wbuf		 b;
	char			*env[] = { "PATH=/x:/y", "NCCL_SOCKET_IFNAME=^lo",
				    NULL };
	char			*kv[] = { "version=0.1.0", "gpu=GPU 0: H100", NULL };
	struct ap_check		 c = { AP_CHK_GATHER, AP_CHK_FAST | AP_CHK_LISTEN,
				    UINT64_C(1700000000123), "gpu01=ib0,eth0",
				    "10.0.0.1", "python3", "/w", env, 2,
				    ". venv/bin/activate; env", 0, 0, NULL }, c2;
	struct ap_checked	 k = { AP_CHK_PROBE, UINT64_C(1700000000456),
				    UINT64_C(5000000000), kv, 2 }, k2;
	const uint8_t		*pl;
	size_t			 n;

	dt_wbuf_init(&b);
	CHECK_INT(ap_put_check(&b, &c), 0);
	pl = one_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), 0);
	CHECK_INT(c2.step, AP_CHK_GATHER);
	CHECK_INT(c2.flags, AP_CHK_FAST | AP_CHK_LISTEN);
	CHECK(c2.now_ms == UINT64_C(1700000000123));
	CHECK_STR(c2.iface, "gpu01=ib0,eth0");
	CHECK_STR(c2.target, "10.0.0.1");
	CHECK_STR(c2.cmd, "python3");
	CHECK_STR(c2.cwd, "/w");
	CHECK_INT(c2.nenv, 2);
	CHECK_STR(c2.env[1], "NCCL_SOCKET_IFNAME=^lo");
	CHECK(c2.env[2] == NULL);
	CHECK_STR(c2.setup, ". venv/bin/activate; env");
	CHECK(c2.bytes == 0 && c2.streams == 0);
	CHECK_STR(c2.key, "");
	ap_check_free(&c2);

	/* --deep's PAIR: its bytes (64 bits), streams and key. */
	c.step = AP_CHK_PAIR;
	c.flags = AP_CHK_DEEP;
	c.bytes = UINT64_C(5) << 32;
	c.streams = 8;
	c.key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_check(&b, &c), 0);
	pl = one_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), 0);
	CHECK_INT(c2.step, AP_CHK_PAIR);
	CHECK_INT(c2.flags, AP_CHK_DEEP);
	CHECK(c2.bytes == UINT64_C(5) << 32);
	CHECK_INT(c2.streams, 8);
	CHECK_STR(c2.key, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	ap_check_free(&c2);

	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_checked(&b, &k), 0);
	pl = one_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), 0);
	CHECK_INT(k2.step, AP_CHK_PROBE);
	CHECK(k2.now_ms == UINT64_C(1700000000456));
	CHECK(k2.took_ms == UINT64_C(5000000000));	/* 64 bits */
	CHECK_INT(k2.nkv, 2);
	CHECK_STR(k2.kv[1], "gpu=GPU 0: H100");
	ap_checked_free(&k2);
	CHECK_STR(ap_type_name(AP_CHECK), "CHECK");
	CHECK_STR(ap_type_name(AP_CHECKED), "CHECKED");
	CHECK_INT(AP_VERSION, 13);
	dt_wbuf_free(&b);
}

TEST(ap_check_refuses_bad_steps_flags_and_tails)
{
	struct dt_wbuf		 b;
	struct ap_check		 c = { 4, 0, 0, "", "", "", "", NULL, 0, NULL,
				    0, 0, NULL }, c2;
	struct ap_checked	 k = { 0, 0, 0, NULL, 0 }, k2;
	const uint8_t		*pl;
	uint8_t			*p, bad[256];
	size_t			 n;

	dt_wbuf_init(&b);
	ap_put_check(&b, &c);		/* step 4: no such step */
	pl = one_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), DT_ERR_PROTO);
	/* A PAIR with bytes needs 1 to AP_CHK_STREAMS_MAX connections. */
	c.step = AP_CHK_PAIR;
	c.bytes = 1024;
	for (c.streams = 0; c.streams <= AP_CHK_STREAMS_MAX + 1;
	    c.streams += AP_CHK_STREAMS_MAX + 1) {
		dt_wbuf_reset(&b);
		ap_put_check(&b, &c);
		pl = one_frame(&b, AP_CHECK, &n);
		CHECK_INT(ap_get_check(pl, n, &c2), DT_ERR_PROTO);
	}
	c.bytes = 0;
	c.step = AP_CHK_PROBE;
	c.flags = 0x80;			/* a flag nobody knows */
	dt_wbuf_reset(&b);
	ap_put_check(&b, &c);
	pl = one_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), DT_ERR_PROTO);
	c.flags = 0;
	dt_wbuf_reset(&b);
	ap_put_check(&b, &c);
	pl = one_frame(&b, AP_CHECK, &n);
	CHECK_INT(ap_get_check(pl, n, &c2), 0);
	ap_check_free(&c2);
	CHECK_INT(ap_get_check(pl, n - 1, &c2), DT_ERR_PROTO);	/* cut short */
	/* A key is 64 hex digits, or none: its length is checked both ways. */
	c.key = "abc";
	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_check(&b, &c), DT_ERR_TOOBIG);
	c.key = NULL;
	memcpy(bad, pl, n - 4);		/* the key's length was 0: 3 */
	memcpy(bad + n - 4, "\0\0\0\3abc", 7);
	CHECK_INT(ap_get_check(bad, n + 3, &c2), DT_ERR_PROTO);

	dt_wbuf_reset(&b);
	ap_put_checked(&b, &k);		/* step 0 */
	pl = one_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), DT_ERR_PROTO);
	/* A count of answers over AP_CHK_KV_MAX is refused before reading them. */
	k.step = AP_CHK_GATHER;
	dt_wbuf_reset(&b);
	ap_put_checked(&b, &k);
	p = b.p + b.len - 4;
	p[0] = 0xff;
	pl = one_frame(&b, AP_CHECKED, &n);
	CHECK_INT(ap_get_checked(pl, n, &k2), DT_ERR_PROTO);
	k.nkv = AP_CHK_KV_MAX + 1;
	dt_wbuf_reset(&b);
	CHECK_INT(ap_put_checked(&b, &k), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	dt_wbuf_free(&b);
}
