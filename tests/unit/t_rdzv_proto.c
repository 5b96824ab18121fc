/* t_rdzv_proto.c -- the rendezvous codec: every message, truncation, limits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"
#include "test.h"

/* One message of each type with every field of that type set. */
static void
sample(uint8_t type, struct rdzv_msg *m)
{
	static const uint8_t	key[] = "dtrun/nccl-id/0";
	static const uint8_t	val[128] = { 1, 2, 3, [127] = 0xff };
	int			i;

	memset(m, 0, sizeof(*m));
	m->type = type;
	m->magic = RDZV_MAGIC;
	m->version = RDZV_VERSION;
	for (i = 0; i < RDZV_NONCE_LEN; i++)
		m->nonce[i] = (uint8_t)i;
	for (i = 0; i < RDZV_MAC_LEN; i++)
		m->mac[i] = (uint8_t)(0xa0 + i);
	m->rank = 7;
	m->local_rank = -1;
	m->world = 16384;
	m->local_world = 8;
	m->node_rank = 3;
	m->nnodes = 2048;
	m->flags = RDZV_GET_WAIT;
	m->code = DT_ERR_AUTH;
	m->num = -1234567890123LL;
	m->seq = 0x0102030405060708ULL;
	m->host = (const uint8_t *)"gpu017";
	m->hostlen = 6;
	m->key = key;
	m->keylen = sizeof(key) - 1;
	m->val = val;
	m->vallen = sizeof(val);
	m->text = (const uint8_t *)"authentication failed";
	m->textlen = 21;
}

static const uint8_t types[] = {
	RDZV_AUTH, RDZV_JOIN, RDZV_SET, RDZV_GET, RDZV_ADD, RDZV_BARRIER,
	RDZV_PING, RDZV_CHALLENGE, RDZV_AUTH_OK, RDZV_JOIN_OK, RDZV_VALUE,
	RDZV_OK, RDZV_INT, RDZV_PONG, RDZV_ERROR, RDZV_ABORT,
};

/* Checks that the fields a type carries came through. */
static void
check_fields(const struct rdzv_msg *a, const struct rdzv_msg *b)
{
	CHECK_INT(b->type, a->type);
	switch (a->type) {
	case RDZV_AUTH:
		CHECK(memcmp(a->mac, b->mac, RDZV_MAC_LEN) == 0);
		/* FALLTHROUGH */
	case RDZV_CHALLENGE:
		CHECK_INT(b->magic, RDZV_MAGIC);
		CHECK_INT(b->version, RDZV_VERSION);
		CHECK(memcmp(a->nonce, b->nonce, RDZV_NONCE_LEN) == 0);
		break;
	case RDZV_AUTH_OK:
		CHECK(memcmp(a->mac, b->mac, RDZV_MAC_LEN) == 0);
		break;
	case RDZV_JOIN:
		CHECK_INT(b->rank, 7);
		CHECK_INT(b->local_rank, -1);
		CHECK_INT(b->hostlen, 6);
		CHECK(memcmp(b->host, "gpu017", 6) == 0);
		break;
	case RDZV_JOIN_OK:
		CHECK_INT(b->rank, 7);
		CHECK_INT(b->world, 16384);
		CHECK_INT(b->local_rank, -1);
		CHECK_INT(b->local_world, 8);
		CHECK_INT(b->node_rank, 3);
		CHECK_INT(b->nnodes, 2048);
		break;
	case RDZV_GET:
		CHECK_INT(b->flags, RDZV_GET_WAIT);
		/* FALLTHROUGH */
	case RDZV_SET:
	case RDZV_ADD:
		CHECK_INT(b->keylen, a->keylen);
		CHECK(memcmp(a->key, b->key, a->keylen) == 0);
		if (a->type == RDZV_ADD)
			CHECK(b->num == a->num);
		if (a->type == RDZV_SET)
			CHECK(b->vallen == 128 && memcmp(a->val, b->val, 128) == 0);
		break;
	case RDZV_VALUE:
		CHECK(b->vallen == 128 && memcmp(a->val, b->val, 128) == 0);
		break;
	case RDZV_INT:
		CHECK(b->num == a->num);
		break;
	case RDZV_PING:
	case RDZV_PONG:
		CHECK(b->seq == a->seq);
		break;
	case RDZV_ERROR:
		CHECK_INT(b->code, DT_ERR_AUTH);
		/* FALLTHROUGH */
	case RDZV_ABORT:
		CHECK_INT(b->textlen, a->textlen);
		CHECK(memcmp(a->text, b->text, a->textlen) == 0);
		break;
	}
}

TEST(rdzv_proto_every_type_roundtrips)
{
	struct dt_wbuf	b;
	struct rdzv_msg	m, d;
	size_t		i, n, used;

	dt_wbuf_init(&b);
	for (i = 0; i < sizeof(types); i++) {
		sample(types[i], &m);
		dt_wbuf_reset(&b);
		CHECK_INT(rdzv_msg_encode(&b, &m), 0);
		CHECK_INT(rdzv_msg_parse(b.p, b.len, &d, &used), 0);
		CHECK_INT(used, b.len);
		check_fields(&m, &d);
		CHECK(strcmp(rdzv_msg_name(types[i]), "unknown") != 0);
		/* Every truncation is "need more", never a bad decode. */
		for (n = 0; n < b.len; n++)
			CHECK_INT(rdzv_msg_parse(b.p, n, &d, &used),
			    DT_ERR_AGAIN);
	}
	dt_wbuf_free(&b);
}

TEST(rdzv_proto_pipelined_frames)
{
	struct dt_wbuf	b;
	struct rdzv_msg	m, d;
	size_t		off = 0, used;
	int		k = 0;

	dt_wbuf_init(&b);
	sample(RDZV_AUTH, &m);
	rdzv_msg_encode(&b, &m);
	sample(RDZV_JOIN, &m);
	rdzv_msg_encode(&b, &m);
	sample(RDZV_GET, &m);
	rdzv_msg_encode(&b, &m);
	while (rdzv_msg_parse(b.p + off, b.len - off, &d, &used) == 0) {
		off += used;
		k++;
	}
	CHECK_INT(k, 3);
	CHECK_INT(off, b.len);
	CHECK_INT(d.type, RDZV_GET);
	dt_wbuf_free(&b);
}

/* Encodes m, then changes the payload's length word by delta bytes. */
static int
decode_resized(uint8_t type, int delta)
{
	struct dt_wbuf	b;
	struct rdzv_msg	m, d;
	int		rc;

	dt_wbuf_init(&b);
	sample(type, &m);
	rdzv_msg_encode(&b, &m);
	if (delta > 0)
		dt_wbuf_put(&b, "\0\0\0\0\0\0\0\0", (size_t)delta);
	rc = rdzv_msg_decode(b.p[4], b.p + 5, b.len - 5 + (size_t)(delta < 0 ?
	    delta : 0), &d);
	dt_wbuf_free(&b);
	return rc;
}

TEST(rdzv_proto_truncated_and_trailing_payloads)
{
	size_t	i;

	for (i = 0; i < sizeof(types); i++) {
		CHECK_INT(decode_resized(types[i], 0), 0);
		CHECK_INT(decode_resized(types[i], 1), DT_ERR_PROTO);
		if (types[i] != RDZV_BARRIER && types[i] != RDZV_OK)
			CHECK_INT(decode_resized(types[i], -1), DT_ERR_PROTO);
	}
}

TEST(rdzv_proto_limits)
{
	struct dt_wbuf	 b;
	struct rdzv_msg	 m, d;
	uint8_t		*big, hdr[5] = { 0, 1, 0x10, 0, RDZV_SET };
	uint8_t		 zero[5] = { 0, 0, 0, 0, 0 };
	uint8_t		 unknown[5] = { 0, 0, 0, 1, 0x42 };
	uint8_t		 emptykey[9] = { 0, 0, 0, 5, RDZV_GET, 1, 0, 0, 0 };
	size_t		 used;

	dt_wbuf_init(&b);
	big = calloc(1, RDZV_MAX_VALUE + 1);
	/* The largest SET fits in RDZV_MAX_FRAME exactly. */
	sample(RDZV_SET, &m);
	memset(big, 'k', RDZV_MAX_KEY);
	m.key = big;
	m.keylen = RDZV_MAX_KEY;
	m.val = big;
	m.vallen = RDZV_MAX_VALUE;
	CHECK_INT(rdzv_msg_encode(&b, &m), 0);
	CHECK_INT(b.len, RDZV_MAX_FRAME);
	CHECK_INT(rdzv_msg_parse(b.p, b.len, &d, &used), 0);
	/* One more byte anywhere is refused on both sides. */
	dt_wbuf_reset(&b);
	m.vallen = RDZV_MAX_VALUE + 1;
	CHECK_INT(rdzv_msg_encode(&b, &m), DT_ERR_INVAL);
	CHECK_INT(b.len, 0);
	m.vallen = 1;
	m.keylen = RDZV_MAX_KEY + 1;
	CHECK_INT(rdzv_msg_encode(&b, &m), DT_ERR_INVAL);
	m.keylen = 0;
	CHECK_INT(rdzv_msg_encode(&b, &m), DT_ERR_INVAL);
	m.type = 0x42;
	CHECK_INT(rdzv_msg_encode(&b, &m), DT_ERR_INVAL);
	/* A frame announcing 68 KiB is oversized before its payload arrives. */
	CHECK_INT(rdzv_msg_parse(hdr, sizeof(hdr), &d, &used), DT_ERR_TOOBIG);
	CHECK_INT(rdzv_msg_parse(zero, sizeof(zero), &d, &used), DT_ERR_PROTO);
	CHECK_INT(rdzv_msg_parse(unknown, sizeof(unknown), &d, &used),
	    DT_ERR_PROTO);
	CHECK_INT(rdzv_msg_parse(emptykey, sizeof(emptykey), &d, &used),
	    DT_ERR_PROTO);
	CHECK_STR(rdzv_msg_name(0x42), "unknown");
	free(big);
	dt_wbuf_free(&b);
}

TEST(rdzv_proto_random_bytes_never_crash)
{
	uint8_t		buf[256];
	struct rdzv_msg	d;
	size_t		used;
	int		i, j, rc;

	srand(1);
	for (i = 0; i < 20000; i++) {
		for (j = 0; j < (int)sizeof(buf); j++)
			buf[j] = (uint8_t)rand();
		buf[0] = buf[1] = 0;
		rc = rdzv_msg_parse(buf, (size_t)(rand() % 256), &d, &used);
		CHECK(rc == 0 || rc == DT_ERR_AGAIN || rc == DT_ERR_PROTO ||
		    rc == DT_ERR_TOOBIG);
	}
}
