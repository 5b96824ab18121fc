/*
 * agentbin.c -- dtrun-agent as a file: where it is, its bytes (to upload
 * to hosts that lack it) and the id of this exact build, so a host's cache
 * never runs an agent from another build.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/backend/agentbin.h"
#include "common/err.h"
#include "proto/agentproto.h"
#include "util/xmalloc.h"

int
agentbin_path(char *buf, size_t len, struct dt_err *e)
{
	const char	*env = getenv("DTRUN_AGENT");
	char		 self[PATH_MAX];
	ssize_t		 n;
	char		*slash;

	if (env != NULL && env[0] != '\0') {
		snprintf(buf, len, "%s", env);
		if (access(buf, X_OK) != 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND,
			    "DTRUN_AGENT=%s: %s (point it at dtrun-agent)",
			    buf, strerror(errno));
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "cannot find "
		    "my own binary: %s (set DTRUN_AGENT)", strerror(errno));
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if ((size_t)snprintf(buf, len, "%s/dtrun-agent", self) >= len)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "path of "
		    "dtrun-agent too long (set DTRUN_AGENT)");
	if (access(buf, X_OK) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "%s: %s "
		    "(install dtrun-agent beside dtrun, or set DTRUN_AGENT)",
		    buf, strerror(errno));
	return 0;
}

int
agentbin_load(const unsigned char **data, size_t *len, const char **id,
    struct dt_err *e)
{
	static unsigned char	*bin;
	static size_t		 binlen;
	static char		 binid[64];
	char			 path[PATH_MAX];
	struct stat		 st;
	uint64_t		 h = 14695981039346656037ULL;	/* FNV-1a */
	size_t			 i, got;
	ssize_t			 n;
	int			 fd, rc;

	if (bin == NULL) {
		if ((rc = agentbin_path(path, sizeof(path), e)) != 0)
			return rc;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
		    fstat(fd, &st) == -1) {
			rc = errno;
			if (fd != -1)
				close(fd);
			return dt_errf(e, path, 0, 0, DT_ERR_IO, "%s",
			    strerror(rc));
		}
		bin = xmalloc(st.st_size);
		for (got = 0; got < (size_t)st.st_size; got += n) {
			n = read(fd, bin + got, st.st_size - got);
			if (n <= 0) {
				close(fd);
				free(bin);
				bin = NULL;
				return dt_errf(e, path, 0, 0, DT_ERR_IO,
				    "short read");
			}
		}
		close(fd);
		binlen = st.st_size;
		for (i = 0; i < binlen; i++) {
			h ^= bin[i];
			h *= 1099511628211ULL;
		}
		snprintf(binid, sizeof(binid), "%s-%016llx", DT_VERSION,
		    (unsigned long long)h);
	}
	*data = bin;
	*len = binlen;
	*id = binid;
	return 0;
}

const char *
agentbin_version_line(void)
{
	static char	line[64];

	snprintf(line, sizeof(line), "dtrun-agent %s protocol %d", DT_VERSION,
	    AP_VERSION);
	return line;
}
