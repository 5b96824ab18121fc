/*
 * pyname.c -- a Python interpreter's name (pyname.h).
 */
#include <string.h>

#include "common/pyname.h"

int
dt_is_python(const char *path)
{
	const char	*b = strrchr(path, '/');

	b = b == NULL ? path : b + 1;
	if (strncmp(b, "python", 6) != 0)
		return 0;
	return b[6 + strspn(b + 6, "0123456789.")] == '\0';
}
