/* agentbin.h -- finding dtrun-agent here, and naming its exact build for the hosts' caches. */
#ifndef DT_AGENTBIN_H
#define DT_AGENTBIN_H

#include <stddef.h>

struct dt_err;

/* Finds dtrun-agent: $DTRUN_AGENT, else beside the dtrun binary. Returns 0 or DT_ERR_NOTFOUND. */
int	agentbin_path(char *buf, size_t len, struct dt_err *e);

/*
 * Reads the agent binary (once; later calls return the same) and an id
 * for this exact build, "VERSION-HASH", under which hosts cache it.
 * Returns 0 or DT_ERR_IO/DT_ERR_NOTFOUND.
 */
int	agentbin_load(const unsigned char **data, size_t *len, const char **id,
	    struct dt_err *e);

/* What "dtrun-agent --version" prints for this build (no newline). */
const char *agentbin_version_line(void);

#endif
