/*
 * stackrep.c -- group ranks with the same stack signature (stackpick.c
 * picks it, stacksig.c reads it), list the groups outliers first (see
 * stackrep.h).
 */
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/agentproto.h"
#include "launcher/stacks/stackpick.h"
#include "launcher/stacks/stackrep.h"

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
