/* t_pace.c -- ranks' paces from their lines or steps, and who falls behind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/watch/pace.h"
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

/* Prints "step N loss 0.NNN" to rank 0 of pc at t. */
static void
tick(struct pace *pc, uint64_t n, uint64_t t)
{
	char	line[64];

	snprintf(line, sizeof(line), "step %llu loss 0.%03u\n",
	    (unsigned long long)n, (unsigned)(n * 37 % 997));
	pace_output(pc, 0, line, strlen(line), t);
}

/* Rank 0's ticks counted so far (its last step). */
static uint64_t
ticks(struct pace *pc, uint64_t t)
{
	struct pace_now	pn;

	pace_peek(pc, 0, t, &pn);
	return pn.step;
}

TEST(pace_finds_ticks_among_other_lines_split_anyhow)
{
	struct pace	*pc = pace_new(1, 0.10);
	char		 line[64];
	uint64_t	 t = 0, n;
	size_t		 i;

	/* A start-up of lines of many shapes, then a loop with a log line between ticks. */
	for (i = 0; i < PACE_LOOK_LINES / 2; i++) {
		snprintf(line, sizeof(line), "%c%c loading\n", 'a' + (int)(i % 26),
		    'a' + (int)(i / 26 % 26));
		pace_output(pc, 0, line, strlen(line), t);
	}
	for (n = 1; n <= 20; n++) {
		t += 100;
		snprintf(line, sizeof(line), "step %llu loss 0.%03u\nsaved\n",
		    (unsigned long long)n, (unsigned)(n * 37 % 997));
		/* One byte at a time: a pipe may cut a line anywhere. */
		for (i = 0; line[i] != '\0'; i++)
			pace_output(pc, 0, line + i, 1, t);
	}
	/* The 4th is the tick, and each one after. */
	CHECK_INT(ticks(pc, t), 20 - PACE_LOCK + 1);
	pace_free(pc);
}

TEST(pace_counts_the_ticks_of_one_moment_once)
{
	struct pace	*pc = pace_new(1, 0.10);
	uint64_t	 t, n = 0;
	int		 k;

	for (t = 0; t < 1000; t += 100)
		for (k = 0; k < 3; k++)
			tick(pc, ++n, t + (uint64_t)k * (PACE_TICK_GAP_MS / 3));
	/* Locked at its 4th moment (t = 300): 7 moments from there. */
	CHECK_INT(ticks(pc, t), 7);
	pace_free(pc);
}

TEST(pace_a_flood_of_one_shape_is_no_tick)
{
	struct pace	*pc = pace_new(1, 0.10);
	uint64_t	 n;

	/* 100,000 lines of one shape in under a second: no pace there. */
	for (n = 0; n < 100000; n++)
		tick(pc, n, n / 200);
	CHECK_INT(ticks(pc, 500), 0);
	pace_free(pc);
}

TEST(pace_stops_looking_after_lines_without_a_tick_then_looks_again)
{
	struct pace	*pc = pace_new(1, 0.10);
	char		 line[64];
	uint64_t	 t = 0, n;
	size_t		 i;

	/* PACE_LOOK_LINES lines, each of its own shape: no tick there. */
	for (i = 0; i < PACE_LOOK_LINES; i++) {
		snprintf(line, sizeof(line), "%c%c%c\n", 'a' + (int)(i % 26),
		    'a' + (int)(i / 26 % 26), 'a' + (int)(i / 676 % 26));
		pace_output(pc, 0, line, strlen(line), t);
	}
	/* Ticks within PACE_RELOOK_MS are not looked at... */
	for (n = 1; n <= 20; n++)
		tick(pc, n, t += 100);
	CHECK_INT(ticks(pc, t), 0);
	/* ...but once it has passed, they are found. */
	t = PACE_RELOOK_MS;
	for (n = 1; n <= 20; n++)
		tick(pc, n, t += 100);
	CHECK_INT(ticks(pc, t), 20 - PACE_LOCK + 1);
	pace_free(pc);
}

TEST(pace_a_line_longer_than_a_tick_is_passed_by)
{
	struct pace	*pc = pace_new(1, 0.10);
	char		 line[PACE_TICK_MAX + 16];
	uint64_t	 t;

	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	for (t = 0; t < 2000; t += 100)
		pace_output(pc, 0, line, sizeof(line), t);
	CHECK_INT(ticks(pc, t), 0);
	/* As long as the longest tick: ticks. */
	line[PACE_TICK_MAX] = '\n';
	for (; t < 4000; t += 100)
		pace_output(pc, 0, line, PACE_TICK_MAX + 1, t);
	CHECK_INT(ticks(pc, t), 20 - PACE_LOCK + 1);
	pace_free(pc);
}
