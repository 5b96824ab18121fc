/* t_crashsig.c -- a failed attempt's signature: what makes two failures the same. */
#include <stdlib.h>
#include <string.h>

#include "launcher/job/crashsig.h"
#include "test.h"

/* A rank's stderr: some noise, a traceback of three frames, noise after it. */
#define TB(line, msg)							\
	"step 10 loss 0.25\n"						\
	"Traceback (most recent call last):\n"				\
	"  File \"/home/u/run/train.py\", line 60, in <module>\n"	\
	"    main()\n"							\
	"  File \"/home/u/run/train.py\", line 50, in main\n"		\
	"    step(b)\n"							\
	"  File \"/home/u/run/model.py\", line " line ", in step\n"	\
	"    raise ValueError(\"bad\")\n"				\
	"    ^^^^^^^^^^^^^^^^^^^^^^^^\n"				\
	msg "\n"							\
	"[W1203 10:00:01.123 ProcessGroupNCCL.cpp:1168] Warning: pid 4242\n"

/* The signature of a rank that exited with code, from text. */
static struct crashsig
sig_of(uint32_t rank, int signaled, unsigned code, const char *text)
{
	struct crashsig	s;

	crashsig_make(&s, rank, signaled, code, text,
	    text != NULL ? strlen(text) : 0);
	return s;
}

TEST(crashsig_reads_the_exception_and_the_last_frames)
{
	struct crashsig	s = sig_of(1, 0, 3,
	    TB("42", "ValueError: bad batch 7 at 0x7f3a9c"));

	CHECK_STR(s.what, "rank 1: exit 3");
	CHECK_STR(s.tb, "ValueError: bad batch 7 at 0x7f3a9c at model.py:42 "
	    "in step");
	CHECK_STR(s.key, "exit 3; ValueError: bad batch N at N; "
	    "train.py:60 in <module>; train.py:50 in main; model.py:42 in step");
}

TEST(crashsig_same_frames_other_line_is_another_failure)
{
	struct crashsig	a = sig_of(1, 0, 1, TB("42", "ValueError: bad"));
	struct crashsig	b = sig_of(1, 0, 1, TB("42", "ValueError: bad"));
	struct crashsig	c = sig_of(1, 0, 1, TB("43", "ValueError: bad"));

	CHECK(crashsig_same(&a, &b));
	CHECK(!crashsig_same(&a, &c));
}

TEST(crashsig_numbers_in_the_message_do_not_count)
{
	struct crashsig	a = sig_of(0, 0, 1, TB("42", "torch.OutOfMemoryError: "
	    "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0; process "
	    "12345"));
	struct crashsig	b = sig_of(3, 0, 1, TB("42", "torch.OutOfMemoryError: "
	    "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 3; process "
	    "999"));

	/* Another rank, the same bug: the rank is said, not compared. */
	CHECK(crashsig_same(&a, &b));
	CHECK_STR(b.what, "rank 3: exit 1");
}

TEST(crashsig_another_exception_or_code_is_another_failure)
{
	struct crashsig	a = sig_of(1, 0, 1, TB("42", "ValueError: bad"));
	struct crashsig	b = sig_of(1, 0, 1, TB("42", "KeyError: 'bad'"));
	struct crashsig	c = sig_of(1, 0, 2, TB("42", "ValueError: bad"));

	CHECK(!crashsig_same(&a, &b));
	CHECK(!crashsig_same(&a, &c));
}

TEST(crashsig_without_a_traceback_the_code_or_signal)
{
	struct crashsig	a = sig_of(2, 0, 3, "loss 0.5\nbye\n");
	struct crashsig	b = sig_of(0, 0, 3, NULL);
	struct crashsig	k = sig_of(1, 1, 9, NULL);
	struct crashsig	x = sig_of(1, 0, 9, NULL);
	struct crashsig	none;

	CHECK_STR(a.key, "exit 3");
	CHECK_STR(a.tb, "");
	CHECK(crashsig_same(&a, &b));
	CHECK_STR(k.what, "rank 1: signal 9 (SIGKILL)");
	CHECK_STR(k.key, "signal 9");
	/* Killed by 9 is not exit 9. */
	CHECK(!crashsig_same(&k, &x));
	/* No signature (a lost host, a hang) is never the same as anything. */
	memset(&none, 0, sizeof(none));
	CHECK(!crashsig_same(&none, &none));
	CHECK(!crashsig_same(&none, &k));
}

TEST(crashsig_the_last_traceback_counts_prefixes_off)
{
	static const char chained[] =
	    "[rank1]: Traceback (most recent call last):\n"
	    "[rank1]:   File \"a.py\", line 3, in f\n"
	    "[rank1]: KeyError: 'x'\n"
	    "[rank1]: \n"
	    "[rank1]: During handling of the above exception, another "
	    "exception occurred:\n"
	    "[rank1]: \n"
	    "[rank1]: Traceback (most recent call last):\n"
	    "[rank1]:   File \"a.py\", line 5, in g\n"
	    "[rank1]:     f()\n"
	    "[rank1]: RuntimeError: wrapped\n";
	/* A progress bar redrawn with '\r' just before it. */
	static const char bar[] =
	    " 10%|#   |\r 20%|##  |\rTraceback (most recent call last):\r\n"
	    "  File \"b.py\", line 7\n"
	    "    x = = 1\n"
	    "SyntaxError: invalid syntax\n";
	struct crashsig	s = sig_of(1, 0, 1, chained);
	struct crashsig	t = sig_of(0, 0, 1, bar);

	CHECK_STR(s.key, "exit 1; RuntimeError: wrapped; a.py:5 in g");
	CHECK_STR(s.tb, "RuntimeError: wrapped at a.py:5 in g");
	CHECK_STR(t.key, "exit 1; SyntaxError: invalid syntax; b.py:7");
	CHECK_STR(t.tb, "SyntaxError: invalid syntax at b.py:7");
}

TEST(crashsig_cut_traceback_no_exception_line)
{
	static const char cut[] = "Traceback (most recent call last):\n"
	    "  File \"c.py\", line 9, in h\n    h()\n";
	struct crashsig	s = sig_of(0, 0, 1, cut);

	CHECK_STR(s.key, "exit 1; c.py:9 in h");
	CHECK_STR(s.tb, "at c.py:9 in h");
}

TEST(crashsig_tail_keeps_the_last_bytes_whole_lines)
{
	struct crashsig_tail	 t = { 0 };
	char			 line[100], *s;
	size_t			 n, i;

	CHECK(crashsig_tail_text(&t, &n) == NULL);
	crashsig_tail_add(&t, "ab\ncd", 5);
	s = crashsig_tail_text(&t, &n);
	CHECK_STR(s, "ab\ncd");
	CHECK_INT(n, 5);
	free(s);
	/* Past the bound in pieces that wrap: the oldest cut line goes. */
	for (i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "line %05zu of the rank's stderr\n", i);
		crashsig_tail_add(&t, line, strlen(line));
	}
	s = crashsig_tail_text(&t, &n);
	CHECK(n <= CRASHSIG_TAIL && n > CRASHSIG_TAIL - 100);
	CHECK_INT(strlen(s), n);
	CHECK(strncmp(s, "line ", 5) == 0);
	CHECK(strstr(s, "line 00999 of the rank's stderr\n") != NULL);
	CHECK(strstr(s, "line 00000 ") == NULL);
	free(s);
	/* One write bigger than the bound. */
	s = calloc(1, CRASHSIG_TAIL * 2);
	memset(s, 'x', CRASHSIG_TAIL * 2 - 1);
	s[10] = '\n';
	s[CRASHSIG_TAIL * 2 - 20] = '\n';
	crashsig_tail_add(&t, s, CRASHSIG_TAIL * 2);
	free(s);
	s = crashsig_tail_text(&t, &n);
	CHECK_INT(n, 19);
	free(s);
	crashsig_tail_free(&t);
	CHECK(t.buf == NULL);
}
