/* t_phase.c -- the table of which frame each end takes in which phase. */
#include <stdint.h>
#include <string.h>

#include "proto/agentproto.h"
#include "common/err.h"
#include "proto/phase.h"
#include "test.h"

/* Every frame type, each way. */
static const uint8_t to_agent[] = { AP_JOB, AP_RANK, AP_PREPARE, AP_START,
    AP_SIGNAL, AP_STOP, AP_PORTS, AP_CONT, AP_STACKS, AP_CHECK, AP_AGAIN };
static const uint8_t to_dtrun[] = { AP_HELLO, AP_PREPARED, AP_STARTED,
    AP_OUTPUT, AP_EXIT, AP_ERROR, AP_DONE, AP_PORTLIST, AP_STACK,
    AP_STACKASK, AP_IFACE, AP_ERRFILE, AP_CHECKED, AP_PROGRESS };

TEST(phase_each_side_refuses_the_others_frames)
{
	size_t	i;
	int	ph;

	for (ph = 0; ph < AGP_NPHASES; ph++)
		for (i = 0; i < sizeof(to_dtrun); i++)
			CHECK_INT(agent_frame_verdict(ph, to_dtrun[i]), AP_ILLEGAL);
	for (ph = 0; ph < HP_NPHASES; ph++)
		for (i = 0; i < sizeof(to_agent); i++)
			CHECK_INT(host_frame_verdict(ph, to_agent[i]), AP_ILLEGAL);
	/* Unknown types and phases are errors, never taken. */
	CHECK_INT(host_frame_verdict(HP_CONNECTED, 200), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_NPHASES, AP_STOP), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_NPHASES, AP_HELLO), AP_ILLEGAL);
}

TEST(phase_every_frame_has_a_phase_and_heartbeats_always)
{
	size_t	i;
	int	ph, n;

	for (i = 0; i < sizeof(to_agent); i++) {
		for (n = 0, ph = 0; ph < AGP_NPHASES; ph++)
			n += agent_frame_verdict(ph, to_agent[i]) == AP_TAKE;
		CHECK(n > 0);
	}
	for (i = 0; i < sizeof(to_dtrun); i++) {
		for (n = 0, ph = 0; ph < HP_NPHASES; ph++)
			n += host_frame_verdict(ph, to_dtrun[i]) == AP_TAKE;
		CHECK(n > 0);
	}
	/* A finishing agent hears nothing more: its flush takes them as life. */
	for (ph = 0; ph < AGP_NPHASES; ph++)
		CHECK_INT(agent_frame_verdict(ph, AP_HEARTBEAT),
		    ph == AGP_FINISHING ? AP_STALE : AP_TAKE);
	for (ph = 0; ph < HP_NPHASES; ph++)
		CHECK_INT(host_frame_verdict(ph, AP_HEARTBEAT), AP_TAKE);
}

TEST(phase_the_conversations_order)
{
	/* dtrun's side: HELLO first, PREPARED before START's frames. */
	CHECK_INT(host_frame_verdict(HP_REACHING, AP_HELLO), AP_TAKE);
	CHECK_INT(host_frame_verdict(HP_CONNECTED, AP_HELLO), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_REACHING, AP_OUTPUT), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_CONNECTED, AP_EXIT), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_PREPARED, AP_EXIT), AP_TAKE);
	CHECK_INT(host_frame_verdict(HP_PREPARED, AP_IFACE), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_PREPARED, AP_PREPARED), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_DONE, AP_OUTPUT), AP_STALE);
	/* The agent's: JOB once, RANKs after it, START once PREPARE is in. */
	CHECK_INT(agent_frame_verdict(AGP_WAITING, AP_JOB), AP_TAKE);
	CHECK_INT(agent_frame_verdict(AGP_JOB, AP_JOB), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_WAITING, AP_RANK), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_JOB, AP_CHECK), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_JOB, AP_START), AP_ILLEGAL);
	/* One host's START comes with PREPARE: kept until prepared. */
	CHECK_INT(agent_frame_verdict(AGP_PREPARING, AP_START), AP_TAKE);
	CHECK_INT(agent_frame_verdict(AGP_PREPARED, AP_START), AP_TAKE);
	CHECK_INT(agent_frame_verdict(AGP_RUNNING, AP_START), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_IDLE, AP_STOP), AP_STALE);
	CHECK_INT(agent_frame_verdict(AGP_IDLE, AP_JOB), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_IDLE, AP_AGAIN), AP_TAKE);
	CHECK_INT(agent_frame_verdict(AGP_RUNNING, AP_AGAIN), AP_ILLEGAL);
}

/*
 * Between attempts dtrun's kept agent only beats: the rest it says (an
 * ERROR and DONE for SIGTERM, a STACKASK) is stale, never handled with no
 * attempt to hand it to. A finishing agent's DONE or refusal crossed all
 * dtrun sent: stale, but for frames only an agent sends.
 */
TEST(phase_between_attempts_and_finishing)
{
	size_t	i;

	CHECK_INT(host_frame_verdict(HP_BETWEEN, AP_HEARTBEAT), AP_TAKE);
	for (i = 0; i < sizeof(to_dtrun); i++)
		CHECK_INT(host_frame_verdict(HP_BETWEEN, to_dtrun[i]),
		    AP_STALE);
	CHECK_INT(host_frame_verdict(HP_BETWEEN, AP_JOB), AP_ILLEGAL);
	CHECK_INT(host_frame_verdict(HP_BETWEEN, 200), AP_ILLEGAL);
	CHECK_STR(host_phase_name(HP_BETWEEN), "between attempts");
	for (i = 0; i < sizeof(to_agent); i++)
		CHECK_INT(agent_frame_verdict(AGP_FINISHING, to_agent[i]),
		    AP_STALE);
	CHECK_INT(agent_frame_verdict(AGP_FINISHING, AP_RDZV), AP_STALE);
	CHECK_INT(agent_frame_verdict(AGP_FINISHING, AP_HELLO), AP_ILLEGAL);
	CHECK_INT(agent_frame_verdict(AGP_FINISHING, AP_DONE), AP_ILLEGAL);
	CHECK_STR(agent_phase_name(AGP_FINISHING), "finishing");
}

TEST(phase_refusal_names_frame_and_phase)
{
	struct dt_err	e;

	CHECK_INT(ap_frame_refused(&e, host_phase_name(HP_PREPARED),
	    AP_HELLO, 0), DT_ERR_PROTO);
	CHECK_STR(e.msg, "HELLO message out of place (while prepared)");
	CHECK_INT(ap_frame_refused(&e, agent_phase_name(AGP_RUNNING),
	    AP_STOP, 1), DT_ERR_PROTO);
	CHECK_STR(e.msg, "malformed STOP message (while running)");
}
