/* t_deepcheck.c -- --deep's rounds, and its verdict on made-up figures. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/check/deepcheck.h"
#include "util/strv.h"
#include "test.h"

static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
static const char *const ifaces[] = { "eth0", "eth0", "eth1", "eth0",
    "eth0", "eth0" };

/*
 * Answers every round of dc over n hosts: round trips rtt(from, to) us,
 * bytes at mbps(from, to) Mbit/s.
 */
typedef uint64_t (*rtt_fn)(size_t, size_t);
typedef double (*mbps_fn)(size_t, size_t);

static void
play(struct deepcheck *dc, size_t n, rtt_fn rtt, mbps_fn mbps)
{
	const struct deep_round	*r;
	size_t			 to[8], i;
	char			 a[64], b[64], *kv[3];

	while ((r = deepcheck_next(dc, to)) != NULL) {
		for (i = 0; i < n; i++) {
			if (to[i] == SIZE_MAX)
				continue;
			if (r->bytes == 0) {
				snprintf(a, sizeof(a), "pair_rtt_us=%llu",
				    (unsigned long long)rtt(i, to[i]));
				kv[0] = a;
				deepcheck_answer(dc, i, kv, 1);
				continue;
			}
			/* 8 Mbit in 8e6 / mbps us. */
			snprintf(a, sizeof(a), "pair_bytes=1000000");
			snprintf(b, sizeof(b), "pair_us=%.0f",
			    8e6 / mbps(i, to[i]));
			kv[0] = a;
			kv[1] = b;
			deepcheck_answer(dc, i, kv, 2);
		}
	}
}

static uint64_t rtt_flat(size_t f, size_t t) { return 80 + (f * 7 + t * 3) % 40; }
static double mbps_flat(size_t f, size_t t) { return 400 + (f * 37 + t * 11) % 120; }
/* Host 2's own link sends at a tenth. */
static double mbps_c_sends(size_t f, size_t t) { return f == 2 ? 40 : mbps_flat(f, t); }
/* Host 2's link delays everything it sends by 20 ms. */
static uint64_t rtt_c_late(size_t f, size_t t) { return (f == 2 || t == 2 ? 20000 : 0) + rtt_flat(f, t); }
/* One path alone, a -> b, is slow. */
static double mbps_ab(size_t f, size_t t) { return f == 0 && t == 1 ? 30 : mbps_flat(f, t); }

static size_t
verdict(struct deepcheck *dc, struct strv *p)
{
	memset(p, 0, sizeof(*p));
	deepcheck_verdict(dc, (const char *const *)names, (const char *const *)ifaces, p, NULL);
	return p->n;
}

TEST(deepcheck_rounds_are_the_ring_then_the_bisection)
{
	int			 ok[6] = { 1, 1, 1, 1, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(6, ok, 1000, 4, 1);
	const struct deep_round	*r;
	size_t			 to[6], i, k;

	for (k = 0; k < 4; k++) {
		r = deepcheck_next(dc, to);
		CHECK(r != NULL);
		CHECK_STR(r->name, k < 2 ? "ring" : "bisection");
		CHECK(r->bytes == (k % 2 ? 1000u : 0u));
		CHECK_INT(r->streams, k % 2 ? 4 : 0);
		for (i = 0; i < 6; i++)
			CHECK_INT(to[i], (i + (k < 2 ? 1 : 3)) % 6);
	}
	CHECK(deepcheck_next(dc, to) == NULL);
	deepcheck_free(dc);
}

TEST(deepcheck_leaves_out_a_host_that_does_not_listen)
{
	int			 ok[4] = { 1, 0, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(4, ok, 1000, 1, 1);
	size_t			 to[4];

	/* Three hosts: the ring, then the ring the other way. */
	CHECK(deepcheck_next(dc, to) != NULL);
	CHECK_INT(to[0], 2);
	CHECK(to[1] == SIZE_MAX);
	CHECK_INT(to[2], 3);
	CHECK_INT(to[3], 0);
	deepcheck_next(dc, to);
	CHECK(deepcheck_next(dc, to) != NULL);
	CHECK_INT(to[0], 3);
	CHECK_INT(to[3], 2);
	deepcheck_next(dc, to);
	CHECK(deepcheck_next(dc, to) == NULL);
	deepcheck_free(dc);

	/* Two hosts: one set of pairs; one host: none. */
	ok[2] = 0;
	dc = deepcheck_new(4, ok, 1000, 1, 1);
	CHECK(deepcheck_next(dc, to) != NULL && deepcheck_next(dc, to) != NULL);
	CHECK(deepcheck_next(dc, to) == NULL);
	deepcheck_free(dc);
	ok[0] = 0;
	dc = deepcheck_new(4, ok, 1000, 1, 1);
	CHECK(deepcheck_next(dc, to) == NULL);
	deepcheck_free(dc);
}

TEST(deepcheck_noise_is_no_problem)
{
	int			 ok[6] = { 1, 1, 1, 1, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(6, ok, 1000, 4, 1);
	struct strv		 p, rep = { 0 };

	play(dc, 6, rtt_flat, mbps_flat);
	CHECK_INT(verdict(dc, &p), 0);
	deepcheck_report(dc, (const char *const *)names, 1, &rep);
	CHECK_INT(rep.n, 13);		/* 12 pairs and the summary */
	CHECK(strncmp(rep.v[0], "a\tb\tring\t0.", 10) == 0);
	CHECK(strstr(rep.v[12], "deep: 12 pairs in 4 rounds") == rep.v[12]);
	strv_free(&rep);
	deepcheck_free(dc);
}

TEST(deepcheck_names_the_host_that_sends_slowly)
{
	int			 ok[4] = { 1, 1, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(4, ok, 1000, 4, 1);
	struct strv		 p;

	play(dc, 4, rtt_flat, mbps_c_sends);
	CHECK_INT(verdict(dc, &p), 1);
	CHECK(strncmp(p.v[0], "c: slow to send: 40 Mbit/s to d, 40 Mbit/s to "
	    "a; the median pair ", 60) == 0);
	CHECK(strstr(p.v[0], "ethtool eth1") != NULL);
	strv_free(&p);
	deepcheck_free(dc);

	/* Figures only: the same figures are no problem. */
	dc = deepcheck_new(4, ok, 1000, 4, 0);
	play(dc, 4, rtt_flat, mbps_c_sends);
	CHECK_INT(verdict(dc, &p), 0);
	deepcheck_free(dc);
}

TEST(deepcheck_names_the_host_whose_round_trips_are_late)
{
	int			 ok[4] = { 1, 1, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(4, ok, 1000, 4, 1);
	struct strv		 p;

	/* Half of the pairs are c's: the baseline stays the healthy half. */
	play(dc, 4, rtt_c_late, mbps_flat);
	CHECK_INT(verdict(dc, &p), 1);
	CHECK(strncmp(p.v[0], "c: slow round trips with every peer: 20.", 40) ==
	    0);
	CHECK(strstr(p.v[0], "the median pair 0.") != NULL);
	strv_free(&p);
	deepcheck_free(dc);
}

TEST(deepcheck_names_one_slow_path_and_a_failed_pair)
{
	int			 ok[6] = { 1, 1, 1, 1, 1, 1 };
	struct deepcheck	*dc = deepcheck_new(6, ok, 1000, 4, 1);
	struct strv		 p;
	const struct deep_round	*r;
	size_t			 to[6], i;
	char			*kv[] = { "pair_err=10.0.0.2:4000: Connection refused" };

	play(dc, 6, rtt_flat, mbps_ab);
	CHECK_INT(verdict(dc, &p), 1);
	CHECK(strncmp(p.v[0], "a -> b: 30 Mbit/s, the median pair ", 35) == 0);
	CHECK(strstr(p.v[0], "the path between them is slow") != NULL);
	strv_free(&p);
	deepcheck_free(dc);

	dc = deepcheck_new(6, ok, 1000, 4, 1);
	r = deepcheck_next(dc, to);
	for (i = 0; r != NULL && i < 6; i++)
		deepcheck_answer(dc, i, kv, 1);
	CHECK_INT(verdict(dc, &p), 6);
	CHECK_STR(p.v[0], "a -> b: the pair test failed: 10.0.0.2:4000: "
	    "Connection refused: let TCP through between them on the "
	    "interfaces a run uses (firewall, routes)");
	strv_free(&p);
	deepcheck_free(dc);
}
