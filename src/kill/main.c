/*
 * main.c -- dtrun-kill: clean up a job's leftovers by job id, never by
 * command name. Each dtrun-agent keeps a record of its job (see
 * src/agent/record.h); dtrun-kill asks that agent to stop (SIGTERM, so it
 * stops its ranks as on fail-fast), and kills the recorded process groups
 * itself if the agent is gone or does not finish. A PID counts only if its
 * start time still matches the record, so a reused PID is never hit.
 *
 * This build cleans up jobs on this host; -H (other hosts over ssh) comes
 * with the ssh launcher.
 */
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "record.h"
#include "xmalloc.h"

struct rec {
	char			 job[128];
	int			 agent;
	unsigned long long	 agent_start;
	int			 nranks;
	int			*pid;
	unsigned long long	*start;
};

static const char usage[] =
"usage: dtrun-kill [-q] [-w SECS] JOBID...\n"
"       dtrun-kill [-q] [-w SECS] --all\n"
"\n"
"Stops what dtrun jobs left running on this host, by job id (DTRUN_JOB_ID),\n"
"or every job of yours with --all. Each job's agent is asked to stop its\n"
"ranks; after -w SECS (default 10) what is left is killed.\n";

/* Reads one record file; returns 0 or -1. */
static int
rec_read(const char *path, struct rec *r)
{
	FILE	*f;
	char	 line[512], word[32];
	int	 pid, rank;
	unsigned long long st;

	free(r->pid);
	free(r->start);
	memset(r, 0, sizeof(*r));
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%31s", word) != 1)
			continue;
		if (strcmp(word, "job") == 0)
			sscanf(line, "job %127s", r->job);
		else if (strcmp(word, "agent") == 0)
			sscanf(line, "agent %d %llu", &r->agent, &r->agent_start);
		else if (strcmp(word, "rank") == 0 &&
		    sscanf(line, "rank %d %d %llu", &rank, &pid, &st) == 3) {
			r->pid = xreallocarray(r->pid, r->nranks + 1,
			    sizeof(*r->pid));
			r->start = xreallocarray(r->start, r->nranks + 1,
			    sizeof(*r->start));
			r->pid[r->nranks] = pid;
			r->start[r->nranks++] = st;
		}
	}
	fclose(f);
	return r->job[0] != '\0' && r->agent > 0 ? 0 : -1;
}

/* True if pid is alive and is the process that was recorded. */
static int
same_proc(int pid, unsigned long long start)
{
	return pid > 0 && start != 0 && proc_starttime(pid) == start;
}

/* Stops one agent's job; returns how many processes were still alive at the end. */
static int
kill_record(const struct rec *r, double wait_s, int quiet)
{
	struct timespec	ts = { 0, 20 * 1000 * 1000 };
	int		i, n, left, steps;

	n = 0;
	if (same_proc(r->agent, r->agent_start)) {
		kill(r->agent, SIGTERM);
		n++;
	}
	for (i = 0; i < r->nranks; i++) {
		if (same_proc(r->pid[i], r->start[i])) {
			/* With its agent gone, nobody else will stop this group. */
			if (n == 0 || !same_proc(r->agent, r->agent_start))
				kill(-r->pid[i], SIGTERM);
			n++;
		}
	}
	for (steps = (int)(wait_s * 50); steps > 0; steps--) {
		left = same_proc(r->agent, r->agent_start);
		for (i = 0; i < r->nranks; i++)
			left += same_proc(r->pid[i], r->start[i]);
		if (left == 0)
			break;
		nanosleep(&ts, NULL);
	}
	left = 0;
	for (i = 0; i < r->nranks; i++) {
		if (same_proc(r->pid[i], r->start[i])) {
			kill(-r->pid[i], SIGKILL);
			left++;
		}
	}
	if (same_proc(r->agent, r->agent_start)) {
		kill(r->agent, SIGKILL);
		left++;
	}
	if (!quiet)
		printf("%s: job %s: stopped agent %d and %d rank%s%s\n",
		    "localhost", r->job, r->agent, r->nranks,
		    r->nranks == 1 ? "" : "s",
		    left ? " (some needed SIGKILL)" : "");
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "all",	no_argument,		NULL, 'a' },
		{ "wait",	required_argument,	NULL, 'w' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*dir;
	DIR		*d;
	struct dirent	*de;
	struct rec	*r;
	char		 path[1024];
	double		 wait_s = 10;
	int		 c, all = 0, quiet = 0, found = 0, i, want, *seen;

	log_init("dtrun-kill");
	while ((c = getopt_long(argc, argv, "aw:qhH:", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			all = 1;
			break;
		case 'w':
			wait_s = atof(optarg);
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'H':
			log_error("-H: cleaning up other hosts needs the ssh "
			    "launcher, not in this build; run dtrun-kill on "
			    "each host");
			return 2;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (!all && optind >= argc) {
		log_error("give a job id (DTRUN_JOB_ID) or --all");
		return 2;
	}
	if ((dir = record_dir()) == NULL || (d = opendir(dir)) == NULL) {
		if (!quiet)
			printf("localhost: no dtrun jobs recorded\n");
		return 0;
	}
	seen = calloc(argc, sizeof(*seen));
	r = calloc(1, sizeof(*r));
	if (seen == NULL || r == NULL) {
		log_error("out of memory");
		return 70;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp") != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (rec_read(path, r) != 0)
			continue;
		want = all;
		for (i = optind; i < argc; i++) {
			if (strcmp(argv[i], r->job) == 0) {
				want = 1;
				seen[i] = 1;
			}
		}
		if (!want)
			continue;
		found++;
		kill_record(r, wait_s, quiet);
		/* The agent removes its record; a dead agent cannot. */
		unlink(path);
	}
	closedir(d);
	for (i = optind; i < argc && !all; i++)
		if (!seen[i] && !quiet)
			printf("localhost: job %s: not running here\n", argv[i]);
	if (all && found == 0 && !quiet)
		printf("localhost: no dtrun jobs running\n");
	free(seen);
	free(r->pid);
	free(r->start);
	free(r);
	return 0;
}
