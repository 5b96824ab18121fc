/* t_stackrep.c -- stack signatures, rank ranges and the merged report. */
#include <stdlib.h>
#include <string.h>

#include "agentproto.h"
#include "stackrep.h"
#include "test.h"

/* What the agent sends for a Python rank: eu-stack, then gdb's Python frames. */
static const char py_text[] =
"--- native (eu-stack)\n"
"PID 100 - process\n"
"TID 100:\n"
"#0  0x00007f clock_nanosleep@GLIBC_2.2.5\n"
"#1  0x00005b time_sleep.lto_priv.0\n"
"TID 101:\n"
"#0  0x00007f epoll_wait\n"
"\n"
"--- python (gdb)\n"
"[New LWP 101]\n"
"Thread (LWP 101):\n"
"Traceback (most recent call first):\n"
"  File \"/usr/lib/python3/threading.py\", line 320, in wait\n"
"Thread (LWP 100):\n"
"Traceback (most recent call first):\n"
"  File \"/home/u/train.py\", line 42, in train_step\n"
"  File \"/home/u/train.py\", line 80, in main\n";

TEST(stackrep_signature_python_main_thread)
{
	char	*s = stk_signature(py_text, 100);

	CHECK_STR(s, "train_step (train.py:42) <- main (train.py:80)");
	free(s);
}

TEST(stackrep_signature_native_eu_stack_and_gdb)
{
	char	*s = stk_signature("--- native (eu-stack)\nTID 7:\n"
	    "#0  0x1 spin_here\n#1  0x2 main\n", 7);
	char	*g = stk_signature("--- native (gdb)\n"
	    "Thread 1 (Thread 0x7f (LWP 7) \"spin\"):\n"
	    "#0  spin_here () at spin.c:12\n"
	    "#1  0x000055 in main (argc=1) at spin.c:40\n", 7);

	CHECK_STR(s, "spin_here <- main");
	CHECK_STR(g, "spin_here <- main");
	free(s);
	free(g);
}

TEST(stackrep_ranges)
{
	uint32_t	v[] = { 0, 1, 2, 4, 5, 6, 7, 9 };
	char		buf[64];

	stk_ranges(buf, sizeof(buf), v, 8);
	CHECK_STR(buf, "0-2,4-7,9");
	stk_ranges(buf, 8, v, 8);
	CHECK_STR(buf, "0-2,...");
}

TEST(stackrep_outliers_first)
{
	struct stk_report	*r = stk_report_new(4);
	char			**l;
	size_t			 n, i;

	for (i = 0; i < 4; i++)
		stk_report_rank(r, i, "h", 100, AP_STK_OK, "eu-stack",
		    i == 2 ? "--- native (x)\nTID 100:\n#0  0x1 nap\n" :
		    "--- native (x)\nTID 100:\n#0  0x1 spin\n");
	l = stk_report_lines(r, &n);
	CHECK(n == 2);
	CHECK_STR(l[0], "rank 2 on h, pid 100 (1): nap");
	CHECK_STR(l[1], "ranks 0-1,3 (3): spin");
	for (i = 0; i < n; i++)
		free(l[i]);
	free(l);
	stk_report_free(r);
}
