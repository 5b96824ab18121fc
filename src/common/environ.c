/*
 * environ.c -- NAME=VALUE environments and the rule of which value wins
 * (environ.h). A vector searched from the front: environments are a few
 * hundred names at most, and order kept as set makes them easy to read.
 */
#include <sys/types.h>

#include <stdlib.h>
#include <string.h>

#include "common/environ.h"
#include "common/err.h"

size_t
dt_env_namelen(const char *kv)
{
	return strcspn(kv, "=");
}

/* True if kv is "name=...", name being l bytes. */
static int
env_is(const char *kv, const char *name, size_t l)
{
	return strncmp(kv, name, l) == 0 && kv[l] == '=';
}

/* Index in v[0..n) of the last variable named by name's first l bytes, or -1. */
static ssize_t
env_index(char *const *v, size_t n, const char *name, size_t l)
{
	ssize_t	found = -1;
	size_t	i;

	for (i = 0; v != NULL && i < n && v[i] != NULL; i++)
		if (env_is(v[i], name, l))
			found = (ssize_t)i;
	return found;
}

const char *
dt_env_find(char *const *v, size_t n, const char *name)
{
	size_t	l = strlen(name);
	ssize_t	i;

	if ((i = env_index(v, n, name, l)) < 0)
		return NULL;
	return v[i] + l + 1;
}

size_t
dt_env_drop(char **v, size_t n, char *const *over, size_t nover)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (env_index(over, nover, v[i], dt_env_namelen(v[i])) < 0)
			continue;
		free(v[i]);
		memmove(v + i, v + i + 1, (n - i) * sizeof(*v));
		n--;
		i--;
	}
	return n;
}

void
dt_environ_init(struct dt_environ *e)
{
	memset(e, 0, sizeof(*e));
}

void
dt_environ_free(struct dt_environ *e)
{
	size_t	i;

	for (i = 0; i < e->n; i++)
		free(e->v[i]);
	free(e->v);
	dt_environ_init(e);
}

/* Makes room for one more string and its NULL. Returns 0 or DT_ERR_NOMEM. */
static int
environ_grow(struct dt_environ *e)
{
	size_t	  cap;
	char	**v;

	if (e->n + 1 < e->cap)
		return 0;
	cap = e->cap < 16 ? 16 : e->cap * 2;
	if ((v = reallocarray(e->v, cap, sizeof(*v))) == NULL)
		return DT_ERR_NOMEM;
	e->v = v;
	e->cap = cap;
	e->v[e->n] = NULL;
	return 0;
}

/* Sets the variable of kv (malloc'd, taken over) as dt_environ_put does. */
static int
environ_take(struct dt_environ *e, char *kv)
{
	ssize_t	i = env_index(e->v, e->n, kv, dt_env_namelen(kv));

	if (i >= 0) {
		free(e->v[i]);
		e->v[i] = kv;
		return 0;
	}
	if (environ_grow(e) != 0) {
		free(kv);
		return DT_ERR_NOMEM;
	}
	e->v[e->n++] = kv;
	e->v[e->n] = NULL;
	return 0;
}

int
dt_environ_put(struct dt_environ *e, const char *kv)
{
	char	*s;

	if (strchr(kv, '=') == NULL)
		return DT_ERR_INVAL;
	if ((s = strdup(kv)) == NULL)
		return DT_ERR_NOMEM;
	return environ_take(e, s);
}

int
dt_environ_set(struct dt_environ *e, const char *name, const char *value)
{
	size_t	 ln = strlen(name), lv = strlen(value);
	char	*s;

	if ((s = malloc(ln + lv + 2)) == NULL)
		return DT_ERR_NOMEM;
	memcpy(s, name, ln);
	s[ln] = '=';
	memcpy(s + ln + 1, value, lv + 1);
	return environ_take(e, s);
}

void
dt_environ_unset(struct dt_environ *e, const char *name)
{
	ssize_t	i = env_index(e->v, e->n, name, strlen(name));

	if (i < 0)
		return;
	free(e->v[i]);
	memmove(e->v + i, e->v + i + 1, (e->n - i) * sizeof(*e->v));
	e->n--;
}

const char *
dt_environ_get(const struct dt_environ *e, const char *name)
{
	return dt_env_find(e->v, e->n, name);
}

int
dt_environ_merge(struct dt_environ *e, char *const *v, size_t n)
{
	size_t	i;
	int	rc;

	for (i = 0; v != NULL && i < n && v[i] != NULL; i++)
		if ((rc = dt_environ_put(e, v[i])) == DT_ERR_NOMEM)
			return rc;
	return 0;
}

int
dt_environ_defaults(struct dt_environ *e, char *const *v, size_t n)
{
	size_t	i, had = e->n;
	int	rc;

	/* Only what was there before counts: of v's own, the last wins. */
	for (i = 0; v != NULL && i < n && v[i] != NULL; i++) {
		if (env_index(e->v, had, v[i], dt_env_namelen(v[i])) >= 0)
			continue;
		if ((rc = dt_environ_put(e, v[i])) == DT_ERR_NOMEM)
			return rc;
	}
	return 0;
}

int
dt_environ_copy(struct dt_environ *dst, const struct dt_environ *src)
{
	size_t	i;

	dt_environ_init(dst);
	if (src->n == 0)
		return 0;
	if ((dst->v = calloc(src->n + 1, sizeof(char *))) == NULL)
		return DT_ERR_NOMEM;
	dst->cap = src->n + 1;
	/* Each name once already: no search. */
	for (i = 0; i < src->n; i++) {
		if ((dst->v[i] = strdup(src->v[i])) == NULL) {
			dt_environ_free(dst);
			return DT_ERR_NOMEM;
		}
		dst->n++;
	}
	return 0;
}

char **
dt_environ_envp(struct dt_environ *e)
{
	if (e->v == NULL && environ_grow(e) != 0)
		return NULL;
	return e->v;
}

char **
dt_environ_take(struct dt_environ *e, size_t *n)
{
	char	**v;

	if ((v = dt_environ_envp(e)) == NULL)
		return NULL;
	if (n != NULL)
		*n = e->n;
	dt_environ_init(e);
	return v;
}
