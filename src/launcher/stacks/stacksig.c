/*
 * stacksig.c -- reduce one process's stack text to its signature (see
 * stacksig.h).
 *
 * The text parsed is what eu-stack, gdb's bt and gdb's py-bt print, under
 * the "--- native (...)" and "--- python (...)" headers the agent adds.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wire.h"
#include "launcher/stacks/stackcoll.h"
#include "launcher/stacks/stacksig.h"

/* Appends one frame, with the separator if it is not the first. */
static void
sig_frame(struct dt_wbuf *b, const char *s, size_t n)
{
	if (b->len > 0)
		dt_wbuf_text(b, " <- ", 4);
	dt_wbuf_text(b, s, n);
}

/* The end of the line at p (its '\n' or NUL). */
static const char *
line_end(const char *p)
{
	const char	*e = strchr(p, '\n');

	return e != NULL ? e : p + strlen(p);
}

/* True if the line at p starts a thread's block (eu-stack's or gdb's). */
static int
is_thread_line(const char *p)
{
	return strncmp(p, "TID ", 4) == 0 || strncmp(p, "Thread ", 7) == 0;
}

/* True if the thread line at p (ending at e) is the thread pid. */
static int
is_main_thread(const char *p, const char *e, pid_t pid)
{
	char	want[32];
	size_t	n;

	if (strncmp(p, "TID ", 4) == 0) {
		n = snprintf(want, sizeof(want), "TID %d:", (int)pid);
		return (size_t)(e - p) >= n && memcmp(p, want, n) == 0;
	}
	n = snprintf(want, sizeof(want), "(LWP %d)", (int)pid);
	return memmem(p, e - p, want, n) != NULL;
}

/*
 * Finds the section named by head ("--- python") in text and, in it, the
 * main thread's block (else the first). Returns the block's start and
 * sets *end, or NULL if there is no such section.
 */
static const char *
find_block(const char *text, const char *head, pid_t pid, const char **end)
{
	const char	*s, *p, *e, *first = NULL, *found = NULL;

	if ((s = strstr(text, head)) == NULL)
		return NULL;
	s = line_end(s);
	if (*s == '\n')
		s++;
	/* The section ends at the next header. */
	for (p = s; *p != '\0'; p = *e ? e + 1 : e) {
		e = line_end(p);
		if (strncmp(p, "--- ", 4) == 0)
			break;
		if (!is_thread_line(p))
			continue;
		if (found != NULL) {
			*end = p;
			return found;
		}
		if (first == NULL)
			first = p;
		if (is_main_thread(p, e, pid))
			found = p;
	}
	if (found != NULL) {
		*end = p;
		return found;
	}
	if (first == NULL)
		first = s;
	/* The first block ends at the next thread line. */
	for (e = line_end(first), p = *e ? e + 1 : e; *p != '\0' &&
	    strncmp(p, "--- ", 4) != 0 && !is_thread_line(p);
	    p = *e ? e + 1 : e)
		e = line_end(p);
	*end = p;
	return first;
}

/* Appends the Python frames of a py-bt block: "func (file.py:N)", builtins by name. */
static void
python_frames(struct dt_wbuf *b, const char *p, const char *end)
{
	const char	*e, *f, *fe, *base, *q;
	char		 frame[512];
	long		 line;
	int		 n;

	for (; p < end; p = e + 1) {
		e = line_end(p);
		while (p < e && *p == ' ')
			p++;
		if (strncmp(p, "File \"", 6) == 0) {
			f = p + 6;
			if ((fe = memchr(f, '"', e - f)) == NULL ||
			    strncmp(fe, "\", line ", 8) != 0)
				continue;
			line = strtol(fe + 8, (char **)&q, 10);
			if (strncmp(q, ", in ", 5) != 0)
				continue;
			q += 5;
			for (base = fe; base > f && base[-1] != '/'; base--)
				;
			n = snprintf(frame, sizeof(frame), "%.*s (%.*s:%ld)",
			    (int)(e - q), q, (int)(fe - base), base, line);
			sig_frame(b, frame, n < 0 ? 0 : (size_t)n <
			    sizeof(frame) ? (size_t)n : sizeof(frame) - 1);
		} else if (strncmp(p, "<built-in method ", 17) == 0 ||
		    strncmp(p, "<built-in function ", 19) == 0) {
			/* "<built-in method sleep of module at remote 0x..>" */
			f = strchr(p, ' ') + 1;
			f = strchr(f, ' ') + 1;
			for (fe = f; fe < e && *fe != ' ' && *fe != '>'; fe++)
				;
			sig_frame(b, f, fe - f);
		}
	}
}

/* Appends the function names of a native block (eu-stack's or gdb's "#N" lines). */
static void
native_frames(struct dt_wbuf *b, const char *p, const char *end)
{
	const char	*e, *q, *f;

	for (; p < end; p = e + 1) {
		e = line_end(p);
		if (*p != '#')
			continue;
		for (q = p + 1; q < e && *q >= '0' && *q <= '9'; q++)
			;
		while (q < e && *q == ' ')
			q++;
		if (strncmp(q, "0x", 2) == 0) {
			while (q < e && *q != ' ')
				q++;
			while (q < e && *q == ' ')
				q++;
			if (strncmp(q, "in ", 3) == 0)
				q += 3;
		}
		/* The name ends at a space, '(' or eu-stack's "@GLIBC_2.2.5". */
		for (f = q; f < e && *f != ' ' && *f != '(' && *f != '@'; f++)
			;
		sig_frame(b, q, f > q ? (size_t)(f - q) : 0);
		if (f == q)
			dt_wbuf_text(b, "??", 2);
	}
}

int
stk_frames(const char *text, pid_t pid, char **py, char **native)
{
	struct dt_wbuf	 b, c;
	const char	*p, *end;

	dt_wbuf_init(&b);
	dt_wbuf_init(&c);
	if ((p = find_block(text, "--- python", pid, &end)) != NULL)
		python_frames(&b, p, end);
	if ((p = find_block(text, "--- native", pid, &end)) != NULL)
		native_frames(&c, p, end);
	dt_wbuf_text(&b, "", 0);
	dt_wbuf_text(&c, "", 0);
	if (b.oom || c.oom) {
		dt_wbuf_free(&b);
		dt_wbuf_free(&c);
		return -1;
	}
	*py = (char *)b.p;
	*native = (char *)c.p;
	return 0;
}

char *
stk_signature(const char *text, pid_t pid)
{
	char	*py, *native, *sig;

	if (stk_frames(text, pid, &py, &native) != 0)
		return NULL;
	sig = stk_collective(py, native, stk_backend(native, text));
	free(py);
	free(native);
	return sig;
}

