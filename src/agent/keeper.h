/*
 * keeper.h -- the agent's keeper: a minimal parent that outlives the agent
 * and kills whatever the agent's ranks left behind if the agent itself is
 * killed (kill -9, the OOM killer), when the agent can clean up nothing.
 */
#ifndef DT_KEEPER_H
#define DT_KEEPER_H

#include <sys/types.h>

#include <stdint.h>

/*
 * Forks the agent off this process, which stays behind as its keeper, a
 * child subreaper holding none of the agent's link (stdin and stdout go to
 * /dev/null). In the agent returns 0; the agent gets SIGTERM if its
 * keeper dies. In the keeper returns the agent's pid once the agent has
 * ended and every process that came back to the keeper is killed and
 * reaped, with the agent's wait status in *status; SIGTERM sent to the
 * keeper meanwhile is passed on to the agent (SIGTERM and SIGCHLD stay
 * blocked in the keeper). Returns -1 if fork failed
 * (the agent then runs without a keeper).
 */
pid_t	keeper_fork(int *status);

/*
 * In the agent: tells its keeper it lives (a pipe between them), and that
 * it is given up, its ranks and all they started killed, after twice
 * timeout_ms without a beat (dtrun's --heartbeat-timeout; the agent beats
 * every link_beat_period_ms(timeout_ms) / 2). 0: no longer watched (the
 * agent is finishing). Never blocks; nothing without a keeper.
 */
void	keeper_beat(uint64_t timeout_ms);

#endif
