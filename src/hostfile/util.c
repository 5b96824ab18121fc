/*
 * util.c -- small helpers the hostfile library shares: bounded strings and
 * numbers, name characters, did-you-mean by edit distance, notes for -v.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strs.h"
#include "common/editdist.h"
#include "hostfile/hf_impl.h"

#define CLOSEST_LEN	DT_EDIT_MAX	/* longer words get no suggestion */

char *
hfi_strndup(const char *p, size_t len)
{
	char	*s;

	if ((s = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	return s;
}

int
hfi_uint(const char *p, size_t len, long max, long *out)
{
	long	v = 0;
	size_t	i;
	int	big = 0;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		if (big || v > (max - (p[i] - '0')) / 10)
			big = 1;
		else
			v = v * 10 + (p[i] - '0');
	}
	if (big || v > max)
		return -2;
	*out = v;
	return 0;
}

int
hfi_namechar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

/* Copies s lowercased without "_" and "-" into buf; returns the length. */
static size_t
closest_fold(const char *s, size_t len, char *buf)
{
	size_t	i, n = 0;

	for (i = 0; i < len && n < CLOSEST_LEN; i++)
		if (s[i] != '_' && s[i] != '-')
			buf[n++] = tolower((unsigned char)s[i]);
	return n;
}

const char *
hfi_closest(const char *word, size_t len, const char *const *cands)
{
	char		 a[CLOSEST_LEN], b[CLOSEST_LEN];
	size_t		 n, m, d, bestd = (size_t)-1, limit;
	const char	*best = NULL;

	if (len > CLOSEST_LEN)
		return NULL;
	n = closest_fold(word, len, a);
	for (; *cands != NULL; cands++) {
		m = closest_fold(*cands, strlen(*cands), b);
		d = dt_edit_distance(a, n, b, m);
		if (d < bestd) {
			bestd = d;
			best = *cands;
		}
	}
	limit = n / 3 > 2 ? n / 3 : 2;
	return bestd <= limit && bestd < n ? best : NULL;
}

int
hfi_note(char ***v, size_t *n, const char *fmt, ...)
{
	va_list	  ap;
	char	 *s;
	int	  r;

	if (*n > HFI_NOTES_MAX)
		return 0;
	if (*n == HFI_NOTES_MAX)
		return dt_strs_push(v, n, strdup("more notes were left out"));
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return dt_strs_push(v, n, r < 0 ? NULL : s);
}

size_t
hfi_item_end(const char *p, size_t len, int sep)
{
	size_t	i;
	int	depth = 0;

	for (i = 0; i < len; i++) {
		if (p[i] == '[')
			depth = 1;
		else if (p[i] == ']')
			depth = 0;
		else if (p[i] == sep && depth == 0)
			break;
	}
	return i;
}

int
hfi_slurp(const char *path, const char *what, char **bufp, size_t *lenp,
    struct dt_err *e)
{
	struct stat	 st;
	char		*buf = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd, r = 0;

	*bufp = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return dt_errf(e, path, 0, 0, errno == ENOENT ?
		    DT_ERR_NOTFOUND : DT_ERR_IO, "cannot open %s: %s", what,
		    strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		r = dt_errf(e, path, 0, 0, DT_ERR_IO, "%s is not a regular "
		    "file", what);
		goto out;
	}
	if ((buf = malloc(st.st_size + 1)) == NULL) {
		r = dt_errf(e, path, 0, 0, DT_ERR_NOMEM, "out of memory "
		    "reading %lld bytes", (long long)st.st_size);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, buf + got, st.st_size - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = dt_errf(e, path, 0, 0, DT_ERR_IO, "read: %s",
			    n == 0 ? "file shrank" : strerror(errno));
			goto out;
		}
		got += n;
	}
	buf[got] = '\0';
	*bufp = buf;
	*lenp = got;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return r;
}
