/*
 * stackrep.c -- reduce each rank's stack to a signature, group ranks with
 * the same one, list the groups outliers first (see stackrep.h).
 *
 * The text parsed is what eu-stack, gdb's bt and gdb's py-bt print, under
 * the "--- native (...)" and "--- python (...)" headers the agent adds.
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/stackrep.h"

#define SHOW_FRAMES	8	/* frames of a signature shown in a line */

struct stk_rank {
	int		 set;
	char		*host;
	pid_t		 pid;
	pid_t		 who;		/* the process its signature is of */
	int		 status;
	char		*tool;
	char		*text;
	char		*sig;		/* what groups it */
};

struct stk_report {
	struct stk_rank	*r;
	size_t		 n;
};

/* A growing string; oom sticks. */
struct sbuf {
	char	*p;
	size_t	 len, cap;
	int	 oom;
};

/* Appends n bytes of s to b. */
static void
sb_put(struct sbuf *b, const char *s, size_t n)
{
	char	*np;
	size_t	 cap;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 128;
		while (cap < b->len + n + 1)
			cap *= 2;
		if ((np = realloc(b->p, cap)) == NULL) {
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* Appends one frame, with the separator if it is not the first. */
static void
sb_frame(struct sbuf *b, const char *s, size_t n)
{
	if (b->len > 0)
		sb_put(b, " <- ", 4);
	sb_put(b, s, n);
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
python_frames(struct sbuf *b, const char *p, const char *end)
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
			sb_frame(b, frame, n < 0 ? 0 : (size_t)n <
			    sizeof(frame) ? (size_t)n : sizeof(frame) - 1);
		} else if (strncmp(p, "<built-in method ", 17) == 0 ||
		    strncmp(p, "<built-in function ", 19) == 0) {
			/* "<built-in method sleep of module at remote 0x..>" */
			f = strchr(p, ' ') + 1;
			f = strchr(f, ' ') + 1;
			for (fe = f; fe < e && *fe != ' ' && *fe != '>'; fe++)
				;
			sb_frame(b, f, fe - f);
		}
	}
}

/* Appends the function names of a native block (eu-stack's or gdb's "#N" lines). */
static void
native_frames(struct sbuf *b, const char *p, const char *end)
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
		sb_frame(b, q, f > q ? (size_t)(f - q) : 0);
		if (f == q)
			sb_put(b, "??", 2);
	}
}

int
stk_frames(const char *text, pid_t pid, char **py, char **native)
{
	struct sbuf	 b = { NULL, 0, 0, 0 }, c = { NULL, 0, 0, 0 };
	const char	*p, *end;

	if ((p = find_block(text, "--- python", pid, &end)) != NULL)
		python_frames(&b, p, end);
	if ((p = find_block(text, "--- native", pid, &end)) != NULL)
		native_frames(&c, p, end);
	sb_put(&b, "", 0);
	sb_put(&c, "", 0);
	if (b.oom || c.oom) {
		free(b.p);
		free(c.p);
		return -1;
	}
	*py = b.p;
	*native = c.p;
	return 0;
}

char *
stk_signature(const char *text, pid_t pid)
{
	char	*py, *native;

	if (stk_frames(text, pid, &py, &native) != 0)
		return NULL;
	if (py[0] != '\0') {
		free(native);
		return py;
	}
	free(py);
	return native;
}

void
stk_ranges(char *buf, size_t len, const uint32_t *v, size_t n)
{
	size_t	i, j, off = 0, lim = len > 4 ? len - 4 : len;
	int	w;

	buf[0] = '\0';
	/* Ranges go up to lim; the 4 bytes kept back hold ",..." if cut. */
	for (i = 0; i < n; i = j + 1) {
		for (j = i; j + 1 < n && v[j + 1] == v[j] + 1; j++)
			;
		if (j == i)
			w = snprintf(buf + off, lim - off, "%s%u",
			    off ? "," : "", v[i]);
		else
			w = snprintf(buf + off, lim - off, "%s%u-%u",
			    off ? "," : "", v[i], v[j]);
		if (w < 0 || (size_t)w >= lim - off) {
			buf[off] = '\0';
			if (lim < len)
				snprintf(buf + off, len - off, "%s...",
				    off ? "," : "");
			return;
		}
		off += w;
	}
}

struct stk_report *
stk_report_new(size_t nranks)
{
	struct stk_report	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	if ((s->r = calloc(nranks ? nranks : 1, sizeof(*s->r))) == NULL) {
		free(s);
		return NULL;
	}
	s->n = nranks;
	return s;
}

/* Forgets what was recorded for r. */
static void
rank_clear(struct stk_rank *r)
{
	free(r->host);
	free(r->tool);
	free(r->text);
	free(r->sig);
	memset(r, 0, sizeof(*r));
}

/* Sets r's signature to "(why)" for a rank without a stack. */
static void
rank_note(struct stk_rank *r, const char *why, size_t n)
{
	if ((r->sig = malloc(n + 3)) != NULL)
		snprintf(r->sig, n + 3, "(%.*s)", (int)n, why);
}

void
stk_report_rank(struct stk_report *s, uint32_t rank, const char *host,
    pid_t pid, int status, const char *tool, const char *text)
{
	struct stk_rank	*r;
	const char	*why;

	if (rank >= s->n)
		return;
	r = &s->r[rank];
	rank_clear(r);
	r->set = 1;
	r->host = strdup(host);
	r->pid = pid;
	r->status = status;
	r->tool = strdup(tool);
	r->text = strdup(text);
	if (r->text == NULL)
		return;
	r->who = pid;
	if (status == AP_STK_OK && (r->sig = stk_pick(text, pid, &r->who)) !=
	    NULL && r->sig[0] != '\0')
		return;
	free(r->sig);
	r->sig = NULL;
	if (status == AP_STK_TIMEDOUT)
		why = "timed out: the stack tool ran past its bound";
	else if (status == AP_STK_NOTOOL)
		why = text;
	else
		why = "no stack: see the full stacks";
	rank_note(r, why, strlen(why));
}

void
stk_report_missing(struct stk_report *s, uint32_t rank, const char *why)
{
	if (rank >= s->n || s->r[rank].set)
		return;
	s->r[rank].set = 1;
	s->r[rank].status = -1;
	rank_note(&s->r[rank], why, strlen(why));
}

size_t
stk_report_count(const struct stk_report *s)
{
	size_t	i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->r[i].set;
	return n;
}

int
stk_report_write(const struct stk_report *s, const char *path)
{
	FILE		*f;
	size_t		 i;
	int		 fd, e;

	/* A new file, never through a link someone put there (/tmp). */
	(void)unlink(path);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	for (i = 0; i < s->n; i++) {
		const struct stk_rank *r = &s->r[i];

		if (!r->set)
			continue;
		if (r->status < 0) {
			fprintf(f, "=== rank %zu: %s\n\n", i, r->sig ? r->sig :
			    "");
			continue;
		}
		fprintf(f, "=== rank %zu on %s, pid %d (%s)\nsignature "
		    "(process %d): %s\n%s\n\n", i, r->host ? r->host : "?",
		    (int)r->pid, r->tool && r->tool[0] ? r->tool : "no tool",
		    (int)r->who, r->sig ? r->sig : "", r->text ? r->text : "");
	}
	if (fclose(f) != 0)
		return -1;
	return 0;
}

/* Orders ranks by signature, then rank (qsort_r's argument: the report). */
static int
cmp_sig(const void *a, const void *b, void *arg)
{
	const struct stk_report	*s = arg;
	uint32_t		 x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int			 c;

	c = strcmp(s->r[x].sig ? s->r[x].sig : "", s->r[y].sig ?
	    s->r[y].sig : "");
	return c != 0 ? c : (x > y) - (x < y);
}

struct group {
	size_t	 first, n;	/* in the sorted rank vector */
};

/* Orders groups by size, then first rank: outliers first. */
static int
cmp_group(const void *a, const void *b, void *arg)
{
	const struct group	*g = a, *h = b;
	const uint32_t		*v = arg;

	if (g->n != h->n)
		return g->n < h->n ? -1 : 1;
	return (v[g->first] > v[h->first]) - (v[g->first] < v[h->first]);
}

/* Formats one group's line into a malloc'd string. */
static char *
group_line(const struct stk_report *s, const uint32_t *v, size_t n)
{
	const struct stk_rank	*r = &s->r[v[0]];
	const char		*sig = r->sig ? r->sig : "", *p = sig;
	char			 ranks[256], where[320] = "", *line;
	int			 k;

	stk_ranges(ranks, sizeof(ranks), v, n);
	/*
	 * One rank alone is the one to look at: say where it runs, and the
	 * process of its tree the signature is of.
	 */
	if (n == 1 && r->status >= 0 && r->host != NULL)
		snprintf(where, sizeof(where), " on %s, pid %d", r->host,
		    (int)(r->who > 0 ? r->who : r->pid));
	for (k = 0; k < SHOW_FRAMES && (p = strstr(p, " <- ")) != NULL; k++)
		p += 4;
	if (asprintf(&line, "rank%s %s%s (%zu): %.*s%s", n == 1 ? "" : "s",
	    ranks, where, n, p != NULL ? (int)(p - sig - 4) :
	    (int)strlen(sig), sig, p != NULL ? " <- ..." : "") == -1)
		return NULL;
	return line;
}

char **
stk_report_lines(const struct stk_report *s, size_t *nlines)
{
	uint32_t	*v;
	struct group	*g;
	char		**lines = NULL;
	size_t		 i, n = 0, ng = 0;

	*nlines = 0;
	if ((v = calloc(s->n ? s->n : 1, sizeof(*v))) == NULL ||
	    (g = calloc(s->n ? s->n : 1, sizeof(*g))) == NULL) {
		free(v);
		return NULL;
	}
	for (i = 0; i < s->n; i++)
		if (s->r[i].set)
			v[n++] = i;
	qsort_r(v, n, sizeof(*v), cmp_sig, (void *)s);
	for (i = 0; i < n; i++) {
		if (i == 0 || strcmp(s->r[v[i - 1]].sig ? s->r[v[i - 1]].sig :
		    "", s->r[v[i]].sig ? s->r[v[i]].sig : "") != 0) {
			g[ng].first = i;
			g[ng++].n = 0;
		}
		g[ng - 1].n++;
	}
	qsort_r(g, ng, sizeof(*g), cmp_group, v);
	if ((lines = calloc(ng + 1, sizeof(*lines))) != NULL) {
		for (i = 0; i < ng; i++) {
			if ((lines[i] = group_line(s, v + g[i].first,
			    g[i].n)) == NULL) {
				while (i > 0)
					free(lines[--i]);
				free(lines);
				lines = NULL;
				break;
			}
		}
	}
	if (lines != NULL)
		*nlines = ng;
	free(v);
	free(g);
	return lines;
}

void
stk_report_free(struct stk_report *s)
{
	size_t	i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		rank_clear(&s->r[i]);
	free(s->r);
	free(s);
}
