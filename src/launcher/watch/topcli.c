/*
 * topcli.c -- dtrun top (topcli.h). Without JOB it takes the only job of
 * this user that answers on a socket here, and lists them (one a line:
 * id, ranks, hosts, start, command) when there are more. A socket no job
 * listens on (its dtrun was killed) is ours to remove, and is removed.
 * On a terminal the view is redrawn every second; otherwise (a pipe, a
 * script) each view is printed in turn, a blank line between. --once (and
 * --json, which implies it) prints one view.
 *
 * "The job ended" is said only when its socket is gone or refuses: a job
 * that is busy (many viewers, a stopped dtrun) is asked again, and a
 * --once that gets no answer says so. Exit 0 once the job was seen, 1
 * when there was none or no answer came.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/record.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "common/log.h"
#include "launcher/watch/topcli.h"
#include "launcher/watch/topsrv.h"
#include "util/xmalloc.h"

#define TOPCLI_USAGE	"usage: dtrun top [--json] [--once] [JOB]"
#define TOPCLI_WAIT_S	2	/* for one answer */
#define TOPCLI_TRIES	5	/* a busy job is asked this often by --once */

/* What asking a socket came to. */
enum topcli_got {
	TOP_ANSWER,		/* a view */
	TOP_GONE,		/* no socket, or no job listens on it */
	TOP_SILENT		/* a job listens, but no answer came */
};

/* One request on path: the answer in *out (malloc'd) when TOP_ANSWER. */
static enum topcli_got
topcli_ask(const char *path, const char *req, char **out)
{
	struct sockaddr_un	 sa;
	struct timeval		 tv = { TOPCLI_WAIT_S, 0 };
	char			*buf = NULL;
	size_t			 len = 0, cap = 0;
	ssize_t			 n;
	int			 fd, gone;

	*out = NULL;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return TOP_GONE;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return TOP_SILENT;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		gone = errno == ENOENT || errno == ECONNREFUSED ||
		    errno == ENOTSOCK;
		close(fd);
		return gone ? TOP_GONE : TOP_SILENT;
	}
	/* A job that closed on us is no signal to die of. */
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		close(fd);
		return TOP_SILENT;
	}
	for (;;) {
		if (len + 4096 > cap)
			buf = xreallocarray(buf, cap = cap * 2 + 8192, 1);
		if ((n = read(fd, buf + len, cap - len - 1)) <= 0)
			break;
		len += n;
	}
	close(fd);
	if (len == 0) {
		free(buf);
		return TOP_SILENT;
	}
	buf[len] = '\0';
	*out = buf;
	return TOP_ANSWER;
}

/* Removes a socket no job listens on, if it is ours (the directory is, too). */
static void
topcli_remove_stale(const char *path)
{
	struct stat	st;

	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    st.st_uid == getuid() && unlink(path) == 0)
		log_info("top: removed %s: no job listens on it", path);
}

/* One live job: its id and what "info" said of it (NULL: nothing). */
struct topjob {
	char	*id;
	char	*info;
};

static int
topjob_cmp(const void *a, const void *b)
{
	return strcmp(((const struct topjob *)a)->id,
	    ((const struct topjob *)b)->id);
}

/* Prints jobs to f, one a line: id, ranks, hosts, start, command. */
static void
topcli_list(FILE *f, struct topjob *jobs, size_t n)
{
	char		*fld[6], *p, when[32], id[128];
	struct tm	 tm;
	time_t		 t;
	size_t		 i;
	int		 k;

	fprintf(f, "%-24s %5s  %-20s %-19s  %s\n", "JOB", "RANKS", "HOSTS",
	    "STARTED", "COMMAND");
	for (i = 0; i < n; i++) {
		log_escape(id, sizeof(id), jobs[i].id);
		/* JOBID START RANKS NHOSTS HOSTS COMMAND (topsrv.h). */
		p = jobs[i].info;
		for (k = 0; k < 6 && p != NULL; k++)
			fld[k] = strsep(&p, k < 5 ? "\t" : "\n");
		if (k < 6 || fld[5] == NULL) {
			fprintf(f, "%-24s %5s  %-20s %-19s  %s\n", id, "?", "?",
			    "?", "(no answer yet)");
			continue;
		}
		t = (time_t)strtoll(fld[1], NULL, 10);
		if (localtime_r(&t, &tm) == NULL ||
		    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) == 0)
			snprintf(when, sizeof(when), "?");
		fprintf(f, "%-24s %5s  %-20.60s %-19s  %s\n", id, fld[2],
		    fld[4], when, fld[5]);
	}
}

/* The live jobs with a socket in dir, by id (so by start); *n of them. */
static struct topjob *
topcli_jobs(const char *dir, DIR *d, size_t *n)
{
	struct topjob	*jobs = NULL;
	struct dirent	*de;
	size_t		 sl = strlen(TOPSRV_SUFFIX), l;
	char		 path[512], *info;
	enum topcli_got	 got;

	*n = 0;
	while ((de = readdir(d)) != NULL) {
		if ((l = strlen(de->d_name)) <= sl ||
		    strcmp(de->d_name + l - sl, TOPSRV_SUFFIX) != 0 ||
		    (size_t)snprintf(path, sizeof(path), "%s/%s", dir,
		    de->d_name) >= sizeof(path))
			continue;
		if ((got = topcli_ask(path, "info\n", &info)) == TOP_GONE) {
			topcli_remove_stale(path);
			continue;
		}
		jobs = xreallocarray(jobs, *n + 1, sizeof(*jobs));
		jobs[*n].id = xstrdup(de->d_name);
		jobs[*n].id[l - sl] = '\0';
		jobs[(*n)++].info = info;
	}
	qsort(jobs, *n, sizeof(*jobs), topjob_cmp);
	return jobs;
}

/* The socket of job, or of the only live job, into path. 0, or an exit status. */
static int
topcli_find(const char *job, char *path, size_t len)
{
	struct topjob	*jobs;
	struct dt_err	 e;
	const char	*dir;
	DIR		*d;
	size_t		 n, i;
	int		 rc = 0;

	dt_err_clear(&e);
	if (record_dir(&dir, &e) != 0) {
		fprintf(stderr, "dtrun top: %s\n", e.msg);
		return EXIT_CONFIG;
	}
	if (job != NULL) {
		snprintf(path, len, "%s/%s%s", dir, job, TOPSRV_SUFFIX);
		return 0;
	}
	if ((d = opendir(dir)) == NULL) {
		fprintf(stderr, "dtrun top: %s: %s\n", dir, strerror(errno));
		return EXIT_CONFIG;
	}
	jobs = topcli_jobs(dir, d, &n);
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "dtrun top: no job of yours runs here (no "
		    "socket in %s answers)\n", dir);
		rc = EXIT_LEFTOVER;
	} else if (n > 1) {
		topcli_list(stderr, jobs, n);
		fprintf(stderr, "dtrun top: %zu jobs run here (above): name "
		    "one, dtrun top JOB\n", n);
		rc = EXIT_CONFIG;
	} else
		snprintf(path, len, "%s/%s%s", dir, jobs[0].id, TOPSRV_SUFFIX);
	for (i = 0; i < n; i++) {
		free(jobs[i].id);
		free(jobs[i].info);
	}
	free(jobs);
	return rc;
}

/* Shows the job at path until it ends (once: one view). dtrun's exit status. */
static int
topcli_watch(const char *path, int json, int once)
{
	const char	*req = json ? "json\n" : "table\n";
	enum topcli_got	 got;
	char		*v;
	int		 tty = isatty(STDOUT_FILENO), seen = 0, silent = 0;

	for (;; sleep(1)) {
		/* A busy job is asked again at once, a few times. */
		while ((got = topcli_ask(path, req, &v)) == TOP_SILENT &&
		    ++silent % TOPCLI_TRIES != 0)
			usleep(100000);
		if (got == TOP_GONE)
			break;
		if (got == TOP_SILENT) {
			if (once || silent == TOPCLI_TRIES)
				fprintf(stderr, "dtrun top: %s: the job does "
				    "not answer (busy, or its dtrun is "
				    "stopped)%s\n", path, once ? "" :
				    "; asking again");
			if (once)
				return EXIT_LEFTOVER;
			continue;
		}
		silent = 0;
		/* Home, clear to the end: the view redrawn in place. */
		printf("%s%s%s", tty && !once ? "\033[H\033[J" : "",
		    seen && !tty && !once ? "\n" : "", v);
		fflush(stdout);
		free(v);
		seen = 1;
		if (once)
			return EXIT_OK;
	}
	if (!seen) {
		fprintf(stderr, "dtrun top: %s: no job answers there (it "
		    "ended, or never ran)\n", path);
		return EXIT_LEFTOVER;
	}
	printf("job ended\n");
	return EXIT_OK;
}

int
topcli_main(int argc, char **argv)
{
	const char	*job = NULL;
	char		 path[512];
	int		 i, json = 0, once = 0, rc;

	signal(SIGPIPE, SIG_IGN);
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			json = once = 1;
		else if (strcmp(argv[i], "--once") == 0)
			once = 1;
		else if (argv[i][0] == '-' || job != NULL) {
			fprintf(stderr, "dtrun top: %s: %s\n", argv[i],
			    TOPCLI_USAGE);
			return EXIT_CONFIG;
		} else
			job = argv[i];
	}
	if ((rc = topcli_find(job, path, sizeof(path))) != 0)
		return rc;
	return topcli_watch(path, json, once);
}
