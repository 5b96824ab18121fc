/*
 * hostframe.c -- an agent's frames, checked, decoded and dispatched
 * (hostframe.h).
 */
#include <stdlib.h>

#include "proto/agentproto.h"
#include "launcher/agents.h"
#include "common/err.h"
#include "launcher/hostframe.h"
#include "proto/phase.h"

/* The frames that carry a struct: decode, hand over, free. */
static int
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
	int	rc = -1;

	switch (type) {
	case AP_OUTPUT:
		return ap_get_output(p, n, &u.out) != 0 ? -1 : op->output(h, &u.out);
	case AP_EXIT:
		return ap_get_exit(p, n, &u.x) != 0 ? -1 : op->exit(h, &u.x);
	case AP_ERROR:
		if (ap_get_error(p, n, &u.err) == 0) {
			rc = op->error(h, &u.err);
			ap_error_free(&u.err);
		}
		return rc;
	case AP_IFACE:
		if (ap_get_iface(p, n, &u.fi) == 0) {
			rc = op->iface(h, &u.fi);
			ap_iface_free(&u.fi);
		}
		return rc;
	case AP_ERRFILE:
		if (ap_get_errfile(p, n, &u.ef) == 0) {
			rc = op->errfile(h, &u.ef);
			ap_errfile_free(&u.ef);
		}
		return rc;
	case AP_STACK:
		if (ap_get_stack(p, n, &u.stk) == 0) {
			rc = op->stack(h, &u.stk);
			ap_stack_free(&u.stk);
		}
		return rc;
	}
	return -1;
}

/* The other frames: empty ones, a few numbers, HELLO. */
static int
hostframe_plain(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n)
{
	struct ap_hello	 hello;
	struct ap_progress *prog;
	const uint8_t	*data;
	size_t		 len;
	uint32_t	 a, b;
	uint64_t	 ms;
	int		*ports, rc;

	switch (type) {
	case AP_HELLO:
		if (ap_get_hello(p, n, &hello) != 0)
			return -1;
		if ((rc = op->hello(h, &hello)) != 0)
			free(hello.hostname);
		return rc;
	case AP_PORTLIST:
		if (ap_get_portlist(p, n, &ports, &a) != 0)
			return -1;
		rc = op->portlist(h, ports, a);
		free(ports);
		return rc;
	case AP_STARTED:
		return ap_get_started(p, n, &a, &b) != 0 ? -1 :
		    op->started(h, a, b);
	case AP_CHECKED:
		return op->checked(h, p, n);
	case AP_RDZV:
		return ap_get_rdzv(p, n, &a, &data, &len) != 0 ? -1 :
		    op->rdzv(h, a, data, len);
	case AP_HEARTBEAT:
		return ap_get_heartbeat(p, n, &ms) != 0 ? -1 : 0;
	case AP_PROGRESS:
		if (ap_get_progress(p, n, &prog, &a) != 0)
			return -1;
		rc = op->progress(h, prog, a);
		free(prog);
		return rc;
	}
	if (ap_get_empty(p, n) != 0)
		return -1;
	switch (type) {
	case AP_PREPARED:
		return op->prepared(h);
	case AP_STACKASK:
		return op->stackask(h);
	case AP_DONE:
		return op->done(h);
	}
	return -1;
}

int
hostframe_take(const struct hostframe_ops *op, struct job_host *h,
    uint8_t type, const uint8_t *p, size_t n, struct dt_err *e)
{
	const char	*phase = host_phase_name(h->at.phase);
	int		 rc;

	switch (host_frame_verdict(h->at.phase, type)) {
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
	return rc == 0 ? 0 : ap_frame_refused(e, phase, type, 1);
}
