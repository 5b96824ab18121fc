/*
 * hostframe.c -- an agent's frames, checked, decoded and dispatched
 * (hostframe.h).
 */
#include <stdlib.h>

#include "proto/agentproto.h"
#include "launcher/job/agents.h"
#include "common/err.h"
#include "launcher/job/hostframe.h"
#include "proto/phase.h"

/* DT_ERR_NOMEM is ours; any other error the agent's frame's. */
enum hf_rc
hostframe_rc(int err)
{
	if (err == 0)
		return HF_OK;
	return err == DT_ERR_NOMEM ? HF_NOMEM : HF_BAD;
}

/* No attempt, no handler: the table's between-attempts row. */
enum host_phase
hostframe_phase(const struct job_host *h)
{
	return h->job == NULL ? HP_BETWEEN : h->at.phase;
}

/* The frames that carry a struct: decode, hand over, free. */
static enum hf_rc
hostframe_struct(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n)
{
	union {
		struct ap_output	out;
		struct ap_exit		x;
		struct ap_error		err;
		struct ap_iface		fi;
		struct ap_errfile	ef;
		struct ap_stack		stk;
	} u;
	enum hf_rc	rc;

	switch (type) {
	case AP_OUTPUT:
		if ((rc = hostframe_rc(ap_get_output(p, n, &u.out))) == HF_OK)
			rc = op->output(h, &u.out);
		return rc;
	case AP_EXIT:
		if ((rc = hostframe_rc(ap_get_exit(p, n, &u.x))) == HF_OK)
			rc = op->exit(h, &u.x);
		return rc;
	case AP_ERROR:
		if ((rc = hostframe_rc(ap_get_error(p, n, &u.err))) == HF_OK) {
			rc = op->error(h, &u.err);
			ap_error_free(&u.err);
		}
		return rc;
	case AP_IFACE:
		if ((rc = hostframe_rc(ap_get_iface(p, n, &u.fi))) == HF_OK) {
			rc = op->iface(h, &u.fi);
			ap_iface_free(&u.fi);
		}
		return rc;
	case AP_ERRFILE:
		if ((rc = hostframe_rc(ap_get_errfile(p, n, &u.ef))) == HF_OK) {
			rc = op->errfile(h, &u.ef);
			ap_errfile_free(&u.ef);
		}
		return rc;
	case AP_STACK:
		if ((rc = hostframe_rc(ap_get_stack(p, n, &u.stk))) == HF_OK) {
			rc = op->stack(h, &u.stk);
			ap_stack_free(&u.stk);
		}
		return rc;
	}
	return HF_BAD;
}

/* The frames of a few numbers or none: decode, hand over. */
static enum hf_rc
hostframe_small(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n)
{
	const uint8_t	*data;
	size_t		 len;
	uint32_t	 a, b;
	uint64_t	 ms;
	enum hf_rc	 rc;

	switch (type) {
	case AP_STARTED:
		if ((rc = hostframe_rc(ap_get_started(p, n, &a, &b))) == HF_OK)
			rc = op->started(h, a, b);
		return rc;
	case AP_CHECKED:
		return op->checked(h, p, n);
	case AP_RDZV:
	case AP_STORE:
		if ((rc = hostframe_rc(ap_get_rdzv(p, n, &a, &data,
		    &len))) == HF_OK)
			rc = (type == AP_RDZV ? op->rdzv : op->store)(h, a,
			    data, len);
		return rc;
	case AP_HEARTBEAT:
		/* The link heard it (link_heartbeat): only its form is ours. */
		return hostframe_rc(ap_get_heartbeat(p, n, &ms));
	}
	if ((rc = hostframe_rc(ap_get_empty(p, n))) != HF_OK)
		return rc;
	switch (type) {
	case AP_PREPARED:
		return op->prepared(h);
	case AP_STACKASK:
		return op->stackask(h);
	case AP_DONE:
		return op->done(h);
	}
	return HF_BAD;
}

/* The frames that carry what the handler keeps or a list: HELLO, PORTLIST, PROGRESS, COLLS, WAITS. */
static enum hf_rc
hostframe_plain(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n)
{
	struct ap_hello	 hello;
	struct ap_progress *prog;
	struct ap_coll	*colls;
	struct ap_wait	*waits;
	uint64_t	 now;
	uint32_t	 a;
	int		*ports;
	enum hf_rc	 rc;

	switch (type) {
	case AP_HELLO:
		if ((rc = hostframe_rc(ap_get_hello(p, n, &hello))) != HF_OK)
			return rc;
		if ((rc = op->hello(h, &hello)) != HF_OK)
			free(hello.hostname);
		return rc;
	case AP_PORTLIST:
		if ((rc = hostframe_rc(ap_get_portlist(p, n, &ports,
		    &a))) != HF_OK)
			return rc;
		rc = op->portlist(h, ports, a);
		free(ports);
		return rc;
	case AP_PROGRESS:
		if ((rc = hostframe_rc(ap_get_progress(p, n, &prog,
		    &a))) != HF_OK)
			return rc;
		rc = op->progress(h, prog, a);
		free(prog);
		return rc;
	case AP_COLLS:
		if ((rc = hostframe_rc(ap_get_colls(p, n, &now, &colls,
		    &a))) != HF_OK)
			return rc;
		rc = op->colls(h, now, colls, a);
		free(colls);
		return rc;
	case AP_WAITS:
		if ((rc = hostframe_rc(ap_get_waits(p, n, &waits,
		    &a))) != HF_OK)
			return rc;
		rc = op->waits(h, waits, a);
		ap_waits_free(waits, a);
		return rc;
	}
	return hostframe_small(op, h, type, p, n);
}

/* The table, then the decoder and handler; each failure its own error. */
int
hostframe_take(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n, struct dt_err *e)
{
	enum host_phase	 ph = hostframe_phase(h);
	const char	*phase = host_phase_name(ph);
	enum hf_rc	 rc;

	switch (host_frame_verdict(ph, type)) {
	case AP_STALE:
		return 0;
	case AP_ILLEGAL:
		return ap_frame_refused(e, phase, type, 0);
	case AP_TAKE:
		break;
	}
	switch (type) {
	case AP_OUTPUT: case AP_EXIT: case AP_ERROR: case AP_IFACE:
	case AP_ERRFILE: case AP_STACK:
		rc = hostframe_struct(op, h, type, p, n);
		break;
	default:
		rc = hostframe_plain(op, h, type, p, n);
	}
	switch (rc) {
	case HF_OK:
		return 0;
	case HF_NOMEM:
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory "
		    "taking its %s message (while %s)", ap_type_name(type),
		    phase);
	case HF_BAD:
		break;
	}
	return ap_frame_refused(e, phase, type, 1);
}
