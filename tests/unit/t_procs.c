/* t_procs.c -- proc_signal: only the process that was meant, never pid 1. */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include "procs.h"
#include "test.h"

TEST(proc_signal_checks_start_time)
{
	struct proc_info	pi;
	pid_t			pid;
	int			st;

	if ((pid = fork()) == 0) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0);
	CHECK_INT(proc_info(pid, &pi), 0);
	CHECK_INT(pi.ppid, getpid());
	CHECK_INT(pi.uid, getuid());
	CHECK(pi.start != 0);
	/* Another start time: a reused pid; nothing is sent. */
	errno = 0;
	CHECK_INT(proc_signal(pid, pi.start + 1, SIGKILL), -1);
	CHECK_INT(errno, ESRCH);
	CHECK_INT(waitpid(pid, &st, WNOHANG), 0);
	CHECK_INT(proc_signal(pid, pi.start, SIGKILL), 0);
	CHECK_INT(waitpid(pid, &st, 0), pid);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* Reaped: gone, whatever the start time. */
	CHECK_INT(proc_signal(pid, pi.start, SIGKILL), -1);
}

TEST(proc_signal_refuses_init_and_groups)
{
	CHECK_INT(proc_signal(1, proc_starttime(1), 0), -1);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(proc_signal(0, 1, 0), -1);
	CHECK_INT(proc_signal(-1, 1, 0), -1);
	CHECK_INT(proc_signal(-getpid(), proc_starttime(getpid()), 0), -1);
	CHECK_INT(proc_signal(getpid(), 0, 0), -1);
	/* Ourselves, with our start time: allowed (signal 0 sends nothing). */
	CHECK_INT(proc_signal(getpid(), proc_starttime(getpid()), 0), 0);
}
