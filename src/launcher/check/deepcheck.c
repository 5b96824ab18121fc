/*
 * deepcheck.c -- the rounds of dtrun --check --deep and what they say
 * (deepcheck.h). A pair is one host measuring the path to another; each
 * set of pairs (the ring, the bisection) is measured twice, first as
 * round trips alone, then as bytes, so a round's bulk never delays
 * another pair's round trips.
 *
 * The baseline is the median pair, taken on the healthy side when the
 * count is even: with four hosts, one slow host is in half of the pairs,
 * and a plain median would sit between slow and healthy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/environ.h"
#include "launcher/check/deepcheck.h"
#include "util/strv.h"
#include "util/xmalloc.h"

#define DEEP_SETS	2	/* the ring, the bisection */
#define DEEP_LINES_MAX	16	/* problem lines of one kind, then a count */

/* One host measuring the path to another, in one set. */
struct deep_rec {
	size_t		 from, to;	/* host indexes */
	const char	*set;		/* "ring", "bisection" */
	int		 rtt_done, bw_done;
	uint64_t	 rtt_us;
	double		 mbps;
	int		 capped;	/* the bytes were cut off by time */
	char		*err;		/* the test failed: why */
	int		 slow_rtt, slow_bw;
};

struct deepcheck {
	size_t		 n;		/* hosts */
	size_t		*part;		/* the hosts that take part */
	size_t		 m;
	struct deep_round rounds[2 * DEEP_SETS];
	size_t		 nrounds, next;	/* the planned rounds */
	size_t		 again;		/* confirming rounds given: set, kind */
	struct deep_round cur;		/* the round given last */
	size_t		 cur_set;
	size_t		 nrun;		/* rounds given in all */
	struct deep_rec	*recs;		/* [set * m + j]: part[j]'s pair */
	size_t		 nsets;
	size_t		*at;		/* host -> j, or SIZE_MAX */
	double		 base_mbps;	/* the verdict's baselines */
	uint64_t	 base_rtt_us;
	int		 judge;		/* 0: figures only, nothing is slow */
};

static void	deep_baselines(struct deepcheck *);

struct deepcheck *
deepcheck_new(size_t n, const int *ok, uint64_t bytes, uint32_t streams,
    int judge)
{
	struct deepcheck	*dc = xcalloc(1, sizeof(*dc));
	size_t			 i, s, j, off[DEEP_SETS];
	static const char *const names[DEEP_SETS] = { "ring", "bisection" };

	dc->n = n;
	dc->judge = judge;
	dc->part = xcalloc(n + 1, sizeof(*dc->part));
	dc->at = xcalloc(n + 1, sizeof(*dc->at));
	for (i = 0; i < n; i++) {
		dc->at[i] = SIZE_MAX;
		if (ok[i]) {
			dc->at[i] = dc->m;
			dc->part[dc->m++] = i;
		}
	}
	if (dc->m < 2)
		return dc;	/* no pair to measure */
	/* Across the middle; three hosts: the ring the other way. */
	off[0] = 1;
	off[1] = dc->m / 2 > 1 ? dc->m / 2 : dc->m - 1;
	dc->nsets = off[1] == off[0] ? 1 : DEEP_SETS;
	dc->recs = xcalloc(dc->nsets * dc->m, sizeof(*dc->recs));
	for (s = 0; s < dc->nsets; s++) {
		for (j = 0; j < dc->m; j++) {
			dc->recs[s * dc->m + j].from = dc->part[j];
			dc->recs[s * dc->m + j].to = dc->part[(j + off[s]) %
			    dc->m];
			dc->recs[s * dc->m + j].set = names[s];
		}
		dc->rounds[2 * s] = (struct deep_round){ names[s], 0, 0,
		    off[s], 0 };
		dc->rounds[2 * s + 1] = (struct deep_round){ names[s], bytes,
		    streams, off[s], 0 };
	}
	dc->nrounds = 2 * dc->nsets;
	return dc;
}

void
deepcheck_free(struct deepcheck *dc)
{
	size_t	k;

	if (dc == NULL)
		return;
	for (k = 0; k < dc->nsets * dc->m; k++)
		free(dc->recs[k].err);
	free(dc->recs);
	free(dc->part);
	free(dc->at);
	free(dc);
}

/* Whether rec is slow in the kind of round r. */
static int
deep_slow(const struct deep_rec *rec, const struct deep_round *r)
{
	return r->bytes == 0 ? rec->slow_rtt : rec->slow_bw;
}

/*
 * The next confirming round: the pairs of one set found slow in one kind,
 * measured once more, alone. A busy host (another job, a backup) slows a
 * pair now and then; a bad link slows it every time, and only a pair
 * slow both times counts.
 */
static const struct deep_round *
deep_next_again(struct deepcheck *dc, size_t *to)
{
	const struct deep_round	*r;
	struct deep_rec		*rec;
	size_t			 i, j, any;

	if (!dc->judge)
		return NULL;
	if (dc->again == 0)
		deep_baselines(dc);
	while (dc->again < dc->nrounds) {
		r = &dc->rounds[dc->again++];
		dc->cur_set = (dc->again - 1) / 2;
		for (i = 0, any = 0; i < dc->n; i++) {
			j = dc->at[i];
			rec = j == SIZE_MAX ? NULL :
			    &dc->recs[dc->cur_set * dc->m + j];
			to[i] = rec != NULL && deep_slow(rec, r) ? rec->to :
			    SIZE_MAX;
			any += to[i] != SIZE_MAX;
		}
		if (any > 0) {
			dc->cur = *r;
			dc->cur.again = 1;
			dc->nrun++;
			return &dc->cur;
		}
	}
	return NULL;
}

const struct deep_round *
deepcheck_next(struct deepcheck *dc, size_t *to)
{
	size_t	i;

	if (dc->next >= dc->nrounds)
		return deep_next_again(dc, to);
	dc->cur = dc->rounds[dc->next++];
	dc->cur_set = (dc->next - 1) / 2;
	dc->nrun++;
	for (i = 0; i < dc->n; i++)
		to[i] = dc->at[i] == SIZE_MAX ? SIZE_MAX :
		    dc->recs[dc->cur_set * dc->m + dc->at[i]].to;
	return &dc->cur;
}

void
deepcheck_answer(struct deepcheck *dc, size_t i, char *const *kv, size_t nkv)
{
	const struct deep_round	*r = &dc->cur;
	struct deep_rec		*rec;
	const char		*v, *us;
	uint64_t		 rtt;
	double			 mbps;

	if (dc->nrun == 0 || i >= dc->n || dc->at[i] == SIZE_MAX)
		return;
	rec = &dc->recs[dc->cur_set * dc->m + dc->at[i]];
	if ((v = dt_env_find(kv, nkv, "pair_err")) != NULL) {
		if (rec->err == NULL)
			rec->err = xstrdup(v);
		return;
	}
	/* Measured again: the better figure stands. */
	if (r->bytes == 0 &&
	    (v = dt_env_find(kv, nkv, "pair_rtt_us")) != NULL) {
		rtt = strtoull(v, NULL, 10);
		if (!rec->rtt_done || rtt < rec->rtt_us)
			rec->rtt_us = rtt;
		rec->rtt_done = 1;
	} else if (r->bytes > 0 &&
	    (v = dt_env_find(kv, nkv, "pair_bytes")) != NULL &&
	    (us = dt_env_find(kv, nkv, "pair_us")) != NULL) {
		/* bits per microsecond are Mbit/s */
		mbps = strtoull(us, NULL, 10) == 0 ? 0 :
		    strtoull(v, NULL, 10) * 8.0 / strtoull(us, NULL, 10);
		if (!rec->bw_done || mbps > rec->mbps) {
			rec->mbps = mbps;
			rec->capped = dt_env_find(kv, nkv, "pair_capped") !=
			    NULL;
		}
		rec->bw_done = 1;
	}
}

static int
deep_cmp_u64(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int
deep_cmp_dbl(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The baselines: the median pair, on the healthy side of an even count. */
static void
deep_baselines(struct deepcheck *dc)
{
	size_t		 k, nr = 0, nb = 0, total = dc->nsets * dc->m;
	uint64_t	*rtt = xcalloc(total + 1, sizeof(*rtt));
	double		*bw = xcalloc(total + 1, sizeof(*bw));

	for (k = 0; k < total; k++) {
		if (dc->recs[k].rtt_done)
			rtt[nr++] = dc->recs[k].rtt_us;
		if (dc->recs[k].bw_done)
			bw[nb++] = dc->recs[k].mbps;
	}
	qsort(rtt, nr, sizeof(*rtt), deep_cmp_u64);
	qsort(bw, nb, sizeof(*bw), deep_cmp_dbl);
	dc->base_rtt_us = nr > 0 ? rtt[(nr - 1) / 2] : 0;
	dc->base_mbps = nb > 0 ? bw[nb / 2] : 0;
	for (k = 0; k < total; k++) {
		struct deep_rec *r = &dc->recs[k];

		r->slow_rtt = dc->judge && r->rtt_done &&
		    r->rtt_us > dc->base_rtt_us * DEEP_SLOW_RTT_X &&
		    r->rtt_us > dc->base_rtt_us + DEEP_SLOW_RTT_US;
		r->slow_bw = dc->judge && r->bw_done &&
		    r->mbps * 100 < dc->base_mbps * DEEP_SLOW_BW_PCT;
	}
	free(rtt);
	free(bw);
}

/* "3.41 Gbit/s" or "412 Mbit/s" into buf. */
static const char *
deep_rate(double mbps, char *buf, size_t len)
{
	if (mbps >= 1000)
		snprintf(buf, len, "%.2f Gbit/s", mbps / 1000);
	else
		snprintf(buf, len, "%.*f Mbit/s", mbps < 10 ? 1 : 0, mbps);
	return buf;
}

/* "0.084 ms" or "20.4 ms" into buf. */
static const char *
deep_ms(uint64_t us, char *buf, size_t len)
{
	snprintf(buf, len, us < 10000 ? "%.3f ms" : "%.1f ms", us / 1000.0);
	return buf;
}

/* One pair's figure of a kind, for a problem line. */
static const char *
deep_figure(const struct deep_rec *r, int bw, char *buf, size_t len)
{
	char	n[32];

	if (!bw)
		return deep_ms(r->rtt_us, buf, len);
	snprintf(buf, len, "%s%s", deep_rate(r->mbps, n, sizeof(n)),
	    r->capped ? " (cut off by time)" : "");
	return buf;
}

/* Tallies of one host's pairs of a kind: [0] sent, [1] received. */
struct deep_tally {
	size_t	all[2], slow[2];
};

static void
deep_tally(const struct deepcheck *dc, int bw, struct deep_tally *t)
{
	size_t	k;

	for (k = 0; k < dc->nsets * dc->m; k++) {
		const struct deep_rec *r = &dc->recs[k];

		if (!(bw ? r->bw_done : r->rtt_done))
			continue;
		t[r->from].all[0]++;
		t[r->to].all[1]++;
		if (bw ? r->slow_bw : r->slow_rtt) {
			t[r->from].slow[0]++;
			t[r->to].slow[1]++;
		}
	}
}

/* Whether host h is named for its side of the pairs (0 sent, 1 received). */
static int
deep_named(const struct deep_tally *t, size_t h, int side, int bw)
{
	const struct deep_tally	*x = &t[h];

	/* A round trip crosses both ways: a slow host slows all of its. */
	if (!bw)
		return x->all[0] + x->all[1] >= 2 && x->slow[0] == x->all[0] &&
		    x->slow[1] == x->all[1];
	return x->all[side] >= 2 && x->slow[side] == x->all[side];
}

/* "to gpu08 and gpu05: 41 Mbit/s, 40 Mbit/s": a host's slow pairs. */
static void
deep_host_pairs(const struct deepcheck *dc, size_t h, int side, int bw,
    const char *const *names, char *buf, size_t len)
{
	size_t	k, off = 0;
	char	fig[64];

	buf[0] = '\0';
	for (k = 0; k < dc->nsets * dc->m && off < len; k++) {
		const struct deep_rec *r = &dc->recs[k];

		if (!(bw ? r->slow_bw : r->slow_rtt) ||
		    (side == 0 ? r->from : r->to) != h)
			continue;
		off += snprintf(buf + off, len - off, "%s%s %s %s", off ?
		    ", " : "", deep_figure(r, bw, fig, sizeof(fig)), side == 0 ?
		    "to" : "from", names[side == 0 ? r->to : r->from]);
	}
}

/* The fix for a host's slow link: where to look, on its interface. */
static void
deep_fix(const char *iface, char *buf, size_t len)
{
	if (iface == NULL)
		iface = "IFACE";
	snprintf(buf, len, "check its link there (ethtool %s: speed, duplex "
	    "and errors; tc qdisc show dev %s; its cable and switch port), or "
	    "leave the host out (--exclude)", iface, iface);
}

/* The problems of one kind: named hosts first, then the other slow pairs. */
static void
deep_verdict_kind(struct deepcheck *dc, int bw, const char *const *names,
    const char *const *ifaces, struct strv *problems, size_t *named)
{
	struct deep_tally	*t = xcalloc(dc->n + 1, sizeof(*t));
	size_t			 h, k, lines = 0, more = 0;
	char			 pairs[1024], fix[512], base[64], fig[64];
	int			 side;

	deep_tally(dc, bw, t);
	if (bw)
		deep_rate(dc->base_mbps, base, sizeof(base));
	else
		deep_ms(dc->base_rtt_us, base, sizeof(base));
	for (h = 0; h < dc->n; h++)
		for (side = 0; side < (bw ? 2 : 1); side++) {
			if (!deep_named(t, h, side, bw))
				continue;
			if (lines++ >= DEEP_LINES_MAX) {
				more++;
				continue;
			}
			named[h]++;
			deep_host_pairs(dc, h, side, bw, names, pairs,
			    sizeof(pairs));
			deep_fix(ifaces[h], fix, sizeof(fix));
			strv_addf(problems, "%s: %s: %s; the median pair %s: "
			    "%s", names[h], !bw ?
			    "slow round trips with every peer" : side == 0 ?
			    "slow to send" : "slow to receive", pairs, base,
			    fix);
		}
	for (k = 0; k < dc->nsets * dc->m; k++) {
		const struct deep_rec *r = &dc->recs[k];

		if (!(bw ? r->slow_bw : r->slow_rtt) ||
		    deep_named(t, r->from, 0, bw) ||
		    deep_named(t, r->to, 1, bw))
			continue;
		named[r->from]++;
		named[r->to]++;
		if (lines++ >= DEEP_LINES_MAX) {
			more++;
			continue;
		}
		strv_addf(problems, "%s -> %s: %s, the median pair %s: "
		    "the path between them is slow (%s there: ethtool, tc "
		    "qdisc show; the switch ports and routes between them)",
		    names[r->from],
		    names[r->to], deep_figure(r, bw, fig, sizeof(fig)), base,
		    bw ? "throughput" : "round trip");
	}
	if (more > 0)
		strv_addf(problems, "and %zu more slow %s like these", more,
		    bw ? "throughputs" : "round trips");
	free(t);
}

void
deepcheck_verdict(struct deepcheck *dc, const char *const *names,
    const char *const *ifaces, struct strv *problems, size_t *named)
{
	size_t	k, *nm = named != NULL ? named : xcalloc(dc->n + 1,
		    sizeof(*nm));

	deep_baselines(dc);
	for (k = 0; k < dc->nsets * dc->m; k++) {
		if (dc->recs[k].err == NULL)
			continue;
		nm[dc->recs[k].from]++;
		nm[dc->recs[k].to]++;
		strv_addf(problems, "%s -> %s: the pair test failed: %s: let "
		    "TCP through between them on the interfaces a run uses "
		    "(firewall, routes)", names[dc->recs[k].from],
		    names[dc->recs[k].to], dc->recs[k].err);
	}
	deep_verdict_kind(dc, 0, names, ifaces, problems, nm);
	deep_verdict_kind(dc, 1, names, ifaces, problems, nm);
	if (named == NULL)
		free(nm);
}

void
deepcheck_report(struct deepcheck *dc, const char *const *names, int rows,
    struct strv *out)
{
	size_t	k, npairs = dc->nsets * dc->m;
	char	a[64], b[64];

	if (dc->m < 2) {
		strv_addf(out, "deep: %s, no pair to measure", dc->m == 0 ?
		    "no host listens" : "one host");
		return;
	}
	deep_baselines(dc);
	for (k = 0; rows && k < npairs; k++) {
		const struct deep_rec *r = &dc->recs[k];

		/* Cells, tab-separated: FROM TO ROUND RTT THROUGHPUT NOTE. */
		strv_addf(out, "%s\t%s\t%s\t%s\t%s\t%s", names[r->from],
		    names[r->to], r->set, r->rtt_done ? deep_ms(r->rtt_us, a,
		    sizeof(a)) : "-", r->bw_done ? deep_rate(r->mbps, b,
		    sizeof(b)) : "-", r->err != NULL ? "FAILED" : r->slow_rtt ||
		    r->slow_bw ? "SLOW" : r->capped ? "cut off" : "-");
	}
	strv_addf(out, "deep: %zu pairs in %zu rounds: the median round trip "
	    "%s, the median throughput %s", npairs, dc->nrun,
	    deep_ms(dc->base_rtt_us, a, sizeof(a)), deep_rate(dc->base_mbps, b,
	    sizeof(b)));
}
