/* t_environ.c -- environments and the rule of which NAME=VALUE wins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/environ.h"
#include "common/err.h"
#include "common/wire.h"
#include "test.h"

/* e's variables joined by spaces. */
static const char *
joined(const struct dt_environ *e)
{
	static char	buf[1024];
	size_t		i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < e->n; i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%s",
		    i ? " " : "", e->v[i]);
	return buf;
}

TEST(environ_set_put_get_unset)
{
	struct dt_environ	e;

	dt_environ_init(&e);
	CHECK(dt_environ_get(&e, "A") == NULL);
	CHECK_INT(dt_environ_set(&e, "A", "1"), 0);
	CHECK_INT(dt_environ_put(&e, "B=x=y"), 0);
	CHECK_INT(dt_environ_put(&e, "AB=2"), 0);
	/* A name set again keeps its place. */
	CHECK_INT(dt_environ_put(&e, "A=3"), 0);
	CHECK_INT(dt_environ_put(&e, "NOEQ"), DT_ERR_INVAL);
	CHECK_STR(joined(&e), "A=3 B=x=y AB=2");
	CHECK_STR(dt_environ_get(&e, "B"), "x=y");
	CHECK(dt_environ_get(&e, "AB") != NULL);
	CHECK(dt_environ_get(&e, "ABC") == NULL);
	/* A prefix of a name is not the name. */
	CHECK(dt_environ_get(&e, "") == NULL);
	dt_environ_unset(&e, "B");
	dt_environ_unset(&e, "nothing");
	CHECK_STR(joined(&e), "A=3 AB=2");
	CHECK(e.v[e.n] == NULL);
	CHECK_INT(dt_environ_set(&e, "E", ""), 0);
	CHECK_STR(dt_environ_get(&e, "E"), "");
	dt_environ_free(&e);
	CHECK_INT(e.n, 0);
	CHECK(e.v == NULL);
}

TEST(environ_layers_last_wins_and_defaults_fill_gaps)
{
	char			*os[] = { "PATH=/bin", "HOME=/h", "OMP_NUM_THREADS=8",
	    "junk", NULL };
	char			*setup[] = { "PATH=/venv/bin", "X=1", "X=2" };
	char			*job[] = { "X=dtrun", "RANK=0", "RANK=9" };
	char			*defs[] = { "OMP_NUM_THREADS=1", "MKL=1", "MKL=2" };
	struct dt_environ	 e;

	dt_environ_init(&e);
	CHECK_INT(dt_environ_merge(&e, os, DT_ENV_ALL), 0);
	CHECK_INT(dt_environ_merge(&e, setup, 3), 0);
	CHECK_INT(dt_environ_merge(&e, job, 3), 0);
	/* Merging nothing is nothing. */
	CHECK_INT(dt_environ_merge(&e, NULL, 0), 0);
	CHECK_INT(dt_environ_defaults(&e, defs, 3), 0);
	CHECK_STR(joined(&e), "PATH=/venv/bin HOME=/h OMP_NUM_THREADS=8 "
	    "X=dtrun RANK=9 MKL=2");
	dt_environ_free(&e);

	/* Nothing set it: the default holds. */
	CHECK_INT(dt_environ_defaults(&e, defs, 1), 0);
	CHECK_STR(joined(&e), "OMP_NUM_THREADS=1");
	dt_environ_free(&e);
}

TEST(environ_find_in_a_bare_vector)
{
	char	*x[] = { "FOO=a", "FOOBAR=b", "FOO=c", NULL };

	CHECK_STR(dt_env_find(x, 3, "FOO"), "c");
	CHECK_STR(dt_env_find(x, 1, "FOO"), "a");
	CHECK_STR(dt_env_find(x, DT_ENV_ALL, "FOOBAR"), "b");
	CHECK(dt_env_find(x, 3, "FO") == NULL);
	CHECK(dt_env_find(NULL, 0, "FOO") == NULL);
	CHECK_INT(dt_env_namelen("A=b=c"), 1);
	CHECK_INT(dt_env_namelen("ABC"), 3);
}

TEST(environ_drop_what_a_layer_over_sets)
{
	char	*over[] = { "RANK=99", "FOO=bar" };
	char	**v = calloc(5, sizeof(char *));
	size_t	 n;

	v[0] = strdup("RANK=1");
	v[1] = strdup("LOCAL_RANK=1");
	v[2] = strdup("FOO=x");
	v[3] = strdup("FOOD=y");
	n = dt_env_drop(v, 4, over, 2);
	CHECK_INT(n, 2);
	CHECK_STR(v[0], "LOCAL_RANK=1");
	CHECK_STR(v[1], "FOOD=y");
	CHECK(v[2] == NULL);
	CHECK_INT(dt_env_drop(v, 2, NULL, 0), 2);
	dt_strv_free(v);
}

TEST(environ_copy_take_envp)
{
	struct dt_environ	 a, b;
	char			**v;
	size_t			 n = 7;

	dt_environ_init(&a);
	CHECK_INT(dt_environ_copy(&b, &a), 0);
	/* An empty environment is still an envp: just its NULL. */
	CHECK((v = dt_environ_envp(&b)) != NULL);
	CHECK(v[0] == NULL);
	dt_environ_free(&b);
	CHECK_INT(dt_environ_set(&a, "A", "1"), 0);
	CHECK_INT(dt_environ_set(&a, "B", "2"), 0);
	CHECK_INT(dt_environ_copy(&b, &a), 0);
	CHECK_INT(dt_environ_set(&b, "A", "3"), 0);
	CHECK_STR(joined(&a), "A=1 B=2");
	CHECK_STR(joined(&b), "A=3 B=2");
	v = dt_environ_take(&b, &n);
	CHECK_INT(n, 2);
	CHECK_STR(v[0], "A=3");
	CHECK(v[2] == NULL);
	CHECK_INT(b.n, 0);
	CHECK(b.v == NULL);
	dt_strv_free(v);
	dt_environ_free(&a);
}
