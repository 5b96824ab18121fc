/*
 * t_lockstep.c -- who the others wait for at NCCL's collectives
 * (watch/lockstep.c), on made-up arrivals: a rank always last by a fifth
 * of the gap is named, once; ranks last by turns, or late by too little,
 * are not; collectives some rank never reached count for nothing; a
 * host's clock seconds ahead is aligned before anyone is compared.
 */
#include <string.h>

#include "launcher/watch/lockstep.h"
#include "proto/agentproto.h"
#include "test.h"

#define MS	1000000ULL
#define T0	(1764300000ULL * 1000000000ULL)

/*
 * n collectives of comm 9 over 4 ranks on host 0 (ranks 0-1) and host 1
 * (2-3, its clock skew_ns ahead): each 100 ms apart, rank late_rank (or
 * each in turn, if -1) late_ms after the others, who come 0-3 ms apart.
 */
static void
ls_play(struct lockstep *ls, int n, int late_rank, uint64_t late_ms,
    uint64_t skew_ns, int skip_rank)
{
	struct ap_coll	v[2];
	uint64_t	t;
	int		s, r, h, k, late;

	for (s = 0; s < n; s++) {
		late = late_rank >= 0 ? late_rank : s % 4;
		for (h = 0; h < 2; h++) {
			for (k = 0, r = 2 * h; r < 2 * h + 2; r++) {
				if (r == skip_rank)
					continue;
				t = T0 + (uint64_t)s * 100 * MS +
				    (uint64_t)(r * 3 % 4) * MS / 2 +
				    (r == late ? late_ms * MS : 0);
				v[k].rank = (uint32_t)r;
				v[k].nranks = 4;
				v[k].comm = 9;
				v[k].seq = (uint64_t)s;
				v[k].ns = t + (h == 1 ? skew_ns : 0);
				k++;
			}
			/* Sent 1 ms after the last, as the agents would. */
			lockstep_take(ls, (size_t)h, T0 + (uint64_t)s * 100 *
			    MS + 50 * MS + (h == 1 ? skew_ns : 0),
			    T0 + (uint64_t)s * 100 * MS + 51 * MS, v,
			    (size_t)k);
		}
	}
}

TEST(lockstep_names_the_rank_always_last)
{
	struct lockstep		*ls = lockstep_new(4, 2);
	struct lockstep_verdict	 v;

	ls_play(ls, 20, 2, 20, 0, -1);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 0);	/* too few yet */
	ls_play(ls, 64, 2, 20, 0, -1);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 1);
	CHECK_INT((int)v.rank, 2);
	CHECK_INT((int)v.of, LOCKSTEP_WINDOW);
	CHECK_INT((int)v.last, LOCKSTEP_WINDOW);
	CHECK(v.late_ms > 18 && v.late_ms < 22);
	CHECK(v.gap_ms > 99 && v.gap_ms < 101);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 0);	/* once */
	lockstep_free(ls);
}

TEST(lockstep_a_skewed_host_clock_is_aligned)
{
	struct lockstep		*ls = lockstep_new(4, 2);
	struct lockstep_verdict	 v;

	/* Host 1's clock is 5 s ahead: raw, its ranks would look last. */
	ls_play(ls, 64, 0, 20, 5000 * MS, -1);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 1);
	CHECK_INT((int)v.rank, 0);
	lockstep_free(ls);
}

TEST(lockstep_names_nobody_last_by_turns_or_late_by_little)
{
	struct lockstep		*ls = lockstep_new(4, 2);
	struct lockstep_verdict	 v;

	ls_play(ls, 64, -1, 20, 0, -1);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 0);
	lockstep_free(ls);
	/* Always last, but by 5 ms of 100: under a 10% threshold. */
	ls = lockstep_new(4, 2);
	ls_play(ls, 64, 3, 5, 0, -1);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 0);
	CHECK_INT(lockstep_judge(ls, 0.04, &v), 1);
	CHECK_INT((int)v.rank, 3);
	lockstep_free(ls);
}

TEST(lockstep_incomplete_collectives_count_for_nothing)
{
	struct lockstep		*ls = lockstep_new(4, 2);
	struct lockstep_verdict	 v;

	ls_play(ls, 64, 1, 20, 0, 3);		/* rank 3 never comes */
	CHECK_INT((int)lockstep_seen(ls, NULL), 0);
	CHECK_INT(lockstep_judge(ls, 0.1, &v), 0);
	lockstep_free(ls);
}
