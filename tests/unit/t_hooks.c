/*
 * t_hooks.c -- the features' hooks (job/hooks.c): opened in the list's
 * order, drained and closed the other way; a feature that sits out an
 * attempt is not called; the hooks that answer take the first taker's.
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "launcher/job/hooksint.h"
#include "test.h"

static char	hooks_log[256];

static void
hlog(const char *what, void *st)
{
	size_t	n = strlen(hooks_log);

	snprintf(hooks_log + n, sizeof(hooks_log) - n, "%s%s ", what,
	    (const char *)st);
}

static void *
a_job_open(struct event_base *b, const struct opts *o, const char *id)
{
	return (void *)"kept";
}

static void
a_job_close(void *kept)
{
	hlog("jobclose:", kept);
}

static int
a_open(const struct job_view *v, void *kept, void **state, struct dt_err *e)
{
	*state = (void *)"A";
	hlog("open", *state);
	return 0;
}

static int
b_open(const struct job_view *v, void *kept, void **state, struct dt_err *e)
{
	/* Sits out when the view says attempt 1. */
	if (v->attempt == 0)
		*state = (void *)"B";
	hlog("openB", "");
	return 0;
}

static int
c_open(const struct job_view *v, void *kept, void **state, struct dt_err *e)
{
	*state = (void *)"C";
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "c refuses");
}

static void
f_drain(void *st)
{
	hlog("drain", st);
}

static void
f_close(void *st)
{
	hlog("close", st);
}

static void
f_started(void *st)
{
	hlog("started", st);
}

static void
f_output(void *st, size_t rank, int stream, const uint8_t *p, size_t n)
{
	hlog("out", st);
}

static int
f_checked(void *st, struct job_host *h, const uint8_t *p, size_t n)
{
	hlog("checked", st);
	return 7;
}

static int
f_reaped(void *st, pid_t pid, int status)
{
	hlog("reaped", st);
	return pid == 42;
}

static const struct job_feature fa = {
	.name = "a", .job_open = a_job_open, .job_close = a_job_close,
	.note = "a is on", .open = a_open, .drain = f_drain,
	.close = f_close, .started = f_started, .output = f_output,
	.reaped = f_reaped,
};
static const struct job_feature fb = {
	.name = "b", .open = b_open, .drain = f_drain, .close = f_close,
	.started = f_started, .checked = f_checked, .reaped = f_reaped,
};
static const struct job_feature fc = {
	.name = "c", .open = c_open, .close = f_close,
};

TEST(hooks_order_and_sitting_out)
{
	const struct job_feature *const list[] = { &fa, &fb, NULL };
	struct features	*fs = features_new(list, NULL, NULL, "id");
	struct job_view	 v;
	struct hooks	 hk;
	struct dt_err	 e;
	char		 note[64];

	memset(&v, 0, sizeof(v));
	hooks_log[0] = '\0';
	CHECK_INT(hooks_open(&hk, fs, &v, &e), 0);
	HOOKS_CALL(&hk, started);
	HOOKS_CALL(&hk, output, 0, 1, (const uint8_t *)"x", 1);
	CHECK_INT(hooks_checked(&hk, NULL, NULL, 0, -1), 7);
	/* 42 is a's: b is not asked. */
	CHECK_INT(hooks_reaped(&hk, 42, 0), 1);
	CHECK_INT(hooks_reaped(&hk, 43, 0), 0);
	CHECK(hooks_state(&hk, &fb) != NULL);
	CHECK_STR(hooks_note(&hk, note, sizeof(note)), "; a is on");
	hooks_drain(&hk);
	hooks_close(&hk);
	CHECK_STR(hooks_log, "openA openB startedA startedB outA checkedB "
	    "reapedA reapedA reapedB drainB drainA closeB closeA ");

	/* Attempt 1: b sits out, and no hook of it is called. */
	hooks_log[0] = '\0';
	v.attempt = 1;
	CHECK_INT(hooks_open(&hk, fs, &v, &e), 0);
	CHECK(hooks_state(&hk, &fb) == NULL);
	HOOKS_CALL(&hk, started);
	CHECK_INT(hooks_checked(&hk, NULL, NULL, 0, -1), -1);
	hooks_drain(&hk);
	hooks_close(&hk);
	CHECK_STR(hooks_log, "openA openB startedA drainA closeA ");
	hooks_log[0] = '\0';
	features_free(fs);
	CHECK_STR(hooks_log, "jobclose:kept ");
}

TEST(hooks_a_refusal_stops_the_opening_and_closes_what_opened)
{
	const struct job_feature *const list[] = { &fa, &fc, &fb, NULL };
	struct features	*fs = features_new(list, NULL, NULL, "id");
	struct job_view	 v;
	struct hooks	 hk;
	struct dt_err	 e;

	memset(&v, 0, sizeof(v));
	hooks_log[0] = '\0';
	CHECK(hooks_open(&hk, fs, &v, &e) != 0);
	CHECK(strstr(e.msg, "c refuses") != NULL);
	hooks_drain(&hk);
	hooks_close(&hk);
	/* b never opened; c, which set its state, is still closed. */
	CHECK_STR(hooks_log, "openA drainA closeC closeA ");
	features_free(fs);
}
