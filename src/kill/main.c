/*
 * main.c -- dtrun-kill: clean up a job's leftovers by job id, never by
 * command name. On this host it does the work itself (src/agent/killjob.c).
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

#include "agent/agent.h"
#include "common/exitcodes.h"
#include "agent/killjob.h"
#include "common/log.h"
#include "launcher/cli/opttable.h"
#include "util/strv.h"

/* Before the option list (the tables below). */
static const char usage_head[] =
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
"With -H it does the same on every host, reaching them over ssh as dtrun\n"
"does: -H and the ssh options are dtrun's, passed on to it.\n"
"\n";

/* After the option list. */
static const char usage_tail[] =
"\n"
"Exit status: 0 when nothing of the jobs is left (--stacks: when every job\n"
"had an agent to ask); 1 when something is, or a record (or its directory)\n"
"was refused; 2 for usage errors; 255 when a host\n"
"could not be reached.\n";

/* dtrun-kill's own options; their ids go on after dtrun's. */
enum { KOPT_ALL = OPT_NIDS, KOPT_WAIT, KOPT_QUIET, KOPT_STACKS, KOPT_HELP,
	KOPT_LIST };

static const struct opt_row kill_rows[] = {
	{ "all", 'a', OPTA_NONE, KOPT_ALL, NULL, NULL, 0,
	    "every job of yours (never the caller's own job)", OPT_UNTYPED },
	{ "wait", 'w', OPTA_VALUE, KOPT_WAIT, "SECS", NULL, 0,
	    "between SIGTERM and SIGKILL (default 10)", OPT_UNTYPED },
	{ "quiet", 'q', OPTA_NONE, KOPT_QUIET, NULL, NULL, 0,
	    "print nothing", OPT_UNTYPED },
	{ "stacks", 0, OPTA_NONE, KOPT_STACKS, NULL, NULL, 0,
	    "ask for every rank's stack; the job goes on", OPT_UNTYPED },
};

static const struct opt_row kill_rows_last[] = {
	{ "help", 'h', OPTA_NONE, KOPT_HELP, NULL, NULL, 0, "this text", OPT_UNTYPED },
	/* For t0040-docs.sh: the tables, as opt_list writes them. */
	{ "list-options", 0, OPTA_NONE, KOPT_LIST, NULL, NULL, OPTF_HIDDEN,
	    NULL, OPT_UNTYPED },
};

/*
 * Ours, then dtrun's -H and ssh options (OPTF_KILL), which -H passes on
 * to the dtrun it runs; kill_init fills in the length of dtrun's table.
 */
static struct opt_tab kill_tabs[] = {
	{ kill_rows, sizeof(kill_rows) / sizeof(kill_rows[0]), 0 },
	{ opt_table, 0, OPTF_KILL },
	{ kill_rows_last, sizeof(kill_rows_last) / sizeof(kill_rows_last[0]),
	    0 },
};
#define KILL_NTABS	(sizeof(kill_tabs) / sizeof(kill_tabs[0]))

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

/* What the command line asked for. */
struct kargs {
	struct kill_opts	 ko;
	struct strv		 hosts;		/* "-H" "LIST" pairs, for dtrun */
	struct strv		 ssh;		/* ssh options, as dtrun takes them */
	const char		*wait_arg;	/* -w as given, passed on */
};

/* Writes --help: the texts around the tables' option list. */
static void
kill_usage(FILE *f)
{
	fputs(usage_head, f);
	opt_usage(f, kill_tabs, KILL_NTABS);
	fputs(usage_tail, f);
}

/*
 * Takes option id (its value in optarg). Returns -1 to go on, or the exit
 * status: EXIT_OK after --help, EXIT_CONFIG after a bad value (said).
 */
static int
kill_take(struct kargs *k, int id)
{
	const struct opt_row	*r;

	switch (id) {
	case KOPT_ALL:
		k->ko.all = 1;
		return -1;
	case KOPT_WAIT:
		if (kill_opt_wait(&k->ko, optarg) != 0)
			return EXIT_CONFIG;
		k->wait_arg = optarg;
		return -1;
	case KOPT_QUIET:
		k->ko.quiet = 1;
		return -1;
	case KOPT_STACKS:
		k->ko.stacks = 1;
		return -1;
	case KOPT_HELP:
		kill_usage(stdout);
		return EXIT_OK;
	case KOPT_LIST:
		opt_list(stdout, kill_tabs, KILL_NTABS);
		return EXIT_OK;
	case OPT_HOSTS:
		strv_addf(&k->hosts, "-H");
		strv_addf(&k->hosts, "%s", optarg);
		return -1;
	}
	/* dtrun's ssh options: passed on as typed, for dtrun to check. */
	r = opt_find(kill_tabs, KILL_NTABS, id);
	if (r->letter != 0)
		strv_addf(&k->ssh, "-%c", r->letter);
	else
		strv_addf(&k->ssh, "--%s", r->name);
	if (r->arg == OPTA_VALUE)
		strv_addf(&k->ssh, "%s", optarg);
	return -1;
}

/*
 * Parses argv into k. Returns -1 to go on, or the exit status: EXIT_OK
 * after --help, EXIT_CONFIG after a usage error (said).
 */
static int
kill_args(int argc, char **argv, struct kargs *k)
{
	struct opt_getopt	g;
	int			c, id, rc;

	kill_tabs[1].n = opt_ntable;
	opt_getopt_build(&g, "", kill_tabs, KILL_NTABS);
	while ((c = getopt_long(argc, argv, g.shorts, g.longopts, NULL)) !=
	    -1) {
		if ((id = opt_getopt_id(&g, c)) < 0) {
			kill_usage(stderr);
			rc = EXIT_CONFIG;
		} else
			rc = kill_take(k, id);
		if (rc >= 0) {
			free(g.longopts);
			return rc;
		}
	}
	free(g.longopts);
	k->ko.ids = argv + optind;
	k->ko.nids = argc - optind;
	if (!k->ko.all && k->ko.nids == 0) {
		log_error("give a job id (DTRUN_JOB_ID) or --all");
		return EXIT_CONFIG;
	}
	if (k->hosts.n == 0 && k->ssh.n > 0) {
		log_error("%s: ssh options need -H HOSTS (without -H "
		    "dtrun-kill works on this host only)", k->ssh.v[0]);
		return EXIT_CONFIG;
	}
	return -1;
}

/*
 * The dtrun command line that runs the kill on every host:
 *
 *	dtrun --launcher ssh -H ... --nproc-per-node 1 --prefix "%h: "
 *	    [ssh options] -- @dtrun-agent --kill [--all] [-w S] [-q] IDS
 *
 * Its exit status is ours: a host where something is left exits 1. The
 * kill ranks outlast dtrun's own stopping by design (killjob.c).
 */
static void
kill_dtrun_argv(const struct kargs *k, struct strv *v)
{
	const struct kill_opts	*ko = &k->ko;
	size_t			 i;

	strv_addf(v, "dtrun");
	strv_addf(v, "--launcher");
	strv_addf(v, "ssh");
	strv_addv(v, k->hosts.v, k->hosts.n);
	strv_addf(v, "--nproc-per-node");
	strv_addf(v, "1");
	strv_addf(v, "--prefix");
	strv_addf(v, "%%h: ");
	/* Replies come from the hosts: never let one act on our terminal. */
	strv_addf(v, "--escape-output");
	strv_addf(v, "--kill-grace");
	strv_addf(v, "%g", ko->wait_s + 10);
	strv_addv(v, k->ssh.v, k->ssh.n);
	strv_addf(v, "--");
	strv_addf(v, "%s", AGENT_SELF);
	strv_addf(v, "--kill");
	if (ko->all)
		strv_addf(v, "--all");
	if (k->wait_arg != NULL) {
		strv_addf(v, "--wait");
		strv_addf(v, "%s", k->wait_arg);
	}
	if (ko->quiet)
		strv_addf(v, "--quiet");
	if (ko->stacks)
		strv_addf(v, "--stacks");
	strv_addf(v, "--");
	for (i = 0; i < (size_t)ko->nids; i++)
		strv_addf(v, "%s", ko->ids[i]);
}

/* -H: stops dtrun here first, then becomes dtrun running the kill on every host. */
static int
kill_remote(struct kargs *k)
{
	struct strv	v = { 0 };
	char		dtrun[PATH_MAX];

	/*
	 * A dtrun here that restarts the job would start it again once the
	 * hosts' agents are stopped: stop it first (records its own).
	 */
	if (!k->ko.stacks) {
		k->ko.launchers_only = 1;
		(void)kill_jobs(&k->ko);
		k->ko.launchers_only = 0;
	}
	dtrun_path(dtrun, sizeof(dtrun));
	kill_dtrun_argv(k, &v);
	if (strchr(dtrun, '/') != NULL)
		execv(dtrun, v.v);
	else
		execvp(dtrun, v.v);
	log_error("cannot run %s: %s (dtrun-kill -H needs dtrun beside it or "
	    "in PATH)", dtrun, strerror(errno));
	strv_free(&v);
	return EXIT_CONFIG;
}

int
main(int argc, char **argv)
{
	struct kargs	k;
	int		rc;

	log_init("dtrun-kill");
	memset(&k, 0, sizeof(k));
	kill_opts_init(&k.ko);
	k.ko.label = "localhost: ";
	if ((rc = kill_args(argc, argv, &k)) < 0)
		rc = k.hosts.n == 0 ? kill_jobs(&k.ko) : kill_remote(&k);
	strv_free(&k.hosts);
	strv_free(&k.ssh);
	return rc;
}
