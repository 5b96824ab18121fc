/*
 * main.c -- dtrun-agent: one per host, started by dtrun over a pipe, ssh or
 * srun. It speaks the agent protocol on stdin/stdout, or under srun on a
 * TCP connection to dtrun (--connect); its stderr carries only its own
 * complaints.
 */
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/killjob.h"
#include "agent/keeper.h"
#include "host/record.h"
#include "host/connect.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/log.h"
#include "proto/agentproto.h"

#define CONNECT_TIMEOUT_MS	60000

/*
 * Splits off the keeper (keeper.h). Returns in the agent, with its keeper's
 * pid (0: none); in the keeper, once all is gone, exits as the agent did.
 */
static pid_t
agent_keep(void)
{
	struct rlimit	 nocore = { 0, 0 };
	sigset_t	 set;
	pid_t		 agent;
	int		 st;

	if ((agent = keeper_fork(&st)) == 0)
		return getppid();
	if (agent == -1) {
		log_warn("cannot fork the agent's keeper: a rank's daemon may "
		    "outlive the agent if it is killed");
		return 0;
	}
	record_remove_dead(agent, getpid());
	if (WIFSIGNALED(st)) {
		/* The same death, without a second core dump. */
		setrlimit(RLIMIT_CORE, &nocore);
		signal(WTERMSIG(st), SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, WTERMSIG(st));
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(WTERMSIG(st));
	}
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_INTERNAL);
}

/*
 * --connect ADDR: dials dtrun with the secret from the environment (taken
 * out of it, so ranks never see it), then runs the agent on the socket.
 */
static int
agent_connect(const char *addr, pid_t keeper)
{
	struct dt_err	 e;
	const char	*tok = getenv(AC_TOKEN_ENV), *node;
	char		 host[HOST_NAME_MAX + 1];
	uint8_t		 secret[AC_SECRET_MAX];
	size_t		 slen;
	int		 fd;

	if (tok == NULL || ac_token_decode(tok, secret, sizeof(secret),
	    &slen) != 0) {
		log_error("--connect needs the job's agent secret in %s (dtrun "
		    "sets it through srun)", AC_TOKEN_ENV);
		return EXIT_CONFIG;
	}
	unsetenv(AC_TOKEN_ENV);
	/* Slurm's name for this node is the one in dtrun's host list. */
	if ((node = getenv("SLURMD_NODENAME")) == NULL || *node == '\0') {
		if (gethostname(host, sizeof(host) - 1) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	fd = ac_dial(addr, secret, slen, node, CONNECT_TIMEOUT_MS, &e);
	explicit_bzero(secret, sizeof(secret));
	if (fd < 0) {
		log_error("%s: %s", node, e.msg);
		return EXIT_NOCONNECT;
	}
	return agent_run(fd, fd, keeper);	/* its link closes fd */
}

/* The agent on stdin/stdout, with a keeper of its own if keep. */
static int
agent_stdio(int keep)
{
	if (isatty(STDIN_FILENO)) {
		log_error("stdin is a terminal: dtrun-agent is started by "
		    "dtrun, not by hand");
		return EXIT_CONFIG;
	}
	return agent_run(STDIN_FILENO, STDOUT_FILENO, keep ? agent_keep() : 0);
}

int
main(int argc, char **argv)
{
	log_init("dtrun-agent");
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("dtrun-agent %s protocol %d\n", DT_VERSION, AP_VERSION);
		return 0;
	}
	/* dtrun-kill -H runs "@dtrun-agent --kill ..." on each host. */
	if (argc >= 2 && strcmp(argv[1], "--kill") == 0)
		return kill_main(argc, argv);
	/* Under Slurm the agent dials dtrun instead of being dialled. */
	if (argc == 3 && strcmp(argv[1], "--connect") == 0)
		return agent_connect(argv[2], agent_keep());
	/*
	 * dtrun starts its own host's agent so: dtrun is a child subreaper
	 * and does the keeper's part (backend_local.c); no fork here.
	 */
	if (argc == 2 && strcmp(argv[1], "--parent-keeps") == 0)
		return agent_stdio(0);
	if (argc != 1) {
		fprintf(stderr, "usage: dtrun-agent [--version | --connect "
		    "HOST:PORT | --parent-keeps]\n"
		    "       dtrun-agent --kill [--all] [-w SECS] [-q] JOBID...\n"
		    "dtrun-agent is started by dtrun; it speaks dtrun's agent "
		    "protocol on stdin/stdout, or with --connect on a TCP\n"
		    "connection to dtrun (under srun).\n");
		return EXIT_CONFIG;
	}
	return agent_stdio(1);
}
