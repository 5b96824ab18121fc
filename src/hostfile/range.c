/*
 * range.c -- pdsh/Slurm host ranges: "gpu[01-16]", "gpu[1-3,7]",
 * "rack[1-2]-gpu[01-04]". A range keeps the width of its low bound; the
 * names come in Slurm's order (the leftmost of two brackets varies
 * slowest; see range_walk); the count is checked against the budget
 * before any name is made, so "n[0-999999999]" costs nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile/hf_impl.h"

#define RANGE_DIGITS	18	/* digits in one bound */
#define QUOTE_MAX	80	/* pattern characters quoted in a message */

struct range_span {
	unsigned long long	 lo;
	unsigned long long	 hi;
	int			 width;
};

struct range_group {
	size_t		 lit;		/* literal before the bracket */
	size_t		 litlen;
	size_t		 first;		/* spans first..first+n */
	size_t		 n;
};

struct range_pat {
	const char		*p;
	size_t			 len;
	struct range_group	*g;
	size_t			 ng;
	size_t			 gcap;
	struct range_span	*s;
	size_t			 ns;
	size_t			 scap;
	size_t			 tail;		/* literal after the last bracket */
	const char		*file;
	int			 line;
	int			 col;
	struct dt_err		*e;
};

/* Fills the error for pat at offset off: `what "PATTERN"why`. */
static int
range_error(struct range_pat *pat, size_t off, int code, const char *what,
    const char *why)
{
	int	n = pat->len > QUOTE_MAX ? QUOTE_MAX : (int)pat->len;

	return dt_errf(pat->e, pat->file, pat->line, pat->col + (int)off, code,
	    "%s \"%.*s%s\"%s", what, n, pat->p, n < (int)pat->len ? "..." : "",
	    why);
}

/* Reads the bound starting at p[*i]; returns 0 or -1 if there is none. */
static int
range_bound(struct range_pat *pat, size_t *i, unsigned long long *v, int *w)
{
	size_t	start = *i;

	*v = 0;
	while (*i < pat->len && pat->p[*i] >= '0' && pat->p[*i] <= '9') {
		if (*i - start == RANGE_DIGITS) {
			*i = start;
			return -1;
		}
		*v = *v * 10 + (pat->p[*i] - '0');
		(*i)++;
	}
	*w = (int)(*i - start);
	return *i > start ? 0 : -1;
}

/* Appends a span to pat. */
static int
range_add_span(struct range_pat *pat, unsigned long long lo,
    unsigned long long hi, int width)
{
	struct range_span	*ns;
	size_t			 cap;

	if (pat->ns == pat->scap) {
		cap = pat->scap ? pat->scap * 2 : 8;
		if ((ns = realloc(pat->s, cap * sizeof(*ns))) == NULL)
			return DT_ERR_NOMEM;
		pat->s = ns;
		pat->scap = cap;
	}
	pat->s[pat->ns].lo = lo;
	pat->s[pat->ns].hi = hi;
	pat->s[pat->ns].width = width;
	pat->ns++;
	return 0;
}

/* Parses the bracket whose "[" is at p[*i]; leaves *i after the "]". */
static int
range_group(struct range_pat *pat, size_t *i, size_t lit)
{
	struct range_group	*ng, *g;
	unsigned long long	 lo, hi;
	size_t			 cap, at;
	int			 w, w2, r;

	if (pat->ng == pat->gcap) {
		cap = pat->gcap ? pat->gcap * 2 : 4;
		if ((ng = realloc(pat->g, cap * sizeof(*ng))) == NULL)
			return DT_ERR_NOMEM;
		pat->g = ng;
		pat->gcap = cap;
	}
	g = &pat->g[pat->ng++];
	g->lit = lit;
	g->litlen = *i - lit;
	g->first = pat->ns;
	g->n = 0;
	(*i)++;
	for (;;) {
		at = *i;
		if (*i < pat->len && pat->p[*i] == ']' && g->n == 0)
			return range_error(pat, at, DT_ERR_PARSE, "empty range in",
			    "");
		if (range_bound(pat, i, &lo, &w) != 0)
			return range_error(pat, *i, DT_ERR_PARSE, "bad range",
			    " (want N or N-M inside [ ], up to 18 digits)");
		hi = lo;
		if (*i < pat->len && pat->p[*i] == '-') {
			(*i)++;
			if (range_bound(pat, i, &hi, &w2) != 0)
				return range_error(pat, *i, DT_ERR_PARSE,
				    "bad range", " (want N-M inside [ ], up to "
				    "18 digits)");
			if (lo > hi)
				return range_error(pat, at, DT_ERR_PARSE,
				    "bad range", " (low > high)");
		}
		if ((r = range_add_span(pat, lo, hi, w)) != 0)
			return r;
		g->n++;
		if (*i >= pat->len)
			return range_error(pat, *i, DT_ERR_PARSE, "unclosed \"[\" in",
			    "");
		if (pat->p[*i] == ']')
			break;
		if (pat->p[*i] != ',')
			return range_error(pat, *i, DT_ERR_PARSE, "bad range",
			    " (want \",\" or \"]\" after a number)");
		(*i)++;
	}
	(*i)++;
	return 0;
}

/* Number of decimal digits in v. */
static int
range_digits(unsigned long long v)
{
	int	n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/*
 * Parses the whole pattern, checks the characters, the count against
 * budget and the longest name. Returns the count or a negative DT_ERR_*.
 */
static long
range_parse(struct range_pat *pat, size_t budget)
{
	unsigned long long	 count = 1, n, width;
	size_t			 i = 0, lit = 0, g, k, longest;
	int			 r, wmax;
	char			 why[80];

	if (pat->len == 0)
		return dt_errf(pat->e, pat->file, pat->line, pat->col,
		    DT_ERR_PARSE, "empty host name");
	if (pat->p[0] == '-')
		return range_error(pat, 0, DT_ERR_PARSE, "bad host name",
		    " (it may not start with \"-\")");
	while (i < pat->len) {
		if (pat->p[i] == '[') {
			if ((r = range_group(pat, &i, lit)) != 0)
				return r;
			lit = i;
			continue;
		}
		if (pat->p[i] == ']')
			return range_error(pat, i, DT_ERR_PARSE,
			    "\"]\" without \"[\" in", "");
		if (!hfi_namechar((unsigned char)pat->p[i])) {
			if (pat->p[i] >= ' ' && pat->p[i] < 127)
				return dt_errf(pat->e, pat->file, pat->line,
				    pat->col + (int)i, DT_ERR_PARSE, "bad "
				    "character '%c' in host name \"%.*s\" (use "
				    "letters, digits, \".\", \"-\", \"_\")",
				    pat->p[i], pat->len > QUOTE_MAX ?
				    QUOTE_MAX : (int)pat->len, pat->p);
			return dt_errf(pat->e, pat->file, pat->line,
			    pat->col + (int)i, DT_ERR_PARSE, "bad character "
			    "0x%02x in host name", (unsigned char)pat->p[i]);
		}
		i++;
	}
	pat->tail = lit;
	longest = pat->len - lit;
	for (g = 0; g < pat->ng; g++) {
		n = 0;
		wmax = 0;
		for (k = pat->g[g].first; k < pat->g[g].first + pat->g[g].n;
		    k++) {
			n += pat->s[k].hi - pat->s[k].lo + 1;
			width = range_digits(pat->s[k].hi);
			if ((int)width < pat->s[k].width)
				width = pat->s[k].width;
			if ((int)width > wmax)
				wmax = (int)width;
			if (n > budget)
				break;
		}
		count = n > budget ? budget + 1 : count * n;
		if (count > budget)
			break;
		longest += pat->g[g].litlen + wmax;
	}
	/* After the loop: a plain name counts one against the budget too. */
	if (count > budget) {
		snprintf(why, sizeof(why), " (more than %s%d names%s)",
		    budget == HF_EXPAND_MAX ? "" : "the ", HF_EXPAND_MAX,
		    budget == HF_EXPAND_MAX ? "" : " one source may "
		    "expand to");
		return range_error(pat, 0, DT_ERR_RANGE, "too many hosts from",
		    why);
	}
	if (longest > HF_NAME_MAX)
		return range_error(pat, 0, DT_ERR_RANGE, "host name too long in",
		    " (more than 255 characters)");
	return (long)count;
}

/* Makes each name of a parsed pattern and calls fn on it. */
static long
range_walk(struct range_pat *pat, hf_name_fn fn, void *arg)
{
	char			 buf[HF_NAME_MAX + 1];
	size_t			*span = NULL, g, n, k, s;
	unsigned long long	*val = NULL;
	long			 count = 0;
	int			 r = 0;

	if (pat->ng > 0) {
		span = calloc(pat->ng, sizeof(*span));
		val = calloc(pat->ng, sizeof(*val));
		if (span == NULL || val == NULL) {
			r = DT_ERR_NOMEM;
			goto out;
		}
		for (g = 0; g < pat->ng; g++) {
			span[g] = pat->g[g].first;
			val[g] = pat->s[span[g]].lo;
		}
	}
	for (;;) {
		n = 0;
		for (g = 0; g < pat->ng; g++) {
			memcpy(buf + n, pat->p + pat->g[g].lit, pat->g[g].litlen);
			n += pat->g[g].litlen;
			n += sprintf(buf + n, "%0*llu", pat->s[span[g]].width,
			    val[g]);
		}
		memcpy(buf + n, pat->p + pat->tail, pat->len - pat->tail);
		n += pat->len - pat->tail;
		buf[n] = '\0';
		if ((r = fn(buf, n, arg)) != 0)
			goto out;
		count++;
		/*
		 * Advance the odometer as Slurm's hostlist does: the last
		 * bracket fastest, then the others from the left, so the
		 * one before the last is slowest ("rack[1-2]-gpu[01-04]":
		 * leftmost slowest; "p[1-2]x[1-2][0]": p1x10 p2x10 p1x20).
		 */
		for (s = 0; s < pat->ng; s++) {
			g = s == 0 ? pat->ng - 1 : s - 1;
			k = span[g];
			if (val[g] < pat->s[k].hi) {
				val[g]++;
				break;
			}
			if (k + 1 < pat->g[g].first + pat->g[g].n) {
				span[g] = k + 1;
				val[g] = pat->s[k + 1].lo;
				break;
			}
			span[g] = pat->g[g].first;
			val[g] = pat->s[span[g]].lo;
		}
		if (s == pat->ng)
			break;
	}
out:
	free(span);
	free(val);
	return r != 0 ? r : count;
}

long
hfi_expand(const char *p, size_t len, hf_name_fn fn, void *arg,
    size_t *budget, const char *file, int line, int col, struct dt_err *e)
{
	struct range_pat	pat;
	long			r;

	memset(&pat, 0, sizeof(pat));
	pat.p = p;
	pat.len = len;
	pat.file = file;
	pat.line = line;
	pat.col = col;
	pat.e = e;
	if ((r = range_parse(&pat, *budget)) >= 0) {
		*budget -= (size_t)r;
		r = range_walk(&pat, fn, arg);
	}
	free(pat.g);
	free(pat.s);
	return r;
}

long
hf_expand(const char *spec, hf_name_fn fn, void *arg, struct dt_err *e)
{
	size_t	budget = HF_EXPAND_MAX, len = strlen(spec), off = 0, end;
	long	r, total = 0;

	for (;;) {
		end = off + hfi_item_end(spec + off, len - off, ',');
		r = hfi_expand(spec + off, end - off, fn, arg, &budget, "spec",
		    1, (int)off + 1, e);
		if (r < 0)
			return r;
		total += r;
		if (end == len)
			return total;
		off = end + 1;
	}
}
