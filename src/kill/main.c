/*
 * main.c -- dtrun-kill: clean up a job's leftovers by job id, never by
 * command name. On this host it does the work itself (src/agent/kill.c).
 * With -H it runs that same code on every host as a one-rank-per-host
 * dtrun job over ssh, "@dtrun-agent --kill ...", so it connects exactly
 * as dtrun does: same known_hosts, keys, ssh_config, agent upload.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "exitcodes.h"
#include "kill.h"
#include "log.h"
#include "strv.h"

static const char usage[] =
"usage: dtrun-kill [-q] [-w SECS] JOBID...\n"
"       dtrun-kill [-q] [-w SECS] --all\n"
"       dtrun-kill -H HOSTS [ssh options] [-q] [-w SECS] JOBID... | --all\n"
"       dtrun-kill --stacks [-H HOSTS] JOBID...\n"
"\n"
"Stops what dtrun jobs left running, by job id (DTRUN_JOB_ID), or every job\n"
"of yours with --all. Each job's agent is asked to stop its ranks; after\n"
"-w SECS (default 10) what is left is killed, processes carrying the job's\n"
"DTRUN_JOB_ID included. A dtrun running with --max-restarts is stopped\n"
"first, on this machine (with -H too), so that it starts nothing again.\n"
"\n"
"With --stacks nothing is stopped: each job's agent is asked (SIGQUIT) for\n"
"its ranks' stacks, and the job's dtrun prints every rank's stack, merged,\n"
"on its stderr (as kill -QUIT to dtrun does).\n"
"\n"
"  -a, --all               every job of yours (never the caller's own job)\n"
"  -w, --wait SECS         between SIGTERM and SIGKILL (default 10)\n"
"  -q, --quiet             print nothing\n"
"      --stacks            ask for every rank's stack; the job goes on\n"
"  -H, --hosts LIST|FILE   do it on these hosts over ssh, as dtrun would\n"
"  -p, --ssh-port PORT     ssh port\n"
"  -i, --ssh-identity FILE ssh private key to try (repeatable)\n"
"      --ssh-option K=V    ssh -o option, as for dtrun (repeatable)\n"
"  -F, --ssh-config FILE   ssh_config to read (default ~/.ssh/config)\n"
"  -J, --ssh-jump HOSTS    through these jump hosts, as for dtrun -J\n"
"      --ssh-fanout N      hosts connecting at once (default 64)\n"
"      --ssh-agent-dir DIR where hosts cache dtrun-agent (~/.cache/dtrun)\n"
"  -h, --help              this text\n"
"\n"
"Exit status: 0 when nothing of the jobs is left (--stacks: when every job\n"
"had an agent to ask); 1 when something is, or a record (or its directory)\n"
"was refused; 2 for usage errors; 255 when a host\n"
"could not be reached.\n";

enum { OPT_SSH_OPTION = 256, OPT_SSH_FANOUT, OPT_SSH_AGENT_DIR };

/* Finds dtrun beside this binary, else leaves "dtrun" for PATH. */
static void
dtrun_path(char *buf, size_t len)
{
	char	self[PATH_MAX], *slash;
	ssize_t	n;

	snprintf(buf, len, "dtrun");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) == NULL)
		return;
	*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/dtrun", self) >= len ||
	    access(buf, X_OK) != 0)
		snprintf(buf, len, "dtrun");
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all",		no_argument,		NULL, 'a' },
		{ "wait",		required_argument,	NULL, 'w' },
		{ "quiet",		no_argument,		NULL, 'q' },
		{ "stacks",		no_argument,		NULL, 's' },
		{ "help",		no_argument,		NULL, 'h' },
		{ "hosts",		required_argument,	NULL, 'H' },
		{ "ssh-port",		required_argument,	NULL, 'p' },
		{ "ssh-identity",	required_argument,	NULL, 'i' },
		{ "ssh-option",		required_argument,	NULL, OPT_SSH_OPTION },
		{ "ssh-config",		required_argument,	NULL, 'F' },
		{ "ssh-jump",		required_argument,	NULL, 'J' },
		{ "ssh-fanout",		required_argument,	NULL, OPT_SSH_FANOUT },
		{ "ssh-agent-dir",	required_argument,	NULL, OPT_SSH_AGENT_DIR },
		{ NULL, 0, NULL, 0 }
	};
	struct kill_opts	 ko;
	struct strv		 hosts = { 0 }, ssh = { 0 }, v = { 0 };
	const char		*wait_arg = NULL;
	char			 dtrun[PATH_MAX];
	size_t			 i;
	int			 c, rc = EXIT_CONFIG;

	log_init("dtrun-kill");
	kill_opts_init(&ko);
	ko.label = "localhost: ";
	while ((c = getopt_long(argc, argv, "aw:qhH:p:i:F:J:", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'a':
			ko.all = 1;
			break;
		case 'w':
			if (kill_opt_wait(&ko, optarg) != 0)
				goto out;
			wait_arg = optarg;
			break;
		case 'q':
			ko.quiet = 1;
			break;
		case 's':
			ko.stacks = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			rc = EXIT_OK;
			goto out;
		case 'H':
			strv_addf(&hosts, "-H");
			strv_addf(&hosts, "%s", optarg);
			break;
		case 'p':
		case 'i':
		case 'F':
		case 'J':
			strv_addf(&ssh, "-%c", c);
			strv_addf(&ssh, "%s", optarg);
			break;
		case OPT_SSH_OPTION:
		case OPT_SSH_FANOUT:
		case OPT_SSH_AGENT_DIR:
			strv_addf(&ssh, "%s", c == OPT_SSH_OPTION ?
			    "--ssh-option" : c == OPT_SSH_FANOUT ?
			    "--ssh-fanout" : "--ssh-agent-dir");
			strv_addf(&ssh, "%s", optarg);
			break;
		default:
			fputs(usage, stderr);
			goto out;
		}
	}
	ko.ids = argv + optind;
	ko.nids = argc - optind;
	if (!ko.all && ko.nids == 0) {
		log_error("give a job id (DTRUN_JOB_ID) or --all");
		goto out;
	}
	if (hosts.n == 0) {
		if (ssh.n > 0) {
			log_error("%s: ssh options need -H HOSTS (without -H "
			    "dtrun-kill works on this host only)", ssh.v[0]);
			goto out;
		}
		rc = kill_jobs(&ko);
		goto out;
	}

	/*
	 * dtrun --launcher ssh -H ... --nproc-per-node 1 --prefix "%h: "
	 *     [ssh options] -- @dtrun-agent --kill [--all] [-w S] [-q] IDS
	 * Its exit status is ours: a host where something is left exits 1.
	 * The kill ranks outlast dtrun's own stopping by design (kill.c).
	 */
	/*
	 * A dtrun here that restarts the job would start it again once the
	 * hosts' agents are stopped: stop it first (records its own).
	 */
	if (!ko.stacks) {
		ko.launchers_only = 1;
		(void)kill_jobs(&ko);
		ko.launchers_only = 0;
	}
	dtrun_path(dtrun, sizeof(dtrun));
	strv_addf(&v, "dtrun");
	strv_addf(&v, "--launcher");
	strv_addf(&v, "ssh");
	strv_addv(&v, hosts.v, hosts.n);
	strv_addf(&v, "--nproc-per-node");
	strv_addf(&v, "1");
	strv_addf(&v, "--prefix");
	strv_addf(&v, "%%h: ");
	/* Replies come from the hosts: never let one act on our terminal. */
	strv_addf(&v, "--escape-output");
	strv_addf(&v, "--kill-grace");
	strv_addf(&v, "%g", ko.wait_s + 10);
	strv_addv(&v, ssh.v, ssh.n);
	strv_addf(&v, "--");
	strv_addf(&v, "%s", AGENT_SELF);
	strv_addf(&v, "--kill");
	if (ko.all)
		strv_addf(&v, "--all");
	if (wait_arg != NULL) {
		strv_addf(&v, "--wait");
		strv_addf(&v, "%s", wait_arg);
	}
	if (ko.quiet)
		strv_addf(&v, "--quiet");
	if (ko.stacks)
		strv_addf(&v, "--stacks");
	strv_addf(&v, "--");
	for (i = 0; i < (size_t)ko.nids; i++)
		strv_addf(&v, "%s", ko.ids[i]);
	if (strchr(dtrun, '/') != NULL)
		execv(dtrun, v.v);
	else
		execvp(dtrun, v.v);
	log_error("cannot run %s: %s (dtrun-kill -H needs dtrun beside it or "
	    "in PATH)", dtrun, strerror(errno));
out:
	strv_free(&hosts);
	strv_free(&ssh);
	strv_free(&v);
	return rc;
}
