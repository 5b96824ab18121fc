/*
 * t_storeproto.c -- the TCPStore decoder on conversations recorded from
 * real torch 1.13 clients (tests/data/store), split at every byte, and on
 * hand-built queries of torch >= 2.2's generation and past the limits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/storeproto.h"
#include "t_hf.h"
#include "t_store.h"
#include "test.h"

static const struct sp_limits lim = { 8192, 1 << 20, 1024, (1 << 20) + 65536 };

/* The hostfile tests' reader, one directory over. */
uint8_t *
ts_load(const char *name, size_t *len)
{
	char	rel[512];

	snprintf(rel, sizeof(rel), "../store/%s", name);
	return (uint8_t *)t_hf_read(rel, len);
}

void
ts_u8(struct ts_q *q, uint8_t v)
{
	q->b[q->n++] = v;
}

void
ts_u32(struct ts_q *q, uint32_t v)
{
	int	i;

	for (i = 0; i < 4; i++, v >>= 8)
		ts_u8(q, (uint8_t)v);
}

void
ts_u64(struct ts_q *q, uint64_t v)
{
	int	i;

	for (i = 0; i < 8; i++, v >>= 8)
		ts_u8(q, (uint8_t)v);
}

void
ts_str(struct ts_q *q, const char *s)
{
	ts_u64(q, strlen(s));
	memcpy(q->b + q->n, s, strlen(s));
	q->n += strlen(s);
}

/*
 * Decodes p[0..n) arriving as two reads split at byte cut (0: one read).
 * Fills ops[] and lens[] (at most max). Returns the queries decoded, or a
 * negative DT_ERR_* at the first error.
 */
static int
decode_split(const uint8_t *p, size_t n, size_t cut, enum sp_op *ops,
    long *lens, int max)
{
	struct sp_dec	d;
	struct sp_query	q;
	struct dt_err	e;
	size_t		off = 0, have = cut ? cut : n;
	long		r;
	int		k = 0;

	sp_dec_init(&d, &lim);
	for (;;) {
		r = sp_decode(&d, p + off, have - off, &q, &e);
		if (r == DT_ERR_AGAIN && have < n) {
			have = n;
			continue;
		}
		if (r == DT_ERR_AGAIN)
			break;
		if (r < 0 || k == max) {
			k = r < 0 ? (int)r : -100;
			break;
		}
		ops[k] = q.op;
		lens[k++] = r;
		off += (size_t)r;
	}
	sp_dec_free(&d);
	return off == n ? k : -200;
}

/* Every recorded conversation decodes the same, split anywhere. */
TEST(storeproto_recorded_split_every_byte)
{
	static const char *const names[] = { "t113-ops.c2s", "t113-init-0.c2s",
	    "t113-init-1.c2s", "t113-init-2.c2s", "t113-init-3.c2s" };
	enum sp_op	ops[256], ops2[256];
	long		lens[256], lens2[256];
	size_t		i, n, cut;
	uint8_t		*p;
	int		k, k2;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((p = ts_load(names[i], &n)) == NULL) {
			t_fail(__FILE__, __LINE__, "cannot read %s", names[i]);
			continue;
		}
		k = decode_split(p, n, 0, ops, lens, 256);
		CHECK(k > 10);
		/* torch 1.13's TCPStore starts with ADD("init/", 1). */
		CHECK(k > 0 && ops[0] == SP_ADD);
		for (cut = 1; cut < n; cut++) {
			k2 = decode_split(p, n, cut, ops2, lens2, 256);
			if (k2 != k || memcmp(ops, ops2, k * sizeof(*ops)) != 0 ||
			    memcmp(lens, lens2, k * sizeof(*lens)) != 0) {
				t_fail(__FILE__, __LINE__, "%s split at %zu: "
				    "%d queries, want %d", names[i], cut, k2, k);
				break;
			}
		}
		free(p);
	}
}

/* The first five bytes tell a torch >= 2.2 client from a legacy one. */
TEST(storeproto_generations)
{
	struct sp_dec	d;
	struct sp_query	q;
	struct dt_err	e;
	struct ts_q	b = { .n = 0 };

	ts_u8(&b, 0);
	ts_u32(&b, SP_MAGIC);
	ts_u8(&b, 1);			/* SET, validated */
	ts_str(&b, "k");
	ts_str(&b, "v");
	sp_dec_init(&d, &lim);
	CHECK_INT(sp_decode(&d, b.b, 4, &q, &e), DT_ERR_AGAIN);
	CHECK_INT(d.gen, SP_GEN_UNKNOWN);
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), 5);
	CHECK_INT(q.op, SP_VALIDATE);
	CHECK_INT(d.gen, SP_GEN_VALIDATED);
	CHECK_INT(sp_decode(&d, b.b + 5, b.n - 5, &q, &e), b.n - 5);
	CHECK(q.op == SP_SET && q.key.len == 1 && q.val.p[0] == 'v');
	/* Opcode 0 later is VALIDATE again: a wrong magic is refused. */
	b.n = 0;
	ts_u8(&b, 0);
	ts_u32(&b, 1234);
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_PROTO);
	sp_dec_free(&d);

	/* Legacy: opcode 0 is SET, whose key length is no magic. */
	b.n = 0;
	ts_u8(&b, 0);
	ts_str(&b, "key");
	ts_str(&b, "val");
	sp_dec_init(&d, &lim);
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), b.n);
	CHECK_INT(d.gen, SP_GEN_LEGACY);
	CHECK(q.op == SP_SET && q.key.len == 3 && q.val.len == 3);
	sp_dec_free(&d);
}

/* Both generations' opcode tables, as torch numbers them. */
TEST(storeproto_opcode_tables)
{
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_SET), 0);
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_GETNUMKEYS), 6);
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_WATCH_KEY), 7);
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_DELETE_KEY), 8);
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_CANCEL_WAIT), 12);
	CHECK_INT(sp_wire_op(SP_GEN_LEGACY, SP_PING), -1);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_VALIDATE), 0);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_SET), 1);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_GETNUMKEYS), 7);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_DELETE_KEY), 8);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_PING), 13);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_BARRIER), 18);
	CHECK_INT(sp_wire_op(SP_GEN_VALIDATED, SP_WATCH_KEY), -1);
	CHECK_STR(sp_op_name(SP_MULTI_SET), "MULTI_SET");
}

/* Past a limit is an error as soon as the length is read, not later. */
TEST(storeproto_limits_before_the_bytes)
{
	struct sp_dec	d;
	struct sp_query	q;
	struct dt_err	e;
	struct ts_q	b = { .n = 0 };

	sp_dec_init(&d, &lim);
	ts_u8(&b, 3);			/* legacy ADD */
	ts_u64(&b, 9000);		/* a key past 8192 bytes */
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_TOOBIG);
	CHECK(strstr(e.msg, "key of 9000 bytes") != NULL);
	b.n = 0;
	ts_u8(&b, 0);			/* legacy SET of 1 GiB */
	ts_str(&b, "k");
	ts_u64(&b, 1ULL << 30);
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_TOOBIG);
	CHECK(strstr(e.msg, "value of 1073741824 bytes") != NULL);
	b.n = 0;
	ts_u8(&b, 5);			/* legacy WAIT on too many keys */
	ts_u64(&b, 5000);
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_TOOBIG);
	b.n = 0;
	ts_u8(&b, 4);			/* CHECK: 1000 keys claimed, 1 sent */
	ts_u64(&b, 1000);
	ts_str(&b, "a");
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_AGAIN);
	CHECK(d.arr == NULL);		/* no memory for keys not sent */
	b.b[0] = 'G';			/* "GET / HTTP/1.1" */
	CHECK_INT(sp_decode(&d, b.b, b.n, &q, &e), DT_ERR_PROTO);
	sp_dec_free(&d);
}
