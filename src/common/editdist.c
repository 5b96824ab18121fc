/* editdist.c -- edit distance between two short words (see editdist.h). */
#include "common/editdist.h"

size_t
dt_edit_distance(const char *a, size_t na, const char *b, size_t nb)
{
	size_t	row[DT_EDIT_MAX + 1], i, j, diag, up, best;

	if (na > DT_EDIT_MAX || nb > DT_EDIT_MAX)
		return (size_t)-1;
	/* One row of the table: row[j] is the distance of a[0..i) to b[0..j). */
	for (j = 0; j <= nb; j++)
		row[j] = j;
	for (i = 1; i <= na; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= nb; j++) {
			up = row[j];
			best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[nb];
}
