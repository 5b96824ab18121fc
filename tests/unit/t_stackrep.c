/* t_stackrep.c -- stack signatures, rank ranges and the merged report. */
#include <stdlib.h>
#include <string.h>

#include "proto/agentproto.h"
#include "launcher/stacks/stackcoll.h"
#include "launcher/stacks/stackpick.h"
#include "launcher/stacks/stackrep.h"
#include "launcher/stacks/stacksig.h"
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

/* A rank of two processes: bash in wait4, its Python child spinning. */
static const char wrap_text[] =
"== process 100, parent 99, state S: /bin/bash ./train.sh\n"
"--- native (eu-stack)\n"
"TID 100:\n"
"#0  0x00007f wait4\n"
"#1  0x00005b wait_for\n"
"#2  0x00005b main\n"
"\n"
"== process 101, parent 100, state R: python3 spin.py\n"
"--- native (eu-stack)\n"
"TID 101:\n"
"#0  0x00005b _PyEval_EvalFrameDefault\n"
"\n"
"--- python (gdb)\n"
"Thread (LWP 101):\n"
"Traceback (most recent call first):\n"
"  File \"/home/u/spin.py\", line 6, in spin\n";

/* True if stk_pick of text (rank pid) is want, of process who. */
static int
picks(const char *text, pid_t pid, const char *want, pid_t who)
{
	pid_t	 got;
	char	*s = stk_pick(text, pid, &got);
	int	 ok = s != NULL && strcmp(s, want) == 0 && got == who;

	free(s);
	return ok;
}

TEST(stackpick_wrapper_gives_way_to_its_child)
{
	CHECK(picks(wrap_text, 100, "spin (spin.py:6)", 101));
}

/*
 * A DataLoader: the parent reads its queue (a pipe), one worker sleeps in
 * Python, another has no stack (its capture failed): the sleeping worker.
 */
static const char loader_text[] =
"== process 200, parent 1, state S: python3 train.py\n"
"--- native (gdb)\n"
"Thread 1 (Thread 0x7f (LWP 200) \"python3\"):\n"
"#0  0x00007f in __GI___libc_read (fd=3) at read.c:26\n"
"#1  0x00005b in _Py_read ()\n"
"--- python (gdb)\n"
"Thread (LWP 200):\n"
"Traceback (most recent call first):\n"
"  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 103, in get\n"
"  File \"/home/u/train.py\", line 9, in main\n"
"== process 201, parent 200, state S: python3 train.py\n"
"--- native (eu-stack)\n"
"[cannot run eu-stack: Operation not permitted]\n"
"== process 202, parent 200, state S: python3 train.py\n"
"--- native (eu-stack)\n"
"TID 202:\n"
"#0  0x00007f clock_nanosleep@GLIBC_2.2.5\n"
"--- python (gdb)\n"
"Thread (LWP 202):\n"
"Traceback (most recent call first):\n"
"  File \"/home/u/data.py\", line 4, in __getitem__\n";

TEST(stackpick_reader_gives_way_to_a_stuck_worker)
{
	CHECK(picks(loader_text, 200, "__getitem__ (data.py:4)", 202));
}

/* Its workers idle in a read, the main process stuck elsewhere: the main one. */
TEST(stackpick_idle_workers_are_not_the_answer)
{
	static const char text[] =
	    "== process 300, parent 1, state S: python3 train.py\n"
	    "--- native (eu-stack)\nTID 300:\n#0  0x1 futex_wait\n"
	    "--- python (gdb)\nThread (LWP 300):\n"
	    "  File \"/home/u/train.py\", line 20, in all_reduce\n"
	    "== process 301, parent 300, state S: python3 train.py\n"
	    "--- native (eu-stack)\nTID 301:\n#0  0x1 __poll\n"
	    "--- python (gdb)\nThread (LWP 301):\n"
	    "  File \"/usr/lib/python3/queues.py\", line 113, in get\n";

	CHECK(picks(text, 300, "all_reduce (train.py:20)", 300));
}

/* Every process a wrapper, or one process without the lines: the rank's own. */
TEST(stackpick_falls_back_to_the_rank)
{
	static const char text[] =
	    "[the rank has 40 processes: the first 1 are captured]\n"
	    "== process 400, parent 1, state S: strace -f python3 x.py\n"
	    "--- native (eu-stack)\nTID 400:\n#0  0x1 wait4\n#1  0x2 main\n";

	static const char traced[] =
	    "== process 500, parent 1, state S: strace -f python3 x.py\n"
	    "--- native (eu-stack)\nTID 500:\n#0  0x1 wait4\n#1  0x2 main\n"
	    "== process 501, parent 500, state t: python3 x.py\n"
	    "[traced by pid 500 already]\n--- native (eu-stack)\n"
	    "eu-stack: Operation not permitted\n";

	CHECK(picks(text, 400, "wait4 <- main", 400));
	/* The stack of the one doing the work is missing: say so, not wait4. */
	CHECK(picks(traced, 500, "(python3 x.py: no stack, see the full "
	    "stacks)", 501));
	CHECK(picks(py_text, 100, "train_step (train.py:42) <- main "
	    "(train.py:80)", 100));
}

/* The report names the process the signature is of, and the file lists them all. */
TEST(stackpick_report_names_the_process)
{
	struct stk_report	*r = stk_report_new(1);
	char			**l;
	size_t			 n;

	stk_report_rank(r, 0, "h", 100, AP_STK_OK, "eu-stack+gdb-python",
	    wrap_text);
	l = stk_report_lines(r, &n);
	CHECK(n == 1);
	CHECK_STR(l[0], "rank 0 on h, pid 101 (1): spin (spin.py:6)");
	free(l[0]);
	free(l);
	stk_report_free(r);
}

/* A collective's frames are said as one (stackcoll.c), and only a collective's. */
TEST(stackcoll_says_a_collective_as_one)
{
	const char	*nat = "__futex_abstimed_wait_common <- "
	    "pthread_cond_wait <- c10d::Work::wait <- _PyEval_EvalFrameDefault";
	char		*s;

	/* torch 1.13: the main thread says nothing; gloo's loop thread does. */
	CHECK(stk_backend(nat, NULL) == NULL);
	CHECK_STR(stk_backend(nat, "TID 1:\n#0 0x1 __futex_abstimed_wait_common\n"
	    "TID 2:\n#0 0x2 epoll_wait\n#1 0x3 gloo::transport::tcp::Loop::run()\n"),
	    "gloo");
	/* Two backends named: which one it waits in is not known. */
	CHECK(stk_backend(nat, "gloo::transport::tcp::Loop::run\n"
	    "ncclProxyService\n") == NULL);
	CHECK_STR(stk_backend("c10d::ProcessGroupNCCL::WorkNCCL::wait",
	    "gloo::transport::tcp::Loop::run\n"), "NCCL");
	s = stk_collective("all_reduce (distributed_c10d.py:1536) <- "
	    "train_step (hang.py:21) <- <module> (hang.py:28)", nat, "gloo");
	CHECK_STR(s, "waiting in a collective (gloo allreduce) <- train_step "
	    "(hang.py:21) <- <module> (hang.py:28)");
	free(s);
	/* torch 2.x: a built-in called, and c10d_logger's wrapper around it. */
	s = stk_collective("wait <- barrier (distributed_c10d.py:4100) <- "
	    "wrapper (c10d_logger.py:83) <- main (t.py:9)",
	    "c10d::ProcessGroupNCCL::WorkNCCL::wait", "NCCL");
	CHECK_STR(s, "waiting in a collective (NCCL barrier) <- main (t.py:9)");
	free(s);
	/* No native stack to say the backend. */
	s = stk_collective("broadcast (distributed_c10d.py:1400)", "", NULL);
	CHECK_STR(s, "waiting in a collective (broadcast)");
	free(s);
	/* The user's own all_reduce, or torch.distributed outside a collective. */
	s = stk_collective("all_reduce (train.py:20) <- main (train.py:30)",
	    "gloo::allreduce", "gloo");
	CHECK_STR(s, "all_reduce (train.py:20) <- main (train.py:30)");
	free(s);
	s = stk_collective("is_initialized (distributed_c10d.py:700) <- f (a.py:1)",
	    "", NULL);
	CHECK_STR(s, "is_initialized (distributed_c10d.py:700) <- f (a.py:1)");
	free(s);
	/* Native: the outermost entry point, its callees dropped. */
	s = stk_collective("", "poll <- ompi_request_default_wait <- "
	    "MPI_Allreduce <- step <- main", NULL);
	CHECK_STR(s, "waiting in a collective (MPI allreduce) <- step <- main");
	free(s);
	s = stk_collective("", "nanosleep <- main", NULL);
	CHECK_STR(s, "nanosleep <- main");
	free(s);
}
