/*
 * keeper.c -- the agent's keeper (see keeper.h).
 *
 * Ranks die with the agent (PR_SET_PDEATHSIG), but a rank's daemon (setsid,
 * double fork) is in no rank's group and has no such tie. While the agent
 * lives, such orphans come back to it, a child subreaper, and die with the
 * job. When the agent is SIGKILLed no code of it runs any more, and its
 * orphans would go to the next subreaper up or to init and outlive the job.
 * So dtrun-agent forks first and the parent stays as this keeper: a child
 * subreaper too, and the nearest one once the agent is gone, so everything
 * the agent leaves comes to it. It only waits; when the agent ends it kills
 * and reaps what came back, and exits as the agent did, so dtrun, sshd and
 * srun see the agent's own status. It holds none of the link's fds, so
 * dtrun sees the link close the moment the agent dies (exit 255) and does
 * not wait for the keeper.
 *
 * Other ways considered: dtrun as a subreaper works only on dtrun's own
 * host, not over ssh or under srun; finding leftovers by DTRUN_JOB_ID in
 * /proc/PID/environ misses a daemon that clears its environment, so
 * dtrun-kill uses it only as a last resort (killjob.c).
 */
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "agent/keeper.h"
#include "agent/procs.h"

/* 100 ms each: how long a child we cannot kill holds the keeper (30 s). */
#define KEEPER_ROUNDS	300

/*
 * Kills and reaps everything that is left to the keeper, until nothing is:
 * until the kernel says we have no child (ECHILD). The walk of /proc alone
 * is not enough to stop on: a process caught in the middle of its parent's
 * exit, being handed over to us, can be missing from every children list,
 * and we would leave it to init.
 */
static void
keeper_sweep(void)
{
	struct timespec	ts = { 0, 100 * 1000 * 1000 };
	sigset_t	chld;
	size_t		live, sent;
	int		rounds;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/*
	 * A killed process's children come to us in turn, and one forked
	 * after a walk is seen on the next. A process we may not signal (not
	 * ours, as a setuid program) is left to whoever reaps after us: for
	 * it we wait KEEPER_ROUNDS rounds at most.
	 */
	for (rounds = 0; rounds < KEEPER_ROUNDS; rounds++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		live = spawn_kill_descendants(SIGKILL, &sent);
		if (waitpid(-1, NULL, WNOHANG) == -1 && errno == ECHILD)
			break;
		if (live > 0 && sent == 0 && rounds >= 10)
			break;
		sigtimedwait(&chld, NULL, &ts);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

pid_t
keeper_fork(int *status)
{
	sigset_t	set, old;
	pid_t		keeper = getpid(), agent;
	int		sig, fd;

	/* Set before the fork: an agent that dies at once still leaves its orphans to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return -1;
	/* No handlers: the keeper takes its signals with sigwait. */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((agent = fork()) == -1) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		return -1;
	}
	if (agent == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		/*
		 * Keeper gone: stop as dtrun-kill would have us stop. The
		 * agent is a subreaper itself, so it still cleans up all.
		 */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != keeper)
			raise(SIGTERM);
		return 0;
	}

	/* The link is the agent's alone. */
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDOUT_FILENO)
			close(fd);
	}
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Ctrl-\ on dtrun's terminal reaches us too: it asks for stacks. */
	signal(SIGQUIT, SIG_IGN);
	/* sbatch --signal=USR1@N without B: signals the agents' step: live on. */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGTERM)
			kill(agent, SIGTERM);	/* unreaped: cannot be reused */
		else if (waitpid(agent, status, WNOHANG) == agent)
			break;
	}
	keeper_sweep();
	return agent;
}
