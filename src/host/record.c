/* record.c -- write and remove the agent's job record (see record.h). */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "host/procs.h"
#include "host/record.h"

struct record {
	char	 path[512];
	FILE	*f;		/* the .tmp being written */
	char	 tmp[520];
};

int
record_dir_check(const char *dir, const struct stat *st, uid_t uid,
    struct dt_err *e)
{
	if (!S_ISDIR(st->st_mode))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s is not a "
		    "directory%s: job records are off (remove it)", dir,
		    S_ISLNK(st->st_mode) ? " but a symlink" : "");
	if (st->st_uid != uid)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s belongs to "
		    "uid %u, not to you (uid %u): job records are off, as it "
		    "could feed dtrun-kill forged ones (have it removed, or set "
		    "XDG_RUNTIME_DIR to a directory of yours)", dir,
		    (unsigned)st->st_uid, (unsigned)uid);
	if ((st->st_mode & 0777) != 0700)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s has mode %04o, "
		    "not 0700: job records are off, as others could change "
		    "them (chmod 700 %s)", dir,
		    (unsigned)(st->st_mode & 07777), dir);
	return 0;
}

int
record_dir(const char **dirp, struct dt_err *e)
{
	static char	 dir[400];
	const char	*x = getenv("XDG_RUNTIME_DIR");
	struct stat	 st;
	int		 rc;

	*dirp = NULL;
	if (x != NULL && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(dir, sizeof(dir), "%s/dtrun", x);
	else
		snprintf(dir, sizeof(dir), "/tmp/dtrun-%u", (unsigned)getuid());
	/* Made by us just now: make sure the umask did not take bits away. */
	if (mkdir(dir, 0700) == 0)
		chmod(dir, 0700);
	else if (errno != EEXIST)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot make %s: %s: "
		    "job records are off", dir, strerror(errno));
	/* Never trust a directory someone else made for us in /tmp. */
	if (lstat(dir, &st) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "%s: %s: job records "
		    "are off", dir, strerror(errno));
	if ((rc = record_dir_check(dir, &st, getuid(), e)) != 0)
		return rc;
	*dirp = dir;
	return 0;
}

int
record_open(const char *job_id, const char *host, pid_t keeper,
    struct record **rp, struct dt_err *e)
{
	struct record	*r;
	const char	*dir;
	int		 rc;

	*rp = NULL;
	if ((rc = record_dir(&dir, e)) != 0)
		return rc;
	if (strchr(job_id, '/') != NULL || job_id[0] == '.')
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "job id %s cannot "
		    "name a file: no job record, dtrun-kill will not find this "
		    "job", job_id);
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory: no "
		    "job record, dtrun-kill will not find this job");
	snprintf(r->path, sizeof(r->path), "%s/%s.%d", dir, job_id,
	    (int)getpid());
	snprintf(r->tmp, sizeof(r->tmp), "%s.tmp", r->path);
	if ((r->f = fopen(r->tmp, "w")) == NULL) {
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_IO, "cannot write %s: %s: no "
		    "job record, dtrun-kill will not find this job", r->tmp,
		    strerror(errno));
		free(r);
		return rc;
	}
	fprintf(r->f, "dtrun-job 1\njob %s\nhost %s\nagent %d %llu\n", job_id,
	    host, (int)getpid(), proc_starttime(getpid()));
	if (keeper > 0)
		fprintf(r->f, "keeper %d %llu\n", (int)keeper,
		    proc_starttime(keeper));
	*rp = r;
	return 0;
}

void
record_add(struct record *r, uint32_t rank, pid_t pid)
{
	if (r != NULL && r->f != NULL)
		fprintf(r->f, "rank %u %d %llu\n", rank, (int)pid,
		    proc_starttime(pid));
}

void
record_launcher(struct record *r)
{
	if (r != NULL && r->f != NULL)
		fprintf(r->f, "launcher\n");
}

void
record_commit(struct record *r)
{
	if (r == NULL || r->f == NULL)
		return;
	if (fclose(r->f) == 0)
		rename(r->tmp, r->path);
	else
		unlink(r->tmp);
	r->f = NULL;
}

void
record_remove(struct record *r)
{
	if (r == NULL)
		return;
	if (r->f != NULL) {
		fclose(r->f);
		unlink(r->tmp);
	}
	unlink(r->path);
	free(r);
}

void
record_remove_dead(pid_t agent, pid_t keeper)
{
	struct record_info	 ri;
	struct dirent		*d;
	const char		*dir, *dot;
	char			 why[256], path[768], mid[32];
	size_t			 l, sl = sizeof(RECORD_ERRFILE_SUF) - 1;
	DIR			*dp;
	FILE			*f;
	int			 ours;

	if (record_dir(&dir, NULL) != 0 || (dp = opendir(dir)) == NULL)
		return;
	snprintf(mid, sizeof(mid), ".%d" RECORD_ERRFILE_MID, (int)agent);
	while ((d = readdir(dp)) != NULL) {
		/* A rank's error file: its name says whose it is. */
		l = strlen(d->d_name);
		if (l > sl && strcmp(d->d_name + l - sl,
		    RECORD_ERRFILE_SUF) == 0) {
			if (strstr(d->d_name, mid) != NULL)
				unlinkat(dirfd(dp), d->d_name, 0);
			continue;
		}
		if ((dot = strrchr(d->d_name, '.')) == NULL ||
		    strtol(dot + 1, NULL, 10) != agent ||
		    strspn(dot + 1, "0123456789") != strlen(dot + 1))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		memset(&ri, 0, sizeof(ri));
		/* The agent's pid may be reused: only our own agent's record. */
		ours = record_parse(f, &ri, why, sizeof(why)) == 0 &&
		    ri.agent == agent && ri.keeper == keeper;
		fclose(f);
		record_info_free(&ri);
		if (ours)
			unlink(path);
	}
	closedir(dp);
}

/*
 * Reads "PID STARTTIME" at s into *pid and *start. Returns NULL, or why it
 * is not what an agent writes: only a real process (pid 2 or above, with a
 * start time) may ever be signalled; pid 1 or 0 or a negative one would
 * make kill(2) hit init, our own group, or every process we may signal.
 */
static const char *
parse_proc(const char *s, pid_t *pid, unsigned long long *start)
{
	char		*end;
	long long	 p;

	errno = 0;
	p = strtoll(s, &end, 10);
	if (end == s || *end != ' ' || errno != 0)
		return "has no pid";
	if (p <= 1)
		return p == 1 ? "names pid 1 (init)" : p == 0 ?
		    "names pid 0 (the caller's own process group)" :
		    "names a negative pid (a process group)";
	if (p > INT_MAX)
		return "names a pid out of range";
	s = end + 1;
	errno = 0;
	*start = strtoull(s, &end, 10);
	if (end == s || (*end != '\0' && *end != '\n') || errno != 0 ||
	    *start == 0 || *s == '-')
		return "has no start time";
	*pid = (pid_t)p;
	return NULL;
}

/* Appends one rank's pid and start time to ri; 0, or -1 out of memory. */
static int
rank_add(struct record_info *ri, pid_t pid, unsigned long long start)
{
	pid_t			*np;
	unsigned long long	*ns;

	if ((np = reallocarray(ri->pid, ri->nranks + 1, sizeof(*np))) == NULL)
		return -1;
	ri->pid = np;
	if ((ns = reallocarray(ri->start, ri->nranks + 1, sizeof(*ns))) == NULL)
		return -1;
	ri->start = ns;
	ri->pid[ri->nranks] = pid;
	ri->start[ri->nranks++] = start;
	return 0;
}

int
record_parse(FILE *f, struct record_info *ri, char *why, size_t len)
{
	char			 line[512];
	const char		*bad = NULL;
	unsigned long long	 st = 0;
	pid_t			 pid = 0;
	unsigned long		 rank;
	char			*p;
	int			 n = 0;

	record_info_free(ri);
	why[0] = '\0';
	while (bad == NULL && fgets(line, sizeof(line), f) != NULL) {
		n++;
		line[strcspn(line, "\n")] = '\0';
		if (n == 1) {
			if (strcmp(line, "dtrun-job 1") != 0) {
				snprintf(why, len, "not a dtrun job record");
				return -1;
			}
		} else if (strncmp(line, "job ", 4) == 0) {
			if (ri->job[0] != '\0' || line[4] == '\0' ||
			    strlen(line + 4) >= sizeof(ri->job) ||
			    strchr(line + 4, ' ') != NULL)
				bad = "has a bad job id";
			else
				snprintf(ri->job, sizeof(ri->job), "%s",
				    line + 4);
		} else if (strncmp(line, "agent ", 6) == 0) {
			if (ri->agent != 0)
				bad = "is a second agent line";
			else
				bad = parse_proc(line + 6, &ri->agent,
				    &ri->agent_start);
		} else if (strncmp(line, "keeper ", 7) == 0) {
			if (ri->keeper != 0)
				bad = "is a second keeper line";
			else
				bad = parse_proc(line + 7, &ri->keeper,
				    &ri->keeper_start);
		} else if (strncmp(line, "rank ", 5) == 0) {
			rank = strtoul(line + 5, &p, 10);
			if (p == line + 5 || *p != ' ' || rank > UINT32_MAX)
				bad = "has no rank";
			else if ((bad = parse_proc(p + 1, &pid, &st)) == NULL &&
			    rank_add(ri, pid, st) != 0)
				bad = "is one rank too many (out of memory)";
		} else if (strcmp(line, "launcher") == 0)
			ri->launcher = 1;
		/* Other lines (host, and what later versions add) are notes. */
	}
	if (bad != NULL)
		snprintf(why, len, "line %d %s", n, bad);
	else if (n == 0)
		snprintf(why, len, "empty");
	else if (ri->job[0] == '\0' || ri->agent == 0)
		snprintf(why, len, "no %s line", ri->job[0] == '\0' ? "job" :
		    "agent");
	else
		return 0;
	return -1;
}

void
record_info_free(struct record_info *ri)
{
	free(ri->pid);
	free(ri->start);
	memset(ri, 0, sizeof(*ri));
}
