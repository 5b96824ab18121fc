/*
 * phase.c -- the table of which frame each end takes in which phase.
 *
 * A row per frame type: the phases of the receiving side where it is
 * taken, and those where it is dropped as stale; anywhere else it is a
 * protocol error. A frame the receiving side never gets (the agent's
 * frames at the agent) has no bits on that side.
 */
#include <stddef.h>
#include <stdint.h>

#include "proto/agentproto.h"
#include "common/err.h"
#include "proto/phase.h"

#define H(p)	(1u << (p))
#define HP_ALL	(H(HP_REACHING) | H(HP_CONNECTED) | H(HP_PREPARED))
/* Over for this attempt, or between two: an agent's frame is stale. */
#define HP_OVER	(H(HP_DONE) | H(HP_BETWEEN))
#define AGP_LIVE (H(AGP_WAITING) | H(AGP_JOB) | H(AGP_PREPARING) | \
	    H(AGP_PREPARED) | H(AGP_RUNNING))
/* Its attempt over, or the agent itself: what crossed its DONE is stale. */
#define AGP_OVER (H(AGP_IDLE) | H(AGP_FINISHING))

struct phase_row {
	uint8_t		type;
	uint16_t	host_take, host_stale;	/* dtrun receiving, by host_phase */
	uint16_t	agent_take, agent_stale; /* the agent receiving */
};

static const struct phase_row phase_rows[] = {
	/* agent -> dtrun. After DONE (or a lost link) the agent is over for
	   this attempt: what still comes is stale, and so is what a kept
	   agent says between attempts (SIGTERM's ERROR and DONE, SIGQUIT's
	   STACKASK): the next attempt reaches it again. */
	{ AP_HELLO,	H(HP_REACHING), HP_OVER, 0, 0 },
	{ AP_PORTLIST,	H(HP_CONNECTED), HP_OVER, 0, 0 },
	{ AP_CHECKED,	H(HP_CONNECTED), HP_OVER, 0, 0 },
	{ AP_IFACE,	H(HP_CONNECTED), HP_OVER, 0, 0 },
	{ AP_PREPARED,	H(HP_CONNECTED), HP_OVER, 0, 0 },
	{ AP_STARTED,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_OUTPUT,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_ERRFILE,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_EXIT,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_STACK,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_PROGRESS,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_COLLS,	H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_WAITS,	H(HP_PREPARED), HP_OVER, 0, 0 },
	/* A rank's rendezvous, both ways, while ranks run; a rank's stream
	   may still be answered after the agent's DONE crossed it. */
	{ AP_RDZV,	H(HP_PREPARED), HP_OVER, H(AGP_RUNNING), AGP_OVER },
	{ AP_STORE,	H(HP_PREPARED), HP_OVER, H(AGP_RUNNING), AGP_OVER },
	/* Any time its agent runs: SIGQUIT, a failure, the end of its part. */
	{ AP_STACKASK,	H(HP_CONNECTED) | H(HP_PREPARED), HP_OVER, 0, 0 },
	{ AP_ERROR,	HP_ALL, HP_OVER, 0, 0 },
	{ AP_DONE,	H(HP_CONNECTED) | H(HP_PREPARED), HP_OVER, 0, 0 },

	/* dtrun -> agent. STOP, SIGNAL and STACKS may cross the agent's
	   DONE: between attempts they are stale. Once it finishes, all is:
	   its last DONE, or its refusal of the job, crossed what dtrun
	   sent (the JOB's RANKs, STOP, AGAIN). */
	{ AP_PORTS,	0, 0, H(AGP_WAITING), H(AGP_FINISHING) },
	{ AP_CHECK,	0, 0, H(AGP_WAITING), H(AGP_FINISHING) },
	{ AP_JOB,	0, 0, H(AGP_WAITING), H(AGP_FINISHING) },
	{ AP_CONT,	0, 0, H(AGP_WAITING) | H(AGP_JOB), H(AGP_FINISHING) },
	{ AP_RANK,	0, 0, H(AGP_JOB), H(AGP_FINISHING) },
	{ AP_PREPARE,	0, 0, H(AGP_JOB), H(AGP_FINISHING) },
	/* One host: START follows PREPARE at once; the agent starts once
	   prepared (prepare.c), with nothing to wait for on other hosts. */
	{ AP_START,	0, 0, H(AGP_PREPARING) | H(AGP_PREPARED), H(AGP_FINISHING) },
	{ AP_STOP,	0, 0, AGP_LIVE, AGP_OVER },
	{ AP_SIGNAL,	0, 0, AGP_LIVE, AGP_OVER },
	{ AP_STACKS,	0, 0, AGP_LIVE, AGP_OVER },
	{ AP_AGAIN,	0, 0, H(AGP_IDLE), H(AGP_FINISHING) },

	/* Both ways, whenever the link is up; a finishing agent's flush
	   hears them only as life. */
	{ AP_HEARTBEAT,	HP_ALL | HP_OVER, 0, AGP_LIVE | H(AGP_IDLE),
	    H(AGP_FINISHING) },
};

static const struct phase_row *
phase_row(uint8_t type)
{
	size_t	i;

	for (i = 0; i < sizeof(phase_rows) / sizeof(phase_rows[0]); i++)
		if (phase_rows[i].type == type)
			return &phase_rows[i];
	return NULL;
}

static enum ap_verdict
phase_verdict(uint16_t take, uint16_t stale, unsigned ph)
{
	if (take & H(ph))
		return AP_TAKE;
	return (stale & H(ph)) ? AP_STALE : AP_ILLEGAL;
}

enum ap_verdict
host_frame_verdict(enum host_phase ph, uint8_t type)
{
	const struct phase_row	*r = phase_row(type);

	if (r == NULL || (unsigned)ph >= HP_NPHASES)
		return AP_ILLEGAL;
	return phase_verdict(r->host_take, r->host_stale, ph);
}

enum ap_verdict
agent_frame_verdict(enum agent_phase ph, uint8_t type)
{
	const struct phase_row	*r = phase_row(type);

	if (r == NULL || (unsigned)ph >= AGP_NPHASES)
		return AP_ILLEGAL;
	return phase_verdict(r->agent_take, r->agent_stale, ph);
}

const char *
host_phase_name(enum host_phase ph)
{
	static const char *const names[HP_NPHASES] = {
		"reaching", "connected", "prepared", "done",
		"between attempts"
	};

	return (unsigned)ph < HP_NPHASES ? names[ph] : "?";
}

const char *
agent_phase_name(enum agent_phase ph)
{
	static const char *const names[AGP_NPHASES] = {
		"waiting for the job", "receiving the job", "preparing",
		"prepared", "running", "idle", "finishing"
	};

	return (unsigned)ph < AGP_NPHASES ? names[ph] : "?";
}

int
ap_frame_refused(struct dt_err *e, const char *phase, uint8_t type, int bad)
{
	if (bad)
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "malformed %s "
		    "message (while %s)", ap_type_name(type), phase);
	return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO, "%s message out of place "
	    "(while %s)", ap_type_name(type), phase);
}
