/*
 * strs.c -- a NULL-terminated list of strings and its count (strs.h).
 */
#include <stdlib.h>

#include "common/err.h"
#include "common/strs.h"

int
dt_strs_push(char ***v, size_t *n, char *s)
{
	char	**nv;

	if (s == NULL || (nv = reallocarray(*v, *n + 2, sizeof(*nv))) == NULL) {
		free(s);
		return DT_ERR_NOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

void
dt_strs_free(char **v, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
