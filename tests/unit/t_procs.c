/*
 * t_procs.c -- proc_signal: only the process that was meant, never pid 1;
 * spawn_resolve: a command found as execvp would, or why not; spawn_rank
 * after spawn_init: the child gets its three descriptors and none of the
 * agent's many others, and an exec that fails says why.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "host/procs.h"
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

TEST(spawn_resolve_finds_or_says_why)
{
	struct dt_err	 e;
	char		*path, dir[] = "/tmp/t_procs.XXXXXX", f[64];
	int		 fd;

	CHECK_INT(spawn_resolve("sh", "/nonexistent:/bin", &path, &e), 0);
	CHECK_STR(path, "/bin/sh");
	free(path);
	CHECK_INT(spawn_resolve("/bin/sh", NULL, &path, &e), 0);
	free(path);
	CHECK_INT(spawn_resolve("no-such-cmd-here", "/bin", &path, &e),
	    DT_ERR_NOTFOUND);
	CHECK(path == NULL);
	CHECK_INT(e.errnum, ENOENT);
	CHECK_STR(e.msg, "command not found in PATH (check the name, or give "
	    "a path)");
	CHECK_INT(spawn_resolve("/no/such", NULL, &path, NULL),
	    DT_ERR_NOTFOUND);
	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(spawn_resolve(dir, NULL, &path, &e), DT_ERR_INVAL);
	CHECK_INT(e.errnum, EISDIR);
	CHECK_STR(e.msg, "is a directory, not a program");
	snprintf(f, sizeof(f), "%s/x", dir);
	CHECK((fd = open(f, O_CREAT | O_WRONLY, 0644)) >= 0);
	close(fd);
	CHECK_INT(spawn_resolve(f, NULL, &path, &e), DT_ERR_INVAL);
	CHECK_INT(e.errnum, EACCES);
	CHECK_STR(e.msg, "is not executable (chmod +x it)");
	CHECK_INT(spawn_resolve("x", dir, &path, &e), DT_ERR_INVAL);
	CHECK_STR(e.msg, "is in PATH but not executable (chmod +x it)");
	unlink(f);
	rmdir(dir);
}

/*
 * Closes our copy of the pipe's write end, reads what the child pid wrote
 * into buf (NUL-terminated) until EOF, and returns its wait status.
 */
static int
read_child(pid_t pid, int fds[2], char *buf, size_t size)
{
	ssize_t	n, got = 0;
	int	st = -1;

	close(fds[1]);
	while ((n = read(fds[0], buf + got, size - 1 - got)) > 0 ||
	    (n == -1 && errno == EINTR))
		got += n > 0 ? n : 0;
	buf[got] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	return st;
}

TEST(spawn_rank_gives_the_child_only_its_own_descriptors)
{
	char	*argv[] = { "/bin/sh", "-c", "cd /proc/self/fd && echo *; "
		    "echo err >&2", NULL };
	char	*env[] = { "PATH=/bin:/usr/bin", NULL };
	char	 buf[512], *word;
	int	 devnull, fds[2], many[300], i, st, leaked = 0;
	pid_t	 pid;

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(devnull >= 0);
	CHECK_INT(spawn_init(devnull), 0);
	/* An agent's table at many ranks; half not even close-on-exec. */
	for (i = 0; i < 300; i++)
		many[i] = fcntl(devnull, i % 2 ? F_DUPFD : F_DUPFD_CLOEXEC, 0);
	CHECK_INT(pipe2(fds, O_CLOEXEC), 0);
	pid = spawn_rank(argv[0], argv, env, devnull, fds[1], fds[1]);
	CHECK(pid > 0);
	/* EOF comes only if no slot kept the pipe's write end open. */
	st = read_child(pid, fds, buf, sizeof(buf));
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(strstr(buf, "err") != NULL);
	/* "0 1 2" and the descriptor the shell's glob opened, nothing else. */
	for (word = strtok(buf, " \n"); word != NULL; word = strtok(NULL, " \n"))
		if (strcmp(word, "err") != 0 && atoi(word) > 3)
			leaked++;
	CHECK_INT(leaked, 0);
	CHECK_INT(spawn_rank("/nonexistent/x", argv, env, devnull, devnull,
	    devnull), -ENOENT);
	for (i = 0; i < 300; i++)
		close(many[i]);
	close(devnull);
}

/* A handler of ours, for the batch test. */
static void
t_procs_caught(int sig)
{
	(void)sig;
}

/*
 * In a batch the parent keeps every signal blocked, and each child still
 * starts with every signal at its default and none blocked, though it
 * resets only those the parent had changed.
 */
TEST(spawn_batch_children_start_with_default_signals)
{
	char	*argv[] = { "/bin/sh", "-c", "grep -E '^Sig(Blk|Ign)' "
		    "/proc/self/status", NULL };
	char	*env[] = { "PATH=/bin:/usr/bin", NULL };
	char	 buf[512];
	sigset_t cur;
	int	 devnull, fds[2], st;
	pid_t	 pid;

	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(devnull >= 0);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGUSR2, t_procs_caught);
	spawn_batch_begin();
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(sigismember(&cur, SIGCHLD) && sigismember(&cur, SIGTERM));
	CHECK_INT(pipe2(fds, O_CLOEXEC), 0);
	pid = spawn_rank(argv[0], argv, env, devnull, fds[1], fds[1]);
	spawn_batch_end();
	CHECK(pid > 0);
	st = read_child(pid, fds, buf, sizeof(buf));
	CHECK(WIFEXITED(st));
	/* What grep inherits (an exec drops what was caught anyway). */
	CHECK(strstr(buf, "SigBlk:\t0000000000000000") != NULL);
	CHECK(strstr(buf, "SigIgn:\t0000000000000000") != NULL);
	if (strstr(buf, "SigIgn:\t0000000000000000") == NULL)
		fprintf(stderr, "    the child's: %s", buf);	/* which one */
	sigprocmask(SIG_SETMASK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGTERM));
	signal(SIGPIPE, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	close(devnull);
}
