/* prefix.h -- the per-line prefix of forwarded output (--prefix FORMAT). */
#ifndef DT_PREFIX_H
#define DT_PREFIX_H

#include <stddef.h>

struct dt_err;

#define PREFIX_DEFAULT	"[%r] "

/* What the placeholders stand for. */
struct prefix_fields {
	int		 rank;		/* %r */
	int		 local_rank;	/* %l */
	int		 attempt;	/* %a: 0, then 1 after the first restart */
	const char	*host;		/* %h */
	const char	*stream;	/* %s: "out" or "err" */
	const char	*ranks;		/* %r instead of rank when not NULL ("0-7") */
};

/*
 * Checks FORMAT: placeholders %r (rank), %l (local rank), %h (host),
 * %s (stream: out/err), %a (attempt) and %% (a percent sign). Returns 0, or DT_ERR_PARSE
 * with e naming the bad placeholder and the fix.
 */
int	prefix_check(const char *fmt, struct dt_err *e);

/*
 * Nonzero when a checked FORMAT says something that differs between ranks
 * other than the rank (%l, %h): a line said by several ranks cannot carry it.
 */
int	prefix_per_rank(const char *fmt);

/*
 * Renders a checked FORMAT into buf (always NUL-terminated, truncated to
 * len - 1). Returns the length it needed, like snprintf.
 */
size_t	prefix_render(const char *fmt, const struct prefix_fields *,
	    char *buf, size_t len);

#endif
