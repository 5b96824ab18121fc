/*
 * t_peerwait.c -- who the others wait for, from where the ranks waited
 * (watch/peerwait.c), on made-up seconds of samples as agents send them:
 * a rank that waits on its peers far less than the others is named once,
 * with the reason its own samples give (compute, its input, a short CPU);
 * ranks that wait alike (balanced, or all equally slow) are not, nor a
 * gap below the threshold, nor a suspect seen in one judgement only; a
 * rank its agent cannot look at is said once; forgotten windows start over.
 */
#include <stdio.h>
#include <string.h>

#include "launcher/watch/peerwait.h"
#include "proto/agentproto.h"
#include "test.h"

/* One rank's second: 20 samples, peer/input of them (%), CPU and delay %. */
struct pw_shape {
	int	peer, input, cpu, delay;
};

/* secs seconds of 4 ranks shaped s[0..3]; a fifth of them jitter by 5%. */
static void
pw_play(struct peerwait *pw, int secs, const struct pw_shape *s)
{
	struct ap_wait	v[4];
	long		off;
	int		t, r, j;

	for (t = 0; t < secs; t++) {
		for (r = 0; r < 4; r++) {
			j = (t + r) % 5 == 0 ? 1 : 0;
			memset(&v[r], 0, sizeof(v[r]));
			v[r].rank = (uint32_t)r;
			v[r].wall_ms = 1000;
			v[r].samples = 20;
			v[r].peer = (uint16_t)(s[r].peer * 20 / 100 + j);
			v[r].input = (uint16_t)(s[r].input * 20 / 100);
			v[r].work = (uint16_t)(20 - v[r].peer - v[r].input);
			v[r].cpu_ms = (uint32_t)s[r].cpu * 10;
			v[r].delay_ms = (uint32_t)s[r].delay * 10;
			v[r].what = s[r].input > 0 ? "poll on a pipe" : "";
		}
		peerwait_take(pw, v, 4, &off);
	}
}

/* Judges once a simulated 2 s for secs seconds: the verdicts, into *v. */
static int
pw_run(struct peerwait *pw, int secs, const struct pw_shape *s, double t,
    struct peerwait_verdict *v)
{
	int	i, named = 0;

	for (i = 0; i < secs; i += 2) {
		pw_play(pw, 2, s);
		named += peerwait_judge(pw, t, v);
	}
	return named;
}

TEST(peerwait_names_the_rank_that_waits_least)
{
	struct peerwait		*pw = peerwait_new(4);
	struct peerwait_verdict	 v;
	struct peerwait_now	 w;
	struct pw_shape		 s[4] = { { 30, 0, 60, 10 }, { 30, 0, 60, 10 },
				    { 30, 0, 60, 10 }, { 5, 0, 90, 10 } };

	/* Ten seconds (200 samples) before any judgement. */
	CHECK_INT(pw_run(pw, 8, s, 0.1, &v), 0);
	CHECK_INT(pw_run(pw, 20, s, 0.1, &v), 1);
	CHECK_INT(v.rank, 3);
	CHECK_INT(v.others, 3);
	CHECK(v.their_wait > 0.29 && v.their_wait < 0.36);
	CHECK(v.its_wait < 0.1);
	CHECK_INT(v.why, PW_COMPUTE);
	CHECK(v.cpu > 0.89 && v.cpu < 0.91);
	CHECK(v.peer <= 2);
	/* Once. */
	CHECK_INT(pw_run(pw, 40, s, 0.1, &v), 0);
	peerwait_peek(pw, 3, &w);
	CHECK(w.known && w.named && !w.suspect && w.wait < 0.1);
	peerwait_peek(pw, 0, &w);
	CHECK(w.known && !w.named && w.wait > 0.29);
	peerwait_free(pw);
}

/*
 * 30 s of 4 ranks shaped s at the default threshold: the one verdict, its
 * input's name kept past the watch (v->what points into it).
 */
static int
pw_verdict(const struct pw_shape *s, struct peerwait_verdict *v)
{
	static char	 what[AP_WAIT_WHAT_MAX];
	struct peerwait	*pw = peerwait_new(4);
	int		 named = pw_run(pw, 30, s, 0.1, v);

	snprintf(what, sizeof(what), "%s", named && v->what ? v->what : "");
	v->what = what;
	peerwait_free(pw);
	return named;
}

TEST(peerwait_says_why_input_or_cpu)
{
	struct peerwait_verdict	 v;
	struct pw_shape		 in[4] = { { 30, 0, 60, 10 }, { 5, 40, 40, 10 },
				    { 30, 0, 60, 10 }, { 30, 0, 60, 10 } };
	struct pw_shape		 cpu[4] = { { 30, 0, 60, 10 }, { 30, 0, 60, 10 },
				    { 5, 0, 45, 50 }, { 30, 0, 60, 10 } };

	CHECK_INT(pw_verdict(in, &v), 1);
	CHECK_INT(v.rank, 1);
	CHECK_INT(v.why, PW_INPUT);
	CHECK_STR(v.what, "poll on a pipe");
	CHECK_INT(pw_verdict(cpu, &v), 1);
	CHECK_INT(v.rank, 2);
	CHECK_INT(v.why, PW_CPU);
	CHECK(v.delay > 0.49 && v.delay < 0.51);
}

/*
 * Ranks on 2 cores beside two busy loops, measured: every rank queues,
 * the one beside 4 hogs only a little more of its runnable time (75%
 * against 70%), yet that makes each of its steps 1.2 times as long, near
 * all of its lag (the others wait 21% of each step). Short of CPU.
 */
TEST(peerwait_short_of_cpu_on_a_busy_host)
{
	struct peerwait_verdict	 v;
	struct pw_shape		 s[4] = { { 21, 2, 21, 49 }, { 21, 2, 21, 49 },
				    { 21, 2, 21, 49 }, { 1, 2, 23, 68 } };

	CHECK_INT(pw_verdict(s, &v), 1);
	CHECK_INT(v.rank, 3);
	CHECK_INT(v.why, PW_CPU);
}

/*
 * 8 ranks on 2 cores, measured: the slow rank queues more of the wall
 * clock (57% against 50%) only because it computes longer; of its
 * runnable time it runs more than the others (32% against 21%). It
 * computes; it is not short of CPU.
 */
TEST(peerwait_queueing_longer_for_longer_work_is_compute)
{
	struct peerwait_verdict	 v;
	struct pw_shape		 s[4] = { { 30, 0, 14, 50 }, { 30, 0, 14, 50 },
				    { 5, 0, 27, 57 }, { 30, 0, 14, 50 } };

	CHECK_INT(pw_verdict(s, &v), 1);
	CHECK_INT(v.rank, 2);
	CHECK_INT(v.why, PW_COMPUTE);
	CHECK(v.cpu > 0.26 && v.cpu < 0.28);
}

TEST(peerwait_names_nobody_when_they_wait_alike)
{
	struct peerwait		*pw = peerwait_new(4);
	struct peerwait_verdict	 v;
	struct peerwait_now	 w;
	/* Balanced; then all slow (nobody waits); then a gap under 10%. */
	struct pw_shape		 bal[4] = { { 30, 0, 60, 10 }, { 25, 0, 60, 10 },
				    { 30, 0, 60, 10 }, { 35, 0, 60, 10 } };
	struct pw_shape		 slow[4] = { { 5, 0, 90, 10 }, { 5, 0, 90, 10 },
				    { 5, 0, 90, 10 }, { 5, 0, 90, 10 } };
	struct pw_shape		 small[4] = { { 30, 0, 60, 10 }, { 30, 0, 60, 10 },
				    { 25, 0, 60, 10 }, { 30, 0, 60, 10 } };

	CHECK_INT(pw_run(pw, 120, bal, 0.1, &v), 0);
	peerwait_peek(pw, 1, &w);
	CHECK(w.known && !w.named && !w.suspect);
	CHECK_INT(pw_run(pw, 120, slow, 0.1, &v), 0);
	CHECK_INT(pw_run(pw, 120, small, 0.1, &v), 0);
	/* The same gap is a straggler at a 5% threshold. */
	CHECK_INT(pw_run(pw, 30, small, 0.05, &v), 1);
	CHECK_INT(v.rank, 2);
	peerwait_free(pw);
}

TEST(peerwait_one_noisy_judgement_names_nobody)
{
	struct peerwait		*pw = peerwait_new(4);
	struct peerwait_verdict	 v;
	struct peerwait_now	 w;
	struct pw_shape		 a[4] = { { 30, 0, 60, 10 }, { 30, 0, 60, 10 },
				    { 30, 0, 60, 10 }, { 5, 0, 90, 10 } };
	struct pw_shape		 b[4] = { { 5, 0, 90, 10 }, { 30, 0, 60, 10 },
				    { 30, 0, 60, 10 }, { 30, 0, 60, 10 } };
	int			 i;

	/* The suspect changes every judgement: nobody is sustained. */
	pw_play(pw, 20, a);
	for (i = 0; i < 10; i++) {
		peerwait_forget(pw);
		pw_play(pw, 12, i % 2 ? a : b);
		CHECK_INT(peerwait_judge(pw, 0.1, &v), 0);
	}
	peerwait_peek(pw, i % 2 ? 0 : 3, &w);
	CHECK(w.suspect && !w.named);
	/* Forgotten: no share until new samples come. */
	peerwait_forget(pw);
	peerwait_peek(pw, 0, &w);
	CHECK(!w.known && !w.suspect);
	peerwait_free(pw);
}

TEST(peerwait_says_once_a_rank_it_cannot_see)
{
	struct peerwait	*pw = peerwait_new(4);
	struct ap_wait	 v[2];
	long		 off;

	memset(v, 0, sizeof(v));
	v[0].rank = 1;
	v[0].what = "cannot read /proc/42/syscall: Permission denied";
	v[1].rank = 7;			/* not a rank: ignored */
	v[1].samples = 20;
	v[1].what = "";
	peerwait_take(pw, v, 2, &off);
	CHECK_INT(off, 0);
	peerwait_take(pw, v, 2, &off);
	CHECK_INT(off, -1);
	peerwait_free(pw);
}
