/* strv.c -- string vectors for argv and environments. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strs.h"
#include "util/strv.h"
#include "util/xmalloc.h"

/* Appends s (taking ownership), keeping the vector NULL-terminated. */
static void
strv_take(struct strv *sv, char *s)
{
	if (sv->n + 2 > sv->cap) {
		sv->cap = sv->cap ? sv->cap * 2 : 16;
		sv->v = xreallocarray(sv->v, sv->cap, sizeof(*sv->v));
	}
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
strv_addf(struct strv *sv, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = xstrdup("");	/* only on ENOMEM, where xstrdup exits */
	va_end(ap);
	strv_take(sv, s);
}

void
strv_setf(struct strv *sv, const char *name, const char *fmt, ...)
{
	va_list	 ap;
	char	*val;

	va_start(ap, fmt);
	if (vasprintf(&val, fmt, ap) < 0)
		val = xstrdup("");
	va_end(ap);
	strv_addf(sv, "%s=%s", name, val);
	free(val);
}

void
strv_addv(struct strv *sv, char *const *v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		strv_take(sv, xstrdup(v[i]));
}

char *
shell_quote(const char *s)
{
	const char	*c;
	char		*q, *p;
	size_t		 n = 3;

	for (c = s; *c != '\0'; c++)
		n += *c == '\'' ? 4 : 1;
	p = q = xmalloc(n);
	*p++ = '\'';
	for (c = s; *c != '\0'; c++) {
		if (*c == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else
			*p++ = *c;
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

void
strv_free(struct strv *sv)
{
	size_t	i;

	for (i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	memset(sv, 0, sizeof(*sv));
}

void
strs_push(char ***v, size_t *n, char *s)
{
	if (dt_strs_push(v, n, s) != 0)
		xoom();
}
