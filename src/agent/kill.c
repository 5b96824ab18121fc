/*
 * kill.c -- clean up a job's leftovers by job id, never by command name.
 * Each dtrun-agent keeps a record of its job (record.h); we ask that agent
 * to stop (SIGTERM, so it stops its ranks as on fail-fast), and kill the
 * recorded process groups ourselves if the agent is gone or does not
 * finish. A PID counts only if its start time still matches the record,
 * so a reused PID is never hit.
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

#include "kill.h"
#include "log.h"
#include "record.h"

struct rec {
	char			 job[128];
	int			 agent;
	unsigned long long	 agent_start;
	int			 nranks;
	int			*pid;
	unsigned long long	*start;
};

/* Reads one record file; returns 0, or -1 (unreadable, not a record, no memory). */
static int
rec_read(const char *path, struct rec *r)
{
	FILE			*f;
	char			 line[512], word[32];
	int			 pid, rank, *np;
	unsigned long long	 st, *ns;

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
			np = reallocarray(r->pid, r->nranks + 1, sizeof(*np));
			if (np != NULL)
				r->pid = np;
			ns = reallocarray(r->start, r->nranks + 1, sizeof(*ns));
			if (ns != NULL)
				r->start = ns;
			if (np == NULL || ns == NULL)
				break;
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

/* How many of r's processes are still the recorded ones. */
static int
rec_alive(const struct rec *r)
{
	int	i, n;

	n = same_proc(r->agent, r->agent_start);
	for (i = 0; i < r->nranks; i++)
		n += same_proc(r->pid[i], r->start[i]);
	return n;
}

/* Waits up to secs for r's processes to go; returns how many are left. */
static int
rec_wait(const struct rec *r, double secs)
{
	struct timespec	ts = { 0, 20 * 1000 * 1000 };
	int		steps, left;

	for (steps = (int)(secs * 50); (left = rec_alive(r)) > 0 && steps > 0;
	    steps--)
		nanosleep(&ts, NULL);
	return left;
}

/* Stops one agent's job; returns how many processes outlived SIGKILL. */
static int
kill_record(const struct rec *r, const struct kill_opts *ko)
{
	int	i, agent_alive, killed = 0, left;
	char	job[1024];

	agent_alive = same_proc(r->agent, r->agent_start);
	if (agent_alive)
		kill(r->agent, SIGTERM);
	for (i = 0; i < r->nranks; i++) {
		/* With its agent gone, nobody else will stop this group. */
		if (!agent_alive && same_proc(r->pid[i], r->start[i]))
			kill(-r->pid[i], SIGTERM);
	}
	rec_wait(r, ko->wait_s);
	for (i = 0; i < r->nranks; i++) {
		if (same_proc(r->pid[i], r->start[i])) {
			kill(-r->pid[i], SIGKILL);
			killed++;
		}
	}
	if (same_proc(r->agent, r->agent_start)) {
		kill(r->agent, SIGKILL);
		killed++;
	}
	/* SIGKILL takes a moment; only a process stuck in the kernel stays. */
	left = killed ? rec_wait(r, 2) : 0;
	if (!ko->quiet)
		printf("%sjob %s: stopped agent %d and %d rank%s%s%s\n",
		    ko->label ? ko->label : "", log_escape(job, sizeof(job),
		    r->job), r->agent, r->nranks,
		    r->nranks == 1 ? "" : "s",
		    killed ? " (some needed SIGKILL)" : "",
		    left ? "; some are still there" : "");
	return left;
}

int
kill_jobs(const struct kill_opts *ko)
{
	const char	*dir, *self = getenv("DTRUN_JOB_ID");
	const char	*label = ko->label ? ko->label : "";
	DIR		*d;
	struct dirent	*de;
	struct rec	 r;
	char		 path[1024];
	int		 found = 0, left = 0, i, want, *seen;

	if ((dir = record_dir()) == NULL || (d = opendir(dir)) == NULL) {
		if (!ko->quiet)
			printf("%sno dtrun jobs recorded\n", label);
		return 0;
	}
	if ((seen = calloc(ko->nids + 1, sizeof(*seen))) == NULL) {
		closedir(d);
		log_error("out of memory");
		return 1;
	}
	memset(&r, 0, sizeof(r));
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp") != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (rec_read(path, &r) != 0)
			continue;
		/* --all never means the job doing the killing. */
		want = ko->all && (self == NULL || strcmp(self, r.job) != 0);
		for (i = 0; i < ko->nids; i++) {
			if (strcmp(ko->ids[i], r.job) == 0) {
				want = 1;
				seen[i] = 1;
			}
		}
		if (!want)
			continue;
		found++;
		if (kill_record(&r, ko) == 0)
			unlink(path);	/* a dead agent cannot remove it */
		else
			left = 1;
	}
	closedir(d);
	for (i = 0; i < ko->nids && !ko->quiet; i++)
		if (!seen[i])
			printf("%sjob %s: not running here\n", label,
			    log_escape(path, sizeof(path), ko->ids[i]));
	if (ko->all && found == 0 && !ko->quiet)
		printf("%sno dtrun jobs running\n", label);
	fflush(stdout);
	free(seen);
	free(r.pid);
	free(r.start);
	return left;
}

void
kill_opts_init(struct kill_opts *ko)
{
	memset(ko, 0, sizeof(*ko));
	ko->wait_s = 10;
}

int
kill_opt_wait(struct kill_opts *ko, const char *arg)
{
	char	*end;

	ko->wait_s = strtod(arg, &end);
	if (*arg == '\0' || *end != '\0' || !(ko->wait_s >= 0) ||
	    ko->wait_s > 3600) {
		log_error("-w \"%s\": want seconds, 0 to 3600 (e.g. -w 10)",
		    arg);
		return -1;
	}
	return 0;
}

int
kill_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kill",	no_argument,		NULL, 'k' },
		{ "all",	no_argument,		NULL, 'a' },
		{ "wait",	required_argument,	NULL, 'w' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ NULL, 0, NULL, 0 }
	};
	struct kill_opts	ko;
	int			 c;

	kill_opts_init(&ko);
	optind = 1;
	while ((c = getopt_long(argc, argv, "aw:q", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			break;
		case 'a':
			ko.all = 1;
			break;
		case 'w':
			if (kill_opt_wait(&ko, optarg) != 0)
				return 2;
			break;
		case 'q':
			ko.quiet = 1;
			break;
		default:
			log_error("usage: dtrun-agent --kill [--all] [-w SECS] "
			    "[-q] JOBID...");
			return 2;
		}
	}
	ko.ids = argv + optind;
	ko.nids = argc - optind;
	if (!ko.all && ko.nids == 0) {
		log_error("give a job id (DTRUN_JOB_ID) or --all");
		return 2;
	}
	/*
	 * Started by dtrun-kill -H as a rank: finish even if dtrun stops the
	 * job because another host's kill failed (a SIGKILL still ends us).
	 */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	return kill_jobs(&ko);
}
