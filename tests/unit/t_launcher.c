/* t_launcher.c -- prefix formatter, line splitter and option parsing. */
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "common/err.h"
#include "launcher/output/lines.h"
#include "launcher/cli/prefix.h"
#include "util/strv.h"
#include "test.h"

TEST(prefix_render_placeholders)
{
	struct prefix_fields f = { 12, 3, 2, "gpu01", "err", NULL };
	char	buf[64];
	size_t	n;

	n = prefix_render("[%r|%l|%h|%s|%a|%%] ", &f, buf, sizeof(buf));
	CHECK_STR(buf, "[12|3|gpu01|err|2|%] ");
	CHECK_INT(n, strlen(buf));
	n = prefix_render("", &f, buf, sizeof(buf));
	CHECK_INT(n, 0);
	CHECK_STR(buf, "");
	/* Truncation reports the needed length and stays terminated. */
	f.host = "abcdef";
	n = prefix_render("%h-%h", &f, buf, 5);
	CHECK_INT(n, 13);
	CHECK_STR(buf, "abcd");
	f.rank = 7;
	CHECK_INT(prefix_render("%r", &f, NULL, 0), 1);
	/* A line several ranks said (--collapse): their ranges for %r. */
	f.ranks = "0-3,5";
	prefix_render("[%r] %%r", &f, buf, sizeof(buf));
	CHECK_STR(buf, "[0-3,5] %r");
}

TEST(prefix_per_rank_fields)
{
	CHECK_INT(prefix_per_rank("[%r] "), 0);
	CHECK_INT(prefix_per_rank("%r|%s|%a %%h "), 0);
	CHECK_INT(prefix_per_rank("%h:%r "), 1);
	CHECK_INT(prefix_per_rank("[%l]"), 1);
	CHECK_INT(prefix_per_rank(""), 0);
}

TEST(prefix_check_errors)
{
	struct dt_err	e;

	CHECK_INT(prefix_check("[%r] ", &e), 0);
	CHECK_INT(prefix_check("%r%l%h%s%a%%", &e), 0);
	CHECK_INT(prefix_check("", &e), 0);
	CHECK_INT(prefix_check("%x", &e), DT_ERR_PARSE);
	CHECK(strstr(e.msg, "unknown placeholder %x") != NULL);
	CHECK_INT(prefix_check("abc%", &e), DT_ERR_PARSE);
	CHECK(strstr(e.msg, "lone %") != NULL);
}

struct collect {
	char	buf[4096];
	size_t	len;
	int	lines;
};

/* Records a piece and a '|' after it; a piece that continues the one before starts with '+'. */
static void
collect_cb(void *arg, const char *a, size_t alen, const char *b, size_t blen,
    int cont)
{
	struct collect	*c = arg;

	if (cont)
		c->buf[c->len++] = '+';
	memcpy(c->buf + c->len, a, alen);
	c->len += alen;
	memcpy(c->buf + c->len, b, blen);
	c->len += blen;
	c->buf[c->len++] = '|';
	c->buf[c->len] = '\0';
	c->lines++;
}

TEST(lines_split_across_chunks)
{
	struct lines	l = { 0 };
	struct collect	c = { .len = 0 };

	lines_feed(&l, "ab", 2, collect_cb, &c);
	CHECK_INT(c.lines, 0);
	lines_feed(&l, "c\nde\n\nf", 7, collect_cb, &c);
	CHECK_STR(c.buf, "abc\n|de\n|\n|");
	lines_feed(&l, "g", 1, collect_cb, &c);
	lines_flush(&l, collect_cb, &c);
	CHECK_STR(c.buf, "abc\n|de\n|\n|fg\n|");
	lines_flush(&l, collect_cb, &c);	/* nothing left */
	CHECK_INT(c.lines, 4);
	lines_free(&l);
}

static size_t	big_lines, big_bytes;

/* Counts pieces and their bytes. */
static void
count_cb(void *arg, const char *a, size_t alen, const char *b, size_t blen,
    int cont)
{
	big_lines++;
	big_bytes += alen + blen;
}

TEST(lines_cut_at_max)
{
	struct lines	 l = { 0 };
	size_t		 chunk = 1 << 20, i;
	char		*p = malloc(chunk);

	memset(p, 'x', chunk);
	big_lines = big_bytes = 0;
	for (i = 0; i < 9; i++)
		lines_feed(&l, p, chunk, count_cb, NULL);
	/* 9 MiB without a newline: one cut at 8 MiB, 1 MiB kept. */
	CHECK_INT(big_lines, 1);
	CHECK_INT(big_bytes, LINES_MAX + 1);
	CHECK_INT(l.len, 9 * chunk - LINES_MAX);
	lines_free(&l);
	free(p);
}

/* Feeds the string s to l, collecting into c. */
static void
feed(struct lines *l, struct collect *c, const char *s)
{
	lines_feed(l, s, strlen(s), collect_cb, c);
}

TEST(lines_cr_segment_goes_on_at_once)
{
	struct lines	l = { 0 };
	struct collect	c = { .len = 0 };

	/* A progress bar's update is not held back until a newline. */
	feed(&l, &c, "5");
	feed(&l, &c, "0%\r");
	CHECK_STR(c.buf, "50%\r|");
	feed(&l, &c, "\r60%\r70");
	CHECK_STR(c.buf, "50%\r|\r|60%\r|");
	feed(&l, &c, "%\rdone\n");
	CHECK_STR(c.buf, "50%\r|\r|60%\r|70%\r|done\n|");
	CHECK_INT(l.len, 0);
	lines_free(&l);
}

TEST(lines_crlf_is_one_line_end)
{
	struct lines	l = { 0 };
	struct collect	c = { .len = 0 };

	feed(&l, &c, "a\r\nb\r\n");
	CHECK_STR(c.buf, "a\r\n|b\r\n|");
	/* Split between chunks: the '\n' finishes the line, with no prefix. */
	c.len = 0;
	feed(&l, &c, "x\r");
	feed(&l, &c, "\ny\r");
	feed(&l, &c, "z\n");
	CHECK_STR(c.buf, "x\r|+\n|y\r|z\n|");
	c.len = 0;
	feed(&l, &c, "\n");
	CHECK_STR(c.buf, "\n|");
	lines_free(&l);
}

TEST(lines_pool_counts_what_is_held)
{
	struct lines_pool pool = { 0 };
	struct lines	  a = { .pool = &pool }, b = { .pool = &pool };
	struct collect	  c = { .len = 0 };
	char		  big[100000];

	lines_feed(&a, "abc", 3, collect_cb, &c);
	CHECK(pool.held >= 3);
	CHECK_INT(pool.held, a.cap);
	memset(big, 'x', sizeof(big));
	lines_feed(&b, big, sizeof(big), count_cb, NULL);
	CHECK_INT(pool.held, a.cap + b.cap);
	CHECK(b.cap >= sizeof(big));
	/* A big buffer is given back once its line is done. */
	lines_feed(&b, "\n", 1, count_cb, NULL);
	CHECK_INT(b.cap, 0);
	CHECK_INT(pool.held, a.cap);
	/* Flushing cuts the line and frees the buffer. */
	lines_flush(&a, collect_cb, &c);
	CHECK_INT(pool.held, 0);
	CHECK_STR(c.buf, "abc\n|");
	lines_free(&a);
	lines_free(&b);
	CHECK_INT(pool.held, 0);
}

/* Runs cli_parse on a NULL-terminated word list. */
static int
parse(struct opts *o, struct dt_err *e, const char **words)
{
	int	argc = 0;

	while (words[argc] != NULL)
		argc++;
	return cli_parse(argc, (char **)words, o, e);
}

TEST(cli_defaults_and_command)
{
	struct opts	 o;
	struct dt_err	 e;
	const char	*a[] = { "dtrun", "python", "-u", "train.py", NULL };

	CHECK_INT(parse(&o, &e, a), CLI_RUN);
	CHECK_INT(o.np, 0);
	CHECK_STR(o.prefix, "[%r] ");
	CHECK(o.kill_grace == 5);
	CHECK_INT(o.ncmd, 3);
	CHECK_STR(o.cmd[0], "python");
	CHECK_STR(o.cmd[1], "-u");	/* options after the command are its own */
	cli_free(&o);
}

TEST(cli_options)
{
	struct opts	 o;
	struct dt_err	 e;
	const char	*a[] = { "dtrun", "-n", "8", "--nproc-per-node=4",
	    "--launcher", "ssh", "--prefix", "", "--output-dir", "logs",
	    "--timestamp", "-x", "A=1", "--export", "B=2", "--kill-grace",
	    "0.5", "--timeout", "30", "--dry-run", "-vv", "--", "-cmd", NULL };

	CHECK_INT(parse(&o, &e, a), CLI_RUN);
	CHECK_INT(o.np, 8);
	CHECK_INT(o.nproc_per_node, 4);
	CHECK_INT(o.launcher, LAUNCH_SSH);
	CHECK_STR(o.prefix, "");
	CHECK_STR(o.output_dir, "logs");
	CHECK_INT(o.timestamp, 1);
	CHECK_INT(o.nexports, 2);
	CHECK_STR(o.exports[1], "B=2");
	CHECK(o.kill_grace == 0.5);
	CHECK(o.timeout == 30);
	CHECK_INT(o.dry_run, 1);
	CHECK_INT(o.verbose, 2);
	CHECK_STR(o.cmd[0], "-cmd");
	cli_free(&o);
}

TEST(cli_help_version)
{
	struct opts	 o;
	struct dt_err	 e;
	const char	*h[] = { "dtrun", "--help", NULL };
	const char	*v[] = { "dtrun", "-V", NULL };

	CHECK_INT(parse(&o, &e, h), CLI_HELP);
	CHECK_INT(parse(&o, &e, v), CLI_VERSION);
}

/* Expects words to fail with a message containing want. */
static void
expect_error(const char **words, const char *want)
{
	struct opts	o;
	struct dt_err	e;
	int		rc = parse(&o, &e, words);

	CHECK(rc < 0);
	if (strstr(e.msg, want) == NULL)
		t_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\"",
		    e.msg, want);
}

TEST(cli_errors)
{
	const char *a1[] = { "dtrun", "-n", "0", "x", NULL };
	const char *a2[] = { "dtrun", "-n", "2x", "x", NULL };
	const char *a3[] = { "dtrun", "-n", "2", NULL };
	const char *a4[] = { "dtrun", "--bogus", "x", NULL };
	const char *a5[] = { "dtrun", "--launcher", "pbs", "x", NULL };
	const char *a6[] = { "dtrun", "--timeout", "-1", "x", NULL };
	const char *a7[] = { "dtrun", "-x", "1BAD=2", "x", NULL };
	const char *a8[] = { "dtrun", "--prefix", "%z", "x", NULL };
	const char *a9[] = { "dtrun", "-n", NULL };
	const char *a10[] = { "dtrun", "--timeout", "0", "x", NULL };
	const char *a11[] = { "dtrun", "", NULL };

	expect_error(a1, "need at least 1");
	expect_error(a2, "not a number");
	expect_error(a3, "no command given");
	expect_error(a4, "unknown option --bogus");
	expect_error(a5, "use local, ssh or slurm");
	expect_error(a6, "want seconds");
	expect_error(a7, "not a variable name");
	expect_error(a8, "unknown placeholder %z");
	expect_error(a9, "-n needs a value");
	expect_error(a10, "above zero");
	expect_error(a11, "empty string");
}

TEST(cli_heartbeat_timeout)
{
	const char	*ok[] = { "dtrun", "--heartbeat-timeout", "3", "x", NULL };
	const char	*off[] = { "dtrun", "--heartbeat-timeout", "0", "x", NULL };
	const char	*def[] = { "dtrun", "x", NULL };
	const char	*low[] = { "dtrun", "--heartbeat-timeout", "0.5", "x",
			    NULL };
	const char	*high[] = { "dtrun", "--heartbeat-timeout", "86401",
			    "x", NULL };
	const char	*neg[] = { "dtrun", "--heartbeat-timeout", "-3", "x",
			    NULL };
	struct opts	 o;
	struct dt_err	 e;

	CHECK_INT(cli_parse(4, (char **)ok, &o, &e), CLI_RUN);
	CHECK(o.heartbeat_timeout == 3 && o.given[OPT_HEARTBEAT_TIMEOUT]);
	cli_free(&o);
	CHECK_INT(cli_parse(4, (char **)off, &o, &e), CLI_RUN);
	CHECK(o.heartbeat_timeout == 0);
	cli_free(&o);
	CHECK_INT(cli_parse(2, (char **)def, &o, &e), CLI_RUN);
	CHECK(o.heartbeat_timeout == CLI_HEARTBEAT_DEFAULT &&
	    o.heartbeat_timeout <= 15 && !o.given[OPT_HEARTBEAT_TIMEOUT]);
	cli_free(&o);
	expect_error(low, "want 1 to 86400 seconds");
	expect_error(high, "want 1 to 86400 seconds");
	expect_error(neg, "want seconds");
}

TEST(cli_export_patterns)
{
	const char	*a[] = { "dtrun", "-x", "TLX_*", "-x", "TLY_?", "-x",
			    "TLZ_*", "-x", "TLX_A=over", "x", NULL };
	const char	*bad[] = { "dtrun", "-x", "TL X*", "x", NULL };
	struct opts	 o;
	struct dt_err	 e;
	size_t		 i;
	int		 a_seen = 0, b_seen = 0;

	setenv("TLX_A", "1", 1);
	setenv("TLX_B", "two words", 1);
	setenv("TLY_1", "y", 1);
	setenv("TLY_12", "no", 1);
	CHECK_INT(parse(&o, &e, a), CLI_RUN);
	/* TLX_A, TLX_B, TLY_1; TLZ_* matches nothing and adds nothing. */
	CHECK_INT(o.nexports, 4);
	for (i = 0; i < 3; i++) {
		a_seen += strcmp(o.exports[i], "TLX_A=1") == 0;
		b_seen += strcmp(o.exports[i], "TLX_B=two words") == 0;
		CHECK(strcmp(o.exports[i], "TLY_12=no") != 0);
	}
	CHECK(a_seen == 1 && b_seen == 1);
	CHECK_STR(o.exports[3], "TLX_A=over");	/* later wins, on the host */
	cli_free(&o);
	expect_error(bad, "not a variable name or a pattern");
	unsetenv("TLX_A");
	unsetenv("TLX_B");
	unsetenv("TLY_1");
	unsetenv("TLY_12");
}

TEST(cli_forward_signals)
{
	const char	*def[] = { "dtrun", "x", NULL };
	const char	*two[] = { "dtrun", "--forward-signals", "sigusr2,WINCH",
			    "--setup", "echo A=1", "x", NULL };
	const char	*none[] = { "dtrun", "--forward-signals", "none", "x",
			    NULL };
	const char	*term[] = { "dtrun", "--forward-signals", "USR1,TERM",
			    "x", NULL };
	const char	*kill9[] = { "dtrun", "--forward-signals", "KILL", "x",
			    NULL };
	const char	*bogus[] = { "dtrun", "--forward-signals", "USR3", "x",
			    NULL };
	const char	*nosetup[] = { "dtrun", "--setup", "", "x", NULL };
	struct opts	 o;
	struct dt_err	 e;
	char		 buf[64];

	CHECK_INT(parse(&o, &e, def), CLI_RUN);
	CHECK(o.fwd_signals == CLI_FWD_DEFAULT && !o.given[OPT_FORWARD_SIGNALS]);
	CHECK_STR(cli_signals_str(o.fwd_signals, buf, sizeof(buf)),
	    "USR1,USR2");
	CHECK(o.setup == NULL);
	cli_free(&o);
	CHECK_INT(parse(&o, &e, two), CLI_RUN);
	CHECK(o.fwd_signals == ((1ULL << SIGUSR2) | (1ULL << SIGWINCH)));
	CHECK_STR(o.setup, "echo A=1");
	cli_free(&o);
	CHECK_INT(parse(&o, &e, none), CLI_RUN);
	CHECK(o.fwd_signals == 0 && o.given[OPT_FORWARD_SIGNALS]);
	CHECK_STR(cli_signals_str(o.fwd_signals, buf, sizeof(buf)), "none");
	cli_free(&o);
	expect_error(term, "stops the job");
	expect_error(kill9, "cannot pass it on");
	expect_error(bogus, "not a signal name");
	expect_error(nosetup, "--setup needs a command");
}

TEST(shell_quote_words)
{
	char	*q;

	q = shell_quote("a b");
	CHECK_STR(q, "'a b'");
	free(q);
	q = shell_quote("it's");
	CHECK_STR(q, "'it'\\''s'");
	free(q);
	q = shell_quote("");
	CHECK_STR(q, "''");
	free(q);
}
