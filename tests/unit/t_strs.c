/* t_strs.c -- the one shape of a string list (common/strs.h). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/strs.h"
#include "test.h"

TEST(strs_stay_null_terminated_and_refuse_a_missing_string)
{
	char	**v = NULL;
	size_t	  n = 0;

	CHECK_INT(dt_strs_push(&v, &n, strdup("a")), 0);
	CHECK_INT(dt_strs_push(&v, &n, strdup("b=2")), 0);
	CHECK_INT((int)n, 2);
	CHECK_STR(v[0], "a");
	CHECK_STR(v[1], "b=2");
	CHECK(v[2] == NULL);
	/* A string that could not be made (strdup's NULL): out of memory, list as it was. */
	CHECK_INT(dt_strs_push(&v, &n, NULL), DT_ERR_NOMEM);
	CHECK_INT((int)n, 2);
	CHECK(v[2] == NULL);
	dt_strs_free(v, n);
	dt_strs_free(NULL, 0);
}
