/*
 * hostframe.h -- an agent's frames, as dtrun takes them: each is checked
 * against its host's phase in the protocol's table (phase.h), decoded
 * (agentproto.h), and handed to the job's handler for its type. A frame
 * out of place or malformed never reaches a handler; the caller gets the
 * one message naming frame and phase.
 */
#ifndef DT_HOSTFRAME_H
#define DT_HOSTFRAME_H

#include <stddef.h>
#include <stdint.h>

struct ap_errfile;
struct ap_error;
struct ap_exit;
struct ap_hello;
struct ap_iface;
struct ap_output;
struct ap_stack;
struct dt_err;
struct job_host;

/*
 * The job's handlers, one per frame type. Each returns 0, or -1 when what
 * the frame says cannot be (a rank of another host): a protocol error.
 * What a handler is given is freed after it returns, but hello's
 * hostname, which it takes.
 */
struct hostframe_ops {
	int	(*hello)(struct job_host *, struct ap_hello *);
	int	(*portlist)(struct job_host *, const int *ports, uint32_t n);
	int	(*checked)(struct job_host *, const uint8_t *, size_t);
	int	(*iface)(struct job_host *, const struct ap_iface *);
	int	(*prepared)(struct job_host *);
	int	(*started)(struct job_host *, uint32_t rank, uint32_t pid);
	int	(*output)(struct job_host *, const struct ap_output *);
	int	(*errfile)(struct job_host *, const struct ap_errfile *);
	int	(*exit)(struct job_host *, const struct ap_exit *);
	int	(*error)(struct job_host *, const struct ap_error *);
	int	(*stack)(struct job_host *, const struct ap_stack *);
	int	(*stackask)(struct job_host *);
	int	(*done)(struct job_host *);
	/* A rank's rendezvous bytes on channel chan; none: it ended. */
	int	(*rdzv)(struct job_host *, uint32_t chan, const uint8_t *,
		    size_t);
	/* The steps its ranks reported. */
	int	(*progress)(struct job_host *, const struct ap_progress *,
		    uint32_t n);
};

/*
 * Takes one frame of h's agent. Returns 0 when handled or dropped as
 * stale, or DT_ERR_PROTO with e saying what was wrong and in which phase.
 */
int	hostframe_take(const struct hostframe_ops *, struct job_host *h,
	    uint8_t type, const uint8_t *p, size_t n, struct dt_err *e);

#endif
