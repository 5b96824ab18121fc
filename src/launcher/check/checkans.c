/*
 * checkans.c -- dtrun --check: reading the hosts' answers ("key=value"
 * lines) and adding problems; what check.c, checkhost.c and checkprint.c
 * all use (they call down to it, never to each other's callers).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "launcher/check/checkint.h"

/* The first answer named key, or NULL. */
const char *
kv_get(char *const *kv, size_t n, const char *key)
{
	size_t	i, l = strlen(key);

	for (i = 0; i < n; i++)
		if (strncmp(kv[i], key, l) == 0 && kv[i][l] == '=')
			return kv[i] + l + 1;
	return NULL;
}

/* How many answers are named key. */
size_t
kv_count(char *const *kv, size_t n, const char *key)
{
	size_t	i, l = strlen(key), k = 0;

	for (i = 0; i < n; i++)
		k += strncmp(kv[i], key, l) == 0 && kv[i][l] == '=';
	return k;
}

/* h's GATHER answer named key. */
const char *
ch_get(const struct chost *c, const char *key)
{
	return kv_get(c->kv, c->nkv, key);
}

/* Adds a problem line. */
void
check_problem(struct check *c, const char *fmt, ...)
{
	char	buf[2048];
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	strv_addf(&c->problems, "%s", buf);
}
