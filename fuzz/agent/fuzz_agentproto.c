/*
 * fuzz_agentproto.c -- libFuzzer target for the launcher <-> agent protocol:
 * frame splitting and joining of parts (ap_reasm), then every decoder on
 * every payload. A message that decodes must re-encode to a frame that
 * decodes to the same thing. (fuzz_conversation.c drives a whole agent.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "proto/agentproto.h"
#include "common/err.h"
#include "common/pack.h"
#include "common/wire.h"

/* Re-encodes a decoded JOB and checks the round trip. */
static void
check_job(const struct ap_job *j)
{
	struct dt_wbuf	 b;
	struct ap_job	 k;
	const uint8_t	*pl;
	size_t		 plen, used, i;
	uint8_t		 type;

	dt_wbuf_init(&b);
	if (ap_put_job(&b, j) == 0 &&
	    dt_frame_parse(b.p, b.len, AP_FRAME_MAX, &type, &pl, &plen,
	    &used) == 0) {
		if (ap_get_job(pl, plen, &k) != 0 || k.nenv != j->nenv ||
		    strcmp(k.job_id, j->job_id) != 0 ||
		    strcmp(k.setup, j->setup) != 0 ||
		    strcmp(k.iface, j->iface) != 0 ||
		    strcmp(k.rank0, j->rank0) != 0 || k.ifvars != j->ifvars)
			abort();
		for (i = 0; i < k.nenv; i++)
			if (strcmp(k.env[i], j->env[i]) != 0)
				abort();
		ap_job_free(&k);
	}
	dt_wbuf_free(&b);
}

/* A PACKED payload: exactly its raw length comes out, or nothing. */
static void
decode_packed(const uint8_t *p, size_t n)
{
	struct evbuffer	*out = evbuffer_new();
	struct dt_err	 e;
	uint32_t	 raw;

	if (out == NULL)
		return;
	raw = n >= 4 ? (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3] : 0;
	if (pack_unpack(p, n, 65536, out, &e) == 0) {
		if (evbuffer_get_length(out) != raw)
			abort();
	} else if (evbuffer_get_length(out) != 0)
		abort();
	evbuffer_free(out);
}

/* Runs every decoder over one payload. */
static void
decode_all(const uint8_t *p, size_t n)
{
	struct ap_hello	 h;
	struct ap_job	 j;
	struct ap_rank	 r;
	struct ap_stop	 s;
	struct ap_output o;
	struct ap_exit	 x;
	struct ap_error	 e;
	struct ap_iface	 f;
	struct ap_errfile ef;
	struct ap_check	 c;
	struct ap_checked k;
	struct ap_progress *pv;
	struct ap_wait	*wv;
	uint32_t	 a, b, i;
	const uint8_t	*rd;
	size_t		 rdlen;
	int		*ports;

	if (ap_get_hello(p, n, &h) == 0)
		ap_hello_free(&h);
	if (ap_get_job(p, n, &j) == 0) {
		check_job(&j);
		ap_job_free(&j);
	}
	if (ap_get_rank(p, n, &r) == 0) {
		if (r.argc == 0 || r.argv[r.argc] != NULL)
			abort();
		ap_rank_free(&r);
	}
	ap_get_stop(p, n, &s);
	if (ap_get_output(p, n, &o) == 0 && o.data + o.len != p + n)
		abort();
	if (ap_get_rdzv(p, n, &a, &rd, &rdlen) == 0 && rd + rdlen != p + n)
		abort();
	ap_get_exit(p, n, &x);
	if (ap_get_error(p, n, &e) == 0)
		ap_error_free(&e);
	if (ap_get_iface(p, n, &f) == 0)
		ap_iface_free(&f);
	if (ap_get_errfile(p, n, &ef) == 0) {
		if (ef.len > AP_ERRFILE_MAX || ef.len > ef.size ||
		    ef.data + ef.len != p + n)
			abort();
		ap_errfile_free(&ef);
	}
	ap_get_u32(p, n, &a);
	ap_get_started(p, n, &a, &b);
	ap_get_empty(p, n);
	if (ap_get_portlist(p, n, &ports, &a) == 0)
		free(ports);
	if (ap_get_progress(p, n, &pv, &a) == 0) {
		if (a > AP_MAX_RANKS || (a > 0) != (pv != NULL))
			abort();
		free(pv);
	}
	if (ap_get_waits(p, n, &wv, &a) == 0) {
		for (i = 0; i < a; i++)
			if (wv[i].what == NULL || (uint32_t)wv[i].work +
			    wv[i].peer + wv[i].input > wv[i].samples)
				abort();
		ap_waits_free(wv, a);
	}
	if (ap_get_check(p, n, &c) == 0) {
		if (c.env[c.nenv] != NULL)
			abort();
		ap_check_free(&c);
	}
	if (ap_get_checked(p, n, &k) == 0) {
		if (k.nkv > AP_CHK_KV_MAX || (k.nkv > 0 && k.kv[k.nkv] != NULL))
			abort();
		ap_checked_free(&k);
	}
	decode_packed(p, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ap_reasm	 ra;
	const uint8_t	*pl;
	size_t		 plen, used;
	uint8_t		 type;

	/* The input as a stream of frames, as a link would split it. */
	ap_reasm_init(&ra);
	while (dt_frame_parse(data, size, AP_FRAME_MAX, &type, &pl, &plen,
	    &used) == 0) {
		decode_all(pl, plen);
		/* And as the agent joins parts into messages. */
		if (ap_reasm_feed(&ra, type, &pl, &plen) == 1)
			decode_all(pl, plen);
		data += used;
		size -= used;
	}
	ap_reasm_free(&ra);
	/* And the raw bytes as one payload of every type. */
	decode_all(data, size);
	return 0;
}
