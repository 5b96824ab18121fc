/* t_collapse.c -- the held-lines table of --collapse: groups, order, windows, bounds. */
#include <stdio.h>
#include <string.h>

#include "launcher/output/collapse.h"
#include "launcher/stacks/stackrep.h"
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
	return collapse_add(c, rank, stream, "", 0, line, strlen(line), 0, now,
	    0);
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
	uint64_t	 t = 2 * COLLAPSE_BEHIND_MS;	/* past the start */

	say(c, 1, 0, "hello\n", 0);	/* not behind the others */
	collapse_expire(c, t);
	s.len = s.groups = 0;
	say(c, 0, 0, "w\n", t + 100);
	say(c, 2, 0, "w\n", t + 150);
	/* The window runs from the latest rank's line. */
	CHECK_INT(collapse_deadline(c), t + 150 + COLLAPSE_WINDOW_MS);
	collapse_expire(c, t + 150 + COLLAPSE_WINDOW_MS - 1);
	CHECK_INT(s.groups, 0);
	collapse_expire(c, t + 150 + COLLAPSE_WINDOW_MS);
	CHECK_STR(s.buf, "0 0,2 w\n");
	/* After the window the same line starts afresh. */
	say(c, 1, 0, "w\n", t + 1000);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0,2 w\n0 1 w\n");
	collapse_free(c);
}

TEST(collapse_a_rank_never_overtakes_its_own_held_line)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	/* Rank 1 says A then B: its A goes before the B it joins. */
	say(c, 0, 0, "B\n", 0);
	say(c, 1, 0, "A\n", 0);
	say(c, 1, 0, "B\n", 0);
	say(c, 2, 0, "B\n", 0);
	CHECK_STR(s.buf, "0 1 A\n0 0-2 B\n");
	/* Rank 0 says C then A: A's group is before its C, so no join. */
	say(c, 0, 0, "C\n", 0);
	say(c, 1, 0, "A\n", 0);
	say(c, 0, 0, "A\n", 0);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 1 A\n0 0-2 B\n0 0 C\n0 0-1 A\n");
	collapse_free(c);
}

TEST(collapse_a_rank_saying_a_line_twice_is_two_lines)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);

	say(c, 0, 0, "again\n", 0);
	say(c, 0, 0, "again\n", 0);
	/* Rank 1's first joins rank 0's first: both said it, it goes. */
	say(c, 1, 0, "again\n", 0);
	CHECK_STR(s.buf, "0 0-1 again\n");
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0-1 again\n0 0 again\n");
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
	CHECK(strstr(s.buf, "0 0-1 same\n") != NULL);
	CHECK(strstr(s.buf, "1 1 same\n") != NULL);
	CHECK_INT(s.groups, 2);
	collapse_free(c);
}

TEST(collapse_flush_rank_lets_out_its_lines_and_what_is_before)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(3, record, &s);

	say(c, 0, 0, "a\n", 0);
	say(c, 1, 0, "b\n", 0);
	say(c, 0, 0, "c\n", 0);
	collapse_flush_rank(c, 1);
	CHECK_STR(s.buf, "0 0 a\n0 1 b\n");
	collapse_flush_rank(c, 1);
	CHECK_INT(s.groups, 2);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 0 a\n0 1 b\n0 0 c\n");
	collapse_free(c);
}

TEST(collapse_long_lines_are_held_alone_and_huge_ones_not_at_all)
{
	static char	 big[COLLAPSE_LINE_MAX + 2], huge[COLLAPSE_SOLO_MAX + 2];
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	memset(huge, 'x', sizeof(huge) - 1);
	CHECK_INT(say(c, 0, 0, huge, 0), -1);
	CHECK_INT(say(c, 2, 0, "x\n", 0), -1);
	CHECK_INT(say(c, 0, 2, "x\n", 0), -1);
	CHECK_INT(collapse_deadline(c), 0);
	/* Both say the long line: held, but each copy alone. */
	CHECK_INT(say(c, 0, 0, big, 0), 0);
	CHECK_INT(say(c, 1, 0, big, 0), 0);
	collapse_flush(c);
	CHECK_INT(s.groups, 2);
	collapse_free(c);
}

TEST(collapse_holds_a_bounded_number_of_groups)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);
	char		 line[32];
	size_t		 i, n = COLLAPSE_GROUPS_MAX + 1000, unheld = 0;

	for (i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "loss %zu\n", i);
		if (say(c, 0, 0, line, 0) != 0)
			unheld++;	/* the owner writes it (COLLAPSE_ALONE_MAX) */
	}
	/* The oldest went out early, in order, before any window ended. */
	CHECK(s.groups > 0);
	CHECK(strncmp(s.buf, "0 0 loss 0\n0 0 loss 1\n", 22) == 0);
	collapse_flush(c);
	CHECK_INT(s.groups + unheld, n);
	collapse_free(c);
}

TEST(collapse_holds_a_bounded_number_of_bytes)
{
	static char	 line[COLLAPSE_LINE_MAX];
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);
	size_t		 i, n = COLLAPSE_BYTES_MAX / sizeof(line) + 100;

	memset(line, 'y', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	for (i = 0; i < n && s.groups == 0; i++) {
		snprintf(line, 16, "%015zu", i);
		CHECK_INT(collapse_add(c, 0, 0, "", 0, line, sizeof(line), 0,
		    0, 0), 0);
	}
	CHECK(s.groups > 0);
	CHECK(i <= COLLAPSE_BYTES_MAX / sizeof(line) + 1);
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

TEST(collapse_dup_three_times_by_eight_ranks_is_three_lines)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(8, record, &s);
	uint32_t	 r;
	int		 k;

	/* Each rank's three come in one chunk, a rank after another. */
	for (r = 0; r < 8; r++)
		for (k = 0; k < 3; k++)
			CHECK_INT(say(c, r, 0, "dup\n", 10 + r), 0);
	collapse_flush(c);
	CHECK_INT(s.groups, 3);
	CHECK_STR(s.buf, "0 0-7 dup\n0 0-7 dup\n0 0-7 dup\n");
	collapse_free(c);
}

TEST(collapse_a_shared_line_after_a_rank_own_line_still_collapses)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(4, record, &s);
	char		 own[32];
	uint32_t	 r;

	for (r = 0; r < 4; r++) {
		snprintf(own, sizeof(own), "rank %u\n", (unsigned)r);
		CHECK_INT(say(c, r, 0, own, 10), 0);
		CHECK_INT(say(c, r, 0, "config: a\n", 10), 0);
		CHECK_INT(say(c, r, 0, "config: b\n", 10), 0);
	}
	collapse_flush(c);
	/* Lines of its own go in the order they came. */
	CHECK_STR(s.buf, "0 0 rank 0\n0 1 rank 1\n0 2 rank 2\n0 3 rank 3\n"
	    "0 0-3 config: a\n0 0-3 config: b\n");
	collapse_free(c);
}

/* What the owner does (output.c): a piece not held lets the rank's out, then goes itself. */
static void
feed(struct collapse *c, struct seen *s, uint32_t rank, const char *piece,
    int cont, uint64_t now)
{
	uint32_t	one = rank;

	if (collapse_add(c, rank, 0, "", 0, piece, strlen(piece), cont, now,
	    0) == 0)
		return;
	collapse_flush_rank(c, rank);
	record(s, 0, &one, 1, piece, strlen(piece), 0);
}

TEST(collapse_a_progress_segment_or_long_line_does_not_stop_shared_lines)
{
	static char	 big[COLLAPSE_LINE_MAX + 2];
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(4, record, &s);
	uint32_t	 r;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	for (r = 0; r < 4; r++) {
		feed(c, &s, r, "step 1\n", 0, 10);
		feed(c, &s, r, "50%\r", 0, 10);
		feed(c, &s, r, "step 2\n", 0, 10);
		feed(c, &s, r, big, 0, 10);
		feed(c, &s, r, "step 3\n", 0, 10);
	}
	collapse_flush(c);
	CHECK(strstr(s.buf, "0 0-3 step 1\n") != NULL);
	CHECK(strstr(s.buf, "0 0-3 step 2\n") != NULL);
	CHECK(strstr(s.buf, "0 0-3 step 3\n") != NULL);
	CHECK_INT(s.groups, 3 + 4 + 4);
	collapse_free(c);
}

TEST(collapse_the_newline_of_a_split_crlf_stays_with_its_segment)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(2, record, &s);

	feed(c, &s, 0, "done\r", 0, 10);
	feed(c, &s, 0, "\n", 1, 10);
	feed(c, &s, 0, "next\n", 0, 10);
	/* A cont with no held segment before it is the owner's to write. */
	feed(c, &s, 1, "\n", 1, 10);
	collapse_flush(c);
	CHECK_STR(s.buf, "0 1 \n0 0 done\r\n0 0 next\n");
	collapse_free(c);
}

/* Ranks 0, 1, ... say line, one each gap ms, while t < until; returns how many did. */
static uint32_t
trickle(struct collapse *c, size_t nranks, uint64_t gap, uint64_t until,
    const char *line)
{
	uint64_t	t;
	uint32_t	r;

	for (r = 0, t = 0; r < nranks && t < until; r++, t += gap) {
		collapse_expire(c, t);
		CHECK_INT(say(c, r, 0, line, t), 0);
	}
	return r;
}

TEST(collapse_ranks_starting_seconds_apart_still_meet)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(8, record, &s);

	/* A rank every 250 ms: 1.75 s from the first to the last. */
	CHECK_INT(trickle(c, 8, 250, 10000, "config: lr 3e-4\n"), 8);
	CHECK_STR(s.buf, "0 0-7 config: lr 3e-4\n");
	collapse_free(c);
}

TEST(collapse_a_group_waits_at_most_hold_max)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(100, record, &s);
	uint32_t	 r;

	/* A rank every 200 ms never ends the wait; the cap does. */
	CHECK_INT(trickle(c, 100, 200, COLLAPSE_HOLD_MAX_MS, "slow\n"), 50);
	CHECK_INT(s.groups, 0);
	CHECK_INT(collapse_deadline(c), COLLAPSE_HOLD_MAX_MS);
	collapse_expire(c, COLLAPSE_HOLD_MAX_MS);
	CHECK_STR(s.buf, "0 0-49 slow\n");
	/* Ranks stalled before a line hold it COLLAPSE_BEHIND_MS... */
	say(c, 0, 0, "x\n", 20000);
	say(c, 1, 0, "x\n", 20000);
	CHECK_INT(collapse_deadline(c), 20000 + COLLAPSE_BEHIND_MS);
	collapse_expire(c, 20000 + COLLAPSE_BEHIND_MS);
	CHECK_STR(s.buf, "0 0-49 slow\n0 0-1 x\n");
	/* ...and ranks that ended, only the window. */
	say(c, 0, 0, "y\n", 30000);
	say(c, 1, 0, "y\n", 30000);
	for (r = 2; r < 100; r++)
		collapse_rank_done(c, r, 0);
	CHECK_INT(collapse_deadline(c), 30000 + COLLAPSE_WINDOW_MS);
	collapse_free(c);
}

/* Per rank and stream, the bytes that went out for it: what it said, if nothing was lost. */
struct per {
	char	 got[8][2][65536];
	size_t	 len[8][2];
	size_t	 full;		/* groups of every rank */
};

/* collapse_cb: appends the line to each of its ranks' streams. */
static void
per_record(void *arg, int stream, const uint32_t *ranks, size_t n,
    const char *line, size_t len, uint64_t stamp)
{
	struct per	*p = arg;
	size_t		 i;

	for (i = 0; i < n; i++) {
		if (p->len[ranks[i]][stream] + len <= sizeof(p->got[0][0])) {
			memcpy(p->got[ranks[i]][stream] +
			    p->len[ranks[i]][stream], line, len);
			p->len[ranks[i]][stream] += len;
		}
	}
	p->full += n == 8;
}

/* Says one piece of rank r as the owner would, and keeps it as what r said. */
static void
per_say(struct collapse *c, struct per *p, char want[][2][65536],
    size_t wlen[][2], uint32_t r, int st, const char *piece, int cont,
    uint64_t now)
{
	size_t	n = strlen(piece);

	memcpy(want[r][st] + wlen[r][st], piece, n);
	wlen[r][st] += n;
	if (collapse_add(c, r, st, "", 0, piece, n, cont, now, 0) == 0)
		return;
	collapse_flush_rank(c, r);
	per_record(p, st, &r, 1, piece, n, 0);
}

/*
 * 8 ranks say one script of 40 lines with repeats, each with lines, '\r'
 * segments (some finished by a split "\r\n") and long lines of its own
 * between, on both streams, in chunks interleaved at random. Without
 * windows ending (time stands still) every line of the script collapses
 * into one group of all 8; with time running, less does; either way each
 * rank's bytes on each stream come out whole and in order.
 */
TEST(collapse_random_interleavings_keep_every_rank_order)
{
	static const char *const texts[] = { "a\n", "b\n", "a\n", "=====\n",
	    "c\n", "\n" };
	static char	 want[8][2][65536], big[COLLAPSE_LINE_MAX + 100];
	static struct per p;
	size_t		 wlen[8][2], pos[8], i;
	unsigned	 seed, x, r, k, script[40], timed;
	char		 piece[COLLAPSE_LINE_MAX + 200];
	struct collapse	*c;
	uint64_t	 now;
	int		 st;

	memset(big, 'L', sizeof(big) - 1);
	for (seed = 1; seed <= 200; seed++) {
		x = seed * 2654435761u;
#define RND(n)	((x = x * 1103515245u + 12345u), (x >> 16) % (n))
		for (k = 0; k < 40; k++)
			script[k] = RND(6);
		memset(&p, 0, sizeof(p));
		memset(wlen, 0, sizeof(wlen));
		memset(pos, 0, sizeof(pos));
		timed = seed % 2;
		c = collapse_new(8, per_record, &p);
		now = 0;
		/* pos[r]: how far rank r is; 2 * 40 steps, odd ones its own. */
		for (;;) {
			for (i = 0; i < 8 && pos[i] >= 80; i++)
				;
			if (i == 8)
				break;
			do
				r = RND(8);
			while (pos[r] >= 80);
			for (k = RND(6) + 1; k > 0 && pos[r] < 80; k--) {
				st = 0;
				if (pos[r] % 2 == 0)
					snprintf(piece, sizeof(piece), "%s",
					    texts[script[pos[r] / 2]]);
				else if (RND(4) != 0)
					piece[0] = '\0';
				else if ((st = RND(3) == 0))
					snprintf(piece, sizeof(piece),
					    "warn %u\n", r);
				else if (RND(3) == 0)
					snprintf(piece, sizeof(piece),
					    "%u %zu%%\r", r, pos[r]);
				else
					snprintf(piece, sizeof(piece),
					    "%.*s %u\n", (int)RND(sizeof(big)),
					    big, r);
				pos[r]++;
				if (piece[0] == '\0')
					continue;
				per_say(c, &p, want, wlen, r, st, piece, 0, now);
				if (strchr(piece, '\r') != NULL && RND(2))
					per_say(c, &p, want, wlen, r, st, "\n",
					    1, now);
			}
			if (timed)
				collapse_expire(c, now += RND(200));
		}
		collapse_flush(c);
		collapse_free(c);
		for (r = 0; r < 8; r++)
			for (st = 0; st < 2; st++)
				CHECK(p.len[r][st] == wlen[r][st] &&
				    memcmp(p.got[r][st], want[r][st],
				    wlen[r][st]) == 0);
		if (!timed)
			CHECK_INT(p.full, 40);
#undef RND
	}
}

TEST(collapse_a_shared_line_waits_for_ranks_that_are_behind)
{
	struct seen	 s = { .len = 0 };
	struct collapse	*c = collapse_new(4, record, &s);

	/* Ranks 2 and 3 have said nothing yet: they start late. */
	say(c, 0, 0, "config\n", 0);
	say(c, 1, 0, "config\n", 0);
	CHECK_INT(collapse_deadline(c), COLLAPSE_BEHIND_MS);
	collapse_expire(c, 2000);
	say(c, 2, 0, "config\n", 2000);
	say(c, 3, 0, "config\n", 2000);
	CHECK_STR(s.buf, "0 0-3 config\n");
	/* A line of one rank waits for them in the stream's start only... */
	say(c, 0, 0, "warming up\n", 3000);
	CHECK_INT(collapse_deadline(c), COLLAPSE_BEHIND_MS);
	collapse_expire(c, COLLAPSE_BEHIND_MS);
	/* ...later, the window only: rank 0 alone logging must not lag. */
	say(c, 0, 0, "loss 1\n", 6000);
	CHECK_INT(collapse_deadline(c), 6000 + COLLAPSE_WINDOW_MS);
	collapse_expire(c, 6000 + COLLAPSE_WINDOW_MS);
	/* A rank that ended is not behind. */
	say(c, 0, 0, "bye\n", 7000);
	say(c, 1, 0, "bye\n", 7000);
	say(c, 2, 0, "bye\n", 7000);
	CHECK_INT(collapse_deadline(c), 7000 + COLLAPSE_BEHIND_MS);
	collapse_rank_done(c, 3, 0);
	CHECK_INT(collapse_deadline(c), 7000 + COLLAPSE_WINDOW_MS);
	collapse_free(c);
}
