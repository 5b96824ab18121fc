/*
 * phase.h -- where each end of the launcher <-> agent conversation is, and
 * which frame it may receive there.
 *
 * One table (phase.c) says, for every frame type and every phase of the
 * side that receives it, whether the frame is taken, dropped as stale (the
 * other side sent it before it heard ours), or a protocol error. dtrun
 * (src/launcher/job/job.c), the agent (src/agent/agent.c) and the conversation
 * fuzzer all ask it, so a frame out of place is refused the same way
 * everywhere, with a message naming the phase and the frame. The order
 * itself is agentproto.h's conversation.
 */
#ifndef DT_PHASE_H
#define DT_PHASE_H

#include <stdint.h>

struct dt_err;

/* dtrun's view of one host's agent, in one attempt. */
enum host_phase {
	HP_REACHING,		/* started, or sent AGAIN: its HELLO to come */
	HP_CONNECTED,		/* HELLO in: check, ports, JOB, RANKs, PREPARE */
	HP_PREPARED,		/* PREPARED in: START, then its ranks run */
	HP_DONE,		/* DONE in, its link lost or cut: over */
	HP_BETWEEN,		/* no attempt runs: its agent, kept, only beats */
	HP_NPHASES
};

/* The agent's own, from its first HELLO to its exit. */
enum agent_phase {
	AGP_WAITING,		/* HELLO sent: CHECK, PORTS, then JOB */
	AGP_JOB,		/* JOB in: its RANKs, then PREPARE */
	AGP_PREPARING,		/* PREPARE in: setup, interface, commands */
	AGP_PREPARED,		/* PREPARED sent: START to come */
	AGP_RUNNING,		/* START in: ranks run until DONE */
	AGP_IDLE,		/* DONE sent: AGAIN (the next attempt) to come */
	AGP_FINISHING,		/* its last DONE sent, or the job refused: it
				   flushes and exits, hearing nothing more */
	AGP_NPHASES
};

/* What the receiving side does with a frame. */
enum ap_verdict {
	AP_ILLEGAL,		/* a protocol error: the link is cut */
	AP_TAKE,		/* handle it */
	AP_STALE		/* sent before the other side heard us: drop it */
};

/* What dtrun does with a frame of type from an agent in phase ph. */
enum ap_verdict	 host_frame_verdict(enum host_phase ph, uint8_t type);
/* What the agent does with a frame of type from dtrun, itself in phase ph. */
enum ap_verdict	 agent_frame_verdict(enum agent_phase ph, uint8_t type);

/* "reaching", "connected"...: for messages. */
const char	*host_phase_name(enum host_phase);
const char	*agent_phase_name(enum agent_phase);

/*
 * Fills e with why a frame of type is refused in phase (its name, from
 * the functions above), or, with bad set, that its payload is malformed.
 * Returns DT_ERR_PROTO.
 */
int		 ap_frame_refused(struct dt_err *e, const char *phase,
		    uint8_t type, int bad);

#endif
