/* t_status.c -- the failed job's summary line and the prefix colours. */
#include <stdlib.h>
#include <string.h>

#include "launcher/job/summary.h"
#include "launcher/output/status.h"
#include "test.h"

TEST(summary_lines)
{
	struct summary	x;
	char		buf[256];

	memset(&x, 0, sizeof(x));
	CHECK(summary_line(&x, buf, sizeof(buf)) == NULL);
	x.cause = END_RANK;
	x.rank = 2;
	x.host = "gpu07";
	strcpy(x.how, "exited with code 3");
	x.started = 4;
	x.stopped = 3;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: rank 2 "
	    "on gpu07 exited with code 3 first; 3 other ranks were stopped");
	x.stopped = 1;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: rank 2 "
	    "on gpu07 exited with code 3 first; 1 other rank was stopped");
	x.stopped = 0;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: rank 2 "
	    "on gpu07 exited with code 3 first; no other rank was running");
	x.cause = END_TIMEOUT;
	x.timeout = 1.5;
	x.stopped = 8;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: timed "
	    "out after 1.5 s (--timeout); 8 ranks were stopped");
	x.cause = END_SIGNAL;
	x.signo = 2;
	x.stopped = 0;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job stopped by "
	    "SIGINT; no rank was running");
	x.cause = END_LOST;
	x.reached = 1;
	x.rank = 0;		/* no rank was running there */
	x.stopped = 4;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: lost the "
	    "agent on gpu07; 4 ranks were stopped");
	x.rank = 3;		/* three were, and went with it */
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: lost the "
	    "agent on gpu07 and its 3 running ranks; 4 other ranks were "
	    "stopped");
	x.stopped = 0;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: lost the "
	    "agent on gpu07 and its 3 running ranks; no other rank was "
	    "running");
	x.cause = END_START;
	x.rank = 1;
	x.timeout = 2;
	x.stopped = 3;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: 1 rank "
	    "never joined the rendezvous within 2 s (--start-timeout); 3 ranks "
	    "were stopped");
	x.cause = END_LOST;
	x.rank = 0;
	x.timeout = 1.5;
	x.stopped = 4;
	/* Ranks that never ran were never stopped either. */
	x.started = 0;
	x.stopped = 0;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: lost the "
	    "agent on gpu07; no rank had started");
	x.reached = 0;		/* an agent never reached was never lost */
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: never "
	    "reached the agent on gpu07 (see above); no rank had started");
	x.cause = END_TIMEOUT;
	CHECK_STR(summary_line(&x, buf, sizeof(buf)), "job failed: timed "
	    "out after 1.5 s (--timeout); no rank had started");
}

TEST(status_colors)
{
	CHECK_STR(status_rank_color(0), "\033[36m");
	CHECK_STR(status_rank_color(10), "\033[36m");
	CHECK(strcmp(status_rank_color(0), status_rank_color(1)) != 0);
	/* No red in the palette: it reads as an error. */
	CHECK(strstr(status_rank_color(3), "31m") == NULL);
	setenv("NO_COLOR", "1", 1);
	CHECK_INT(status_color_ok(1), 0);
	unsetenv("NO_COLOR");
}
