/* prefix.c -- check and render --prefix formats. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "launcher/cli/prefix.h"

int
prefix_check(const char *fmt, struct dt_err *e)
{
	const char	*p;

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		switch (p[1]) {
		case 'r': case 'l': case 'h': case 's': case 'a': case '%':
			p++;
			continue;
		case '\0':
			return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE,
			    "bad --prefix \"%s\": it ends in a lone %% "
			    "(write %%%% for a percent sign)", fmt);
		default:
			return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE,
			    "bad --prefix \"%s\": unknown placeholder %%%c "
			    "(use %%r rank, %%l local rank, %%h host, "
			    "%%s stream, %%a attempt, %%%% percent)", fmt, p[1]);
		}
	}
	return 0;
}

int
prefix_per_rank(const char *fmt)
{
	const char	*p;

	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%' || p[1] == '\0')
			continue;
		if (p[1] == 'l' || p[1] == 'h')
			return 1;
		p++;	/* past "%%" too */
	}
	return 0;
}

/* Appends s to buf at *off, keeping the result NUL-terminated. */
static void
put(char *buf, size_t len, size_t *off, const char *s, size_t n)
{
	if (*off < len) {
		size_t room = len - 1 - *off;

		memcpy(buf + *off, s, n < room ? n : room);
		buf[*off + (n < room ? n : room)] = '\0';
	}
	*off += n;
}

size_t
prefix_render(const char *fmt, const struct prefix_fields *f, char *buf,
    size_t len)
{
	const char	*p;
	char		 num[16];
	size_t		 off = 0;
	int		 n;

	if (len > 0)
		buf[0] = '\0';
	for (p = fmt; *p != '\0'; p++) {
		if (*p != '%' || p[1] == '\0') {
			put(buf, len, &off, p, 1);
			continue;
		}
		switch (*++p) {
		case 'r':
			if (f->ranks != NULL) {
				put(buf, len, &off, f->ranks, strlen(f->ranks));
				break;
			}
			/* FALLTHROUGH */
		case 'l':
		case 'a':
			n = snprintf(num, sizeof(num), "%d", *p == 'r' ?
			    f->rank : *p == 'l' ? f->local_rank : f->attempt);
			put(buf, len, &off, num, n);
			break;
		case 'h':
			put(buf, len, &off, f->host, strlen(f->host));
			break;
		case 's':
			put(buf, len, &off, f->stream, strlen(f->stream));
			break;
		default:
			put(buf, len, &off, p, 1);
			break;
		}
	}
	return off;
}
