/* errfile.c -- each rank's TORCHELASTIC_ERROR_FILE (see errfile.h). */
#include <sys/stat.h>
#include <sys/types.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "common/err.h"
#include "agent/errfile.h"
#include "host/record.h"

/*
 * The files lie beside the job records, in the owner-only record
 * directory, as PRE<rank>.json: no directory of their own, whose mkdir and
 * rmdir cost a local run a third of a millisecond.
 */
struct errfiles {
	char		 pre[512];	/* TOP/JOBID.PID.rank. */
	uint32_t	*ranks;		/* those given a file, to remove */
	size_t		 n;
};

/* rank's file, into path. */
static void
errfiles_path(const struct errfiles *ef, uint32_t rank, char *path,
    size_t len)
{
	snprintf(path, len, "%s%u" RECORD_ERRFILE_SUF, ef->pre, rank);
}

int
errfiles_new(const char *job_id, struct errfiles **efp, struct dt_err *e)
{
	struct errfiles	*ef;
	const char	*top;
	int		 rc;

	*efp = NULL;
	if ((rc = record_dir(&top, e)) != 0)
		return rc;
	if (strchr(job_id, '/') != NULL || job_id[0] == '.')
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "job id %s cannot "
		    "name a file: no error files", job_id);
	if ((ef = calloc(1, sizeof(*ef))) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory: "
		    "no error files");
	snprintf(ef->pre, sizeof(ef->pre), "%s/%s.%d" RECORD_ERRFILE_MID, top,
	    job_id, (int)getpid());
	*efp = ef;
	return 0;
}

char *
errfiles_var(struct errfiles *ef, uint32_t rank)
{
	uint32_t	*r;
	char		 path[600], *kv;
	size_t		 n;

	if ((r = realloc(ef->ranks, (ef->n + 1) * sizeof(*r))) == NULL)
		return NULL;
	ef->ranks = r;
	errfiles_path(ef, rank, path, sizeof(path));
	n = sizeof(ERRFILE_VAR) + strlen(path) + 1;
	if ((kv = malloc(n)) == NULL)
		return NULL;
	snprintf(kv, n, ERRFILE_VAR "=%s", path);
	/* Left by this pid's earlier attempt: not this one's error. */
	unlink(path);
	ef->ranks[ef->n++] = rank;
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
	errfiles_path(ef, rank, path, sizeof(path));
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

void
errfiles_free(struct errfiles *ef)
{
	char	path[600];
	size_t	i;

	if (ef == NULL)
		return;
	for (i = 0; i < ef->n; i++) {
		errfiles_path(ef, ef->ranks[i], path, sizeof(path));
		unlink(path);
	}
	free(ef->ranks);
	free(ef);
}
