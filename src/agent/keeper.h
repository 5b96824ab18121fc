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
 * Splits the agent off this process without copying it: fn(arg) runs, and
 * exits with what it returns, in a child that shares this process's memory
 * (clone with CLONE_VM, on a stack of its own), while this process execs
 * its own binary as "dtrun-agent --keep AGENT FD" (main.c), which gives it
 * fresh memory and leaves this one to the agent. So no page is copied on
 * the agent's way to its first frame, and the exec runs beside it. The
 * keeper is a child subreaper holding none of the agent's link; the agent
 * gets SIGTERM if its keeper dies. Returns only when the split failed,
 * -1, before anything was started: run fn without a keeper then. fn must
 * not raise() (its thread block still names this process's thread).
 */
int	keeper_split(int (*fn)(void *), void *arg);

/*
 * The keeper, after keeper_split's exec: stdin and stdout to /dev/null,
 * waits until the agent ends, its wait status in *status, then kills and
 * reaps every process that came back to it; SIGTERM meanwhile is passed
 * on to the agent. fd is the agent's beat pipe (keeper_beat). Returns the
 * agent's pid.
 */
pid_t	keeper_main(pid_t agent, int fd, int *status);

/*
 * In the agent: tells its keeper it lives (a pipe between them), and that
 * it is given up, its ranks and all they started killed, after twice
 * timeout_ms without a beat (dtrun's --heartbeat-timeout; the agent beats
 * every link_beat_period_ms(timeout_ms) / 2). 0: no longer watched (the
 * agent is finishing). Never blocks; nothing without a keeper.
 */
void	keeper_beat(uint64_t timeout_ms);

#endif
