/* record.c -- write and remove the agent's job record (see record.h). */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record.h"

struct record {
	char	 path[512];
	FILE	*f;		/* the .tmp being written */
	char	 tmp[520];
};

const char *
record_dir(void)
{
	static char	 dir[400];
	const char	*x = getenv("XDG_RUNTIME_DIR");
	struct stat	 st;

	if (x != NULL && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(dir, sizeof(dir), "%s/dtrun", x);
	else
		snprintf(dir, sizeof(dir), "/tmp/dtrun-%u", (unsigned)getuid());
	if (mkdir(dir, 0700) == -1 && errno != EEXIST)
		return NULL;
	/* Never trust a directory someone else made for us in /tmp. */
	if (lstat(dir, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != getuid())
		return NULL;
	return dir;
}

unsigned long long
proc_starttime(pid_t pid)
{
	char			 path[64], buf[1024], *p;
	FILE			*f;
	unsigned long long	 t = 0;
	int			 i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL) {
		/* After "pid (comm)", field 3 starts; field 22 is 19 more on. */
		for (i = 0; i < 20 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p != NULL)
			t = strtoull(p + 1, NULL, 10);
	}
	fclose(f);
	return t;
}

struct record *
record_open(const char *job_id, const char *host)
{
	struct record	*r;
	const char	*dir = record_dir();

	if (dir == NULL || strchr(job_id, '/') != NULL || job_id[0] == '.' ||
	    (r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	snprintf(r->path, sizeof(r->path), "%s/%s.%d", dir, job_id,
	    (int)getpid());
	snprintf(r->tmp, sizeof(r->tmp), "%s.tmp", r->path);
	if ((r->f = fopen(r->tmp, "w")) == NULL) {
		free(r);
		return NULL;
	}
	fprintf(r->f, "dtrun-job 1\njob %s\nhost %s\nagent %d %llu\n", job_id,
	    host, (int)getpid(), proc_starttime(getpid()));
	return r;
}

void
record_add(struct record *r, uint32_t rank, pid_t pid)
{
	if (r != NULL && r->f != NULL)
		fprintf(r->f, "rank %u %d %llu\n", rank, (int)pid,
		    proc_starttime(pid));
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
