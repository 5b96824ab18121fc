/*
 * checkprint.c -- dtrun --check: the answers as a table (summarised past
 * CHECK_TABLE_FULL hosts), -v's details, and --deep's pairs.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "launcher/check/deepcheck.h"
#include "launcher/job/agents.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "common/sys.h"
#include "util/xmalloc.h"
#include "launcher/check/checkint.h"

/* The RANK0 cell of host i. */
static const char *
check_reach_cell(const struct chost *ch)
{
	if (kv_get(ch->pkv, ch->npkv, "reach") != NULL)
		return "ok";
	if (kv_get(ch->pkv, ch->npkv, "reach_err") != NULL)
		return "FAILED";
	return NULL;
}

#define NCOL	12
#define COL_ADDR	3
#define COL_SKEW	5

/* Host i's row of the table: NCOL cells, cells 5 and 9 malloc'd. */
static void
check_row(struct check *c, size_t i, char **row)
{
	const struct chost	*ch = &c->hs[i];
	char			 buf[32];
	size_t			 ngpu = kv_count(ch->kv, ch->nkv, "gpu");

	row[0] = c->p->hosts[i].name;
	row[1] = (char *)ch_get(ch, "version");
	row[2] = (char *)ch_get(ch, "iface");
	row[3] = (char *)ch_get(ch, "addr");
	row[4] = (char *)check_reach_cell(ch);
	snprintf(buf, sizeof(buf), "%+.3fs", ch->skew_ms / 1000.0);
	row[5] = ch->gathered ? xstrdup(buf) : NULL;
	row[6] = (char *)(ch_get(ch, "cmd_err") != NULL ? "MISSING" :
	    ch_get(ch, "cmd"));
	row[7] = (char *)ch_get(ch, "python");
	row[8] = (char *)(ch_get(ch, "torch") != NULL ? ch_get(ch, "torch") :
	    ch_get(ch, "torch_err") != NULL ? "none" : NULL);
	snprintf(buf, sizeof(buf), "%zu", ngpu);
	row[9] = ngpu > 0 ? xstrdup(buf) : ch_get(ch, "gpu_err") != NULL ?
	    xstrdup("FAILED") : NULL;
	row[10] = (char *)(ch_get(ch, "nccl") != NULL ? "yes" : NULL);
	row[11] = (char *)(ch_get(ch, "nccl_ifname_err") != NULL ||
	    ch_get(ch, "gloo_ifname_err") != NULL ? "NONE" :
	    ch_get(ch, "nccl_ifname") != NULL ||
	    ch_get(ch, "gloo_ifname") != NULL ? "ok" : NULL);
}

/*
 * The summary row's ADDRESS and SKEW cells, over the hosts marked in
 * sum: one value when they share it, else the lowest and highest
 * ("10.0.0.1..10.0.0.240", "-0.004s..+0.012s"); ADDRESS "*" when an
 * address is not IPv4. Both malloc'd.
 */
static void
check_summary_ranges(struct check *c, char **rows, const char *sum,
    char **addr, char **skew)
{
	struct in_addr	 a;
	uint32_t	 lo = UINT32_MAX, hi = 0, x;
	int64_t		 slo = INT64_MAX, shi = INT64_MIN;
	const char	*alo = NULL, *ahi = NULL, *s;
	size_t		 i;
	int		 ipv4 = 1;

	for (i = 0; i < c->p->nhosts; i++) {
		if (!sum[i])
			continue;
		if (c->hs[i].gathered) {
			slo = c->hs[i].skew_ms < slo ? c->hs[i].skew_ms : slo;
			shi = c->hs[i].skew_ms > shi ? c->hs[i].skew_ms : shi;
		}
		s = rows[i * NCOL + COL_ADDR] != NULL ? rows[i * NCOL +
		    COL_ADDR] : "-";
		if (inet_pton(AF_INET, s, &a) != 1) {
			ipv4 = 0;
			continue;
		}
		x = ntohl(a.s_addr);
		if (x <= lo)
			alo = s, lo = x;
		if (x >= hi)
			ahi = s, hi = x;
	}
	if (!ipv4 || alo == NULL)
		*addr = xstrdup("*");
	else if (lo == hi)
		*addr = xstrdup(alo);
	else
		xasprintf(addr, "%s..%s", alo, ahi);
	if (slo == INT64_MAX)
		*skew = NULL;
	else if (slo == shi)
		xasprintf(skew, "%+.3fs", slo / 1000.0);
	else
		xasprintf(skew, "%+.3fs..%+.3fs", slo / 1000.0, shi / 1000.0);
}

/*
 * Many hosts (over CHECK_TABLE_FULL): the rows worth reading. First each
 * host a problem names, then each whose cells (but ADDRESS and SKEW,
 * which are every host's own) differ from the most common in their
 * column, then one row for the rest: "N hosts" (or "N more hosts"),
 * their shared cells, and ADDRESS and SKEW as ranges. rows: a row per
 * host; the table (header first) goes to out, *nout rows; its summary
 * row's cells, malloc'd, in sumrow.
 */
static void
check_summarise(struct check *c, char **rows, char **out, size_t *nout,
    char **sumrow)
{
	const char	**col = xcalloc(c->p->nhosts + 1, sizeof(*col));
	const char	*maj[NCOL];
	char		*sum = xcalloc(c->p->nhosts + 1, 1);
	size_t		 i, k, pass, cnt, ans, n = 0, nsum = 0;
	ssize_t		 m;

	for (k = 0; k < NCOL; k++) {
		for (i = 0; i < c->p->nhosts; i++)
			col[i] = rows[i * NCOL + k] != NULL ? rows[i * NCOL + k] :
			    "-";
		m = check_majority(col, c->p->nhosts, &cnt, &ans);
		maj[k] = m >= 0 ? col[m] : "-";
	}
	for (i = 0; i < c->p->nhosts; i++) {
		sum[i] = c->hs[i].nproblems == 0;
		for (k = 1; k < NCOL && sum[i]; k++)
			if (k != COL_ADDR && k != COL_SKEW &&
			    strcmp(rows[i * NCOL + k] != NULL ?
			    rows[i * NCOL + k] : "-", maj[k]) != 0)
				sum[i] = 0;
		nsum += sum[i];
	}
	/* A summary of one host says less than its row. */
	if (nsum == 1)
		memset(sum, 0, c->p->nhosts);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < c->p->nhosts; i++)
			if (!sum[i] && (c->hs[i].nproblems > 0) == (pass == 0))
				memcpy(out + NCOL * n++, rows + i * NCOL,
				    NCOL * sizeof(*out));
	if (nsum > 1) {
		xasprintf(&sumrow[0], "%zu %shosts", nsum, n > 0 ? "more " : "");
		for (k = 1; k < NCOL; k++)
			sumrow[k] = maj[k][0] == '-' && maj[k][1] == '\0' ? NULL :
			    xstrdup(maj[k]);
		free(sumrow[COL_ADDR]);
		free(sumrow[COL_SKEW]);
		check_summary_ranges(c, rows, sum, &sumrow[COL_ADDR],
		    &sumrow[COL_SKEW]);
		memcpy(out + NCOL * n++, sumrow, NCOL * sizeof(*out));
	}
	*nout = n;
	free(col);
	free(sum);
}

/* -v: every answer of every host, and how the skew was measured. */
static void
check_print_details(struct check *c)
{
	struct chost	*ch;
	char		 esc[512], esc2[512];
	size_t		 i, k;

	for (i = 0; i < c->p->nhosts; i++) {
		ch = &c->hs[i];
		log_escape(esc, sizeof(esc), c->p->hosts[i].name);
		printf("%s: agent pid %d on %s; round trip %llu ms, clock %+lld "
		    "ms (+/- %llu)\n", esc, (int)ch->h->agent_pid,
		    log_escape(esc2, sizeof(esc2), ch->h->agent_host != NULL ?
		    ch->h->agent_host : "?"), (unsigned long long)ch->rtt_ms,
		    (long long)ch->skew_ms, (unsigned long long)ch->rtt_ms / 2);
		for (k = 0; k < ch->nkv + ch->npkv; k++)
			printf("%s:   %s\n", esc, log_escape(esc2, sizeof(esc2),
			    k < ch->nkv ? ch->kv[k] : ch->pkv[k - ch->nkv]));
	}
}

/*
 * Prints the table (stdout): a row per host, or past CHECK_TABLE_FULL
 * hosts (and without -v) the rows check_summarise keeps; with -v every
 * host's details.
 */
void
check_print(struct check *c)
{
	static const char *const head[NCOL] = { "HOST", "AGENT", "IFACE",
	    "ADDRESS", "RANK0", "SKEW", "COMMAND", "PYTHON", "TORCH", "GPUS",
	    "NCCL", "IFNAME" };
	size_t		 i, k, n = c->p->nhosts;
	char		**rows = xcalloc((n + 1) * NCOL, sizeof(char *));
	char		**out = xcalloc((n + 2) * NCOL, sizeof(char *));
	char		*sumrow[NCOL] = { 0 }, *t;

	for (i = 0; i < n; i++)
		check_row(c, i, rows + i * NCOL);
	memcpy(out, head, sizeof(head));
	if (n > CHECK_TABLE_FULL && c->o->verbose == 0)
		check_summarise(c, rows, out + NCOL, &n, sumrow);
	else
		memcpy(out + NCOL, rows, n * NCOL * sizeof(*out));
	if ((t = check_table(out, n + 1, NCOL)) != NULL)
		fputs(t, stdout);
	free(t);
	for (i = 0; i < c->p->nhosts; i++) {
		free(rows[i * NCOL + COL_SKEW]);
		free(rows[i * NCOL + 9]);
	}
	for (k = 0; k < NCOL; k++)
		free(sumrow[k]);
	free(rows);
	free(out);
	if (c->o->verbose > 0)
		check_print_details(c);
}

/* The hosts' names, for deepcheck (freed by the caller, not the names). */
static const char **
check_names(const struct check *c)
{
	const char	**names = xcalloc(c->p->nhosts + 1, sizeof(*names));
	size_t		  i;

	for (i = 0; i < c->p->nhosts; i++)
		names[i] = c->p->hosts[i].name;
	return names;
}

/*
 * --deep's GPU part, in a line: DCGM's quick diagnostic where dcgmi is;
 * an NCCL all-reduce across the hosts is not measured by this dtrun.
 */
static const char *
check_deep_gpus(const struct check *c)
{
	size_t	i, gpus = 0, dcgm = 0;

	for (i = 0; i < c->p->nhosts; i++) {
		gpus += kv_count(c->hs[i].kv, c->hs[i].nkv, "gpu") > 0;
		dcgm += ch_get(&c->hs[i], "dcgm") != NULL ||
		    ch_get(&c->hs[i], "dcgm_err") != NULL;
	}
	if (gpus == 0)
		return "skipped: no GPU";
	if (dcgm == 0)
		return "nvidia-smi's health only (no dcgmi for a diagnostic); "
		    "the NCCL all-reduce is not measured: TCP figures only";
	return "nvidia-smi's health and DCGM's quick diagnostic; the NCCL "
	    "all-reduce is not measured: TCP figures only";
}

#define NDEEPCOL	6

/* --deep's pairs as a table (a few hosts, or -v), then its summary line. */
void
check_deep_print(struct check *c)
{
	const char	**names = check_names(c);
	static const char *const head[NDEEPCOL] = { "FROM", "TO", "PAIRS",
	    "RTT", "THROUGHPUT", "NOTE" };
	struct strv	 out = { 0 };
	char		**cells, *t, *p, *tab;
	size_t		 i, k, nrows = 0;

	deepcheck_report(c->deep, names, c->p->nhosts <= CHECK_TABLE_FULL ||
	    c->o->verbose > 0, &out);
	cells = xcalloc((out.n + 1) * NDEEPCOL, sizeof(*cells));
	for (k = 0; k < NDEEPCOL; k++)
		cells[k] = (char *)head[k];
	for (i = 0; i < out.n && strchr(out.v[i], '\t') != NULL; i++) {
		nrows++;
		for (p = out.v[i], k = 0; k < NDEEPCOL && p != NULL; k++) {
			if ((tab = strchr(p, '\t')) != NULL)
				*tab = '\0';
			cells[nrows * NDEEPCOL + k] = p;
			p = tab != NULL ? tab + 1 : NULL;
		}
	}
	if (nrows > 0 && (t = check_table(cells, nrows + 1, NDEEPCOL)) != NULL) {
		fputs("\n", stdout);
		fputs(t, stdout);
		free(t);
	}
	for (; i < out.n; i++)
		printf("%s\n", out.v[i]);
	if (c->p->local)
		printf("deep: every host is this machine (the local launcher): "
		    "the figures are its own, no pair is judged\n");
	printf("deep: GPUs: %s\n", check_deep_gpus(c));
	free(cells);
	free(names);
	strv_free(&out);
}

/* --deep's problems, each counted for the hosts it names. */
void
check_deep_verdict(struct check *c)
{
	const char	**names = check_names(c);
	const char	**ifaces = xcalloc(c->p->nhosts + 1, sizeof(*ifaces));
	size_t		 *named = xcalloc(c->p->nhosts + 1, sizeof(*named));
	size_t		  i;

	for (i = 0; i < c->p->nhosts; i++) {
		ifaces[i] = ch_get(&c->hs[i], "iface");
		if (ch_get(&c->hs[i], "deep_err") != NULL) {
			check_problem(c, "%s: --deep cannot measure it: %s",
			    names[i], ch_get(&c->hs[i], "deep_err"));
			c->hs[i].nproblems++;
		}
	}
	deepcheck_verdict(c->deep, names, ifaces, &c->problems, named);
	for (i = 0; i < c->p->nhosts; i++)
		c->hs[i].nproblems += named[i];
	log_debug("--deep: %zu rounds in %llu ms", c->deep_round,
	    (unsigned long long)(dt_clock_ms(CLOCK_MONOTONIC) - c->deep_t0));
	free(names);
	free(ifaces);
	free(named);
}

char *
check_table(char *const *cells, size_t nrows, size_t ncol)
{
	size_t	*w, r, k, len, off = 0, cap = 0;
	char	 esc[512], *buf = NULL, *nb;
	const char *s;

	if ((w = calloc(ncol, sizeof(*w))) == NULL)
		return NULL;
	for (r = 0; r < nrows; r++)
		for (k = 0; k < ncol; k++) {
			s = cells[r * ncol + k] != NULL ? cells[r * ncol + k] :
			    "-";
			len = strlen(log_escape(esc, sizeof(esc), s));
			if (len > w[k])
				w[k] = len;
		}
	for (r = 0; r < nrows; r++) {
		for (k = 0; k < ncol; k++) {
			s = cells[r * ncol + k] != NULL ? cells[r * ncol + k] :
			    "-";
			log_escape(esc, sizeof(esc), s);
			len = w[k] + 3;
			if (off + len + 2 > cap) {
				cap = (off + len + 2) * 2;
				if ((nb = realloc(buf, cap)) == NULL) {
					free(buf);
					free(w);
					return NULL;
				}
				buf = nb;
			}
			/* The last column is not padded: no trailing blanks. */
			off += snprintf(buf + off, cap - off, k + 1 < ncol ?
			    "%-*s  " : "%-*s", k + 1 < ncol ? (int)w[k] : 0, esc);
		}
		buf[off++] = '\n';
		buf[off] = '\0';
	}
	free(w);
	return buf;
}
