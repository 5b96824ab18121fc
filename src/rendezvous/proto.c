/*
 * proto.c -- encoding and decoding of rendezvous messages; no I/O, fuzzed.
 *
 * Each message type is a list of fields in a table, so the encoder and the
 * decoder walk the same description and cannot disagree.
 */
#include <string.h>

#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"

/* The kinds of field a message is made of. */
enum field {
	F_END,
	F_MAGIC,	/* u32 */
	F_VERSION,	/* u16 */
	F_NONCE,	/* RDZV_NONCE_LEN raw bytes */
	F_MAC,		/* RDZV_MAC_LEN raw bytes */
	F_RANK,		/* i32 */
	F_LOCAL_RANK,	/* i32 */
	F_WORLD,	/* i32 */
	F_LOCAL_WORLD,	/* i32 */
	F_NODE_RANK,	/* i32 */
	F_NNODES,	/* i32 */
	F_FLAGS,	/* u8 */
	F_CODE,		/* i32 */
	F_NUM,		/* i64 */
	F_SEQ,		/* u64 */
	F_HOST,		/* u32 length + up to RDZV_MAX_HOST bytes */
	F_KEY,		/* u32 length + 1 to RDZV_MAX_KEY bytes */
	F_VAL,		/* u32 length + up to RDZV_MAX_VALUE bytes */
	F_TEXT,		/* u32 length + up to RDZV_MAX_TEXT bytes */
};

#define MAXFIELDS	7

static const struct msgdef {
	uint8_t		 type;
	const char	*name;
	enum field	 f[MAXFIELDS];
} msgdefs[] = {
	{ RDZV_AUTH, "AUTH", { F_MAGIC, F_VERSION, F_NONCE, F_MAC } },
	{ RDZV_JOIN, "JOIN", { F_RANK, F_LOCAL_RANK, F_HOST } },
	{ RDZV_SET, "SET", { F_KEY, F_VAL } },
	{ RDZV_GET, "GET", { F_FLAGS, F_KEY } },
	{ RDZV_ADD, "ADD", { F_KEY, F_NUM } },
	{ RDZV_BARRIER, "BARRIER", { F_END } },
	{ RDZV_PING, "PING", { F_SEQ } },
	{ RDZV_CHALLENGE, "CHALLENGE", { F_MAGIC, F_VERSION, F_NONCE } },
	{ RDZV_AUTH_OK, "AUTH_OK", { F_MAC } },
	{ RDZV_JOIN_OK, "JOIN_OK", { F_RANK, F_WORLD, F_LOCAL_RANK,
	    F_LOCAL_WORLD, F_NODE_RANK, F_NNODES } },
	{ RDZV_VALUE, "VALUE", { F_VAL } },
	{ RDZV_OK, "OK", { F_END } },
	{ RDZV_INT, "INT", { F_NUM } },
	{ RDZV_PONG, "PONG", { F_SEQ } },
	{ RDZV_ERROR, "ERROR", { F_CODE, F_TEXT } },
	{ RDZV_ABORT, "ABORT", { F_TEXT } },
};

/* The description of a message type, or NULL. */
static const struct msgdef *
msgdef_find(uint8_t type)
{
	size_t	i;

	for (i = 0; i < sizeof(msgdefs) / sizeof(msgdefs[0]); i++)
		if (msgdefs[i].type == type)
			return &msgdefs[i];
	return NULL;
}

const char *
rdzv_msg_name(uint8_t type)
{
	const struct msgdef	*d = msgdef_find(type);

	return d == NULL ? "unknown" : d->name;
}

/* The address of an i32 field in m. */
static int32_t *
field_i32(struct rdzv_msg *m, enum field f)
{
	switch (f) {
	case F_RANK:
		return &m->rank;
	case F_LOCAL_RANK:
		return &m->local_rank;
	case F_WORLD:
		return &m->world;
	case F_LOCAL_WORLD:
		return &m->local_world;
	case F_NODE_RANK:
		return &m->node_rank;
	case F_NNODES:
		return &m->nnodes;
	default:
		return &m->code;
	}
}

/* A byte-string field's pointer, length and limits in m. */
static void
field_bytes(struct rdzv_msg *m, enum field f, const uint8_t ***p,
    size_t **len, size_t *min, size_t *max)
{
	*min = 0;
	switch (f) {
	case F_HOST:
		*p = &m->host;
		*len = &m->hostlen;
		*max = RDZV_MAX_HOST;
		break;
	case F_KEY:
		*p = &m->key;
		*len = &m->keylen;
		*min = 1;
		*max = RDZV_MAX_KEY;
		break;
	case F_VAL:
		*p = &m->val;
		*len = &m->vallen;
		*max = RDZV_MAX_VALUE;
		break;
	default:
		*p = &m->text;
		*len = &m->textlen;
		*max = RDZV_MAX_TEXT;
		break;
	}
}

int
rdzv_msg_decode(uint8_t type, const uint8_t *payload, size_t plen,
    struct rdzv_msg *m)
{
	const struct msgdef	 *d;
	const uint8_t		**bp;
	const enum field	 *f;
	struct dt_rbuf		  r;
	size_t			 *blen, min, max;

	memset(m, 0, sizeof(*m));
	m->type = type;
	if ((d = msgdef_find(type)) == NULL)
		return DT_ERR_PROTO;
	dt_rbuf_init(&r, payload, plen);
	for (f = d->f; f < d->f + MAXFIELDS && *f != F_END; f++) {
		switch (*f) {
		case F_MAGIC:
			m->magic = dt_rbuf_u32(&r);
			break;
		case F_VERSION:
			m->version = dt_rbuf_u16(&r);
			break;
		case F_NONCE:
			dt_rbuf_get(&r, m->nonce, sizeof(m->nonce));
			break;
		case F_MAC:
			dt_rbuf_get(&r, m->mac, sizeof(m->mac));
			break;
		case F_FLAGS:
			m->flags = dt_rbuf_u8(&r);
			break;
		case F_NUM:
			m->num = (int64_t)dt_rbuf_u64(&r);
			break;
		case F_SEQ:
			m->seq = dt_rbuf_u64(&r);
			break;
		case F_HOST:
		case F_KEY:
		case F_VAL:
		case F_TEXT:
			field_bytes(m, *f, &bp, &blen, &min, &max);
			*bp = dt_rbuf_blob(&r, blen, max);
			if (*blen < min)
				return DT_ERR_PROTO;
			break;
		default:
			*field_i32(m, *f) = (int32_t)dt_rbuf_u32(&r);
			break;
		}
	}
	return dt_rbuf_end(&r);
}

int
rdzv_msg_parse(const uint8_t *p, size_t n, struct rdzv_msg *m, size_t *used)
{
	const uint8_t	*pl;
	size_t		 plen;
	uint8_t		 type;
	int		 rc;

	rc = dt_frame_parse(p, n, RDZV_MAX_FRAME, &type, &pl, &plen, used);
	if (rc != 0)
		return rc;
	return rdzv_msg_decode(type, pl, plen, m);
}

int
rdzv_msg_encode(struct dt_wbuf *b, const struct rdzv_msg *m)
{
	const struct msgdef	 *d;
	struct rdzv_msg		  c = *m;
	const uint8_t		**bp;
	const enum field	 *f;
	size_t			 *blen, min, max, start;
	int			  rc;

	if ((d = msgdef_find(m->type)) == NULL)
		return DT_ERR_INVAL;
	for (f = d->f; f < d->f + MAXFIELDS && *f != F_END; f++) {
		if (*f < F_HOST)
			continue;
		field_bytes(&c, *f, &bp, &blen, &min, &max);
		if (*blen < min || *blen > max || (*bp == NULL && *blen > 0))
			return DT_ERR_INVAL;
	}
	start = dt_frame_begin(b, m->type);
	for (f = d->f; f < d->f + MAXFIELDS && *f != F_END; f++) {
		switch (*f) {
		case F_MAGIC:
			dt_wbuf_u32(b, m->magic);
			break;
		case F_VERSION:
			dt_wbuf_u16(b, m->version);
			break;
		case F_NONCE:
			dt_wbuf_put(b, m->nonce, sizeof(m->nonce));
			break;
		case F_MAC:
			dt_wbuf_put(b, m->mac, sizeof(m->mac));
			break;
		case F_FLAGS:
			dt_wbuf_u8(b, m->flags);
			break;
		case F_NUM:
			dt_wbuf_u64(b, (uint64_t)m->num);
			break;
		case F_SEQ:
			dt_wbuf_u64(b, m->seq);
			break;
		case F_HOST:
		case F_KEY:
		case F_VAL:
		case F_TEXT:
			field_bytes(&c, *f, &bp, &blen, &min, &max);
			dt_wbuf_blob(b, *bp, *blen);
			break;
		default:
			dt_wbuf_u32(b, (uint32_t)*field_i32(&c, *f));
			break;
		}
	}
	if ((rc = dt_frame_end(b, start, RDZV_MAX_FRAME)) != 0)
		return rc == DT_ERR_TOOBIG ? DT_ERR_INVAL : rc;
	return 0;
}
