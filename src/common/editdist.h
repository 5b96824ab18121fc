/*
 * editdist.h -- how far apart two words are, for "did you mean": the
 * hostfile keys (src/hostfile/util.c) and the framework names
 * (src/launcher/cli/fwname.c) both suggest the closest.
 */
#ifndef DT_EDITDIST_H
#define DT_EDITDIST_H

#include <stddef.h>

#define DT_EDIT_MAX	64	/* longer words are never close */

/*
 * The Levenshtein distance between a[0..na) and b[0..nb): the fewest
 * characters inserted, removed or changed to turn one into the other.
 * Returns (size_t)-1 when either is longer than DT_EDIT_MAX.
 */
size_t	dt_edit_distance(const char *a, size_t na, const char *b, size_t nb);

#endif
