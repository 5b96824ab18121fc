/*
 * envfile.c -- NAME=VALUE lines, from a file (--env-file) or from a setup
 * command's stdout. Both take the value literally: a file written for
 * Docker or DeepSpeed means the same here, and no shell is imitated.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strs.h"
#include "common/envfile.h"

#define QUOTE	40	/* characters of a bad line quoted in a message */

int
envfile_name_ok(const char *s, size_t n)
{
	size_t	i;

	if (n == 0 || isdigit((unsigned char)s[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/* Appends a malloc'd copy of line[0..len) to *v; 0 or DT_ERR_NOMEM. */
static int
envfile_add(char ***v, size_t *n, const char *line, size_t len)
{
	return dt_strs_push(v, n, strndup(line, len));
}

/* The length of the line at p (up to end), without its "\n" or "\r\n". */
static size_t
envfile_linelen(const char *p, const char *end, const char **next)
{
	const char	*nl = memchr(p, '\n', end - p);
	size_t		 len;

	if (nl == NULL) {
		*next = end;
		len = end - p;
	} else {
		*next = nl + 1;
		len = nl - p;
	}
	if (len > 0 && p[len - 1] == '\r')
		len--;
	return len;
}

/* True if line[0..len) is only blanks. */
static int
envfile_blank(const char *line, size_t len)
{
	size_t	i;

	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			return 0;
	return 1;
}

int
envfile_parse(const char *name, const char *buf, size_t len, char ***v,
    size_t *n, struct dt_err *e)
{
	const char	*p = buf, *end = buf + len, *next, *eq, *s;
	size_t		 l, first = *n;
	int		 lineno = 0, rc;

	for (; p < end; p = next) {
		lineno++;
		l = envfile_linelen(p, end, &next);
		for (s = p; s < p + l && (*s == ' ' || *s == '\t'); s++)
			;
		if (s == p + l || *s == '#')
			continue;
		if (memchr(p, '\0', l) != NULL) {
			rc = dt_errf(e, name, lineno, 0, DT_ERR_PARSE, "a NUL "
			    "byte: not a text file (want NAME=VALUE lines)");
			goto fail;
		}
		if (l > 7 && strncmp(p, "export ", 7) == 0) {
			rc = dt_errf(e, name, lineno, 0, DT_ERR_PARSE, "\"%.*s"
			    "\": drop \"export \" (the file holds NAME=VALUE "
			    "lines, not shell)", (int)(l < QUOTE ? l : QUOTE),
			    p);
			goto fail;
		}
		if ((eq = memchr(p, '=', l)) == NULL) {
			rc = dt_errf(e, name, lineno, 0, DT_ERR_PARSE, "\"%.*s"
			    "\": not NAME=VALUE (one variable a line, e.g. "
			    "NCCL_DEBUG=INFO; # starts a comment)",
			    (int)(l < QUOTE ? l : QUOTE), p);
			goto fail;
		}
		if (!envfile_name_ok(p, eq - p)) {
			rc = dt_errf(e, name, lineno, 0, DT_ERR_PARSE, "\"%.*s"
			    "\": not a variable name (letters, digits and _, "
			    "not starting with a digit; no blanks around =)",
			    (int)(eq - p < QUOTE ? eq - p : QUOTE), p);
			goto fail;
		}
		if ((rc = envfile_add(v, n, p, l)) != 0) {
			dt_errf(e, name, lineno, 0, rc, "out of memory");
			goto fail;
		}
	}
	return 0;
fail:
	/* Nothing of a bad file is kept. */
	while (*n > first) {
		free((*v)[--*n]);
		(*v)[*n] = NULL;
	}
	return rc;
}

int
envfile_load(const char *path, char ***v, size_t *n, struct dt_err *e)
{
	char	*buf, *nb;
	size_t	 len = 0, cap = 65536;
	ssize_t	 r;
	int	 fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return dt_errf(e, path, 0, 0, DT_ERR_IO, "%s (--env-file wants "
		    "a file of NAME=VALUE lines)", strerror(errno));
	if ((buf = malloc(cap)) == NULL) {
		close(fd);
		return dt_errf(e, path, 0, 0, DT_ERR_NOMEM, "out of memory");
	}
	for (;;) {
		if (len == cap) {
			if (cap >= ENVFILE_MAX) {
				rc = dt_errf(e, path, 0, 0, DT_ERR_TOOBIG,
				    "over %d MiB: not an env file",
				    ENVFILE_MAX >> 20);
				goto out;
			}
			if ((nb = realloc(buf, cap * 2)) == NULL) {
				rc = dt_errf(e, path, 0, 0, DT_ERR_NOMEM,
				    "out of memory");
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		if ((r = read(fd, buf + len, cap - len)) == 0)
			break;
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = dt_errf(e, path, 0, 0, DT_ERR_IO, "%s",
			    strerror(errno));
			goto out;
		}
		len += r;
	}
	rc = envfile_parse(path, buf, len, v, n, e);
out:
	close(fd);
	free(buf);
	return rc;
}

int
envfile_setup_output(const char *buf, size_t len, char ***v, size_t *n,
    void (*other)(void *, const char *, size_t), void *arg)
{
	const char	*p = buf, *end = buf + len, *next, *eq;
	size_t		 l;
	int		 rc;

	for (; p < end; p = next) {
		l = envfile_linelen(p, end, &next);
		if (envfile_blank(p, l))
			continue;
		eq = memchr(p, '=', l);
		if (v != NULL && eq != NULL && envfile_name_ok(p, eq - p) &&
		    memchr(p, '\0', l) == NULL) {
			if ((rc = envfile_add(v, n, p, l)) != 0)
				return rc;
		} else if (other != NULL)
			other(arg, p, l);
	}
	return 0;
}

const char *
envfile_tail(const char *buf, size_t len, size_t max, size_t lines,
    size_t *n)
{
	size_t	i, start = 0, k = 0;

	while (len > 0 && buf[len - 1] == '\n')
		len--;
	/* Back from the end, line start by line start, while they fit. */
	for (i = len;; i--) {
		if (i == 0 || buf[i - 1] == '\n') {
			if (len - i > max)
				break;
			start = i;
			if (++k == lines || i == 0)
				break;
		}
	}
	/* Its last line alone is over max: its last max bytes, then. */
	if (k == 0)
		start = len - max;
	*n = len - start;
	return buf + start;
}
