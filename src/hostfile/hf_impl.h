/*
 * hf_impl.h -- helpers the hostfile library's files share. Not part of the
 * library's interface: callers include hostfile.h and config.h only.
 */
#ifndef DT_HF_IMPL_H
#define DT_HF_IMPL_H

#include <stddef.h>

#include "common/err.h"
#include "hostfile/hostfile.h"

#define HFI_NOTES_MAX	100	/* notes kept; later ones are counted */

/* Like strndup; NULL when out of memory. */
char		*hfi_strndup(const char *p, size_t len);

/*
 * Reads the unsigned decimal p[0..len) into *out. Returns 0, -1 when it is
 * empty or not all digits, -2 when it is above max.
 */
int		 hfi_uint(const char *p, size_t len, long max, long *out);

/* Nonzero if c may appear in a host or user name. */
int		 hfi_namechar(int c);

/*
 * The candidate (NULL-terminated list) closest to word by edit distance,
 * ignoring case, "_" and "-", or NULL when none is close enough.
 */
const char	*hfi_closest(const char *word, size_t len,
		     const char *const *cands);

/*
 * Appends a printf-formatted line to the list *v of *n strings, keeping at
 * most HFI_NOTES_MAX and then one line that says more were dropped.
 * Returns 0 or DT_ERR_NOMEM.
 */
int		 hfi_note(char ***v, size_t *n, const char *fmt, ...)
		     __attribute__((format(printf, 3, 4)));


/*
 * Expands one pattern p[0..len) ("rack[1-2]-gpu[01-04]"), calling fn per
 * name, after checking that it gives at most *budget names (DT_ERR_RANGE)
 * and taking them from *budget. Errors name file, line, and col plus the
 * offset in p. Returns the number of names, fn's nonzero return, or a
 * negative DT_ERR_* with *e filled.
 */
long		 hfi_expand(const char *p, size_t len, hf_name_fn fn,
		     void *arg, size_t *budget, const char *file, int line,
		     int col, struct dt_err *e);

/*
 * Finds the end of the item starting at p (before len): the first sep
 * outside brackets, or len.
 */
size_t		 hfi_item_end(const char *p, size_t len, int sep);

/*
 * Reads file path (a `what`, for messages) into a malloc'ed, NUL-ended
 * *buf of *len bytes. Returns 0 or a negative DT_ERR_* with *e filled.
 */
int		 hfi_slurp(const char *path, const char *what, char **buf,
		     size_t *len, struct dt_err *e);

/*
 * Parses the comma list of host entries list (no NUL inside) as line
 * `line` of file starting at column col. Returns 0 or a negative DT_ERR_*.
 */
int		 hfi_parse_items(struct hf_hosts *hs, const char *file,
		     int line, int col, const char *list, struct dt_err *e);

#endif
