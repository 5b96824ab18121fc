/*
 * crashsig.c -- a failed attempt's signature (crashsig.h): the last
 * traceback in a rank's output read line by line (a line ends at '\n' or
 * '\r', so a progress bar's redraws are lines too), the frames kept in a
 * small ring so only the last ones stay, then the key and the words built
 * from them.
 */
#include <ctype.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/job/crashsig.h"
#include "util/xmalloc.h"

#define TB_HEADER	"Traceback (most recent call last):"

/* One frame: 'File "/a/train.py", line 42, in step' as its parts. */
struct cs_frame {
	const char	*file;		/* the name without its folder */
	int		 flen;
	long		 line;
	const char	*func;		/* "" for a frame without one */
	int		 fnlen;
};

/* What is read of the last traceback. */
struct cs_tb {
	struct cs_frame	 f[CRASHSIG_FRAMES];	/* a ring: the last ones */
	int		 nf;			/* frames seen in all */
	const char	*exc;			/* the exception line, or NULL */
	size_t		 exclen;
};

/*
 * The line that starts at p[*i] (without its end), leaving *i past it.
 * Returns 0 when there is none left.
 */
static int
cs_line(const char *p, size_t n, size_t *i, const char **l, size_t *len)
{
	size_t	k = *i;

	if (k >= n)
		return 0;
	while (k < n && p[k] != '\n' && p[k] != '\r')
		k++;
	*l = p + *i;
	*len = k - *i;
	*i = k < n ? k + 1 : k;
	return 1;
}

/*
 * Finds the last traceback header in p[0..n): sets *start past its line
 * and *pfx, *plen to what came before it on that line. Returns 0 if none.
 */
static int
cs_header(const char *p, size_t n, size_t *start, const char **pfx,
    size_t *plen)
{
	const char	*l, *h;
	size_t		 i = 0, len;
	int		 found = 0;

	while (cs_line(p, n, &i, &l, &len)) {
		if ((h = memmem(l, len, TB_HEADER, sizeof(TB_HEADER) - 1)) == NULL)
			continue;
		*start = i;
		*pfx = l;
		*plen = (size_t)(h - l);
		found = 1;
	}
	return found;
}

/* Reads 'File "NAME", line N[, in FUNC]' from l[0..len) into f; 0 if it is not one. */
static int
cs_frame(const char *l, size_t len, struct cs_frame *f)
{
	const char	*e = l + len, *q, *s, *in;
	char		*end;

	if (len < 6 || memcmp(l, "File \"", 6) != 0)
		return 0;
	l += 6;
	if ((q = memchr(l, '"', (size_t)(e - l))) == NULL ||
	    e - q < 8 || memcmp(q, "\", line ", 8) != 0 || !isdigit((unsigned char)q[8]))
		return 0;
	for (s = q; s > l && s[-1] != '/' && s[-1] != '\\'; s--)
		;
	f->file = s;
	f->flen = (int)(q - s);
	f->line = strtol(q + 8, &end, 10);
	in = memmem(end, (size_t)(e - end), ", in ", 5);
	f->func = in != NULL ? in + 5 : "";
	f->fnlen = in != NULL ? (int)(e - f->func) : 0;
	return 1;
}

/* l[0..*len) without its blanks at both ends. */
static const char *
cs_trim(const char *l, size_t *len)
{
	while (*len > 0 && isspace((unsigned char)l[0])) {
		l++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)l[*len - 1]))
		(*len)--;
	return l;
}

/*
 * Reads the last traceback of p[0..n) into tb: the frames up to the first
 * line that is not indented, which is the exception's. Returns 0 if text
 * holds none.
 */
static int
cs_read(const char *p, size_t n, struct cs_tb *tb)
{
	const char	*pfx, *l;
	size_t		 i, plen, len;
	int		 indented;

	memset(tb, 0, sizeof(*tb));
	if (p == NULL || !cs_header(p, n, &i, &pfx, &plen))
		return 0;
	while (cs_line(p, n, &i, &l, &len)) {
		if (plen > 0 && len >= plen && memcmp(l, pfx, plen) == 0) {
			l += plen;
			len -= plen;
		}
		indented = len > 0 && (l[0] == ' ' || l[0] == '\t');
		l = cs_trim(l, &len);
		if (len == 0)
			continue;
		if (!indented) {
			tb->exc = l;
			tb->exclen = len;
			break;
		}
		/* Source lines, carets and "[Previous line repeated]" go. */
		if (cs_frame(l, len, &tb->f[tb->nf % CRASHSIG_FRAMES]))
			tb->nf++;
	}
	return 1;
}

/*
 * Appends s[0..n) to buf (room len, used *off) with each run of digits,
 * and each 0x address, as "N".
 */
static void
cs_put_norm(char *buf, size_t len, size_t *off, const char *s, size_t n)
{
	size_t	k;

	for (k = 0; k < n && *off + 1 < len; k++) {
		if (s[k] == '0' && k + 2 < n && (s[k + 1] == 'x' ||
		    s[k + 1] == 'X') && isxdigit((unsigned char)s[k + 2])) {
			/* An address: its letters vary as much as its digits. */
			for (k += 2; k + 1 < n && isxdigit((unsigned char)s[k + 1]); k++)
				;
			buf[(*off)++] = 'N';
			continue;
		}
		buf[(*off)++] = s[k];
		if (isdigit((unsigned char)s[k])) {
			buf[*off - 1] = 'N';
			while (k + 1 < n && isdigit((unsigned char)s[k + 1]))
				k++;
		}
	}
	buf[*off] = '\0';
}

/* Appends a formatted piece to buf (room len, used *off), cut at the end. */
static void
cs_put(char *buf, size_t len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
cs_put(char *buf, size_t len, size_t *off, const char *fmt, ...)
{
	va_list	ap;
	int	w;

	if (*off + 1 >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *off, len - *off, fmt, ap);
	va_end(ap);
	if (w > 0)
		*off += (size_t)w < len - *off ? (size_t)w : len - *off - 1;
}

/* The key's and the words' traceback parts, from tb. */
static void
cs_fill_tb(struct crashsig *s, size_t *koff, const struct cs_tb *tb)
{
	const struct cs_frame	*f;
	size_t			 toff = 0;
	int			 i, first;

	if (tb->exc != NULL) {
		cs_put(s->key, sizeof(s->key), koff, "; ");
		cs_put_norm(s->key, sizeof(s->key), koff, tb->exc,
		    tb->exclen > 200 ? 200 : tb->exclen);
		cs_put(s->tb, sizeof(s->tb), &toff, "%.*s", tb->exclen > 200 ?
		    200 : (int)tb->exclen, tb->exc);
	}
	first = tb->nf > CRASHSIG_FRAMES ? tb->nf - CRASHSIG_FRAMES : 0;
	for (i = first; i < tb->nf; i++) {
		f = &tb->f[i % CRASHSIG_FRAMES];
		cs_put(s->key, sizeof(s->key), koff, "; %.*s:%ld%s%.*s",
		    f->flen, f->file, f->line, f->fnlen > 0 ? " in " : "",
		    f->fnlen, f->func);
	}
	if (tb->nf > 0) {
		/* The innermost frame: where it was raised. */
		f = &tb->f[(tb->nf - 1) % CRASHSIG_FRAMES];
		cs_put(s->tb, sizeof(s->tb), &toff, "%sat %.*s:%ld%s%.*s",
		    toff > 0 ? " " : "", f->flen, f->file, f->line,
		    f->fnlen > 0 ? " in " : "", f->fnlen, f->func);
	}
}

void
crashsig_make(struct crashsig *s, uint32_t rank, int signaled,
    unsigned code, const char *text, size_t n)
{
	struct cs_tb	 tb;
	const char	*abbr = signaled ? sigabbrev_np((int)code) : NULL;
	size_t		 koff = 0;

	memset(s, 0, sizeof(*s));
	if (signaled) {
		cs_put(s->key, sizeof(s->key), &koff, "signal %u", code);
		snprintf(s->what, sizeof(s->what), "rank %u: signal %u%s%s%s",
		    rank, code, abbr != NULL ? " (SIG" : "", abbr != NULL ?
		    abbr : "", abbr != NULL ? ")" : "");
	} else {
		cs_put(s->key, sizeof(s->key), &koff, "exit %u", code);
		snprintf(s->what, sizeof(s->what), "rank %u: exit %u", rank,
		    code);
	}
	if (cs_read(text, n, &tb))
		cs_fill_tb(s, &koff, &tb);
}

int
crashsig_same(const struct crashsig *a, const struct crashsig *b)
{
	return a->key[0] != '\0' && strcmp(a->key, b->key) == 0;
}

void
crashsig_tail_add(struct crashsig_tail *t, const void *p, size_t n)
{
	const char	*c = p;
	size_t		 k;

	if (n == 0)
		return;
	if (t->buf == NULL)
		t->buf = xmalloc(CRASHSIG_TAIL);
	if (n > CRASHSIG_TAIL) {
		c += n - CRASHSIG_TAIL;
		n = CRASHSIG_TAIL;
		t->cut = 1;
	}
	if (t->len + n > CRASHSIG_TAIL)
		t->cut = 1;
	while (n > 0) {
		k = CRASHSIG_TAIL - t->at < n ? CRASHSIG_TAIL - t->at : n;
		memcpy(t->buf + t->at, c, k);
		t->at = (t->at + k) % CRASHSIG_TAIL;
		c += k;
		n -= k;
		t->len = t->len + k > CRASHSIG_TAIL ? CRASHSIG_TAIL : t->len + k;
	}
}

char *
crashsig_tail_text(const struct crashsig_tail *t, size_t *n)
{
	size_t	 first = (t->at + CRASHSIG_TAIL - t->len) % CRASHSIG_TAIL;
	size_t	 k = CRASHSIG_TAIL - first < t->len ? CRASHSIG_TAIL - first : t->len;
	char	*s, *nl;

	if (t->len == 0)
		return NULL;
	s = xmalloc(t->len + 1);
	memcpy(s, t->buf + first, k);
	memcpy(s + k, t->buf, t->len - k);
	s[t->len] = '\0';
	*n = t->len;
	/* The oldest line lost its start with the bytes dropped before it. */
	if (t->cut && (nl = memchr(s, '\n', t->len)) != NULL) {
		*n = t->len - (size_t)(nl + 1 - s);
		memmove(s, nl + 1, *n + 1);
	}
	return s;
}

void
crashsig_tail_free(struct crashsig_tail *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}
