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
 * While the agent lives, the keeper also watches that it answers: the agent
 * beats on a pipe (keeper_beat) while dtrun's heartbeats are on. An agent
 * that is stopped (SIGSTOP, a debugger) or stuck does not beat; dtrun
 * gives its host up after the heartbeat timeout, and nothing would stop
 * its ranks. After KEEPER_LOOKS quiet looks (twice that timeout) the
 * keeper kills everything below the agent, the ranks, their children and
 * their daemons (orphans come to the agent, a subreaper, so all are below
 * it), and leaves the agent itself be: continued, it finds its ranks
 * killed and its link gone, and ends as a lost agent does.
 *
 * On dtrun's own host dtrun is the keeper (a subreaper, the agent's
 * parent: backend_local.c) and the agent runs with --parent-keeps, without
 * this fork on a local job's critical path; that works only there, not
 * over ssh or under srun. Finding leftovers by DTRUN_JOB_ID in
 * /proc/PID/environ misses a daemon that clears its environment, so
 * dtrun-kill uses it only as a last resort (killjob.c).
 */
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/keeper.h"
#include "host/procs.h"
#include "common/link.h"
#include "common/log.h"
#include "common/sys.h"

/* 100 ms each: how long a child we cannot kill holds the keeper (30 s). */
#define KEEPER_ROUNDS	300
/* Quiet looks, each a heartbeat period, before the ranks are killed. */
#define KEEPER_LOOKS	(2 * (LINK_BEAT_LOOKS + 1))

/* In the agent: the pipe's end it beats on (-1: no keeper). */
static int	keeper_wfd = -1;

/* What the keeper knows of the agent's beats. */
struct keeper_watch {
	int		 fd;		/* the pipe's end we read */
	uint32_t	 timeout_ms;	/* 0: not watching */
	uint64_t	 next;		/* when the next look is due */
	int		 heard;		/* a beat since the last look */
	int		 quiet;		/* looks in a row without one */
	int		 cut;		/* the ranks were killed this silence */
};

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

void
keeper_beat(uint64_t timeout_ms)
{
	uint32_t	ms = timeout_ms > UINT32_MAX ? UINT32_MAX :
			    (uint32_t)timeout_ms;

	/* Non-blocking: a full pipe is a keeper that has heard enough. */
	if (keeper_wfd >= 0 && write(keeper_wfd, &ms, sizeof(ms)) == -1 &&
	    errno != EAGAIN)
		log_debug("the keeper's beat: %s", strerror(errno));
}

/*
 * Kills everything below the silent agent, until nothing is left alive
 * there (the dead stay the agent's zombies). The agent is left alone.
 */
static void
keeper_cut(pid_t agent)
{
	struct timespec	ts = { 0, 100 * 1000 * 1000 };
	size_t		live, sent;
	int		rounds;

	for (rounds = 0; rounds < KEEPER_ROUNDS; rounds++) {
		if ((live = spawn_kill_below(agent, SIGKILL, &sent)) == 0)
			break;
		if (sent == 0 && rounds >= 10)
			break;		/* not ours to kill */
		nanosleep(&ts, NULL);
	}
}

/*
 * Reads the agent's beats, and looks when a look is due: an agent quiet
 * at KEEPER_LOOKS looks in a row has its ranks killed. Looks are counted,
 * not time: a keeper stopped with its agent (Ctrl-Z) looks once on waking
 * and gives nobody up for its own sleep. Returns the ms until the next
 * look, -1 when not watching.
 */
static int64_t
keeper_look(struct keeper_watch *w, pid_t agent)
{
	uint32_t	ms;
	uint64_t	now = dt_clock_ms(CLOCK_MONOTONIC), period;
	ssize_t		n;

	while (w->fd >= 0 && (n = read(w->fd, &ms, sizeof(ms))) != -1) {
		if (n != (ssize_t)sizeof(ms)) {
			/* Closed: the agent is ending (SIGCHLD follows). */
			close(w->fd);
			w->fd = -1;
			w->timeout_ms = 0;
			break;
		}
		if (w->timeout_ms == 0)
			w->next = now;
		w->timeout_ms = ms;
		w->heard = 1;
	}
	if (w->timeout_ms == 0)
		return -1;
	period = link_beat_period_ms(w->timeout_ms);
	if (now < w->next)
		return (int64_t)(w->next - now);
	w->next = now + period;
	w->quiet = w->heard ? 0 : w->quiet + 1;
	if (w->heard)
		w->cut = 0;
	w->heard = 0;
	if (w->quiet >= KEEPER_LOOKS) {
		if (!w->cut)
			log_warn("the agent (pid %d) has not answered for "
			    "%.3g s, twice dtrun's --heartbeat-timeout "
			    "(stopped or stuck): killing its ranks and all "
			    "they started", (int)agent,
			    (double)w->quiet * period / 1000.0);
		w->cut = 1;
		w->quiet = 0;	/* and again, if it stays silent */
		keeper_cut(agent);
	}
	return (int64_t)period;
}

/*
 * Waits until the agent ends, its status in *status: passes SIGTERM on to
 * it, and reads its beats on fd (closed before returning), giving its
 * ranks up if it falls silent (keeper_look). SIGCHLD and SIGTERM are
 * blocked (set).
 */
static void
keeper_wait(pid_t agent, int fd, const sigset_t *set, int *status)
{
	struct keeper_watch w = { -1, 0, 0, 0, 0, 0 };
	struct signalfd_siginfo si;
	struct pollfd	pfd[2];
	struct timespec	ts;
	int64_t		wait_ms;
	int		sig;

	w.fd = fd;
	/* Signals as a descriptor: we wait for them and the beats at once. */
	pfd[0].fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	pfd[0].events = pfd[1].events = POLLIN;
	for (;;) {
		/* The agent's SIGCHLD may have come while we cut: look anyway. */
		if (waitpid(agent, status, WNOHANG) == agent)
			break;
		wait_ms = keeper_look(&w, agent);
		pfd[1].fd = w.fd;
		if (pfd[0].fd == -1) {
			/* No signalfd: signals alone, and looks when due. */
			if (wait_ms < 0)
				wait_ms = 1000;
			ts.tv_sec = (time_t)(wait_ms / 1000);
			ts.tv_nsec = (long)(wait_ms % 1000) * 1000000;
			sig = sigtimedwait(set, NULL, &ts);
		} else if (poll(pfd, 2, wait_ms < 0 ? -1 : (int)wait_ms) > 0 &&
		    read(pfd[0].fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			sig = (int)si.ssi_signo;
		else
			sig = 0;
		if (sig == SIGTERM)
			kill(agent, SIGTERM);	/* unreaped: cannot be reused */
	}
	if (pfd[0].fd != -1)
		close(pfd[0].fd);
	if (w.fd != -1)
		close(w.fd);
}

pid_t
keeper_fork(int *status)
{
	sigset_t	set, old;
	pid_t		keeper = getpid(), agent;
	int		fd, beat[2];

	if (pipe2(beat, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	/* Set before the fork: an agent that dies at once still leaves its orphans to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		close(beat[0]);
		close(beat[1]);
		return -1;
	}
	/* No handlers: the keeper takes its signals with sigwait. */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	if ((agent = fork()) == -1) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		close(beat[0]);
		close(beat[1]);
		return -1;
	}
	if (agent == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(beat[0]);
		keeper_wfd = beat[1];
		/*
		 * Keeper gone: stop as dtrun-kill would have us stop. The
		 * agent is a subreaper itself, so it still cleans up all.
		 */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != keeper)
			raise(SIGTERM);
		return 0;
	}

	close(beat[1]);
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
	keeper_wait(agent, beat[0], &set, status);
	keeper_sweep();
	return agent;
}
