/*
 * main.c -- dtrun-agent: one per host, started by dtrun over a pipe, ssh or
 * srun. It speaks the agent protocol on stdin/stdout; its stderr carries
 * only its own complaints.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "kill.h"
#include "log.h"
#include "agentproto.h"

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
	if (argc != 1) {
		fprintf(stderr, "usage: dtrun-agent [--version]\n"
		    "       dtrun-agent --kill [--all] [-w SECS] [-q] JOBID...\n"
		    "dtrun-agent is started by dtrun; it speaks dtrun's agent "
		    "protocol on stdin/stdout.\n");
		return 2;
	}
	if (isatty(STDIN_FILENO)) {
		log_error("stdin is a terminal: dtrun-agent is started by "
		    "dtrun, not by hand");
		return 2;
	}
	return agent_run(STDIN_FILENO, STDOUT_FILENO);
}
