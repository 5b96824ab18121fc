/* t_rootcause.c -- reading torch's error file and torchrun's Root Cause block. */
#include <stdlib.h>
#include <string.h>

#include "proto/agentproto.h"
#include "launcher/job/rootcause.h"
#include "util/strv.h"
#include "test.h"

/* What torch's @record writes (json.dump), with a quote and \u escapes. */
static const char rec_json[] =
"{\"message\": {\"message\": \"ValueError: \\\"x\\\" \\u00e9\", \"extraInfo\": "
"{\"py_callstack\": \"Traceback (most recent call last):\\n  File \\\"t.py\\\""
", line 1, in <module>\\nValueError: x\\n\", \"timestamp\": \"1700000000\"}}}";

TEST(rootcause_json_keys_nested_and_decoded)
{
	size_t	 n = strlen(rec_json);
	char	*v;

	v = rootcause_json_get(rec_json, n, "py_callstack");
	CHECK_STR(v, "Traceback (most recent call last):\n  File \"t.py\", "
	    "line 1, in <module>\nValueError: x\n");
	free(v);
	/* The first "message" is the outer one, an object: no string there. */
	v = rootcause_json_get(rec_json, n, "message");
	CHECK(v == NULL);
	free(v);
	v = rootcause_json_get(rec_json, n, "timestamp");
	CHECK_STR(v, "1700000000");
	free(v);
}

TEST(rootcause_json_strings_are_never_keys)
{
	static const char j[] = "{\"a\": \"\\\"py_callstack\\\": \", "
	    "\"b\": \"py_callstack\", \"timestamp\": 17}";
	char	*v;

	CHECK(rootcause_json_get(j, strlen(j), "py_callstack") == NULL);
	v = rootcause_json_get(j, strlen(j), "timestamp");
	CHECK_STR(v, "17");
	free(v);
	/* Cut inside a string: nothing, and no read past the end. */
	CHECK(rootcause_json_get(j, 9, "a") == NULL);
	CHECK(rootcause_json_get("\"py_callstack\": \"ab\\", 19,
	    "py_callstack") == NULL);
}

TEST(rootcause_block_as_torchrun)
{
	struct ap_errfile	 f = { 2, "/r/rank.2.json", 5000,
				    (const uint8_t *)rec_json, 0 };
	struct rootcause_who	 w = { 2, 0, "b", 42, -9, "train.py" };
	struct rootcause	*rc;
	struct strv		 l = { 0 };
	size_t			 i;
	int			 tb = -1;

	f.len = strlen(rec_json);
	rc = rootcause_new(&f);
	rootcause_lines(rc, &w, &l);
	CHECK(l.n >= 12);
	CHECK_STR(l.v[1], "train.py FAILED");
	CHECK_STR(l.v[3], "Root Cause (first observed failure):");
	CHECK_STR(l.v[6], "  host      : b");
	CHECK_STR(l.v[7], "  rank      : 2 (local_rank: 0)");
	CHECK_STR(l.v[8], "  exitcode  : -9 (pid: 42)");
	CHECK_STR(l.v[9], "  error_file: /r/rank.2.json (removed as the job ended; "
	    "--output-dir keeps a copy)");
	for (i = 0; i < l.n; i++)
		if (strcmp(l.v[i], "  traceback : Traceback (most recent call "
		    "last):") == 0)
			tb = (int)i;
	CHECK(tb == 10);
	CHECK_STR(l.v[11], "    File \"t.py\", line 1, in <module>");
	CHECK_STR(l.v[12], "  ValueError: x");
	/* The file was bigger than what came back: said so. */
	CHECK(strstr(l.v[13], "5000 bytes") != NULL);
	strv_free(&l);
	rootcause_free(rc);
	CHECK_STR(rootcause_name((char *[]){ "/usr/bin/python3", "-u", "x.py",
	    NULL }, 3), "python3");
	CHECK_STR(rootcause_name((char *[]){ "python3", "d/x.py", NULL }, 2),
	    "x.py");
}
