/*
 * strv.h -- a growable NULL-terminated vector of malloc'd strings. It exits
 * on ENOMEM (xmalloc.h), so only the binaries use it, never a library.
 */
#ifndef DT_STRV_H
#define DT_STRV_H

#include <stddef.h>

struct strv {
	char	**v;		/* NULL-terminated once anything was added */
	size_t	  n;
	size_t	  cap;
};

/* Appends a printf-formatted string. */
void	strv_addf(struct strv *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
/* Appends "NAME=value" with value printf-formatted. */
void	strv_setf(struct strv *, const char *name, const char *, ...)
	    __attribute__((format(printf, 3, 4)));
/* Appends copies of the n strings of v. */
void	strv_addv(struct strv *, char *const *v, size_t n);
void	strv_free(struct strv *);

/*
 * Appends s (taken) to the list *v of *n strings, kept NULL-terminated:
 * common/strs.h's shape, for a list that grows an item at a time (strv
 * above builds a whole argv or environment).
 */
void	strs_push(char ***v, size_t *n, char *s);

/* s as one POSIX shell word: '...', with each ' written '\''. Malloc'd. */
char	*shell_quote(const char *s);

#endif
