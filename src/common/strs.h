/*
 * strs.h -- a list of strings as a pointer and a count (char **v, size_t
 * n), kept NULL-terminated so it can serve as an argv or an environment:
 * the one shape dtrun keeps its string lists in. These return
 * DT_ERR_NOMEM, for the libraries; the binaries' strs_push (util/strv.h)
 * exits instead.
 */
#ifndef DT_STRS_H
#define DT_STRS_H

#include <stddef.h>

/* Appends s, which the list takes (freed if it cannot); 0 or DT_ERR_NOMEM. */
int	dt_strs_push(char ***v, size_t *n, char *s);
/* Frees the n strings of v, then v. */
void	dt_strs_free(char **v, size_t n);

#endif
