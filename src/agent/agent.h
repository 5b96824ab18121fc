/* agent.h -- the per-host agent: starts its host's ranks and reports on them. */
#ifndef DT_AGENT_H
#define DT_AGENT_H

/* A rank command naming the agent binary itself, wherever it is. */
#define AGENT_SELF	"@dtrun-agent"

/*
 * Runs an agent speaking the protocol of proto.h on rfd/wfd until its job
 * is over or its link breaks, and every process it started is gone.
 * Returns the agent's exit status.
 */
int	agent_run(int rfd, int wfd);

#endif
