/* xmalloc.c -- allocation that exits on failure; used by binaries, never by libraries. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xmalloc.h"
#include "common/exitcodes.h"

void
xoom(void)
{
	static const char msg[] = "dtrun: out of memory\n";

	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(EXIT_INTERNAL);
}

void *
xmalloc(size_t n)
{
	void	*p = malloc(n == 0 ? 1 : n);

	if (p == NULL)
		xoom();
	return p;
}

void *
xcalloc(size_t n, size_t sz)
{
	void	*p = calloc(n == 0 ? 1 : n, sz == 0 ? 1 : sz);

	if (p == NULL)
		xoom();
	return p;
}

void *
xreallocarray(void *old, size_t n, size_t sz)
{
	void	*p;

	if (sz != 0 && n > (size_t)-1 / sz)
		xoom();
	p = realloc(old, n * sz == 0 ? 1 : n * sz);
	if (p == NULL)
		xoom();
	return p;
}

char *
xstrdup(const char *s)
{
	char	*p = strdup(s);

	if (p == NULL)
		xoom();
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		xoom();
	return n;
}
