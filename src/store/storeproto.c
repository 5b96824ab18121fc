/*
 * storeproto.c -- decoding TCPStore queries as they arrive. A query is
 * parsed from its first byte each time more bytes come (no state but the
 * generation between calls), so a split at any byte is the same as none;
 * each length is checked against the limits as soon as it is read, so an
 * oversized value is refused before it is received.
 */
#include <stdlib.h>
#include <string.h>

#include "store/storeproto.h"

/* The legacy table (torch <= 2.1); the validated one differs below 8. */
static const enum sp_op legacy_ops[] = {
	SP_SET, SP_COMPARE_SET, SP_GET, SP_ADD, SP_CHECK, SP_WAIT,
	SP_GETNUMKEYS, SP_WATCH_KEY, SP_DELETE_KEY, SP_APPEND, SP_MULTI_GET,
	SP_MULTI_SET, SP_CANCEL_WAIT,
};
static const enum sp_op validated_ops[] = {
	SP_VALIDATE, SP_SET, SP_COMPARE_SET, SP_GET, SP_ADD, SP_CHECK,
	SP_WAIT, SP_GETNUMKEYS, SP_DELETE_KEY, SP_APPEND, SP_MULTI_GET,
	SP_MULTI_SET, SP_CANCEL_WAIT, SP_PING, SP_QUEUE_PUSH, SP_QUEUE_POP,
	SP_QUEUE_LEN, SP_LIST_KEYS, SP_BARRIER,
};
#define NLEGACY		(sizeof(legacy_ops) / sizeof(legacy_ops[0]))
#define NVALIDATED	(sizeof(validated_ops) / sizeof(validated_ops[0]))

static const char *const op_names[SP_NOPS] = {
	"VALIDATE", "SET", "COMPARE_SET", "GET", "ADD", "CHECK", "WAIT",
	"GETNUMKEYS", "WATCH_KEY", "DELETE_KEY", "APPEND", "MULTI_GET",
	"MULTI_SET", "CANCEL_WAIT", "PING", "QUEUE_PUSH", "QUEUE_POP",
	"QUEUE_LEN", "LIST_KEYS", "BARRIER",
};

/* A read position in the bytes at hand; rc is sticky. */
struct cur {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
	int		 rc;
	struct sp_dec	*d;
	struct dt_err	*e;
};

const char *
sp_op_name(enum sp_op op)
{
	return (unsigned)op < SP_NOPS ? op_names[op] : "?";
}

int
sp_wire_op(enum sp_gen g, enum sp_op op)
{
	const enum sp_op	*t = g == SP_GEN_VALIDATED ? validated_ops : legacy_ops;
	size_t			 i, n = g == SP_GEN_VALIDATED ? NVALIDATED : NLEGACY;

	for (i = 0; i < n; i++)
		if (t[i] == op)
			return (int)i;
	return -1;
}

void
sp_dec_init(struct sp_dec *d, const struct sp_limits *lim)
{
	memset(d, 0, sizeof(*d));
	d->lim = *lim;
}

void
sp_dec_free(struct sp_dec *d)
{
	free(d->arr);
	d->arr = NULL;
	d->arrcap = 0;
}

/* Little-endian, whatever this machine is: torch's clients are. */
static uint64_t
get_le(const uint8_t *p, int n)
{
	uint64_t	v = 0;

	while (n-- > 0)
		v = (v << 8) | p[n];
	return v;
}

/* Takes n bytes; AGAIN if they have not all arrived. */
static const uint8_t *
cur_take(struct cur *c, size_t n)
{
	const uint8_t	*p;

	if (c->rc != 0)
		return NULL;
	if (c->off + n > c->d->lim.max_query || c->off + n < c->off) {
		c->rc = dt_errf(c->e, NULL, 0, 0, DT_ERR_TOOBIG, "a query of "
		    "more than %zu bytes", c->d->lim.max_query);
		return NULL;
	}
	if (c->len - c->off < n) {
		c->rc = DT_ERR_AGAIN;
		return NULL;
	}
	p = c->p + c->off;
	c->off += n;
	return p;
}

/* A u64 (a count or a length). */
static uint64_t
cur_u64(struct cur *c)
{
	const uint8_t	*p = cur_take(c, 8);

	return p == NULL ? 0 : get_le(p, 8);
}

/* A length-prefixed string of at most max bytes; what names it for errors. */
static struct sp_str
cur_str(struct cur *c, size_t max, const char *what)
{
	struct sp_str	s = { NULL, 0 };
	uint64_t	n = cur_u64(c);

	if (c->rc != 0)
		return s;
	if (n > max) {
		c->rc = dt_errf(c->e, NULL, 0, 0, DT_ERR_TOOBIG, "a %s of %llu "
		    "bytes (at most %zu)", what, (unsigned long long)n, max);
		return s;
	}
	s.len = n;
	s.p = cur_take(c, n);
	return s;
}

/* Makes room for n strings in the decoder's array. */
static int
dec_room(struct sp_dec *d, size_t n, struct dt_err *e)
{
	struct sp_str	*a;

	if (n <= d->arrcap)
		return 0;
	if ((a = realloc(d->arr, n * sizeof(*a))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory "
		    "for a list of %zu keys", n);
	d->arr = a;
	d->arrcap = n;
	return 0;
}

/*
 * A key list (CHECK, WAIT, MULTI_*; withvals: MULTI_SET's pairs). The
 * first pass only checks that all of it is here, so a count claimed by
 * bytes not yet sent costs no memory; the second fills the array.
 */
static void
cur_keys(struct cur *c, struct sp_query *q, int withvals)
{
	size_t	i, n, start;
	int	pass;

	n = cur_u64(c);
	if (c->rc == 0 && n > c->d->lim.max_nkeys)
		c->rc = dt_errf(c->e, NULL, 0, 0, DT_ERR_TOOBIG, "%zu keys in "
		    "one query (at most %zu)", n, c->d->lim.max_nkeys);
	start = c->off;
	for (pass = 0; pass < 2 && c->rc == 0; pass++) {
		if (pass == 1) {
			if ((c->rc = dec_room(c->d, 2 * n, c->e)) != 0)
				return;
			c->off = start;
			q->keys = c->d->arr;	/* NULL for none */
			q->vals = n > 0 ? c->d->arr + n : NULL;
		}
		for (i = 0; i < n && c->rc == 0; i++) {
			struct sp_str k = cur_str(c, c->d->lim.max_key, "key");
			struct sp_str v = { NULL, 0 };

			if (withvals)
				v = cur_str(c, c->d->lim.max_value, "value");
			if (pass == 1) {
				q->keys[i] = k;
				q->vals[i] = v;
			}
		}
	}
	q->nkeys = n;
}

/* The fields of op, after its opcode. */
static void
cur_fields(struct cur *c, struct sp_query *q)
{
	const uint8_t	*p;
	size_t		 mk = c->d->lim.max_key, mv = c->d->lim.max_value;

	switch (q->op) {
	case SP_VALIDATE:
	case SP_PING:
		if ((p = cur_take(c, 4)) != NULL)
			q->u32 = (uint32_t)get_le(p, 4);
		break;
	case SP_SET:
	case SP_APPEND:
	case SP_QUEUE_PUSH:
		q->key = cur_str(c, mk, "key");
		q->val = cur_str(c, mv, "value");
		break;
	case SP_COMPARE_SET:
		q->key = cur_str(c, mk, "key");
		q->val = cur_str(c, mv, "value");
		q->val2 = cur_str(c, mv, "value");
		break;
	case SP_GET:
	case SP_WATCH_KEY:
	case SP_DELETE_KEY:
	case SP_QUEUE_POP:
	case SP_QUEUE_LEN:
		q->key = cur_str(c, mk, "key");
		break;
	case SP_ADD:
	case SP_BARRIER:
		q->key = cur_str(c, mk, "key");
		if ((p = cur_take(c, 8)) != NULL)
			q->num = (int64_t)get_le(p, 8);
		break;
	case SP_CHECK:
	case SP_WAIT:
	case SP_MULTI_GET:
		cur_keys(c, q, 0);
		break;
	case SP_MULTI_SET:
		cur_keys(c, q, 1);
		break;
	case SP_GETNUMKEYS:
	case SP_CANCEL_WAIT:
	case SP_LIST_KEYS:
	case SP_NOPS:
		break;
	}
}

/* The generation of a new connection, from its first bytes. */
static int
dec_generation(struct sp_dec *d, const uint8_t *buf, size_t len)
{
	if (len < 1)
		return DT_ERR_AGAIN;
	/* A legacy SET is 17 bytes at least, so waiting for 5 is safe. */
	if (buf[0] == 0 && len < 5)
		return DT_ERR_AGAIN;
	if (buf[0] == 0 && get_le(buf + 1, 4) == SP_MAGIC)
		d->gen = SP_GEN_VALIDATED;
	else
		d->gen = SP_GEN_LEGACY;
	return 0;
}

long
sp_decode(struct sp_dec *d, const uint8_t *buf, size_t len,
    struct sp_query *q, struct dt_err *e)
{
	struct cur	c = { buf, len, 1, 0, d, e };
	int		rc;

	if (d->gen == SP_GEN_UNKNOWN &&
	    (rc = dec_generation(d, buf, len)) != 0)
		return rc;
	if (len < 1)
		return DT_ERR_AGAIN;
	memset(q, 0, sizeof(*q));
	q->wire = buf[0];
	if (d->gen == SP_GEN_VALIDATED && buf[0] < NVALIDATED)
		q->op = validated_ops[buf[0]];
	else if (d->gen == SP_GEN_LEGACY && buf[0] < NLEGACY)
		q->op = legacy_ops[buf[0]];
	else
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "opcode %u is no "
		    "TCPStore query of a %s client", buf[0],
		    d->gen == SP_GEN_VALIDATED ? "torch >= 2.2" : "legacy");
	cur_fields(&c, q);
	if (c.rc != 0)
		return c.rc;
	if (q->op == SP_VALIDATE && q->u32 != SP_MAGIC)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "VALIDATE with "
		    "magic 0x%08x, not 0x%08x", q->u32, SP_MAGIC);
	return (long)c.off;
}

/* n little-endian bytes of v. */
static size_t
put_le(uint8_t *out, uint64_t v, int n)
{
	int	i;

	for (i = 0; i < n; i++, v >>= 8)
		out[i] = (uint8_t)v;
	return (size_t)n;
}

size_t
sp_put_u32(uint8_t *out, uint32_t v)
{
	return put_le(out, v, 4);
}

size_t
sp_put_i64(uint8_t *out, int64_t v)
{
	return put_le(out, (uint64_t)v, 8);
}

size_t
sp_put_len(uint8_t *out, uint64_t len)
{
	return put_le(out, len, 8);
}
