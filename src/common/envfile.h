/*
 * envfile.h -- NAME=VALUE lines: dtrun's --env-file (DeepSpeed's
 * .deepspeed_env) and what an agent's --setup command prints. No I/O but
 * envfile_load's one read; never prints. Also the tail of what such a
 * command wrote on stderr, for the message when it failed.
 */
#ifndef DT_ENVFILE_H
#define DT_ENVFILE_H

#include <stddef.h>

#include "common/err.h"

#define ENVFILE_MAX	(16 * 1024 * 1024)	/* bytes of one file */

/* True if s[0..n) is a variable name: letters, digits and _, no leading digit. */
int	envfile_name_ok(const char *s, size_t n);

/*
 * Parses buf[0..len), the env file name: one NAME=VALUE a line. Blank lines
 * and lines whose first non-blank character is '#' are skipped; the value
 * is everything after the first '=' up to the end of the line (one '\r'
 * before the '\n' dropped), taken literally: quotes are kept, nothing is
 * expanded, as Docker's and DeepSpeed's env files do. Appends malloc'd
 * "NAME=VALUE" strings to *v (n entries, grown here; NULL-terminated:
 * free with dt_strv_free).
 * Returns 0, DT_ERR_NOMEM, or DT_ERR_PARSE with e naming name:line, what
 * was wrong and the fix.
 */
int	envfile_parse(const char *name, const char *buf, size_t len,
	    char ***v, size_t *n, struct dt_err *e);

/* Reads path (at most ENVFILE_MAX bytes) and parses it as envfile_parse. */
int	envfile_load(const char *path, char ***v, size_t *n, struct dt_err *e);

/*
 * Splits what a setup command wrote on stdout: each line "NAME=VALUE"
 * (a valid name) is appended to *v as envfile_parse does; blank lines are
 * skipped; any other line (a message, a multi-line value's tail) is handed
 * to other(arg, line, len) without its newline. A last line without a
 * newline counts. With v NULL every non-blank line goes to other (a
 * setup's stderr). Returns 0 or DT_ERR_NOMEM.
 */
int	envfile_setup_output(const char *buf, size_t len, char ***v,
	    size_t *n, void (*other)(void *, const char *, size_t), void *arg);

/*
 * The end of what a child wrote on stderr, for a message: buf[0..len)
 * without its last newlines, cut to its last lines lines that fit in max
 * bytes (where its last line alone is longer: that line's last max bytes).
 * Returns where that starts, with its length in *n.
 */
const char	*envfile_tail(const char *buf, size_t len, size_t max,
		    size_t lines, size_t *n);

#endif
