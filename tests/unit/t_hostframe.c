/*
 * t_hostframe.c -- dtrun taking an agent's frames (hostframe.h): the
 * phase table first, between attempts too, then the handler's named
 * result, each to its own error.
 */
#include <string.h>

#include "launcher/job/agents.h"
#include "launcher/job/hostframe.h"
#include "common/err.h"
#include "common/wire.h"
#include "proto/agentproto.h"
#include "test.h"

static int		hf_calls;	/* handlers run */
static enum hf_rc	hf_answer;	/* what they say */

/* A handler that counts its call and says hf_answer. */
#define HF_STUB(name, ...)						\
static enum hf_rc							\
name(struct job_host *h, __VA_ARGS__)					\
{									\
	hf_calls++;							\
	return hf_answer;						\
}
HF_STUB(hf_hello, struct ap_hello *x)
HF_STUB(hf_list, const int *p, uint32_t n)
HF_STUB(hf_bytes, const uint8_t *p, size_t n)
HF_STUB(hf_iface, const struct ap_iface *x)
HF_STUB(hf_started, uint32_t rank, uint32_t pid)
HF_STUB(hf_output, const struct ap_output *x)
HF_STUB(hf_errfile, const struct ap_errfile *x)
HF_STUB(hf_exit, const struct ap_exit *x)
HF_STUB(hf_error, const struct ap_error *x)
HF_STUB(hf_stack, const struct ap_stack *x)
HF_STUB(hf_rdzv, uint32_t chan, const uint8_t *p, size_t n)
HF_STUB(hf_progress, const struct ap_progress *v, uint32_t n)
HF_STUB(hf_colls, uint64_t now, const struct ap_coll *v, uint32_t n)
HF_STUB(hf_waits, const struct ap_wait *v, uint32_t n)

/* The same for the frames that carry nothing. */
static enum hf_rc
hf_none(struct job_host *h)
{
	hf_calls++;
	return hf_answer;
}

static const struct hostframe_ops hf_ops = {
	hf_hello, hf_list, hf_bytes, hf_iface, hf_none, hf_started,
	hf_output, hf_errfile, hf_exit, hf_error, hf_stack, hf_none, hf_none,
	hf_rdzv, hf_rdzv, hf_colls, hf_progress, hf_waits
};

/* Hands hostframe_take the one frame b holds; returns its result. */
static int
hf_take(struct job_host *h, struct dt_wbuf *b, struct dt_err *e)
{
	const uint8_t	*pl;
	size_t		 plen, used;
	uint8_t		 type;
	int		 rc;

	CHECK_INT(dt_frame_parse(b->p, b->len, AP_FRAME_MAX, &type, &pl,
	    &plen, &used), 0);
	rc = hostframe_take(&hf_ops, h, type, pl, plen, e);
	dt_wbuf_reset(b);
	return rc;
}

/*
 * Between attempts (no job) a kept agent only beats: its SIGTERM's ERROR
 * and DONE are stale, handed to no handler (there is no attempt to hand
 * them to), and a frame no agent sends is refused naming the phase.
 */
TEST(hostframe_between_attempts_the_table_decides)
{
	struct job_host	 h;
	struct ap_error	 err = { AP_NORANK, 143, "going down" };
	struct dt_wbuf	 b;
	struct dt_err	 e;

	memset(&h, 0, sizeof(h));
	dt_wbuf_init(&b);
	hf_calls = 0;
	hf_answer = HF_OK;
	CHECK_INT(hostframe_phase(&h), HP_BETWEEN);
	ap_put_heartbeat(&b, 1000);
	CHECK_INT(hf_take(&h, &b, &e), 0);
	ap_put_error(&b, &err);
	CHECK_INT(hf_take(&h, &b, &e), 0);
	ap_put_empty(&b, AP_DONE);
	CHECK_INT(hf_take(&h, &b, &e), 0);
	CHECK_INT(hf_calls, 0);
	ap_put_empty(&b, AP_START);
	CHECK_INT(hf_take(&h, &b, &e), DT_ERR_PROTO);
	CHECK_STR(e.msg, "START message out of place (while between attempts)");
	/* A malformed beat is judged too: its form is the table's to take. */
	dt_frame_end(&b, dt_frame_begin(&b, AP_HEARTBEAT), AP_FRAME_MAX);
	CHECK_INT(hf_take(&h, &b, &e), DT_ERR_PROTO);
	CHECK_STR(e.msg, "malformed HEARTBEAT message (while between attempts)");
	dt_wbuf_free(&b);
}

/*
 * In an attempt a handler's answer is named: HF_BAD is the agent's
 * protocol error, HF_NOMEM ours, never the same bare -1.
 */
TEST(hostframe_a_handlers_answer_is_named)
{
	struct job_host	 h;
	struct dt_wbuf	 b;
	struct dt_err	 e;
	int		 job;

	memset(&h, 0, sizeof(h));
	h.job = (struct job *)&job;	/* only its presence is read */
	h.at.phase = HP_PREPARED;
	dt_wbuf_init(&b);
	hf_calls = 0;
	CHECK_INT(hostframe_phase(&h), HP_PREPARED);
	hf_answer = HF_OK;
	ap_put_started(&b, 0, 42);
	CHECK_INT(hf_take(&h, &b, &e), 0);
	hf_answer = HF_BAD;
	ap_put_started(&b, 7, 42);
	CHECK_INT(hf_take(&h, &b, &e), DT_ERR_PROTO);
	CHECK_STR(e.msg, "malformed STARTED message (while prepared)");
	hf_answer = HF_NOMEM;
	ap_put_started(&b, 0, 42);
	CHECK_INT(hf_take(&h, &b, &e), DT_ERR_NOMEM);
	CHECK_STR(e.msg, "out of memory taking its STARTED message (while "
	    "prepared)");
	CHECK_INT(hf_calls, 3);
	/* A payload that does not decode never reaches the handler. */
	hf_answer = HF_OK;
	dt_frame_end(&b, dt_frame_begin(&b, AP_EXIT), AP_FRAME_MAX);
	CHECK_INT(hf_take(&h, &b, &e), DT_ERR_PROTO);
	CHECK_STR(e.msg, "malformed EXIT message (while prepared)");
	CHECK_INT(hf_calls, 3);
	CHECK_INT(hostframe_rc(0), HF_OK);
	CHECK_INT(hostframe_rc(DT_ERR_PROTO), HF_BAD);
	CHECK_INT(hostframe_rc(DT_ERR_NOMEM), HF_NOMEM);
	dt_wbuf_free(&b);
}
