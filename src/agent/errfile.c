/* errfile.c -- each rank's TORCHELASTIC_ERROR_FILE (see errfile.h). */
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentproto.h"
#include "errfile.h"
#include "record.h"

struct errfiles {
	char	 dir[512];
};

struct errfiles *
errfiles_new(const char *job_id, char *why, size_t len)
{
	struct errfiles	*ef;
	const char	*top;

	why[0] = '\0';
	if ((top = record_dir(why, len)) == NULL ||
	    strchr(job_id, '/') != NULL || job_id[0] == '.' ||
	    (ef = calloc(1, sizeof(*ef))) == NULL)
		return NULL;
	snprintf(ef->dir, sizeof(ef->dir), "%s/%s.%d" ERRFILE_DIRSUF, top,
	    job_id, (int)getpid());
	/* Left by this pid's earlier attempt, or made just now: ours. */
	if (mkdir(ef->dir, 0700) == -1 && errno != EEXIST) {
		snprintf(why, len, "cannot make %s: %s: no error files",
		    ef->dir, strerror(errno));
		free(ef);
		return NULL;
	}
	return ef;
}

char *
errfiles_var(struct errfiles *ef, uint32_t rank)
{
	char	*kv;
	int	 n;

	n = snprintf(NULL, 0, ERRFILE_VAR "=%s/rank.%u.json", ef->dir, rank);
	if ((kv = malloc(n + 1)) == NULL)
		return NULL;
	snprintf(kv, n + 1, ERRFILE_VAR "=%s/rank.%u.json", ef->dir, rank);
	unlink(kv + sizeof(ERRFILE_VAR));
	return kv;
}

/*
 * Reads the first AP_ERRFILE_MAX bytes of path into buf; *size gets the
 * file's. Only a plain file: a FIFO or a link a rank left there is no
 * error file. Returns the bytes read, or -1.
 */
static ssize_t
errfiles_read(const char *path, char *buf, uint32_t *size)
{
	struct stat	st;
	ssize_t		n, got = 0;
	int		fd;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = st.st_size > UINT32_MAX ? UINT32_MAX : (uint32_t)st.st_size;
	while (got < AP_ERRFILE_MAX &&
	    (n = read(fd, buf + got, AP_ERRFILE_MAX - got)) > 0)
		got += n;
	close(fd);
	if ((uint32_t)got > *size)
		*size = (uint32_t)got;
	return got;
}

int
errfiles_send(struct errfiles *ef, uint32_t rank, struct dt_wbuf *b)
{
	struct ap_errfile	 f;
	char			 path[600], *buf;
	ssize_t			 n;

	if (ef == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/rank.%u.json", ef->dir, rank);
	if ((buf = malloc(AP_ERRFILE_MAX)) == NULL)
		return 0;
	memset(&f, 0, sizeof(f));
	n = errfiles_read(path, buf, &f.size);
	unlink(path);
	if (n <= 0) {
		free(buf);
		return 0;
	}
	f.rank = rank;
	f.path = path;
	f.data = (const uint8_t *)buf;
	f.len = (size_t)n;
	n = ap_put_errfile(b, &f) == 0;
	free(buf);
	return (int)n;
}

/* Removes dir and what is in it (files only: the ranks write no more). */
static void
errfiles_rmdir(const char *dir)
{
	struct dirent	*d;
	DIR		*dp;

	if ((dp = opendir(dir)) == NULL)
		return;
	while ((d = readdir(dp)) != NULL)
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0)
			unlinkat(dirfd(dp), d->d_name, 0);
	closedir(dp);
	rmdir(dir);
}

void
errfiles_free(struct errfiles *ef)
{
	if (ef == NULL)
		return;
	errfiles_rmdir(ef->dir);
	free(ef);
}

void
errfiles_remove_dead(pid_t agent)
{
	struct dirent	*d;
	const char	*top;
	char		 why[256], suf[32], path[768];
	size_t		 n, l;
	DIR		*dp;

	if ((top = record_dir(why, sizeof(why))) == NULL ||
	    (dp = opendir(top)) == NULL)
		return;
	n = (size_t)snprintf(suf, sizeof(suf), ".%d" ERRFILE_DIRSUF,
	    (int)agent);
	while ((d = readdir(dp)) != NULL) {
		l = strlen(d->d_name);
		if (l <= n || strcmp(d->d_name + l - n, suf) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", top, d->d_name);
		errfiles_rmdir(path);
	}
	closedir(dp);
}
