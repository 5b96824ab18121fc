/* t_collapse.c -- the held-lines table of --collapse: groups, order, windows, bounds. */
#include <stdio.h>
#include <string.h>

#include "launcher/collapse.h"
#include "launcher/stackrep.h"
#include "test.h"

/* What went out, one "stream ranks line" per group. */
struct seen {
	char	buf[8192];
	size_t	len;
	size_t	groups;
};

/* collapse_cb: records a group as "S RANKS LINE" (LINE keeps its newline). */
static void
record(void *arg, int stream, const uint32_t *ranks, size_t n,
    const char *line, size_t len, uint64_t stamp)
{
	struct seen	*s = arg;
	char		 rr[256];
	int		 w;

	stk_ranges(rr, sizeof(rr), ranks, n);
	w = snprintf(s->buf + s->len, sizeof(s->buf) - s->len, "%d %s %.*s",
	    stream, rr, (int)len, line);
	if (w > 0 && (size_t)w < sizeof(s->buf) - s->len)
		s->len += w;
	s->groups++;
}

/* Holds a whole line given as one C string. */
static int
say(struct collapse *c, uint32_t rank, int stream, const char *line,
    uint64_t now)
{
	return collapse_add(c, rank, stream, "", 0, line, strlen(line), now, 0);
}

TEST(collapse_every_rank_said_it_goes_out_at_once)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(4, record, &s);
	uint32_t	 r;

	for (r = 0; r < 4; r++)
		CHECK_INT(say(c, r, 1, "UserWarning: x\n", 10), 0);
	CHECK_STR(s.buf, "1 0-3 UserWarning: x\n");
	CHECK_INT(collapse_deadline(c), 0);
	collapse_free(c);
}

TEST(collapse_window_ends_a_group)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	say(c, 0, 0, "w\n", 100);
	say(c, 2, 0, "w\n", 150);
	CHECK_INT(collapse_deadline(c), 100 + COLLAPSE_WINDOW_MS);
	collapse_expire(c, 100 + COLLAPSE_WINDOW_MS - 1);
	CHECK_INT(s.groups, 0);
	collapse_expire(c, 100 + COLLAPSE_WINDOW_MS);
	CHECK_STR(s.buf, "0 0,2 w\n");
	/* After the window the same line starts afresh. */
	say(c, 1, 0, "w\n", 1000);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0,2 w\n0 1 w\n");
	collapse_free(c);
}

TEST(collapse_a_rank_never_overtakes_its_own_held_line)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	/* Rank 1 says A then B; B's group is older than its A: no join. */
	say(c, 0, 0, "B\n", 0);
	say(c, 1, 0, "A\n", 0);
	say(c, 1, 0, "B\n", 0);
	say(c, 2, 0, "B\n", 0);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0 B\n0 1 A\n0 1-2 B\n");
	collapse_free(c);
}

TEST(collapse_a_rank_saying_a_line_twice_is_two_lines)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);

	say(c, 0, 0, "again\n", 0);
	say(c, 0, 0, "again\n", 0);
	/* Both ranks said the second: it goes, and the first before it. */
	say(c, 1, 0, "again\n", 0);
	CHECK_STR(s.buf, "0 0 again\n0 0-1 again\n");
	collapse_free(c);
}

TEST(collapse_streams_apart)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	say(c, 0, 0, "same\n", 0);
	say(c, 1, 1, "same\n", 0);
	/* A line on stderr does not hold back a later one on stdout. */
	say(c, 1, 0, "same\n", 0);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0-1 same\n1 1 same\n");
	collapse_free(c);
}

TEST(collapse_flush_rank_lets_out_its_lines_and_what_is_older)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	say(c, 0, 0, "one\n", 0);
	say(c, 1, 0, "two\n", 0);
	say(c, 2, 0, "three\n", 0);
	collapse_flush_rank(c, 1);
	CHECK_STR(s.buf, "0 0 one\n0 1 two\n");
	collapse_flush_rank(c, 1);
	CHECK_INT(s.groups, 2);
	collapse_free(c);
}

TEST(collapse_long_lines_and_bad_ranks_are_not_held)
{
	static char	 big[COLLAPSE_LINE_MAX + 2];
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);

	memset(big, 'x', sizeof(big) - 1);
	CHECK_INT(say(c, 0, 0, big, 0), -1);
	CHECK_INT(say(c, 2, 0, "x\n", 0), -1);
	CHECK_INT(say(c, 0, 2, "x\n", 0), -1);
	CHECK_INT(collapse_deadline(c), 0);
	collapse_free(c);
}

TEST(collapse_holds_a_bounded_number_of_lines)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);
	char		 line[32];
	int		 i, unheld = 0;

	for (i = 0; i < 2000; i++) {
		snprintf(line, sizeof(line), "loss %d\n", i);
		if (say(c, 0, 0, line, 0) != 0)
			unheld++;	/* the owner writes it (COLLAPSE_ALONE_MAX) */
	}
	/* The oldest went out early, in order. */
	CHECK(s.groups + unheld >= 2000 - 1024);
	CHECK(strncmp(s.buf, "0 0 loss 0\n0 0 loss 1\n", 22) == 0);
	collapse_free(c);
}

TEST(collapse_a_rank_flooding_lines_of_its_own_is_let_through_for_a_while)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);
	char		 line[32];
	uint64_t	 t = 0, last;
	int		 i;

	/* Rank 0's lines, alone but each 8th, which rank 1 says too: held. */
	for (i = 0; i < 4 * COLLAPSE_ALONE_MAX; i++) {
		snprintf(line, sizeof(line), "line %d\n", i);
		CHECK_INT(say(c, 0, 0, line, t), 0);
		if (i % 8 == 7)
			CHECK_INT(say(c, 1, 0, line, t), 0);
		collapse_expire(c, t += COLLAPSE_WINDOW_MS);
	}
	/* Then only lines of its own, each out alone when its window ends. */
	for (i = 0; i < COLLAPSE_ALONE_MAX; i++) {
		snprintf(line, sizeof(line), "own %d\n", i);
		CHECK_INT(say(c, 0, 0, line, last = t), 0);
		collapse_expire(c, t += COLLAPSE_WINDOW_MS);
	}
	/* Not held now, not even a line rank 1 says too... */
	CHECK_INT(say(c, 0, 0, "loss\n", t), -1);
	CHECK_INT(say(c, 1, 0, "loss\n", t), 0);
	CHECK_INT(say(c, 0, 0, "loss\n", last + COLLAPSE_RELOOK_MS - 1), -1);
	/* ...until COLLAPSE_RELOOK_MS after the last one came. */
	CHECK_INT(say(c, 0, 0, "loss 2\n", last + COLLAPSE_RELOOK_MS), 0);
	collapse_free(c);
}
