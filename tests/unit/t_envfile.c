/* t_envfile.c -- --env-file lines and what a --setup command prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/envfile.h"
#include "common/wire.h"
#include "common/err.h"
#include "test.h"

/* Parses s as the file "f.env"; returns the code, with *v and *n filled. */
static int
parse(const char *s, char ***v, size_t *n, struct dt_err *e)
{
	*v = NULL;
	*n = 0;
	dt_err_clear(e);
	return envfile_parse("f.env", s, strlen(s), v, n, e);
}

TEST(envfile_lines_comments_blanks_crlf)
{
	struct dt_err	 e;
	char		**v;
	size_t		 n;

	CHECK_INT(parse("# a comment\n\nA=1\n  # indented comment\n"
	    "B=\"x y\" # kept\r\nC=\nD=a=b\n\t\nE=last", &v, &n, &e), 0);
	CHECK_INT(n, 5);
	CHECK_STR(v[0], "A=1");
	/* Literal: quotes and what follows them stay, as Docker's files. */
	CHECK_STR(v[1], "B=\"x y\" # kept");
	CHECK_STR(v[2], "C=");
	CHECK_STR(v[3], "D=a=b");
	CHECK_STR(v[4], "E=last");
	CHECK(v[5] == NULL);
	dt_strv_free(v);

	CHECK_INT(parse("", &v, &n, &e), 0);
	CHECK_INT(n, 0);
	dt_strv_free(v);
}

TEST(envfile_errors_name_the_line_and_the_fix)
{
	struct dt_err	 e;
	char		**v, msg[600];
	size_t		 n;

	CHECK_INT(parse("A=1\nexport B=2\n", &v, &n, &e), DT_ERR_PARSE);
	CHECK_INT(n, 0);		/* nothing of a bad file is kept */
	dt_err_str(&e, msg, sizeof(msg));
	CHECK(strstr(msg, "f.env:2:") == msg);
	CHECK(strstr(msg, "drop \"export \"") != NULL);
	dt_strv_free(v);

	CHECK_INT(parse("A=1\n\nno equals here\n", &v, &n, &e), DT_ERR_PARSE);
	dt_err_str(&e, msg, sizeof(msg));
	CHECK(strstr(msg, "f.env:3:") == msg);
	CHECK(strstr(msg, "not NAME=VALUE") != NULL);
	dt_strv_free(v);

	CHECK_INT(parse("1X=2\n", &v, &n, &e), DT_ERR_PARSE);
	dt_err_str(&e, msg, sizeof(msg));
	CHECK(strstr(msg, "f.env:1:") == msg);
	CHECK(strstr(msg, "not a variable name") != NULL);
	dt_strv_free(v);

	CHECK_INT(parse("A B=2\n", &v, &n, &e), DT_ERR_PARSE);
	CHECK_INT(parse("A =2\n", &v, &n, &e), DT_ERR_PARSE);
	CHECK_INT(parse("=2\n", &v, &n, &e), DT_ERR_PARSE);
	CHECK_INT(envfile_parse("f.env", "A=1\0B=2\n", 8, &v, &n, &e),
	    DT_ERR_PARSE);
	dt_err_str(&e, msg, sizeof(msg));
	CHECK(strstr(msg, "NUL") != NULL);
	dt_strv_free(v);
}

TEST(envfile_load_reads_a_file_and_names_a_missing_one)
{
	struct dt_err	 e;
	char		 path[] = "/tmp/t_envfile.XXXXXX", msg[600];
	char		**v = NULL;
	size_t		 n = 0;
	int		 fd;

	CHECK((fd = mkstemp(path)) >= 0);
	CHECK(write(fd, "NCCL_DEBUG=INFO\n", 16) == 16);
	close(fd);
	CHECK_INT(envfile_load(path, &v, &n, &e), 0);
	CHECK_INT(n, 1);
	CHECK_STR(v[0], "NCCL_DEBUG=INFO");
	dt_strv_free(v);
	unlink(path);
	v = NULL;
	n = 0;
	CHECK(envfile_load(path, &v, &n, &e) == DT_ERR_IO);
	dt_err_str(&e, msg, sizeof(msg));
	CHECK(strncmp(msg, path, strlen(path)) == 0);
	CHECK(strstr(msg, "--env-file") != NULL);
}

/* Collects the other lines, joined by '|'. */
static void
other_cb(void *arg, const char *line, size_t len)
{
	char	*buf = arg;

	snprintf(buf + strlen(buf), 256 - strlen(buf), "%s%.*s",
	    buf[0] ? "|" : "", (int)len, line);
}

TEST(envfile_setup_output_splits_variables_from_the_rest)
{
	const char	 out[] = "Activating venv...\nPATH=/v/bin:/usr/bin\n\n"
	    "VIRTUAL_ENV=/v\nBASH_FUNC_f%%=() {  echo\n}\n1BAD=x\n  \n"
	    "LAST=no newline";
	char		**v = NULL, other[256] = "";
	size_t		 n = 0;

	CHECK_INT(envfile_setup_output(out, strlen(out), &v, &n, other_cb,
	    other), 0);
	CHECK_INT(n, 3);
	CHECK_STR(v[0], "PATH=/v/bin:/usr/bin");
	CHECK_STR(v[1], "VIRTUAL_ENV=/v");
	CHECK_STR(v[2], "LAST=no newline");
	CHECK_STR(other, "Activating venv...|BASH_FUNC_f%%=() {  echo|}|1BAD=x");
	dt_strv_free(v);

	/* Only the other lines: no vector asked for, none touched. */
	other[0] = '\0';
	CHECK_INT(envfile_setup_output("warn\r\nA=1\n", 10, NULL, NULL,
	    other_cb, other), 0);
	CHECK_STR(other, "warn|A=1");
}

/* envfile_tail of s, as a string. */
static const char *
tail(const char *s, size_t max, size_t lines)
{
	static char	 buf[256];
	const char	*p;
	size_t		 n;

	p = envfile_tail(s, strlen(s), max, lines, &n);
	snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
	return buf;
}

TEST(envfile_tail_whole_lines_that_fit)
{
	CHECK_STR(tail("", 10, 1), "");
	CHECK_STR(tail("\n\n", 10, 1), "");
	CHECK_STR(tail("one\ntwo\n\n", 100, 1), "two");
	CHECK_STR(tail("one\ntwo", 100, 1), "two");
	CHECK_STR(tail("one\ntwo\nthree\n", 100, 2), "two\nthree");
	CHECK_STR(tail("one\ntwo\nthree\n", 100, (size_t)-1),
	    "one\ntwo\nthree");
	/* By bytes: the lines that fit whole, never a cut one first. */
	CHECK_STR(tail("one\ntwo\nthree\n", 9, (size_t)-1), "two\nthree");
	CHECK_STR(tail("one\ntwo\nthree\n", 8, (size_t)-1), "three");
	/* A last line longer than max: its last max bytes. */
	CHECK_STR(tail("one\nabcdefgh\n", 3, (size_t)-1), "fgh");
	CHECK_STR(tail("abcdefgh", 3, 1), "fgh");
}
