/* t_editdist.c -- the edit distance behind every "did you mean". */
#include <string.h>

#include "common/editdist.h"
#include "test.h"

/* dt_edit_distance of two C strings. */
static size_t
dist(const char *a, const char *b)
{
	return dt_edit_distance(a, strlen(a), b, strlen(b));
}

TEST(editdist_counts_each_edit)
{
	CHECK_INT(dist("", ""), 0);
	CHECK_INT(dist("pytorch", "pytorch"), 0);
	CHECK_INT(dist("", "mpi"), 3);
	CHECK_INT(dist("mpi", ""), 3);
	CHECK_INT(dist("pytorhc", "pytorch"), 2);	/* a swap is two */
	CHECK_INT(dist("pytoch", "pytorch"), 1);	/* one left out */
	CHECK_INT(dist("pytorchh", "pytorch"), 1);	/* one too many */
	CHECK_INT(dist("kitten", "sitting"), 3);
	CHECK_INT(dist("sitting", "kitten"), 3);
	/* Only the first na bytes of a count. */
	CHECK_INT(dt_edit_distance("mpirun", 3, "mpi", 3), 0);
}

TEST(editdist_long_words_are_never_close)
{
	char	a[DT_EDIT_MAX + 2];

	memset(a, 'x', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	CHECK(dist(a, "x") == (size_t)-1);
	CHECK(dist("x", a) == (size_t)-1);
	a[DT_EDIT_MAX] = '\0';
	CHECK_INT(dist(a, a), 0);
	CHECK_INT(dist(a, "x"), DT_EDIT_MAX - 1);
}
