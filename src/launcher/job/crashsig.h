/*
 * crashsig.h -- a failed attempt's signature, so that --max-restarts
 * stops a crash loop: an attempt that fails as the one before it did
 * would fail again (restart.h).
 *
 * The signature is the first failed rank's exit code (or the signal that
 * killed it) and, when it left one, the end of its Python traceback: the
 * exception line with every run of digits made "N" (a size, an address, a
 * pid or a time varies between runs of the same bug) and the last
 * CRASHSIG_FRAMES frames as FILE:LINE in FUNC, the file without its
 * folder. Line numbers stay: another line is another failure. The rank
 * is said but not compared: which rank fails first of several that hit
 * the same bug is a race.
 *
 * Nothing here does I/O; the traceback comes from the rank's error file
 * (rootcause.h) or from the tail of its stderr, kept by a crashsig_tail.
 */
#ifndef DT_CRASHSIG_H
#define DT_CRASHSIG_H

#include <stddef.h>
#include <stdint.h>

#define CRASHSIG_FRAMES	3
/* The stderr kept per rank: a traceback of 80 frames fits. */
#define CRASHSIG_TAIL	(16 * 1024)

struct crashsig {
	char	key[1024];	/* what is compared; "" = no signature */
	char	what[64];	/* "rank 1: exit 3", "rank 1: signal 9 (SIGKILL)" */
	char	tb[320];	/* "ValueError: bad batch 7 at train.py:42 in step", or "" */
};

/*
 * Fills s for rank, which was killed by signal code (signaled) or exited
 * with code, from text[0..n): output or an error file's traceback that may
 * hold a Python traceback (NULL: none). The last "Traceback (most recent
 * call last):" in text counts; whatever came before it on its line (a
 * "[rank1]: " prefix) is taken off the lines after it that have it too.
 */
void	crashsig_make(struct crashsig *s, uint32_t rank, int signaled,
	    unsigned code, const char *text, size_t n);

/* 1 when a and b both have a signature and it is the same one. */
int	crashsig_same(const struct crashsig *a, const struct crashsig *b);

/* The last CRASHSIG_TAIL bytes of one stream, in a ring. */
struct crashsig_tail {
	char	*buf;		/* CRASHSIG_TAIL bytes, once something came */
	size_t	 at;		/* where the next byte goes */
	size_t	 len;		/* bytes held */
	int	 cut;		/* older bytes were dropped */
};

void	crashsig_tail_add(struct crashsig_tail *, const void *p, size_t n);
/*
 * The bytes held, oldest first, as a NUL-terminated string (malloc'd; *n
 * its length); NULL when none came. When older bytes were dropped, the
 * line they cut is left out.
 */
char	*crashsig_tail_text(const struct crashsig_tail *, size_t *n);
void	crashsig_tail_free(struct crashsig_tail *);

#endif
