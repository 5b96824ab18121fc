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

#include "proto/phase.h"

struct ap_errfile;
struct ap_error;
struct ap_exit;
struct ap_hello;
struct ap_iface;
struct ap_output;
struct ap_coll;
struct ap_progress;
struct ap_stack;
struct ap_wait;
struct dt_err;
struct job_host;

/* What a frame came to: its decoding's, and each handler's, result. */
enum hf_rc {
	HF_OK = 0,		/* taken */
	HF_BAD,			/* malformed, or says what cannot be (a rank
				   of another host): a protocol error */
	HF_NOMEM		/* out of memory taking it: no fault of the agent */
};

/*
 * The job's handlers, one per frame type, each saying what its frame came
 * to. What a handler is given is freed after it returns, but hello's
 * hostname, which it takes.
 */
struct hostframe_ops {
	enum hf_rc	(*hello)(struct job_host *, struct ap_hello *);
	enum hf_rc	(*portlist)(struct job_host *, const int *ports,
			    uint32_t n);
	enum hf_rc	(*checked)(struct job_host *, const uint8_t *, size_t);
	enum hf_rc	(*iface)(struct job_host *, const struct ap_iface *);
	enum hf_rc	(*prepared)(struct job_host *);
	enum hf_rc	(*started)(struct job_host *, uint32_t rank,
			    uint32_t pid);
	enum hf_rc	(*output)(struct job_host *, const struct ap_output *);
	enum hf_rc	(*errfile)(struct job_host *, const struct ap_errfile *);
	enum hf_rc	(*exit)(struct job_host *, const struct ap_exit *);
	enum hf_rc	(*error)(struct job_host *, const struct ap_error *);
	enum hf_rc	(*stack)(struct job_host *, const struct ap_stack *);
	enum hf_rc	(*stackask)(struct job_host *);
	enum hf_rc	(*done)(struct job_host *);
	/* A rank's rendezvous bytes on channel chan; none: it ended. */
	enum hf_rc	(*rdzv)(struct job_host *, uint32_t chan,
			    const uint8_t *, size_t);
	/* The same for a rank's connection to the job's TCPStore. */
	enum hf_rc	(*store)(struct job_host *, uint32_t chan,
			    const uint8_t *, size_t);
	/* Its ranks' arrivals at NCCL collectives; now_ns: its clock then. */
	enum hf_rc	(*colls)(struct job_host *, uint64_t now_ns,
			    const struct ap_coll *, uint32_t n);
	/* The steps its ranks reported. */
	enum hf_rc	(*progress)(struct job_host *,
			    const struct ap_progress *, uint32_t n);
	/* Where its ranks waited, sampled. */
	enum hf_rc	(*waits)(struct job_host *, const struct ap_wait *,
			    uint32_t n);
};

/* A decoder's (or check_frame's) 0 or DT_ERR_* as a handler's result. */
enum hf_rc	hostframe_rc(int err);

/*
 * h's phase for the table: its attempt's, or HP_BETWEEN while no attempt
 * runs (h->job NULL), when it has no handler to go to.
 */
enum host_phase	hostframe_phase(const struct job_host *h);

/*
 * Takes one frame of h's agent, in hostframe_phase's phase. Returns 0
 * when handled or dropped as stale, DT_ERR_PROTO with e saying what was
 * wrong and in which phase, or DT_ERR_NOMEM with e saying so.
 */
int	hostframe_take(const struct hostframe_ops *, struct job_host *h,
	    uint8_t type, const uint8_t *p, size_t n, struct dt_err *e);

#endif
