/* t_pace.c -- ranks' paces from their lines or steps, and who falls behind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/pace.h"
#include "test.h"

/*
 * Runs 8 ranks for secs seconds, rank i taking period_ms(i) per step and
 * printing "step N loss 0.NNN" (exact: reporting N instead), judging
 * every 2 s. Returns the first rank named (SIZE_MAX: none), with when.
 */
static size_t
run(unsigned (*period_ms)(size_t, uint64_t), int exact, uint64_t secs,
    struct pace_slow *got, uint64_t *when)
{
	struct pace	*pc = pace_new(8, 0.10);
	uint64_t	 next[8] = { 0 }, step[8] = { 0 }, t;
	char		 line[64];
	size_t		 i, named = SIZE_MAX;
	struct pace_slow out[8];

	for (t = 0; t <= secs * 1000 && named == SIZE_MAX; t += 10) {
		for (i = 0; i < 8; i++) {
			if (t < next[i])
				continue;
			step[i]++;
			next[i] = t + period_ms(i, step[i]);
			if (exact) {
				pace_step(pc, i, step[i], t);
				continue;
			}
			snprintf(line, sizeof(line), "step %llu loss 0.%03u\n",
			    (unsigned long long)step[i], (unsigned)(t % 997));
			/* In two pieces, as a pipe may split it. */
			pace_output(pc, i, line, 5, t);
			pace_output(pc, i, line + 5, strlen(line) - 5, t);
		}
		if (t % 2000 == 0 && pace_judge(pc, t, out, 8) > 0) {
			named = out[0].rank;
			*got = out[0];
			*when = t;
		}
	}
	pace_free(pc);
	return named;
}

/* 1 s a step; rank 5 takes 15% longer. */
static unsigned
slow5(size_t i, uint64_t step)
{
	return i == 5 ? 1150 : 1000;
}

/* Every rank 1 s a step, give or take 5% from step to step. */
static unsigned
noisy(size_t i, uint64_t step)
{
	return 950 + (unsigned)((i * 7919 + step * 104729) % 101);
}

/* Rank 2 stops printing after 40 steps (hung, or very slow). */
static unsigned
stops2(size_t i, uint64_t step)
{
	return i == 2 && step > 40 ? 1000000 : 1000;
}

TEST(pace_names_the_rank_that_is_15_percent_slower_from_its_lines)
{
	struct pace_slow	s;
	uint64_t		when = 0;

	CHECK_INT(run(slow5, 0, 300, &s, &when), 5);
	CHECK(s.secs > 1.14 && s.secs < 1.16);
	CHECK(s.median > 0.99 && s.median < 1.01);
	CHECK(s.steps >= PACE_MIN_STEPS && s.steps <= PACE_WINDOW);
	CHECK(!s.exact);
	CHECK_STR(s.shape, "step # loss #.#");
	/* A window, then sustained: within two minutes. */
	CHECK(when >= PACE_SUSTAIN_STEPS * 1000 && when <= 120000);
}

TEST(pace_names_it_from_reported_steps_too)
{
	struct pace_slow	s;
	uint64_t		when = 0;

	CHECK_INT(run(slow5, 1, 300, &s, &when), 5);
	CHECK(s.exact);
	CHECK(when <= 120000);
}

TEST(pace_never_names_ranks_that_differ_by_noise)
{
	struct pace_slow	s;
	uint64_t		when = 0;

	CHECK(run(noisy, 0, 1200, &s, &when) == SIZE_MAX);
	CHECK(run(noisy, 1, 1200, &s, &when) == SIZE_MAX);
}

TEST(pace_names_a_rank_that_stops)
{
	struct pace_slow	s;
	uint64_t		when = 0;

	CHECK_INT(run(stops2, 0, 300, &s, &when), 2);
}

TEST(pace_compares_only_ranks_paced_alike)
{
	struct pace		*pc = pace_new(4, 0.10);
	struct pace_slow	 out[4];
	char			 line[64];
	uint64_t		 t;
	size_t			 i, k = 0;

	/* Each rank prints its own shape; rank 3 at half the speed. */
	for (t = 0; t < 300000; t += 1000) {
		for (i = 0; i < 4; i++) {
			if (i == 3 && t % 2000 != 0)
				continue;
			snprintf(line, sizeof(line), "%.*s %llu\n", (int)i + 1,
			    "abcd", (unsigned long long)t);
			pace_output(pc, i, line, strlen(line), t);
		}
		k += pace_judge(pc, t, out, 4);
	}
	CHECK_INT(k, 0);
	pace_free(pc);
}
