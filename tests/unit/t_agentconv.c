/*
 * t_agentconv.c -- whole conversations with a real agent (agent_run in a
 * child, over a socketpair): what it must refuse, and what it must take.
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "proto/agentproto.h"
#include "common/err.h"
#include "test.h"
#include "t_agent.h"
#include "common/wire.h"


static int	has_frame(struct dt_wbuf *, uint8_t);

/*
 * Runs a real agent (agent_run in a child) on one end of a socketpair,
 * writes in[0..n) to it, closes our writing side once out holds a frame
 * of type until (0: at once), and collects all it says into out. Returns
 * the child's wait status.
 */
static int
agent_talk_until(const uint8_t *in, size_t n, struct dt_wbuf *out,
    uint8_t until)
{
	struct pollfd	 pfd;
	uint8_t		 buf[65536];
	ssize_t		 k;
	size_t		 off = 0;
	pid_t		 pid;
	int		 sv[2], status = -1, shut = 0;

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	if ((pid = fork()) == 0) {
		close(sv[0]);
		_exit(agent_run(sv[1], sv[1], 0));
	}
	close(sv[1]);
	pfd.fd = sv[0];
	for (;;) {
		pfd.events = POLLIN | (off < n ? POLLOUT : 0);
		/* Only a safety net: a hung agent fails, it does not hang us. */
		if (poll(&pfd, 1, 30000) <= 0) {
			t_fail(__FILE__, __LINE__, "the agent hung");
			kill(pid, SIGKILL);
			break;
		}
		if ((pfd.revents & POLLOUT) && off < n) {
			k = write(sv[0], in + off, n - off);
			if (k > 0)
				off += k;
			if (k < 0)
				off = n;	/* it stopped listening */
		}
		if (pfd.revents & (POLLIN | POLLHUP)) {
			if ((k = read(sv[0], buf, sizeof(buf))) <= 0)
				break;
			dt_wbuf_put(out, buf, k);
		}
		if (off == n && !shut && (until == 0 || has_frame(out, until)))
			shut = shutdown(sv[0], SHUT_WR) == 0;
	}
	close(sv[0]);
	waitpid(pid, &status, 0);
	return status;
}

/* As agent_talk_until, closing our writing side at once. */
static int
agent_talk(const uint8_t *in, size_t n, struct dt_wbuf *out)
{
	return agent_talk_until(in, n, out, 0);
}

/* True if the frames in b hold an ERROR whose text contains what. */
static int
has_error(struct dt_wbuf *b, const char *what)
{
	const uint8_t	*pl;
	size_t		 off, plen, used;
	uint8_t		 type;
	struct ap_error	 e;
	int		 found = 0;

	for (off = 0; dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
	    &type, &pl, &plen, &used) == 0; off += used) {
		if (type != AP_ERROR || ap_get_error(pl, plen, &e) != 0)
			continue;
		if (strstr(e.msg, what) != NULL)
			found = 1;
		ap_error_free(&e);
	}
	return found;
}

/* True if the frames in b hold one of type t. */
static int
has_frame(struct dt_wbuf *b, uint8_t t)
{
	const uint8_t	*pl;
	size_t		 off, plen, used;
	uint8_t		 type;

	for (off = 0; dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
	    &type, &pl, &plen, &used) == 0; off += used)
		if (type == t)
			return 1;
	return 0;
}

TEST(agent_refuses_a_job_of_4g_ranks)
{
	struct dt_wbuf	 in, out;
	struct ap_rank	 r = { 0 };
	char		*argv[] = { "true", NULL };
	int		 i, status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	/* nranks + 1 wraps to 0 in 32 bits: RANKs then wrote past calloc(0). */
	t_job_claiming(&in, UINT32_MAX);
	r.argv = argv;
	r.argc = 1;
	for (i = 0; i < 64; i++) {
		r.rank = i;
		ap_put_rank(&in, &r);
	}
	ap_put_empty(&in, AP_PREPARE);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_frame(&out, AP_HELLO));
	CHECK(has_error(&out, "protocol error: malformed JOB message "
	    "(while waiting for the job)"));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/* Appends a job of one rank running true, with env and setup, and PREPARE. */
static void
put_setup_job(struct dt_wbuf *in, const char *id, char **env, size_t nenv,
    const char *setup)
{
	struct ap_job	 j = { 0 };
	struct ap_rank	 r = { 0 };
	char		*argv[] = { "true", NULL };

	j.version = AP_VERSION;
	j.job_id = (char *)id;
	j.cwd = "";
	j.kill_grace_ms = BIG_GRACE_MS;
	j.nranks = 1;
	j.env = env;
	j.nenv = nenv;
	j.setup = (char *)setup;
	CHECK_INT(ap_put_job(in, &j), 0);
	r.argv = argv;
	r.argc = 1;
	CHECK_INT(ap_put_rank(in, &r), 0);
	CHECK_INT(ap_put_empty(in, AP_PREPARE), 0);
}

/* The same without a setup. */
static void
put_true_job(struct dt_wbuf *in, const char *id, char **env, size_t nenv)
{
	put_setup_job(in, id, env, nenv, "");
}

/*
 * The table's refusals name the phase: a second PREPARE while the first
 * is done, and a RANK once the ranks are prepared.
 */
TEST(agent_refuses_a_frame_naming_its_phase)
{
	struct dt_wbuf	 in, out;
	struct ap_rank	 r = { 0 };
	char		*argv[] = { "true", NULL };
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	put_true_job(&in, "twice", NULL, 0);
	CHECK_INT(ap_put_empty(&in, AP_PREPARE), 0);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_frame(&out, AP_PREPARED));
	CHECK(has_error(&out, "protocol error: PREPARE message out of "
	    "place (while prepared)"));
	CHECK(!has_frame(&out, AP_STARTED));
	dt_wbuf_reset(&in);
	dt_wbuf_reset(&out);
	put_true_job(&in, "late", NULL, 0);
	r.rank = 1;
	r.argv = argv;
	r.argc = 1;
	CHECK_INT(ap_put_rank(&in, &r), 0);
	CHECK_INT(ap_put_empty(&in, AP_START), 0);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_error(&out, "protocol error: RANK message out of "
	    "place (while prepared)"));
	CHECK(!has_frame(&out, AP_STARTED));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 70);
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/*
 * A frame the link itself cannot take (a PACKED one whose block is not
 * LZ4, one over the frame limit): ERROR 70 saying so, and exit 70, as
 * for any protocol error, not a silent exit 0.
 */
TEST(agent_answers_a_bad_packed_frame_with_error_70)
{
	struct dt_wbuf	 in, out;
	struct ap_error	 e;
	const uint8_t	*pl;
	size_t		 st, off, plen, used;
	uint8_t		 type;
	int		 status, i, code = -1;

	for (i = 0; i < 2; i++) {
		dt_wbuf_init(&in);
		dt_wbuf_init(&out);
		if (i == 0) {
			st = dt_frame_begin(&in, AP_PACKED);
			dt_wbuf_u32(&in, 100);
			dt_wbuf_put(&in, "not an lz4 block", 16);
			CHECK_INT(dt_frame_end(&in, st, AP_FRAME_MAX), 0);
		} else
			dt_wbuf_u32(&in, AP_FRAME_MAX + 1);
		status = agent_talk(in.p, in.len, &out);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 70);
		CHECK(has_error(&out, "protocol error: "));
		for (off = 0; dt_frame_parse(out.p + off, out.len - off,
		    AP_FRAME_MAX, &type, &pl, &plen, &used) == 0; off += used)
			if (type == AP_ERROR && ap_get_error(pl, plen, &e) == 0) {
				code = (int)e.code;
				ap_error_free(&e);
			}
		CHECK_INT(code, 70);
		dt_wbuf_free(&in);
		dt_wbuf_free(&out);
	}
}

TEST(agent_takes_a_job_in_parts)
{
	struct dt_wbuf	 in, out;
	char		**env = t_strs(10, 120 * 1024, 1);
	int		  status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	put_true_job(&in, "parts", env, 10);
	CHECK(in.len > AP_FRAME_MAX);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_frame(&out, AP_PREPARED));
	CHECK(!has_frame(&out, AP_ERROR));
	dt_strv_free(env);
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

TEST(agent_takes_ports_once_before_the_job)
{
	struct dt_wbuf	 in, out;
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	ap_put_ports(&in, 2);
	ap_put_ports(&in, 2);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_frame(&out, AP_PORTLIST));
	CHECK(has_error(&out, "protocol error: PORTS message out of "
	    "place (while waiting for the job)"));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/* The answers of the first CHECKED in b (NULL if there is none); free with dt_strv_free. */
static char **
checked_answers(struct dt_wbuf *b, size_t *n)
{
	const uint8_t		*pl;
	size_t			 off, plen, used;
	uint8_t			 type;
	struct ap_checked	 k;

	for (off = 0; dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
	    &type, &pl, &plen, &used) == 0; off += used) {
		if (type != AP_CHECKED || ap_get_checked(pl, plen, &k) != 0)
			continue;
		*n = k.nkv;
		return k.kv;
	}
	return NULL;
}

/* True if one of the n answers in kv starts with prefix. */
static int
has_answer(char **kv, size_t n, const char *prefix)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (strncmp(kv[i], prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

TEST(agent_answers_a_check_before_the_job_only)
{
	struct dt_wbuf	 in, out;
	struct ap_check	 c = { AP_CHK_GATHER, AP_CHK_FAST | AP_CHK_LISTEN, 0,
			    "", "127.0.0.1", "no-such-command-xyz", "", NULL, 0,
			    NULL, 0, 0, NULL };
	struct ap_job	 j = { 0 };
	char		**kv;
	size_t		 n = 0;
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	CHECK_INT(ap_put_check(&in, &c), 0);
	j.version = AP_VERSION;
	j.job_id = "chk";
	j.cwd = "";
	j.nranks = 1;
	CHECK_INT(ap_put_job(&in, &j), 0);
	CHECK_INT(ap_put_check(&in, &c), 0);		/* after JOB: refused */
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	kv = checked_answers(&out, &n);
	CHECK(kv != NULL);
	CHECK(has_answer(kv, n, "proto=13"));
	CHECK(has_answer(kv, n, "iface=lo"));
	CHECK(has_answer(kv, n, "addr=127.0.0.1"));
	CHECK(has_answer(kv, n, "listen=127.0.0.1:"));
	CHECK(has_answer(kv, n, "cmd_err=no-such-command-xyz: command not "
	    "found in PATH"));
	CHECK(!has_answer(kv, n, "python"));		/* FAST: no probe */
	CHECK(has_error(&out, "protocol error: CHECK message out of "
	    "place (while receiving the job)"));
	dt_strv_free(kv);
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/* How many frames of type t b holds. */
static int
count_frames(struct dt_wbuf *b, uint8_t t)
{
	const uint8_t	*pl;
	size_t		 off, plen, used;
	uint8_t		 type;
	int		 n = 0;

	for (off = 0; dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
	    &type, &pl, &plen, &used) == 0; off += used)
		n += type == t;
	return n;
}

TEST(agent_stays_after_done_for_the_next_attempt)
{
	struct dt_wbuf	 in, out;
	struct ap_stop	 st = { 15, 0 };
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	/* Stopped before a job: DONE, then it waits; STOP again is nothing. */
	ap_put_stop(&in, &st);
	ap_put_stop(&in, &st);
	ap_put_signal(&in, 10);
	ap_put_empty(&in, AP_AGAIN);
	/* A fresh conversation: PORTS once more, then a whole job. */
	ap_put_ports(&in, 1);
	ap_put_stop(&in, &st);
	ap_put_empty(&in, AP_AGAIN);
	put_true_job(&in, "again", NULL, 0);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK_INT(count_frames(&out, AP_HELLO), 3);
	CHECK_INT(count_frames(&out, AP_DONE), 2);
	CHECK_INT(count_frames(&out, AP_PORTLIST), 1);
	CHECK_INT(count_frames(&out, AP_PREPARED), 1);
	CHECK(!has_frame(&out, AP_ERROR));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

TEST(agent_between_attempts_takes_no_job_before_again)
{
	struct dt_wbuf	 in, out;
	struct ap_stop	 st = { 15, 0 };
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	ap_put_stop(&in, &st);
	t_job_claiming(&in, 1);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_frame(&out, AP_DONE));
	CHECK(has_error(&out, "protocol error: JOB message out of "
	    "place (while idle)"));
	/* AGAIN outside the wait is refused too. */
	dt_wbuf_reset(&in);
	dt_wbuf_reset(&out);
	ap_put_empty(&in, AP_AGAIN);
	status = agent_talk(in.p, in.len, &out);
	CHECK(WIFEXITED(status));
	CHECK(has_error(&out, "protocol error: AGAIN message out of "
	    "place (while waiting for the job)"));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/*
 * A JOB of another protocol version ends the agent (finishing): what dtrun
 * sent after it (its RANKs, PREPARE, a STOP) crossed that and is stale,
 * but a frame no dtrun sends is still judged a protocol error, by the same
 * table (while finishing), not dropped unheard.
 */
TEST(agent_finishing_judges_frames_by_the_table)
{
	struct dt_wbuf	 in, out;
	struct ap_stop	 st = { 15, 0 };
	struct ap_hello	 h = { AP_VERSION, "nobody", 1, 1 };
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	put_true_job(&in, "other", NULL, 0);
	/* JOB's first field, its version, says the next protocol. */
	CHECK_INT(in.p[DT_FRAME_HDR - 1], AP_JOB);
	in.p[DT_FRAME_HDR + 3]++;
	CHECK_INT(ap_put_stop(&in, &st), 0);
	CHECK_INT(ap_put_hello(&in, &h), 0);
	status = agent_talk(in.p, in.len, &out);
	CHECK(has_error(&out, "agent speaks protocol"));
	CHECK(!has_error(&out, "RANK message"));
	CHECK(!has_error(&out, "STOP message"));
	CHECK(has_error(&out, "protocol error: HELLO message out of place "
	    "(while finishing)"));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 70);
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/* The place of the first frame of type t among b's frames; -1: none. */
static int
frame_index(struct dt_wbuf *b, uint8_t t)
{
	const uint8_t	*pl;
	size_t		 off, plen, used;
	uint8_t		 type;
	int		 i = 0;

	for (off = 0; dt_frame_parse(b->p + off, b->len - off, AP_FRAME_MAX,
	    &type, &pl, &plen, &used) == 0; off += used, i++)
		if (type == t)
			return i;
	return -1;
}

/*
 * One host: START comes right after PREPARE, here while a setup still
 * runs. The agent keeps it and starts once it has said PREPARED; a
 * second START is out of place.
 */
TEST(agent_starts_once_prepared_when_start_comes_with_prepare)
{
	struct dt_wbuf	 in, out;
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	put_setup_job(&in, "early", NULL, 0, "sleep 0.2");
	CHECK_INT(ap_put_empty(&in, AP_START), 0);
	status = agent_talk_until(in.p, in.len, &out, AP_EXIT);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(!has_frame(&out, AP_ERROR));
	CHECK(frame_index(&out, AP_PREPARED) >= 0);
	CHECK(frame_index(&out, AP_PREPARED) < frame_index(&out, AP_STARTED));
	CHECK_INT(count_frames(&out, AP_EXIT), 1);
	CHECK(has_frame(&out, AP_DONE));
	dt_wbuf_reset(&in);
	dt_wbuf_reset(&out);
	put_setup_job(&in, "twice", NULL, 0, "sleep 0.2");
	CHECK_INT(ap_put_empty(&in, AP_START), 0);
	CHECK_INT(ap_put_empty(&in, AP_START), 0);
	status = agent_talk(in.p, in.len, &out);
	CHECK(has_error(&out, "protocol error: START message out of place "
	    "(while preparing)"));
	CHECK(!has_frame(&out, AP_STARTED));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}

/* STOP after such a START, before the setup ends: nothing starts. */
TEST(agent_starts_nothing_when_stop_follows_an_early_start)
{
	struct dt_wbuf	 in, out;
	struct ap_stop	 st = { 15, 0 };
	int		 status;

	dt_wbuf_init(&in);
	dt_wbuf_init(&out);
	put_setup_job(&in, "stopped", NULL, 0, "sleep 30");
	CHECK_INT(ap_put_empty(&in, AP_START), 0);
	ap_put_stop(&in, &st);
	status = agent_talk_until(in.p, in.len, &out, AP_DONE);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(!has_frame(&out, AP_ERROR));
	CHECK(!has_frame(&out, AP_PREPARED));
	CHECK(!has_frame(&out, AP_STARTED));
	CHECK(has_frame(&out, AP_DONE));
	dt_wbuf_free(&in);
	dt_wbuf_free(&out);
}
