/*
 * killjob.c -- clean up a job's leftovers by job id, never by command name.
 * Each dtrun-agent keeps a record of its job (record.h); we ask that agent
 * to stop (SIGTERM, so it stops its ranks as on fail-fast), and kill the
 * job's processes ourselves if the agent is gone or does not finish.
 *
 * What counts as the job's: the recorded agent and ranks, the ranks'
 * process groups, and any process of ours whose environment says
 * DTRUN_JOB_ID=JOB -- which also finds a daemon that left its group and
 * its agent (setsid), if both agent and keeper were killed. Every process
 * is signalled through a pidfd after checking its start time and owner
 * (proc_signal), so a reused pid is never hit; records that name pid 1,
 * 0 or a negative one are refused outright. A job is "stopped" only once
 * none of that is left, the keeper included (it exits last).
 *
 * A dtrun that restarts jobs (--max-restarts) records itself too; such
 * records are taken first: SIGTERM to dtrun stops every host's ranks and
 * any restart, where SIGTERM to an agent alone would look like a host
 * going down, which dtrun restarts.
 *
 * Three things are called "kill": dtrun-kill, the command (src/kill/main.c);
 * this file, its work on one host, run by dtrun-kill itself or, for -H, by
 * "dtrun-agent --kill" on each host; and a launcher backend's kill op
 * (job.h), dtrun's last resort for one host whose agent does not answer,
 * which tears that connection down and knows nothing of records.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/dtlimits.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "agent/killjob.h"
#include "common/log.h"
#include "host/procs.h"
#include "host/record.h"

/* dtrun top's socket beside the records (TOPSRV_SUFFIX, launcher/topsrv.h). */
#define KILL_TOP_SUFFIX	".top"

/* True if pid is alive and is the process that was recorded (ours). */
static int
same_proc(pid_t pid, unsigned long long start)
{
	struct proc_info	pi;

	return pid > 1 && start != 0 && proc_info(pid, &pi) == 0 &&
	    pi.start == start && pi.uid == getuid() && pi.state != 'Z' &&
	    pi.state != 'X';
}

/* How many of r's recorded processes (agent, keeper, ranks) are still the recorded ones. */
static int
rec_alive(const struct record_info *r)
{
	size_t	i;
	int	n;

	n = same_proc(r->agent, r->agent_start);
	if (r->keeper > 0)
		n += same_proc(r->keeper, r->keeper_start);
	for (i = 0; i < r->nranks; i++)
		n += same_proc(r->pid[i], r->start[i]);
	return n;
}

/*
 * Adds to buf (len) one of r's recorded processes that is alive as
 * recorded but another user's; counts it in *n.
 */
static void
rec_foreign_one(pid_t pid, unsigned long long start, const char *what,
    char *buf, size_t len, int *n)
{
	struct proc_info	pi;
	size_t			off = strlen(buf);

	if (pid <= 1 || start == 0 || proc_info(pid, &pi) != 0 ||
	    pi.start != start || pi.uid == getuid() || pi.state == 'Z' ||
	    pi.state == 'X')
		return;
	if (off < len)
		snprintf(buf + off, len - off, "%s%s%d (uid %u)",
		    *n > 0 ? ", " : "", what, (int)pid, (unsigned)pi.uid);
	(*n)++;
}

/*
 * How many of r's recorded processes are alive as recorded but not ours
 * (never signalled: proc_signal checks the owner); names them in buf.
 */
static int
rec_foreign(const struct record_info *r, char *buf, size_t len)
{
	char	what[64];
	size_t	i;
	int	n = 0;

	buf[0] = '\0';
	rec_foreign_one(r->agent, r->agent_start, r->launcher ? "dtrun " :
	    "agent ", buf, len, &n);
	if (r->keeper > 0)
		rec_foreign_one(r->keeper, r->keeper_start, "keeper ", buf, len,
		    &n);
	for (i = 0; i < r->nranks; i++) {
		snprintf(what, sizeof(what), "rank %zu pid ", i);
		rec_foreign_one(r->pid[i], r->start[i], what, buf, len, &n);
	}
	return n;
}

/*
 * Signals (sig 0: counts) the job's other processes: the members of each
 * rank's process group -- only while that rank still leads it, so a group
 * id is never taken from a record alone -- and whatever carries the job's
 * DTRUN_JOB_ID. The agent and keeper are left to themselves.
 */
static size_t
rec_others(const struct record_info *r, int sig)
{
	struct proc_match	 m;
	struct proc_info	 pi;
	pid_t			*g;
	char			 env[160];
	size_t			 i, n;

	memset(&m, 0, sizeof(m));
	snprintf(env, sizeof(env), "DTRUN_JOB_ID=%s", r->job);
	m.env = env;
	m.skip[0] = r->agent;
	m.skip[1] = r->keeper;
	if ((g = calloc(r->nranks + 1, sizeof(*g))) != NULL) {
		for (i = 0; i < r->nranks; i++)
			if (same_proc(r->pid[i], r->start[i]) &&
			    proc_info(r->pid[i], &pi) == 0 &&
			    pi.pgrp == r->pid[i])
				g[m.npgrps++] = r->pid[i];
		m.pgrps = g;
	}
	n = proc_signal_match(&m, sig);
	free(g);
	return n;
}

/* Signals the recorded ranks themselves (a rank that left its group too). */
static void
rec_ranks(const struct record_info *r, int sig)
{
	size_t	i;

	for (i = 0; i < r->nranks; i++)
		proc_signal(r->pid[i], r->start[i], sig);
}

/*
 * Waits up to secs for everything of r to go; returns how many are left.
 * The recorded pids are cheap to look at; the /proc walk for the others
 * is done only once they are gone, and then every 100 ms.
 */
static size_t
rec_wait(const struct record_info *r, double secs)
{
	struct timespec	ts = { 0, 20 * 1000 * 1000 };
	int		step, steps = (int)(secs * 50);

	for (step = 0; step <= steps; step++) {
		if (step > 0)
			nanosleep(&ts, NULL);
		if (rec_alive(r) > 0 || (step % 5 != 0 && step != steps))
			continue;
		if (rec_others(r, 0) == 0)
			return 0;
	}
	return rec_alive(r) + rec_others(r, 0);
}

/*
 * --stacks: SIGQUIT to r's agent, which asks its dtrun to gather every
 * rank's stack; the job goes on. Returns 0, or 1 if the agent is gone.
 */
static size_t
kill_stacks(const struct record_info *r, const struct kill_opts *ko)
{
	char	job[1024];
	int	rc = proc_signal(r->agent, r->agent_start, SIGQUIT);

	if (!ko->quiet)
		printf(rc == 0 ? "%sjob %s: asked agent %d for its ranks' "
		    "stacks; dtrun prints them on its stderr\n" :
		    "%sjob %s: its agent %d is gone\n",
		    ko->label ? ko->label : "",
		    log_escape(job, sizeof(job), r->job), (int)r->agent);
	return rc == 0 ? 0 : 1;
}

/*
 * Stops one agent's job; returns how many processes outlived SIGKILL,
 * and those that are another user's (left alone). A record (at path)
 * whose processes are all gone (its agent or dtrun was SIGKILLed) is
 * removed and said to be so, not "stopped".
 */
static size_t
kill_record(const struct record_info *r, const char *path,
    const struct kill_opts *ko)
{
	const char	*label = ko->label ? ko->label : "";
	size_t		 left;
	int		 killed = 0, foreign;
	char		 job[1024], theirs[512];

	if (ko->stacks)
		return kill_stacks(r, ko);
	log_escape(job, sizeof(job), r->job);
	foreign = rec_foreign(r, theirs, sizeof(theirs));
	if (foreign == 0 && rec_alive(r) == 0 && rec_others(r, 0) == 0) {
		/* No file now: its agent removed it, ending just as we read it. */
		if (unlink(path) != 0 && errno == ENOENT) {
			if (!ko->quiet)
				printf("%sjob %s: not running here\n", label,
				    job);
		} else if (!ko->quiet)
			printf("%sjob %s: %s %d is gone (killed?) and left "
			    "nothing: removed its record\n", label, job,
			    r->launcher ? "dtrun" : "agent", (int)r->agent);
		return 0;
	}

	if (proc_signal(r->agent, r->agent_start, SIGTERM) != 0) {
		/* With its agent gone, nobody else will stop the rest. */
		rec_ranks(r, SIGTERM);
		rec_others(r, SIGTERM);
	}
	if ((left = rec_wait(r, ko->wait_s)) > 0) {
		/* Not the keeper: it kills what the agent leaves, then exits. */
		killed = 1;
		proc_signal(r->agent, r->agent_start, SIGKILL);
		rec_ranks(r, SIGKILL);
		rec_others(r, SIGKILL);
		/* SIGKILL takes a moment; only a process stuck in the kernel stays. */
		left = rec_wait(r, 2);
	}
	if (foreign > 0 && !ko->quiet)
		printf("%sjob %s: left alone: not ours: %s\n", label, job,
		    theirs);
	if (ko->quiet || foreign > 0)
		return left + (size_t)foreign;
	if (left > 0)
		printf("%sjob %s: %zu process%s still there after SIGKILL "
		    "(agent %d)\n", label, job, left, left == 1 ? " is" :
		    "es are", (int)r->agent);
	else if (r->launcher)
		printf("%sjob %s: stopped dtrun %d (its restarts, and every "
		    "host's ranks)%s\n", label, job, (int)r->agent,
		    killed ? " (it needed SIGKILL)" : "");
	else
		printf("%sjob %s: stopped agent %d and %zu rank%s%s\n", label,
		    job, (int)r->agent, r->nranks, r->nranks == 1 ? "" : "s",
		    killed ? " (some needed SIGKILL)" : "");
	return left;
}

/*
 * A job with no record here may still have left processes behind (its
 * agent and keeper SIGKILLed, their record removed): they carry its id.
 */
static size_t
kill_unrecorded(const char *job, const struct kill_opts *ko)
{
	struct record_info	r;
	size_t			n;
	char			esc[1024];

	memset(&r, 0, sizeof(r));
	snprintf(r.job, sizeof(r.job), "%s", job);
	/* An empty id would pick whatever has DTRUN_JOB_ID set empty. */
	if (job[0] == '\0' || ko->stacks || rec_others(&r, 0) == 0) {
		if (!ko->quiet)
			printf("%sjob %s: not running here\n",
			    ko->label ? ko->label : "",
			    log_escape(esc, sizeof(esc), job));
		return 0;
	}
	rec_others(&r, SIGTERM);
	if ((n = rec_wait(&r, ko->wait_s)) > 0) {
		rec_others(&r, SIGKILL);
		n = rec_wait(&r, 2);
	}
	if (!ko->quiet)
		printf("%sjob %s: no record here; %s its leftover processes\n",
		    ko->label ? ko->label : "", log_escape(esc, sizeof(esc),
		    job), n ? "could not stop" :
		    "stopped");
	return n;
}

/* True if this process would pick the job of record r. */
static int
kill_wanted(const struct kill_opts *ko, const char *job, int *seen)
{
	const char	*self = getenv("DTRUN_JOB_ID");
	int		 i, want;

	/* --all never means the job doing the killing. */
	want = ko->all && (self == NULL || strcmp(self, job) != 0);
	for (i = 0; i < ko->nids; i++) {
		if (strcmp(ko->ids[i], job) == 0) {
			want = 1;
			seen[i] = 1;
		}
	}
	return want;
}

/*
 * One pass over the records in d: the launchers' (dtrun with restarts:
 * stopped first, so that nothing starts the job again), or the agents'.
 * Counts the jobs found; returns 1 if something of them is left.
 */
static int
kill_pass(DIR *d, const char *dir, const struct kill_opts *ko, int *seen,
    int launchers, int *found)
{
	const char		*label = ko->label ? ko->label : "";
	struct dirent		*de;
	struct record_info	 r;
	FILE			*f;
	char			 path[1024], why[512];
	int			 left = 0;

	memset(&r, 0, sizeof(r));
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp") != NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;	/* removed by its agent just now */
		if (record_parse(f, &r, why, sizeof(why)) != 0) {
			fclose(f);
			if (launchers)
				continue;	/* said in the agents' pass */
			/* Refused whole: never signal what it names. */
			log_error("%s%s: %s: not a record an agent writes; left "
			    "alone (remove the file)", label, path, why);
			if (r.job[0] != '\0' && kill_wanted(ko, r.job, seen))
				left = 1;
			continue;
		}
		fclose(f);
		if (r.launcher != launchers || !kill_wanted(ko, r.job, seen))
			continue;
		/* --stacks asks the agents; a launcher has no ranks of its own. */
		if (launchers && ko->stacks)
			continue;
		(*found)++;
		if (kill_record(&r, path, ko) != 0)
			left = 1;
		else if (!ko->stacks)
			unlink(path);	/* a dead agent cannot remove it */
	}
	record_info_free(&r);
	return left;
}

/* True if nothing listens on the Unix socket at path any more (its dtrun died). */
static int
sock_dead(const char *path)
{
	struct sockaddr_un	sa;
	int			fd, rc;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path) || (fd = socket(AF_UNIX,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	rc = rc == -1 && errno == ECONNREFUSED;
	close(fd);
	return rc;
}

/*
 * The dtrun top sockets of the jobs wanted whose dtrun is gone (SIGKILL
 * runs none of its code): removed, and said so.
 */
static void
kill_sockets(DIR *d, const char *dir, const struct kill_opts *ko)
{
	struct dirent	*de;
	char		 path[1024], job[256], esc[1024];
	size_t		 n, sl = strlen(KILL_TOP_SUFFIX);
	int		 seen[1] = { 0 }, *scratch;

	scratch = ko->nids > 0 ? calloc(ko->nids, sizeof(int)) : seen;
	if (scratch == NULL)
		return;
	rewinddir(d);
	while ((de = readdir(d)) != NULL) {
		n = strlen(de->d_name);
		if (de->d_name[0] == '.' || n <= sl || n - sl >= sizeof(job) ||
		    strcmp(de->d_name + n - sl, KILL_TOP_SUFFIX) != 0)
			continue;
		snprintf(job, sizeof(job), "%.*s", (int)(n - sl), de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!kill_wanted(ko, job, scratch) || !sock_dead(path) ||
		    unlink(path) != 0 || ko->quiet)
			continue;
		log_escape(esc, sizeof(esc), job);
		printf("%sjob %s: its dtrun is gone (killed?): removed its "
		    "socket %s%s\n", ko->label ? ko->label : "", esc, esc,
		    KILL_TOP_SUFFIX);
	}
	if (scratch != seen)
		free(scratch);
}

int
kill_jobs(const struct kill_opts *ko)
{
	const char		*dir;
	const char		*label = ko->label ? ko->label : "";
	DIR			*d = NULL;
	struct dt_err		 e;
	int			 found = 0, left = 0, i, *seen;

	if ((seen = calloc(ko->nids + 1, sizeof(*seen))) == NULL) {
		log_error("out of memory");
		return EXIT_LEFTOVER;
	}
	if (record_dir(&dir, &e) != 0) {
		/* Ids given: what carries them is still found below. */
		log_error("%s%s", label, e.msg);
		left = 1;
	} else if ((d = opendir(dir)) == NULL) {
		log_error("%s%s: %s", label, dir, strerror(errno));
		left = 1;
	}
	if (d != NULL && kill_pass(d, dir, ko, seen, 1, &found) != 0)
		left = 1;
	if (d != NULL && !ko->launchers_only &&
	    kill_pass(d, dir, ko, seen, 0, &found) != 0)
		left = 1;
	if (d != NULL && !ko->stacks)
		kill_sockets(d, dir, ko);
	if (d != NULL)
		closedir(d);
	for (i = 0; i < ko->nids && !ko->launchers_only; i++) {
		if (!seen[i] && kill_unrecorded(ko->ids[i], ko) > 0)
			left = 1;
		/* Nothing here to ask for stacks: say so in the status. */
		if (!seen[i] && ko->stacks)
			left = 1;
	}
	if (ko->all && found == 0 && !ko->quiet && !ko->launchers_only)
		printf("%sno dtrun jobs running\n", label);
	fflush(stdout);
	free(seen);
	return left ? EXIT_LEFTOVER : EXIT_OK;
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
	    ko->wait_s > DT_KILL_WAIT_MAX_S) {
		log_error("-w \"%s\": want seconds, 0 to %d (e.g. -w 10)",
		    arg, DT_KILL_WAIT_MAX_S);
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
		{ "stacks",	no_argument,		NULL, 's' },
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
		case 's':
			ko.stacks = 1;
			break;
		case 'a':
			ko.all = 1;
			break;
		case 'w':
			if (kill_opt_wait(&ko, optarg) != 0)
				return EXIT_CONFIG;
			break;
		case 'q':
			ko.quiet = 1;
			break;
		default:
			log_error("usage: dtrun-agent --kill [--all] [--stacks] "
			    "[-w SECS] [-q] JOBID...");
			return EXIT_CONFIG;
		}
	}
	ko.ids = argv + optind;
	ko.nids = argc - optind;
	if (!ko.all && ko.nids == 0) {
		log_error("give a job id (DTRUN_JOB_ID) or --all");
		return EXIT_CONFIG;
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
