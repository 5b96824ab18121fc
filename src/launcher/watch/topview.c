/*
 * topview.c -- what dtrun top shows of a running attempt (topview.h).
 *
 * Outliers first: a rank whose seconds per step are furthest from the
 * median of the ranks that have one, then one whose last line is oldest;
 * ties by rank. CPU% is over the last two usage reports (a second apart),
 * so it is what the rank does now, not since it started.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "launcher/watch/pace.h"
#include "launcher/watch/peerwait.h"
#include "launcher/plan/plan.h"
#include "launcher/job/ranks.h"
#include "launcher/watch/straggle.h"
#include "launcher/watch/topview.h"
#include "util/xmalloc.h"

struct topuse {
	uint64_t	cpu_ms, cpu_at;		/* the last report */
	uint64_t	prev_ms, prev_at;	/* the one before */
	uint32_t	rss_kb;
	int		seen;
	int		gone;		/* its processes ended */
};

struct topview {
	const struct plan	*p;
	const struct ranks	*rk;
	struct straggle		*st;
	int			 attempt;
	struct topuse		*u;
};

/* One row, gathered. */
struct toprow {
	size_t		 rank;
	const char	*host;
	const char	*state;
	struct pace_now	 pn;
	struct peerwait_now pw;		/* its peer-wait share */
	double		 line_s;	/* age of its last line; <0: none */
	double		 cpu;		/* percent of a core; <0: unknown */
	uint32_t	 rss_kb;
	double		 score;		/* how much of an outlier */
};

struct topview *
topview_new(const struct plan *p, const struct ranks *rk, struct straggle *st,
    int attempt)
{
	struct topview	*tv = xcalloc(1, sizeof(*tv));

	tv->p = p;
	tv->rk = rk;
	tv->st = st;
	tv->attempt = attempt;
	tv->u = xcalloc(p->nranks + 1, sizeof(*tv->u));
	return tv;
}

void
topview_free(struct topview *tv)
{
	if (tv == NULL)
		return;
	free(tv->u);
	free(tv);
}

void
topview_usage(struct topview *tv, size_t rank, uint64_t cpu_ms,
    uint32_t rss_kb, uint64_t now_ms)
{
	struct topuse	*u;

	if (tv == NULL || rank >= tv->p->nranks)
		return;
	u = &tv->u[rank];
	/*
	 * Less CPU than before: the rank's processes are gone (the agent
	 * reads an ended rank as none). Its last figures stay, unused.
	 */
	if (u->seen > 0 && cpu_ms < u->cpu_ms) {
		u->gone = 1;
		return;
	}
	u->prev_ms = u->cpu_ms;
	u->prev_at = u->cpu_at;
	u->cpu_ms = cpu_ms;
	u->cpu_at = now_ms;
	u->rss_kb = rss_kb;
	u->seen++;
}

static int
top_cmp_secs(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
top_cmp_rows(const void *a, const void *b)
{
	const struct toprow	*x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Every rank's row, outliers first; *n rows. */
static struct toprow *
top_rows(struct topview *tv, uint64_t now_ms, size_t *n)
{
	const struct plan	*p = tv->p;
	struct toprow		*rows = xcalloc(p->nranks + 1, sizeof(*rows));
	double			*secs = xcalloc(p->nranks + 1, sizeof(*secs));
	double			 median = 0;
	size_t			 i, ns = 0;
	struct topuse		*u;

	for (i = 0; i < p->nranks; i++) {
		struct toprow *r = &rows[i];

		r->rank = i;
		r->host = p->hosts[p->ranks[i].host].name;
		r->state = ranks_running(tv->rk, i) ? "running" :
		    ranks_pid(tv->rk, i) != 0 ? "ended" : "waiting";
		straggle_peek(tv->st, i, ranks_running(tv->rk, i), &r->pn);
		straggle_peek_wait(tv->st, i, &r->pw);
		/* A rank that ended waits nowhere now: unknown, as its CPU. */
		if (!ranks_running(tv->rk, i))
			r->pw.known = 0;
		r->line_s = r->pn.line_ms != 0 && now_ms >= r->pn.line_ms ?
		    (now_ms - r->pn.line_ms) / 1000.0 : -1;
		u = &tv->u[i];
		/* A rank that ended uses nothing now: unknown, not a figure. */
		r->cpu = u->seen > 1 && u->cpu_at > u->prev_at && !u->gone &&
		    u->cpu_ms >= u->prev_ms && ranks_running(tv->rk, i) ?
		    100.0 * (u->cpu_ms - u->prev_ms) / (u->cpu_at - u->prev_at) :
		    -1;
		r->rss_kb = u->gone || !ranks_running(tv->rk, i) ? 0 :
		    u->rss_kb;
		if (r->pn.secs > 0)
			secs[ns++] = r->pn.secs;
	}
	qsort(secs, ns, sizeof(*secs), top_cmp_secs);
	if (ns > 0)
		median = secs[(ns - 1) / 2];
	for (i = 0; i < p->nranks; i++) {
		struct toprow *r = &rows[i];

		/* Pace first (a straggler on top), then a silence. */
		if (r->pn.secs > 0 && median > 0)
			r->score = 1000 * fabs(r->pn.secs - median) / median;
		if (r->line_s > 0)
			r->score += r->line_s / 1000;
		if (r->pn.named || r->pw.named)
			r->score += 1e6;
		else if (r->pw.suspect)
			r->score += 1e5;
	}
	qsort(rows, p->nranks, sizeof(*rows), top_cmp_rows);
	free(secs);
	*n = p->nranks;
	return rows;
}

/* Appends printf's output to *buf (of *len bytes, *off used). */
static void
top_add(char **buf, size_t *len, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
top_add(char **buf, size_t *len, size_t *off, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *off, *len - *off, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < *len - *off) {
			*off += n;
			return;
		}
		*len = *len * 2 + (n > 0 ? (size_t)n : 0);
		*buf = xreallocarray(*buf, *len, 1);
	}
}

/* A number, or "-" when unknown, into buf. */
static const char *
top_num(char *buf, size_t len, const char *fmt, double v, int known)
{
	if (!known)
		return "-";
	snprintf(buf, len, fmt, v);
	return buf;
}

static void
top_table(struct topview *tv, const char *job_id, struct toprow *rows,
    size_t n, char **buf, size_t *len, size_t *off)
{
	char	h[64], a[32], b[32], c[32], d[32], e[32], f[32];
	size_t	i, w = 4;

	for (i = 0; i < n; i++)
		if (strlen(rows[i].host) > w)
			w = strlen(rows[i].host) > 32 ? 32 : strlen(rows[i].host);
	top_add(buf, len, off, "job %s, attempt %d, %zu rank%s\n", job_id,
	    tv->attempt, n, n == 1 ? "" : "s");
	top_add(buf, len, off, "%-6s %-*s %-8s %10s %8s %7s %6s %6s %9s %8s\n",
	    "RANK", (int)w, "HOST", "STATE", "STEP", "S/STEP", "LINE", "CPU%",
	    "WAIT%", "RSS", "RESTARTS");
	for (i = 0; i < n; i++) {
		const struct toprow *r = &rows[i];

		log_escape(h, sizeof(h), r->host);
		top_add(buf, len, off, "%-6zu %-*.*s %-8s %10s %8s %7s %6s %6s "
		    "%9s %8d%s\n", r->rank, (int)w, (int)w, h, r->state,
		    top_num(a, sizeof(a), "%.0f", (double)r->pn.step,
		    r->pn.step > 0),
		    top_num(b, sizeof(b), "%.3g", r->pn.secs, r->pn.secs > 0),
		    top_num(c, sizeof(c), "%.1fs", r->line_s, r->line_s >= 0),
		    top_num(d, sizeof(d), "%.0f", r->cpu, r->cpu >= 0),
		    top_num(f, sizeof(f), "%.0f", 100 * r->pw.wait, r->pw.known),
		    top_num(e, sizeof(e), "%.0fM", r->rss_kb / 1024.0,
		    r->rss_kb > 0), tv->attempt,
		    r->pn.named || r->pw.named ? "  straggler" :
		    r->pw.suspect ? "  suspect" : "");
	}
}

/* s as a JSON string's contents. */
static void
top_json_str(char **buf, size_t *len, size_t *off, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			top_add(buf, len, off, "\\%c", c);
		else if (c < 0x20)
			top_add(buf, len, off, "\\u%04x", c);
		else
			top_add(buf, len, off, "%c", c);
	}
}

static void
top_json(struct topview *tv, const char *job_id, struct toprow *rows,
    size_t n, char **buf, size_t *len, size_t *off)
{
	size_t	i;

	top_add(buf, len, off, "{\"job\": \"");
	top_json_str(buf, len, off, job_id);
	top_add(buf, len, off, "\", \"attempt\": %d, \"ranks\": [", tv->attempt);
	for (i = 0; i < n; i++) {
		const struct toprow *r = &rows[i];

		top_add(buf, len, off, "%s\n {\"rank\": %zu, \"host\": \"",
		    i ? "," : "", r->rank);
		top_json_str(buf, len, off, r->host);
		top_add(buf, len, off, "\", \"state\": \"%s\", \"step\": ",
		    r->state);
		if (r->pn.step > 0)
			top_add(buf, len, off, "%llu", (unsigned long long)
			    r->pn.step);
		else
			top_add(buf, len, off, "null");
		top_add(buf, len, off, ", \"steps_reported\": %s, "
		    "\"secs_per_step\": ", r->pn.exact ? "true" : "false");
		top_add(buf, len, off, r->pn.secs > 0 ? "%.6g" : "null",
		    r->pn.secs);
		top_add(buf, len, off, ", \"last_line_secs\": ");
		top_add(buf, len, off, r->line_s >= 0 ? "%.3f" : "null",
		    r->line_s);
		top_add(buf, len, off, ", \"cpu_percent\": ");
		top_add(buf, len, off, r->cpu >= 0 ? "%.1f" : "null", r->cpu);
		top_add(buf, len, off, ", \"wait_percent\": ");
		top_add(buf, len, off, r->pw.known ? "%.1f" : "null",
		    100 * r->pw.wait);
		top_add(buf, len, off, ", \"rss_kib\": ");
		top_add(buf, len, off, r->rss_kb > 0 ? "%u" : "null", r->rss_kb);
		top_add(buf, len, off, ", \"restarts\": %d, \"straggler\": %s, "
		    "\"suspect\": %s}", tv->attempt,
		    r->pn.named || r->pw.named ? "true" : "false",
		    r->pw.suspect ? "true" : "false");
	}
	top_add(buf, len, off, "\n]}\n");
}

char *
topview_render(struct topview *tv, const char *job_id, int json,
    uint64_t now_ms)
{
	struct toprow	*rows;
	size_t		 n, len = 4096, off = 0;
	char		*buf = xmalloc(len);

	buf[0] = '\0';
	rows = top_rows(tv, now_ms, &n);
	if (json)
		top_json(tv, job_id, rows, n, &buf, &len, &off);
	else
		top_table(tv, job_id, rows, n, &buf, &len, &off);
	free(rows);
	return buf;
}
