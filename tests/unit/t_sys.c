/* t_sys.c -- waits bounded by a deadline, killing a group (common/sys.c). */
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/sys.h"
#include "test.h"

TEST(sys_ms_left_rounds_up_and_stops_at_zero)
{
	double	now = dt_clock_s(CLOCK_MONOTONIC);
	int	ms;

	CHECK_INT(dt_ms_left(0), -1);		/* no deadline: wait forever */
	CHECK_INT(dt_ms_left(now - 1), 0);
	ms = dt_ms_left(now + 10);
	CHECK(ms > 0 && ms <= 10001);
	CHECK_INT(dt_ms_left(now + 1e9), 1000000000);
}

TEST(sys_poll_until_ready_or_timed_out)
{
	double	now = dt_clock_s(CLOCK_MONOTONIC);
	int	p[2];

	CHECK_INT(pipe(p), 0);
	/* Nothing to read and the deadline gone: a timeout, not a hang. */
	CHECK_INT(dt_poll_until(p[0], POLLIN, now - 1), DT_ERR_TIMEOUT);
	CHECK_INT(dt_poll_until(p[1], POLLOUT, now - 1), 0);
	CHECK_INT(write(p[1], "x", 1), 1);
	CHECK_INT(dt_poll_until(p[0], POLLIN, 0), 0);
	CHECK_INT(dt_poll_until(p[0], POLLIN, now + 60), 0);
	close(p[0]);
	close(p[1]);
}

/* True once pid is dead: no /proc entry, or a zombie (state Z). */
static int
dead(pid_t pid)
{
	char	path[64], buf[512], *s = NULL;
	FILE	*f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	if (fgets(buf, sizeof(buf), f) != NULL)
		s = strrchr(buf, ')');
	fclose(f);
	return s != NULL && s[1] == ' ' && s[2] == 'Z';
}

/* Polls (bounded) until pid is dead; returns whether it is. */
static int
dies(pid_t pid)
{
	int	i;

	for (i = 0; i < 5000 && !dead(pid); i++)
		usleep(2000);
	return dead(pid);
}

TEST(sys_kill_reap_takes_the_whole_group)
{
	int	p[2], st = 0;
	pid_t	leader, other = 0;

	CHECK_INT(pipe(p), 0);
	if ((leader = fork()) == 0) {
		setpgid(0, 0);
		/* A member of the group that is not the leader's to reap. */
		if ((other = fork()) == 0)
			for (;;)
				pause();
		if (write(p[1], &other, sizeof(other)) != sizeof(other))
			_exit(1);
		for (;;)
			pause();
	}
	CHECK(leader > 0);
	setpgid(leader, leader);
	close(p[1]);
	CHECK_INT(read(p[0], &other, sizeof(other)), sizeof(other));
	close(p[0]);
	CHECK(other > 0);
	dt_kill_reap(leader, &st);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(kill(leader, 0) == -1);	/* reaped: no zombie left */
	/* The other member got the SIGKILL too (PID 1 reaps it, late). */
	CHECK(dies(other));
	if (other > 0)
		kill(other, SIGKILL);
}
