/* t_record.c -- job records: what dtrun-kill accepts, and whose directory. */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "host/record.h"
#include "test.h"

/* Parses text as a record file; returns record_parse's result, why in why. */
static int
parse(const char *text, struct record_info *ri, char *why, size_t len)
{
	FILE	*f = fmemopen((void *)text, strlen(text), "r");
	int	 rc;

	if (f == NULL)
		return -2;
	rc = record_parse(f, ri, why, len);
	fclose(f);
	return rc;
}

TEST(record_parse_good)
{
	struct record_info	ri;
	char			why[256];

	memset(&ri, 0, sizeof(ri));
	CHECK_INT(parse("dtrun-job 1\njob 6b-4c\nhost h\nagent 100 5000\n"
	    "keeper 99 4999\nrank 0 101 5001\nrank 1 102 5002\nfuture x\n",
	    &ri, why, sizeof(why)), 0);
	CHECK_STR(ri.job, "6b-4c");
	CHECK_INT(ri.agent, 100);
	CHECK_INT(ri.agent_start, 5000);
	CHECK_INT(ri.keeper, 99);
	CHECK_INT(ri.keeper_start, 4999);
	CHECK_INT(ri.nranks, 2);
	CHECK_INT(ri.pid[1], 102);
	CHECK_INT(ri.start[1], 5002);
	/* Parsing again starts afresh; a record without keeper is older. */
	CHECK_INT(parse("dtrun-job 1\njob j\nagent 7 8\n", &ri, why,
	    sizeof(why)), 0);
	CHECK_INT(ri.keeper, 0);
	CHECK_INT(ri.nranks, 0);
	record_info_free(&ri);
}

/* Each of these would have dtrun-kill hit init, a group, or everything. */
TEST(record_parse_refuses_unsafe_pids)
{
	static const struct {
		const char	*text;
		const char	*why;
	} bad[] = {
		{ "dtrun-job 1\njob j\nagent 1 77\n", "line 3 names pid 1" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 1 77\n",
		    "line 4 names pid 1 (init)" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 0 77\n",
		    "line 4 names pid 0" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 -5 77\n",
		    "line 4 names a negative pid" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 -1 77\n",
		    "line 4 names a negative pid" },
		{ "dtrun-job 1\njob j\nagent 100 5\nkeeper 0 3\n",
		    "line 4 names pid 0" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 101 0\n",
		    "line 4 has no start time" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 101 -3\n",
		    "line 4 has no start time" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 101\n",
		    "line 4 has no pid" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank 0 99999999999 5\n",
		    "line 4 names a pid out of range" },
		{ "dtrun-job 1\njob j\nagent 100 5\nrank x 101 5\n",
		    "line 4 has no rank" },
		{ "dtrun-job 1\njob j\nagent 100 5\nagent 101 5\n",
		    "line 4 is a second agent line" },
		{ "dtrun-job 1\njob j\nrank 0 101 5\n", "no agent line" },
		{ "dtrun-job 1\nagent 100 5\n", "no job line" },
		{ "job j\nagent 100 5\n", "not a dtrun job record" },
		{ "", "empty" },
	};
	struct record_info	ri;
	char			why[256];
	size_t			i;

	memset(&ri, 0, sizeof(ri));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(parse(bad[i].text, &ri, why, sizeof(why)), -1);
		if (strstr(why, bad[i].why) == NULL)
			t_fail(__FILE__, __LINE__, "case %zu: \"%s\", want "
			    "\"%s\"", i, why, bad[i].why);
	}
	/* The job is known even when the rest is refused: it is reported. */
	CHECK_INT(parse("dtrun-job 1\njob jj\nagent 1 5\n", &ri, why,
	    sizeof(why)), -1);
	CHECK_STR(ri.job, "jj");
	record_info_free(&ri);
}

TEST(record_dir_check)
{
	struct stat	st;
	struct dt_err	e;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | 0700;
	st.st_uid = 1000;
	CHECK_INT(record_dir_check("/tmp/dtrun-1000", &st, 1000, &e), 0);
	/* Someone else made it first: refused, and said how to get out. */
	st.st_uid = 1001;
	CHECK_INT(record_dir_check("/tmp/dtrun-1000", &st, 1000, &e),
	    DT_ERR_INVAL);
	CHECK(strstr(e.msg, "/tmp/dtrun-1000 belongs to uid 1001, not to you "
	    "(uid 1000)") != NULL);
	CHECK(strstr(e.msg, "XDG_RUNTIME_DIR") != NULL);
	st.st_uid = 1000;
	st.st_mode = S_IFDIR | 0755;
	CHECK_INT(record_dir_check("/r/dtrun", &st, 1000, &e),
	    DT_ERR_INVAL);
	CHECK(strstr(e.msg, "/r/dtrun has mode 0755, not 0700") != NULL);
	CHECK(strstr(e.msg, "chmod 700 /r/dtrun") != NULL);
	st.st_mode = S_IFDIR | 0710;
	CHECK_INT(record_dir_check("/r/dtrun", &st, 1000, &e),
	    DT_ERR_INVAL);
	st.st_mode = S_IFDIR | 01700;	/* sticky: no one else's bits */
	CHECK_INT(record_dir_check("/r/dtrun", &st, 1000, &e), 0);
	st.st_mode = S_IFLNK | 0777;
	CHECK_INT(record_dir_check("/r/dtrun", &st, 1000, &e),
	    DT_ERR_INVAL);
	CHECK(strstr(e.msg, "not a directory but a symlink") != NULL);
	st.st_mode = S_IFREG | 0700;
	CHECK_INT(record_dir_check("/r/dtrun", &st, 1000, &e),
	    DT_ERR_INVAL);
}

/* Writes text to DIR/name. */
static void
put(const char *dir, const char *name, const char *text)
{
	char	path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK((f = fopen(path, "w")) != NULL);
	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* True if DIR/name exists. */
static int
there(const char *dir, const char *name)
{
	char		path[512];
	struct stat	st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

TEST(record_remove_dead_takes_a_dead_agents_record_and_error_files_alone)
{
	char		 top[] = "/tmp/t_record.XXXXXX", cmd[64];
	const char	*old = getenv("XDG_RUNTIME_DIR"), *dir;
	char		 saved[512] = "";

	CHECK(mkdtemp(top) != NULL);
	if (old != NULL)
		snprintf(saved, sizeof(saved), "%s", old);
	setenv("XDG_RUNTIME_DIR", top, 1);
	CHECK_INT(record_dir(&dir, NULL), 0);
	if (dir == NULL)
		return;
	/* Agent 100 without a keeper (dtrun kept it), dead. */
	put(dir, "6b-4c.100", "dtrun-job 1\njob 6b-4c\nhost h\n"
	    "agent 100 5000\nrank 0 101 5001\n");
	put(dir, "6b-4c.100.rank.0.json", "{}");
	put(dir, "6b-4c.100.rank.12.json", "{}");
	/* Another job whose agent, with a keeper, had pid 100 too: not ours. */
	put(dir, "7a-1d.100", "dtrun-job 1\njob 7a-1d\nhost h\n"
	    "agent 100 6000\nkeeper 99 5999\n");
	/* Other agents' files, one a longer pid that starts the same. */
	put(dir, "6b-4c.1000", "dtrun-job 1\njob 6b-4c\nhost h\n"
	    "agent 1000 7000\n");
	put(dir, "6b-4c.1000.rank.0.json", "{}");
	put(dir, "8e-2f.10.rank.0.json", "{}");
	record_remove_dead(100, 0);
	CHECK(!there(dir, "6b-4c.100"));
	CHECK(!there(dir, "6b-4c.100.rank.0.json"));
	CHECK(!there(dir, "6b-4c.100.rank.12.json"));
	CHECK(there(dir, "7a-1d.100"));
	CHECK(there(dir, "6b-4c.1000"));
	CHECK(there(dir, "6b-4c.1000.rank.0.json"));
	CHECK(there(dir, "8e-2f.10.rank.0.json"));
	/* The keeper's own: its agent's record names it. */
	record_remove_dead(100, 99);
	CHECK(!there(dir, "7a-1d.100"));
	CHECK(there(dir, "6b-4c.1000"));
	if (saved[0] != '\0')
		setenv("XDG_RUNTIME_DIR", saved, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
	CHECK_INT(system(cmd), 0);
}
