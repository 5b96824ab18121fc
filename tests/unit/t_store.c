/*
 * t_store.c -- the store on recorded torch 1.13 conversations (its replies
 * must be what torch's own server sent, split at every byte), on a
 * conversation of torch >= 2.2's generation, on WAIT and its wakeups, and
 * on every limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/tcpstore.h"
#include "store/storeproto.h"
#include "t_store.h"
#include "test.h"

int
ts_reply(void *cookie, const void *buf, size_t len)
{
	struct ts_out	*o = cookie;

	if (o->len + len > o->cap) {
		o->cap = (o->len + len) * 2;
		o->p = realloc(o->p, o->cap);
	}
	memcpy(o->p + o->len, buf, len);
	o->len += len;
	return o->pause;
}

void
ts_fail(void *cookie, int code, const char *msg)
{
	struct ts_out	*o = cookie;

	o->failed = code;
}

/* A store with the test callbacks and value limit maxval (0: default). */
static struct dts_store *
new_store(size_t maxval, size_t maxbytes)
{
	struct dts_cfg	cfg;
	struct dt_err	e;

	memset(&cfg, 0, sizeof(cfg));
	cfg.max_value = maxval;
	cfg.max_bytes = maxbytes;
	cfg.reply = ts_reply;
	cfg.fail = ts_fail;
	return dts_store_new(&cfg, &e);
}

/* One client's recorded queries, split at every byte: torch's replies. */
TEST(store_replies_as_torch_113_split_every_byte)
{
	struct dts_store	*st;
	struct dts_conn		*c;
	struct ts_out		 o;
	struct dt_err		 e;
	size_t			 n, rn, cut;
	uint8_t			*p, *r;

	p = ts_load("t113-ops.c2s", &n);
	r = ts_load("t113-ops.s2c", &rn);
	CHECK(p != NULL && r != NULL);
	if (p == NULL || r == NULL)
		return;
	for (cut = 0; cut < n; cut++) {
		memset(&o, 0, sizeof(o));
		st = new_store(0, 0);
		c = dts_conn_new(st, &o);
		CHECK_INT(dts_conn_feed(c, p, cut, &e), 0);
		CHECK_INT(dts_conn_feed(c, p + cut, n - cut, &e), 0);
		if (o.len != rn || memcmp(o.p, r, rn) != 0) {
			t_fail(__FILE__, __LINE__, "split at %zu: %zu reply "
			    "bytes, want %zu as torch sent", cut, o.len, rn);
			cut = n;
		}
		dts_conn_free(c);
		dts_store_free(st);
		free(o.p);
	}
	free(p);
	free(r);
}

/*
 * Four ranks' init_process_group (gloo, PrefixStore), fed in turns of
 * step bytes: each gets as many reply bytes as torch sent it, no one is
 * left waiting, and the keys are torch's.
 */
static void
replay_init(size_t step)
{
	struct dts_store	*st = new_store(0, 0);
	struct dts_conn		*c[4];
	struct ts_out		 o[4];
	struct dts_stats	 s;
	struct dt_err		 e;
	uint8_t			*p[4];
	size_t			 n[4], rn[4], off[4] = { 0 }, i, left;
	char			 name[64];

	for (i = 0; i < 4; i++) {
		memset(&o[i], 0, sizeof(o[i]));
		c[i] = dts_conn_new(st, &o[i]);
		snprintf(name, sizeof(name), "t113-init-%zu.c2s", i);
		p[i] = ts_load(name, &n[i]);
		snprintf(name, sizeof(name), "t113-init-%zu.s2c", i);
		free(ts_load(name, &rn[i]));
	}
	do {
		for (left = 0, i = 0; i < 4; i++) {
			size_t k = n[i] - off[i] < step ? n[i] - off[i] : step;

			CHECK_INT(dts_conn_feed(c[i], p[i] + off[i], k, &e), 0);
			off[i] += k;
			left += n[i] - off[i];
		}
	} while (left > 0);
	dts_store_stats(st, &s);
	CHECK_INT(s.waiting, 0);
	CHECK_INT(s.keys, 11);
	for (i = 0; i < 4; i++) {
		if (o[i].len != rn[i])
			t_fail(__FILE__, __LINE__, "step %zu: conn %zu got %zu "
			    "reply bytes, torch sent %zu", step, i, o[i].len,
			    rn[i]);
		dts_conn_free(c[i]);
		free(p[i]);
		free(o[i].p);
	}
	dts_store_free(st);
}

TEST(store_four_ranks_init_recorded)
{
	replay_init(1);
	replay_init(7);
	replay_init(100000);
}

/* A torch >= 2.2 conversation, every query, split at every byte. */
TEST(store_validated_generation_every_query)
{
	struct ts_q		 q = { .n = 0 }, w = { .n = 0 };
	struct dts_store	*st;
	struct dts_conn		*c;
	struct ts_out		 o;
	struct dt_err		 e;
	size_t			 cut;

	ts_u8(&q, 0); ts_u32(&q, SP_MAGIC);		/* VALIDATE */
	ts_u8(&q, 13); ts_u32(&q, 4242);		/* PING */
	ts_u8(&q, 1); ts_str(&q, "k"); ts_str(&q, "v");	/* SET */
	ts_u8(&q, 9); ts_str(&q, "k"); ts_str(&q, "w");	/* APPEND */
	ts_u8(&q, 3); ts_str(&q, "k");			/* GET */
	ts_u8(&q, 4); ts_str(&q, "n"); ts_u64(&q, 7);	/* ADD */
	ts_u8(&q, 2); ts_str(&q, "k"); ts_str(&q, "vw"); ts_str(&q, "z");
	ts_u8(&q, 11); ts_u64(&q, 2);			/* MULTI_SET */
	ts_str(&q, "a"); ts_str(&q, "1"); ts_str(&q, "b"); ts_str(&q, "22");
	ts_u8(&q, 10); ts_u64(&q, 2); ts_str(&q, "b"); ts_str(&q, "none");
	ts_u8(&q, 5); ts_u64(&q, 2); ts_str(&q, "a"); ts_str(&q, "none");
	ts_u8(&q, 7);					/* GETNUMKEYS */
	ts_u8(&q, 8); ts_str(&q, "a");			/* DELETE_KEY */
	ts_u8(&q, 6); ts_u64(&q, 1); ts_str(&q, "b");	/* WAIT, set */
	ts_u8(&q, 6); ts_u64(&q, 1); ts_str(&q, "late");
	ts_u8(&q, 12);					/* CANCEL_WAIT */
	/* The replies, in order. */
	ts_u32(&w, 4242);
	ts_str(&w, "vw");
	ts_u64(&w, 7);
	ts_str(&w, "z");
	ts_str(&w, "22"); ts_str(&w, "");
	ts_u8(&w, SP_NOT_READY);
	ts_u64(&w, 4);
	ts_u64(&w, 1);
	ts_u8(&w, SP_STOP_WAITING);
	ts_u8(&w, SP_WAIT_CANCELED);
	for (cut = 0; cut < q.n; cut++) {
		memset(&o, 0, sizeof(o));
		st = new_store(0, 0);
		c = dts_conn_new(st, &o);
		CHECK_INT(dts_conn_feed(c, q.b, cut, &e), 0);
		CHECK_INT(dts_conn_feed(c, q.b + cut, q.n - cut, &e), 0);
		CHECK_INT(dts_conn_gen(c), SP_GEN_VALIDATED);
		if (o.len != w.n || memcmp(o.p, w.b, w.n) != 0) {
			t_fail(__FILE__, __LINE__, "split at %zu: %zu reply "
			    "bytes, want %zu", cut, o.len, w.n);
			cut = q.n;
		}
		dts_conn_free(c);
		dts_store_free(st);
		free(o.p);
	}
}

/* A WAIT holds the queries after it until another conn sets its key. */
TEST(store_wait_wakes_and_holds)
{
	struct dts_store	*st = new_store(0, 0);
	struct ts_out		 oa, ob, oc;
	struct dts_conn		*a, *b, *gone;
	struct ts_q		 q = { .n = 0 }, s = { .n = 0 };
	struct dts_stats	 stats;
	struct dt_err		 e;

	memset(&oa, 0, sizeof(oa));
	memset(&ob, 0, sizeof(ob));
	memset(&oc, 0, sizeof(oc));
	a = dts_conn_new(st, &oa);
	b = dts_conn_new(st, &ob);
	gone = dts_conn_new(st, &oc);
	ts_u8(&q, 5); ts_u64(&q, 2); ts_str(&q, "x"); ts_str(&q, "y");
	ts_u8(&q, 2); ts_str(&q, "x");			/* GET, held */
	CHECK_INT(dts_conn_feed(a, q.b, q.n, &e), 0);
	CHECK_INT(dts_conn_feed(gone, q.b, q.n, &e), 0);
	dts_conn_free(gone);				/* a waiter leaves */
	CHECK_INT(oa.len, 0);
	ts_u8(&s, 0); ts_str(&s, "x"); ts_str(&s, "42");
	CHECK_INT(dts_conn_feed(b, s.b, s.n, &e), 0);
	CHECK_INT(oa.len, 0);				/* y still unset */
	dts_store_stats(st, &stats);
	CHECK_INT(stats.waiting, 1);
	s.n = 0;
	ts_u8(&s, 3); ts_str(&s, "y"); ts_u64(&s, 1);	/* ADD sets y */
	CHECK_INT(dts_conn_feed(b, s.b, s.n, &e), 0);
	CHECK_INT(oa.len, 1 + 8 + 2);
	CHECK(oa.len == 11 && oa.p[0] == SP_STOP_WAITING &&
	    memcmp(oa.p + 9, "42", 2) == 0);
	CHECK_INT(oc.len, 0);
	dts_store_stats(st, &stats);
	CHECK_INT(stats.waiting, 0);
	dts_conn_free(a);
	dts_conn_free(b);
	dts_store_free(st);
	free(oa.p);
	free(ob.p);
}

/* Feeds q to a fresh conn of st; returns the feed's code, e filled. */
static int
feed_one(struct dts_store *st, struct ts_q *q, struct dt_err *e)
{
	struct ts_out	 o;
	struct dts_conn	*c;
	struct dt_err	 e2;
	int		 rc;

	memset(&o, 0, sizeof(o));
	c = dts_conn_new(st, &o);
	dt_err_clear(e);
	rc = dts_conn_feed(c, q->b, q->n, e);
	if (rc != 0)	/* a conn cut off stays so */
		CHECK(dts_conn_feed(c, q->b, q->n, &e2) == DT_ERR_CLOSED);
	dts_conn_free(c);
	free(o.p);
	return rc;
}

/* Every limit and refusal is an error for that conn alone, with a reason. */
TEST(store_limits_and_refusals)
{
	struct dts_store	*st = new_store(1024, 4096);
	struct ts_q		 q = { .n = 0 };
	struct dt_err		 e;
	struct dts_stats	 s;

	ts_u8(&q, 0); ts_str(&q, "big"); ts_u64(&q, 2048);	/* header only */
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_TOOBIG);
	CHECK(strstr(e.msg, "value of 2048 bytes (at most 1024)") != NULL);
	q.n = 0;
	ts_u8(&q, 0); ts_str(&q, "k"); ts_u64(&q, 1000);
	memset(q.b + q.n, 'x', 1000);
	q.n += 1000;
	CHECK_INT(feed_one(st, &q, &e), 0);
	q.n = 0;
	ts_u8(&q, 9); ts_str(&q, "k"); ts_u64(&q, 100);		/* APPEND */
	memset(q.b + q.n, 'x', 100);
	q.n += 100;
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_TOOBIG);
	CHECK(strstr(e.msg, "APPEND makes key \"k\" 1100 bytes") != NULL);
	q.b[0] = 0;					/* SET, 1000 */
	q.n = 1 + 8 + 1;					/* after the key */
	ts_u64(&q, 1000);
	q.n += 1000;
	for (q.b[1 + 8] = 'a'; q.b[1 + 8] < 'e'; q.b[1 + 8]++) {
		if (feed_one(st, &q, &e) != 0)
			break;
	}
	CHECK_INT(e.code, DT_ERR_RANGE);			/* 4096 in all */
	CHECK(strstr(e.msg, "the store is full") != NULL);
	q.n = 0;
	ts_u8(&q, 0); ts_str(&q, "k");			/* not a number */
	ts_u8(&q, 3); ts_str(&q, "k"); ts_u64(&q, 1);
	q.b[0] = 3;
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_PARSE);
	q.n = 0;
	ts_u8(&q, 7); ts_str(&q, "k");			/* legacy WATCH_KEY */
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_UNSUPPORTED);
	CHECK(strstr(e.msg, "WATCH_KEY (opcode 7 of a torch <= 2.1") != NULL);
	q.n = 0;
	ts_u8(&q, 0); ts_u32(&q, SP_MAGIC);
	ts_u8(&q, 14); ts_str(&q, "q"); ts_str(&q, "v");	/* QUEUE_PUSH */
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_UNSUPPORTED);
	CHECK(strstr(e.msg, "QUEUE_PUSH") != NULL);
	memcpy(q.b, "GET / HTTP/1.1\r\n\r\n", 18);
	q.n = 18;
	CHECK_INT(feed_one(st, &q, &e), DT_ERR_PROTO);
	dts_store_stats(st, &s);
	CHECK_INT(s.conns, 0);
	CHECK_INT(s.waiting, 0);
	dts_store_free(st);
}

/* A query held during a WAIT that fails, fails by callback once woken. */
TEST(store_held_error_fails_by_callback)
{
	struct dts_store	*st = new_store(0, 0);
	struct ts_out		 oa, ob;
	struct dts_conn		*a, *b;
	struct ts_q		 q = { .n = 0 };
	struct dt_err		 e;

	memset(&oa, 0, sizeof(oa));
	memset(&ob, 0, sizeof(ob));
	a = dts_conn_new(st, &oa);
	b = dts_conn_new(st, &ob);
	ts_u8(&q, 5); ts_u64(&q, 1); ts_str(&q, "x");
	ts_u8(&q, 7); ts_str(&q, "x");			/* WATCH_KEY, held */
	CHECK_INT(dts_conn_feed(a, q.b, q.n, &e), 0);
	q.n = 0;
	ts_u8(&q, 0); ts_str(&q, "x"); ts_str(&q, "1");
	CHECK_INT(dts_conn_feed(b, q.b, q.n, &e), 0);
	CHECK_INT(oa.len, 1);				/* STOP_WAITING */
	CHECK_INT(oa.failed, DT_ERR_UNSUPPORTED);
	CHECK_INT(ob.failed, 0);
	dts_conn_free(a);
	dts_conn_free(b);
	dts_store_free(st);
	free(oa.p);
}

/* A conn whose replies pile up pauses, holds its queries, and resumes. */
TEST(store_pause_holds_until_resume)
{
	struct dts_store	*st = new_store(0, 0);
	struct ts_out		 o;
	struct dts_conn		*c;
	struct ts_q		 q = { .n = 0 };
	struct dt_err		 e;
	int			 i;

	memset(&o, 0, sizeof(o));
	c = dts_conn_new(st, &o);
	ts_u8(&q, 0); ts_str(&q, "k"); ts_str(&q, "v");
	for (i = 0; i < 3; i++) {
		ts_u8(&q, 2);
		ts_str(&q, "k");
	}
	o.pause = 1;
	CHECK_INT(dts_conn_feed(c, q.b, q.n, &e), 0);
	CHECK_INT(o.len, 9);			/* one GET's reply, then paused */
	CHECK(dts_conn_paused(c));
	CHECK_INT(dts_conn_feed(c, q.b, 1, &e), 0);	/* held, not served */
	CHECK_INT(o.len, 9);
	CHECK_INT(dts_conn_resume(c, &e), 0);
	CHECK_INT(o.len, 18);
	o.pause = 0;
	CHECK_INT(dts_conn_resume(c, &e), 0);
	CHECK_INT(o.len, 27);
	CHECK(!dts_conn_paused(c));
	dts_conn_free(c);
	dts_store_free(st);
	free(o.p);
}

/* Empty key lists answer at once: WAIT, CHECK, MULTI_GET of no keys. */
TEST(store_empty_key_lists)
{
	struct dts_store	*st = new_store(0, 0);
	struct ts_out		 o;
	struct dts_conn		*c;
	struct ts_q		 q = { .n = 0 };
	struct dt_err		 e;

	memset(&o, 0, sizeof(o));
	c = dts_conn_new(st, &o);
	ts_u8(&q, 5); ts_u64(&q, 0);			/* WAIT [] */
	ts_u8(&q, 4); ts_u64(&q, 0);			/* CHECK [] */
	ts_u8(&q, 10); ts_u64(&q, 0);			/* MULTI_GET [] */
	ts_u8(&q, 11); ts_u64(&q, 0);			/* MULTI_SET [] */
	CHECK_INT(dts_conn_feed(c, q.b, q.n, &e), 0);
	CHECK_INT(o.len, 2);
	CHECK(o.len == 2 && o.p[0] == SP_STOP_WAITING && o.p[1] == SP_READY);
	CHECK_INT(dts_conn_resume(c, &e), 0);		/* nothing held */
	CHECK_INT(o.len, 2);
	dts_conn_free(c);
	dts_store_free(st);
	free(o.p);
}
