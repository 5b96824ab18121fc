/*
 * play.c -- torch 1.13's env:// init_process_group, one rank's TCPStore
 * queries, as play.h describes. Keys as the rank's stores chain them:
 * TCPStore adds "/" to every key but its own "init/"; rendezvous.py's
 * PrefixStore("/worker/attempt_0"), init_process_group's "default_pg",
 * the group's "0" and gloo's device "0" each add "NAME/".
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "play.h"

/* Legacy (torch <= 2.1) opcodes. */
enum { Q_SET = 0, Q_GET = 2, Q_ADD = 3, Q_WAIT = 5 };

#define PFX		"//worker/attempt_0/default_pg/"
#define BARRIER_KEY	PFX "store_based_barrier_key:1"
#define ID_KEY		PFX "0/0"		/* ncclCommCounter_ 0 */
#define SEQ_KEY		PFX "0/SEQ_NUM_STORE_KEY"
#define GLOO_PFX	PFX "0/0/"
#define HOST_LEN	8			/* "simNNNNN" */
#define SEQ_LEN		8			/* an int64 */

enum step {
	S_INIT, S_HOST_SET, S_HOST_GET, S_ADDR_SET, S_ADDR_GET, S_BAR_ADD,
	S_BAR_POLL, S_BAR_CHECK, S_ID, S_SEQ, S_END, S_FINISHED,
};

/* What a step did: W_NONE sent a query with no reply; W_SKIP sent none. */
enum want { W_NONE, W_ADD, W_WAIT, W_GET, W_SKIP, W_SLEEP, W_DONE };

/* What a GET's value must hold. */
enum vkind { V_LEN, V_ID, V_ADDR };

/* Appends v as TCPStore's clients do: little-endian. */
static void
le64(struct dt_wbuf *b, uint64_t v)
{
	uint8_t	x[8];
	int	i;

	for (i = 0; i < 8; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	dt_wbuf_put(b, x, 8);
}

/* Opcode and key, as TCPStore's sendCommandForKey. */
static void
put_key(struct dt_wbuf *b, int op, const char *key)
{
	dt_wbuf_u8(b, (uint8_t)op);
	le64(b, strlen(key));
	dt_wbuf_put(b, key, strlen(key));
}

/* Byte i of the value rank who SETs (kind V_ID or V_ADDR; V_LEN: any). */
static uint8_t
vbyte(int kind, uint32_t who, uint64_t i)
{
	return kind == V_ID ? (uint8_t)(i * 37 + 11) : (uint8_t)(who + i);
}

/* SET key to len bytes of kind, as rank who. No reply. */
static int
put_set(struct dt_wbuf *b, const char *key, int kind, uint32_t who,
    uint64_t len)
{
	uint8_t		*p;
	uint64_t	 i;

	put_key(b, Q_SET, key);
	le64(b, len);
	if ((p = dt_wbuf_reserve(b, len)) == NULL)
		return W_NONE;		/* no memory: the reader sees it short */
	for (i = 0; i < len; i++)
		p[i] = vbyte(kind, who, i);
	b->len += len;
	return W_NONE;
}

/* ADD delta to key: the reply is the sum. */
static int
put_add(struct dt_wbuf *b, const char *key, int64_t delta)
{
	put_key(b, Q_ADD, key);
	le64(b, (uint64_t)delta);
	return W_ADD;
}

/* WAIT for one key: the reply is one byte, 0. */
static int
put_wait(struct dt_wbuf *b, const char *key)
{
	dt_wbuf_u8(b, Q_WAIT);
	le64(b, 1);
	le64(b, strlen(key));
	dt_wbuf_put(b, key, strlen(key));
	return W_WAIT;
}

/* GET key, whose value must be len bytes of kind as rank who SET them. */
static int
put_get(struct tp_rank *r, struct dt_wbuf *b, const char *key, int kind,
    uint32_t who, uint64_t len)
{
	put_key(b, Q_GET, key);
	r->vneed = len;
	r->vkind = (uint8_t)kind;
	r->vwho = who;
	return W_GET;
}

/* gloo: the next other rank in the loop, or 0 (and step to next) at the end. */
static int
next_peer(struct tp_job *j, struct tp_rank *r, int next)
{
	r->sub = 0;
	if (++r->peer == r->rank)
		r->peer++;
	if (r->peer < j->world)
		return 1;
	r->peer = 0;
	r->step = (uint8_t)next;
	return 0;
}

/* gloo's connectFullMesh: hostnames, then every pair's address. */
static int
gloo_step(struct tp_job *j, struct tp_rank *r, struct dt_wbuf *b)
{
	char		key[96];
	uint64_t	alen = (uint64_t)(j->world - 1) * TP_GLOO_ADDR;

	switch (r->step) {
	case S_HOST_SET:
		snprintf(key, sizeof(key), GLOO_PFX "rank_%u", r->rank);
		r->step = S_HOST_GET;
		r->peer = r->rank == 0 ? 1 : 0;
		return put_set(b, key, V_LEN, r->rank, HOST_LEN);
	case S_HOST_GET:		/* store.get: WAIT, GET */
		if (r->peer >= j->world) {
			r->step = S_ADDR_SET;
			return W_SKIP;
		}
		snprintf(key, sizeof(key), GLOO_PFX "rank_%u", r->peer);
		if (r->sub++ == 0)
			return put_wait(b, key);
		put_get(r, b, key, V_LEN, r->peer, HOST_LEN);
		next_peer(j, r, S_ADDR_SET);
		return W_GET;
	case S_ADDR_SET:
		snprintf(key, sizeof(key), GLOO_PFX "%u", r->rank);
		r->step = S_ADDR_GET;
		r->peer = r->rank == 0 ? 1 : 0;
		r->sub = 0;
		return put_set(b, key, V_ADDR, r->rank, alen);
	default:			/* S_ADDR_GET: wait, then get */
		if (r->peer >= j->world) {
			r->step = S_BAR_ADD;
			return W_SKIP;
		}
		snprintf(key, sizeof(key), GLOO_PFX "%u", r->peer);
		if (r->sub++ < 2)
			return put_wait(b, key);
		put_get(r, b, key, V_ADDR, r->peer, alen);
		next_peer(j, r, S_BAR_ADD);
		return W_GET;
	}
}

/* One step of the script: sends at most one query, says what comes. */
static int
step(struct tp_job *j, struct tp_rank *r, struct dt_wbuf *b)
{
	int	w;

	switch (r->step) {
	case S_INIT:		/* TCPStore's constructor: waitForWorkers */
		r->step = j->be == TP_GLOO ? S_HOST_SET : S_BAR_ADD;
		return put_add(b, "init/", 1);
	case S_HOST_SET: case S_HOST_GET: case S_ADDR_SET: case S_ADDR_GET:
		return gloo_step(j, r, b);
	case S_BAR_ADD:		/* _store_based_barrier */
		r->step = S_BAR_POLL;
		return put_add(b, BARRIER_KEY, 1);
	case S_BAR_POLL:
		r->step = S_BAR_CHECK;
		j->polls++;
		return put_add(b, BARRIER_KEY, 0);
	case S_BAR_CHECK:
		if (r->count == (int64_t)j->world) {
			r->step = j->be == TP_GLOO ? S_SEQ : S_ID;
			r->sub = 0;
			return W_SKIP;
		}
		r->step = S_BAR_POLL;
		return W_SLEEP;
	case S_ID:		/* broadcastUniqueNCCLID, at the first collective */
	case S_SEQ:		/* gloo's setSequenceNumberForGroup */
		if (r->rank == 0) {
			w = r->step;
			r->step = S_END;
			return w == S_ID ?
			    put_set(b, ID_KEY, V_ID, 0, TP_ID_LEN) :
			    put_set(b, SEQ_KEY, V_LEN, 0, SEQ_LEN);
		}
		break;
	case S_END:
		r->step = S_FINISHED;
		j->done++;
		return W_DONE;
	default:
		return W_DONE;
	}
	/* The others: get() (WAIT, GET); gloo waits once more before it. */
	if (r->step == S_ID) {
		if (r->sub++ == 0)
			return put_wait(b, ID_KEY);
		r->step = S_END;
		return put_get(r, b, ID_KEY, V_ID, 0, TP_ID_LEN);
	}
	if (r->sub++ < 2)
		return put_wait(b, SEQ_KEY);
	r->step = S_END;
	return put_get(r, b, SEQ_KEY, V_LEN, 0, SEQ_LEN);
}

long long
tp_now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void
tp_rank_init(struct tp_rank *r, uint32_t rank)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
}

int
tp_backend(const char *name)
{
	if (strcmp(name, "nccl") == 0)
		return TP_NCCL;
	return strcmp(name, "gloo") == 0 ? TP_GLOO : -1;
}

enum tp_next
tp_run(struct tp_job *j, struct tp_rank *r, struct dt_wbuf *out)
{
	int	w;

	if (j->why[0] != '\0' && r->bad)
		return TP_FAIL;
	for (;;) {
		w = step(j, r, out);
		if (w <= W_GET)
			j->queries++;
		switch (w) {
		case W_ADD: case W_WAIT: case W_GET:
			r->want = (uint8_t)w;
			r->hhave = 0;
			r->vlen = r->vhave = 0;
			return TP_REPLY;
		case W_SLEEP:
			return TP_SLEEP;
		case W_DONE:
			return TP_DONE;
		}
	}
}

/* Marks r failed with a reason (the job keeps the first). */
static int
fail(struct tp_job *j, struct tp_rank *r, const char *what, long long v)
{
	r->bad = 1;
	if (j->why[0] == '\0')
		snprintf(j->why, sizeof(j->why), "rank %u: %s (%lld)", r->rank,
		    what, v);
	return -1;
}

/* The u64 little-endian in hdr. */
static uint64_t
hdr64(const struct tp_rank *r)
{
	uint64_t	v = 0;
	int		i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | r->hdr[i];
	return v;
}

int
tp_feed(struct tp_job *j, struct tp_rank *r, const uint8_t *p, size_t n,
    size_t *used)
{
	size_t	k = 0, hn = r->want == W_WAIT ? 1 : 8;

	while (r->hhave < hn && k < n)
		r->hdr[r->hhave++] = p[k++];
	*used = k;
	if (r->hhave < hn)
		return 0;
	if (r->want == W_WAIT)
		return r->hdr[0] == 0 ? 1 : fail(j, r, "WAIT answered", r->hdr[0]);
	if (r->want == W_ADD) {
		r->count = (int64_t)hdr64(r);
		if (r->step == S_BAR_CHECK &&
		    (r->count < 1 || r->count > (int64_t)j->world))
			return fail(j, r, "barrier count out of range", r->count);
		return 1;
	}
	if (r->hhave == 8) {		/* the length just came */
		r->hhave = 9;
		r->vlen = hdr64(r);
		if (r->vlen != r->vneed)
			return fail(j, r, "GET value of the wrong length",
			    (long long)r->vlen);
	}
	for (; r->vhave < r->vlen && k < n; k++, r->vhave++)
		if (r->vkind != V_LEN &&
		    p[k] != vbyte(r->vkind, r->vwho, r->vhave))
			r->bad = 1;
	*used = k;
	if (r->vhave < r->vlen)
		return 0;
	if (r->bad)
		return fail(j, r, "GET value differs from what was SET at byte",
		    0);
	return 1;
}
