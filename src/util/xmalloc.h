/* xmalloc.h -- allocation that cannot fail, for the binaries only (libraries return DT_ERR_NOMEM). */
#ifndef DT_XMALLOC_H
#define DT_XMALLOC_H

#include <stddef.h>

/* Says "out of memory" and exits: what every allocator here does on ENOMEM. */
void	 xoom(void) __attribute__((noreturn));
void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xreallocarray(void *, size_t, size_t);
char	*xstrdup(const char *);
int	 xasprintf(char **, const char *, ...)
	     __attribute__((format(printf, 2, 3)));

#endif
