/*
 * topcli.c -- dtrun top (topcli.h). Without JOB it takes the only job of
 * this user that has a socket here, and lists them when there are more.
 * On a terminal the view is redrawn every second; otherwise (a pipe, a
 * script) each view is printed in turn, a blank line between. --once (and
 * --json, which implies it) prints one view. A job that ends ends it: exit
 * 0 once it was seen, 1 when there was none.
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/record.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/topcli.h"
#include "launcher/topsrv.h"
#include "util/xmalloc.h"

#define TOPCLI_USAGE	"usage: dtrun top [--json] [--once] [JOB]"

/* The socket of job, or of the only job with one, into path. 0, or an exit status. */
static int
topcli_find(const char *job, char *path, size_t len)
{
	struct dt_err	 e;
	struct dirent	*de;
	const char	*dir;
	DIR		*d;
	size_t		 n = 0, sl = strlen(TOPSRV_SUFFIX), l;
	char		 first[256] = "";

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
	while ((de = readdir(d)) != NULL) {
		if ((l = strlen(de->d_name)) <= sl ||
		    strcmp(de->d_name + l - sl, TOPSRV_SUFFIX) != 0)
			continue;
		if (n++ == 0)
			snprintf(first, sizeof(first), "%.*s", (int)(l - sl),
			    de->d_name);
		else
			fprintf(stderr, "%s%.*s\n", n == 2 ? first : "",
			    (int)(l - sl), de->d_name);
		if (n == 2)
			fprintf(stderr, "\n");
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "dtrun top: no job of yours runs here (no "
		    "socket in %s)\n", dir);
		return EXIT_LEFTOVER;
	}
	if (n > 1) {
		fprintf(stderr, "dtrun top: %zu jobs run here (above): name "
		    "one, dtrun top JOB\n", n);
		return EXIT_CONFIG;
	}
	snprintf(path, len, "%s/%s%s", dir, first, TOPSRV_SUFFIX);
	return 0;
}

/* One view: its text (malloc'd), or NULL when the job is gone. */
static char *
topcli_ask(const char *path, int json)
{
	struct sockaddr_un	 sa;
	const char		*req = json ? "json\n" : "table\n";
	char			*buf = NULL;
	size_t			 len = 0, cap = 0;
	ssize_t			 n;
	int			 fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa.sun_path))
		return NULL;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return NULL;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return NULL;
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
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

int
topcli_main(int argc, char **argv)
{
	const char	*job = NULL;
	char		 path[512], *v;
	int		 i, json = 0, once = 0, tty, rc, seen = 0;

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
	tty = isatty(STDOUT_FILENO);
	for (;; sleep(1)) {
		if ((v = topcli_ask(path, json)) == NULL)
			break;
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
