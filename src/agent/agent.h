/* agent.h -- the per-host agent: starts its host's ranks and reports on them. */
#ifndef DT_AGENT_H
#define DT_AGENT_H

#include <sys/types.h>

/* A rank command naming the agent binary itself, wherever it is. */
#define AGENT_SELF	"@dtrun-agent"

/*
 * Runs an agent speaking the protocol of proto.h on rfd/wfd until its job
 * is over or its link breaks, and every process it started is gone.
 * keeper is the pid of its keeper (keeper.h), 0 if none: it goes into the
 * job record. Returns the agent's exit status.
 */
int	agent_run(int rfd, int wfd, pid_t keeper);

#endif
