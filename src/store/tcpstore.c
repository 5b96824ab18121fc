/*
 * tcpstore.c -- serving TCPStore queries: a conn's bytes are decoded into
 * queries (storeproto.c) and each is run against the key-value table (the
 * rendezvous store's hash table, with its limits on keys and bytes). A
 * WAIT on keys not set yet parks the conn (storewait.c) until they are;
 * queries its client sends meanwhile are held, in order, except the
 * CANCEL_WAIT a torch >= 2.0 client sends when its wait times out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/storeint.h"

/* Leftover bytes a conn may hold: one query, or what came during a WAIT. */
#define HOLD_MAX(st)	((st)->lim.max_query)

struct dts_store *
dts_store_new(const struct dts_cfg *cfg, struct dt_err *e)
{
	struct dts_store	*st;

	if (cfg->reply == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "store: no reply callback");
		return NULL;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "store: out of memory");
		return NULL;
	}
	st->cfg = *cfg;
#define DFLT(f, v)	if (st->cfg.f == 0) st->cfg.f = (v)
	DFLT(max_key, DTS_MAX_KEY);
	DFLT(max_value, DTS_MAX_VALUE);
	DFLT(max_nkeys, DTS_MAX_NKEYS);
	DFLT(max_bytes, DTS_MAX_BYTES);
	DFLT(max_keys, DTS_MAX_KEYS);
#undef DFLT
	st->lim.max_key = st->cfg.max_key;
	st->lim.max_value = st->cfg.max_value;
	st->lim.max_nkeys = st->cfg.max_nkeys;
	/* One value and the keys around it (a MULTI_SET's values share it). */
	st->lim.max_query = st->cfg.max_value + 1024 * 1024;
	st->kv = rdzv_store_new(st->cfg.max_keys, st->cfg.max_bytes);
	st->wix = rdzv_store_new((size_t)-1, (size_t)-1);
	if (st->kv == NULL || st->wix == NULL) {
		rdzv_store_free(st->kv);
		rdzv_store_free(st->wix);
		free(st);
		dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "store: out of memory");
		return NULL;
	}
	return st;
}

void
dts_store_free(struct dts_store *st)
{
	if (st == NULL)
		return;
	rdzv_store_free(st->kv);
	rdzv_store_free(st->wix);
	free(st);
}

struct dts_conn *
dts_conn_new(struct dts_store *st, void *cookie)
{
	struct dts_conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->st = st;
	c->cookie = cookie;
	sp_dec_init(&c->dec, &st->lim);
	st->conns++;
	return c;
}

/* Stops serving c: its waits, its bytes and its place on the ready list. */
static void
conn_stop(struct dts_conn *c)
{
	struct dts_conn	**pp;

	wait_drop(c);
	if (c->onready) {
		for (pp = &c->st->ready; *pp != NULL; pp = &(*pp)->rnext)
			if (*pp == c) {
				*pp = c->rnext;
				break;
			}
		c->onready = 0;
	}
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
	c->dead = 1;
}

void
dts_conn_free(struct dts_conn *c)
{
	if (c == NULL)
		return;
	conn_stop(c);
	sp_dec_free(&c->dec);
	c->st->conns--;
	free(c);
}

int
dts_conn_gen(const struct dts_conn *c)
{
	return c->dec.gen;
}

void
dts_store_stats(const struct dts_store *st, struct dts_stats *s)
{
	s->keys = rdzv_store_count(st->kv);
	s->bytes = rdzv_store_bytes(st->kv);
	s->conns = st->conns;
	s->waiting = st->waiting;
	s->queries = st->queries;
}

/* Up to 64 bytes of a key, printable, for messages. */
static const char *
key_text(struct sp_str k, char *buf, size_t size)
{
	size_t	i, o = 0;

	for (i = 0; i < k.len && i < 64 && o + 5 < size; i++)
		o += snprintf(buf + o, size - o, k.p[i] >= 0x20 &&
		    k.p[i] < 0x7f ? "%c" : "\\x%02x", k.p[i]);
	snprintf(buf + o, size - o, "%s", k.len > 64 ? "..." : "");
	return buf;
}

/* The reply callback for conn c. */
static void
rep(struct dts_conn *c, const void *buf, size_t len)
{
	if (c->st->cfg.reply(c->cookie, buf, len) != 0)
		c->paused = 1;
}

/* Replies a byte vector: its length, then its bytes. */
static void
rep_vec(struct dts_conn *c, const void *p, size_t len)
{
	uint8_t	b[8];

	rep(c, b, sp_put_len(b, len));
	if (len > 0)
		rep(c, p, len);
}

/* Replies an int64 (ADD, GETNUMKEYS, DELETE_KEY). */
static void
rep_i64(struct dts_conn *c, int64_t v)
{
	uint8_t	b[8];

	rep(c, b, sp_put_i64(b, v));
}

/* Replies one byte (WAIT, CHECK, CANCEL_WAIT). */
static void
rep_u8(struct dts_conn *c, uint8_t v)
{
	rep(c, &v, 1);
}

/* Explains why the table refused a write to key k. */
static int
kv_error(struct dts_conn *c, int rc, struct sp_str k, struct dt_err *e)
{
	char	kt[300];

	key_text(k, kt, sizeof(kt));
	if (rc == DT_ERR_RANGE)
		return dt_errf(e, NULL, 0, 0, DT_ERR_RANGE, "key \"%s\": the "
		    "store is full (%zu keys, %zu bytes; at most %zu, %zu) or "
		    "the counter overflows", kt, rdzv_store_count(c->st->kv),
		    rdzv_store_bytes(c->st->kv), c->st->cfg.max_keys,
		    c->st->cfg.max_bytes);
	if (rc == DT_ERR_PARSE)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE, "ADD to key "
		    "\"%s\", whose value is not a decimal integer", kt);
	return dt_errf(e, NULL, 0, 0, rc, "key \"%s\": out of memory", kt);
}

/* Sets key k to v and wakes its waiters. */
static int
kv_set(struct dts_conn *c, struct sp_str k, const uint8_t *v, size_t len,
    struct dt_err *e)
{
	struct rdzv_item	*it;
	int			 rc;

	if ((rc = rdzv_store_set(c->st->kv, k.p, k.len, v, len, &it)) != 0)
		return kv_error(c, rc, k, e);
	wait_wake(c->st, k.p, k.len);
	return 0;
}

/* APPEND: the value grows by q->val (a new key starts empty). */
static int
op_append(struct dts_conn *c, const struct sp_query *q, struct dt_err *e)
{
	struct rdzv_item	*it = rdzv_store_find(c->st->kv, q->key.p,
				    q->key.len);
	size_t			 old = it == NULL ? 0 : it->vallen;
	uint8_t			*v;
	int			 rc;

	if (old + q->val.len > c->st->cfg.max_value) {
		char kt[300];

		return dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG, "APPEND makes key "
		    "\"%s\" %zu bytes (at most %zu)", key_text(q->key, kt,
		    sizeof(kt)), old + q->val.len, c->st->cfg.max_value);
	}
	if ((v = malloc(old + q->val.len + 1)) == NULL)
		return kv_error(c, DT_ERR_NOMEM, q->key, e);
	if (old > 0)
		memcpy(v, it->val, old);
	if (q->val.len > 0)
		memcpy(v + old, q->val.p, q->val.len);
	rc = kv_set(c, q->key, v, old + q->val.len, e);
	free(v);
	return rc;
}

/*
 * COMPARE_SET as torch's servers do it: a missing key is set only when
 * the expected value is empty; the reply is the value after (for a
 * missing key left alone, the expected value, as torch "lies").
 */
static int
op_compare_set(struct dts_conn *c, const struct sp_query *q,
    struct dt_err *e)
{
	struct rdzv_item	*it = rdzv_store_find(c->st->kv, q->key.p,
				    q->key.len);
	int			 rc;

	if (it == NULL && q->val.len > 0) {
		rep_vec(c, q->val.p, q->val.len);
		return 0;
	}
	if (it == NULL || (it->vallen == q->val.len &&
	    memcmp(it->val, q->val.p, q->val.len) == 0)) {
		if ((rc = kv_set(c, q->key, q->val2.p, q->val2.len, e)) != 0)
			return rc;
		it = rdzv_store_find(c->st->kv, q->key.p, q->key.len);
	}
	rep_vec(c, it->val, it->vallen);
	return 0;
}

/* WAIT: STOP_WAITING now if every key is set, else once they are. */
static int
op_wait(struct dts_conn *c, const struct sp_query *q, struct dt_err *e)
{
	size_t	i;

	for (i = 0; i < q->nkeys; i++) {
		if (rdzv_store_find(c->st->kv, q->keys[i].p,
		    q->keys[i].len) != NULL)
			continue;
		if (wait_add(c, q->keys[i].p, q->keys[i].len) != 0) {
			wait_drop(c);
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of "
			    "memory for a WAIT on %zu keys", q->nkeys);
		}
		c->wait_left++;
	}
	if (c->wait_left == 0)
		rep_u8(c, SP_STOP_WAITING);
	else {
		c->waiting = 1;
		c->st->waiting++;
	}
	return 0;
}

/* GET and MULTI_GET: a missing key reads as empty, as in torch 2.x. */
static void
op_get(struct dts_conn *c, struct sp_str k)
{
	struct rdzv_item	*it = rdzv_store_find(c->st->kv, k.p, k.len);

	if (it == NULL)
		rep_vec(c, NULL, 0);
	else
		rep_vec(c, it->val, it->vallen);
}

/* The queries no store of ours serves, and why, for the client's log. */
static int
op_unsupported(struct dts_conn *c, const struct sp_query *q,
    struct dt_err *e)
{
	return dt_errf(e, NULL, 0, 0, DT_ERR_UNSUPPORTED, "%s (opcode %u of "
	    "a %s client) is not served by dtrun's store; see doc/store.md",
	    sp_op_name(q->op), q->wire, c->dec.gen == SP_GEN_VALIDATED ?
	    "torch >= 2.2" : "torch <= 2.1");
}

/* Runs one query. Returns 0 or a negative DT_ERR_* with *e filled. */
static int
conn_exec(struct dts_conn *c, const struct sp_query *q, struct dt_err *e)
{
	struct rdzv_item	*it;
	struct sp_str		 k = q->key;
	uint8_t			 b[4];
	int64_t			 v;
	size_t			 i;
	int			 rc = 0;

	switch (q->op) {
	case SP_VALIDATE:
		break;
	case SP_PING:
		rep(c, b, sp_put_u32(b, q->u32));
		break;
	case SP_SET:
		rc = kv_set(c, k, q->val.p, q->val.len, e);
		break;
	case SP_APPEND:
		rc = op_append(c, q, e);
		break;
	case SP_COMPARE_SET:
		rc = op_compare_set(c, q, e);
		break;
	case SP_GET:
		op_get(c, k);
		break;
	case SP_ADD:
		if ((rc = rdzv_store_add(c->st->kv, k.p, k.len, q->num, &v,
		    &it)) != 0)
			return kv_error(c, rc, k, e);
		wait_wake(c->st, k.p, k.len);
		rep_i64(c, v);
		break;
	case SP_CHECK:
		for (i = 0; i < q->nkeys; i++)
			if (rdzv_store_find(c->st->kv, q->keys[i].p,
			    q->keys[i].len) == NULL)
				break;
		rep_u8(c, i == q->nkeys ? SP_READY : SP_NOT_READY);
		break;
	case SP_WAIT:
		rc = op_wait(c, q, e);
		break;
	case SP_GETNUMKEYS:
		rep_i64(c, (int64_t)rdzv_store_count(c->st->kv));
		break;
	case SP_DELETE_KEY:
		it = rdzv_store_find(c->st->kv, k.p, k.len);
		if (it != NULL)
			rdzv_store_del(c->st->kv, k.p, k.len);
		rep_i64(c, it != NULL);
		break;
	case SP_MULTI_GET:
		for (i = 0; i < q->nkeys; i++)
			op_get(c, q->keys[i]);
		break;
	case SP_MULTI_SET:
		for (i = 0; i < q->nkeys && rc == 0; i++)
			rc = kv_set(c, q->keys[i], q->vals[i].p,
			    q->vals[i].len, e);
		break;
	case SP_CANCEL_WAIT:
		wait_drop(c);
		rep_u8(c, SP_WAIT_CANCELED);
		break;
	default:
		rc = op_unsupported(c, q, e);
		break;
	}
	c->st->queries++;
	return rc;
}

/*
 * Serves the whole queries at the start of p[0..len). Returns the bytes
 * served, or a negative DT_ERR_* with *e filled. A waiting conn serves
 * only CANCEL_WAIT; the rest waits, unread, for the WAIT to end. A
 * paused one serves nothing.
 */
static long
conn_run(struct dts_conn *c, const uint8_t *p, size_t len, struct dt_err *e)
{
	struct sp_query	q;
	size_t		off = 0;
	long		n;
	int		rc;

	if (len == 0)		/* an empty held buffer may be NULL */
		return 0;
	while (!c->dead && !c->paused) {
		n = sp_decode(&c->dec, p + off, len - off, &q, e);
		if (n == DT_ERR_AGAIN)
			break;
		if (n < 0)
			return n;
		if (c->waiting && q.op != SP_CANCEL_WAIT)
			break;
		if ((rc = conn_exec(c, &q, e)) != 0)
			return rc;
		off += (size_t)n;
	}
	return (long)off;
}

/* Keeps p[0..len) after c's bytes. Returns 0 or a negative DT_ERR_*. */
static int
conn_keep(struct dts_conn *c, const uint8_t *p, size_t len, struct dt_err *e)
{
	size_t	 cap;
	uint8_t	*nb;

	if (c->len + len > 2 * HOLD_MAX(c->st))
		return dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG, "the client sent "
		    "%zu bytes ahead of what it waits for", c->len + len);
	if (c->len + len > c->cap) {
		cap = c->cap ? c->cap : 256;
		while (cap < c->len + len)
			cap *= 2;
		if ((nb = realloc(c->buf, cap)) == NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of "
			    "memory for %zu bytes of a query", c->len + len);
		c->buf = nb;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, p, len);
	c->len += len;
	return 0;
}

/* Drops the first n bytes of c's; an idle conn keeps no big buffer. */
static void
conn_consume(struct dts_conn *c, size_t n)
{
	if (n == 0)
		return;
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
	if (c->len == 0 && c->cap > 65536) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
}

/* Serves what c holds. Returns 0 or a negative DT_ERR_* with *e filled. */
static int
conn_serve_held(struct dts_conn *c, struct dt_err *e)
{
	long	n = conn_run(c, c->buf, c->len, e);

	if (n < 0)
		return (int)n;
	conn_consume(c, (size_t)n);
	if (c->len > HOLD_MAX(c->st))
		return dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG, "the client sent "
		    "%zu bytes ahead of what it waits for", c->len);
	return 0;
}

/* Serves the conns woken with held bytes; a failure is theirs, by callback. */
static void
store_run_ready(struct dts_store *st)
{
	struct dts_conn	*c;
	struct dt_err	 e;
	int		 rc;

	while ((c = st->ready) != NULL) {
		st->ready = c->rnext;
		c->onready = 0;
		if (c->dead || c->waiting || c->paused)
			continue;
		dt_err_clear(&e);
		if ((rc = conn_serve_held(c, &e)) != 0) {
			conn_stop(c);
			if (st->cfg.fail != NULL)
				st->cfg.fail(c->cookie, rc, e.msg);
		}
	}
}

int
dts_conn_feed(struct dts_conn *c, const void *buf, size_t len,
    struct dt_err *e)
{
	long	n;
	int	rc = 0;

	if (c->dead)
		return dt_errf(e, NULL, 0, 0, DT_ERR_CLOSED, "the connection "
		    "was closed for an earlier error");
	if (c->len == 0) {
		/* The common case: serve straight from the caller's bytes. */
		n = conn_run(c, buf, len, e);
		if (n < 0)
			rc = (int)n;
		else if ((size_t)n < len)
			rc = conn_keep(c, (const uint8_t *)buf + n, len - n, e);
		if (rc == 0 && c->len > HOLD_MAX(c->st))
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_TOOBIG, "the client "
			    "sent %zu bytes ahead of what it waits for", c->len);
	} else if ((rc = conn_keep(c, buf, len, e)) == 0)
		rc = conn_serve_held(c, e);
	if (rc != 0)
		conn_stop(c);
	store_run_ready(c->st);
	return rc;
}

int
dts_conn_paused(const struct dts_conn *c)
{
	return c->paused;
}

int
dts_conn_resume(struct dts_conn *c, struct dt_err *e)
{
	int	rc;

	if (c->dead)
		return dt_errf(e, NULL, 0, 0, DT_ERR_CLOSED, "the connection "
		    "was closed for an earlier error");
	c->paused = 0;
	if ((rc = conn_serve_held(c, e)) != 0)
		conn_stop(c);
	store_run_ready(c->st);
	return rc;
}
