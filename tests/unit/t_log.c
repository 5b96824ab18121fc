/* t_log.c -- log_escape: what peers send never drives the terminal. */
#include <string.h>

#include "common/log.h"
#include "test.h"

TEST(log_escape_controls)
{
	char	buf[128];

	CHECK_STR(log_escape(buf, sizeof(buf), "node1"), "node1");
	CHECK_STR(log_escape(buf, sizeof(buf), "a\nb\r\tc"), "a\\nb\\r\\tc");
	CHECK_STR(log_escape(buf, sizeof(buf), "\033[31mred\033[0m"),
	    "\\x1b[31mred\\x1b[0m");
	CHECK_STR(log_escape(buf, sizeof(buf), "\a\b\x7f\x01"),
	    "\\x07\\x08\\x7f\\x01");
	CHECK_STR(log_escape(buf, sizeof(buf), ""), "");
}

TEST(log_escape_utf8)
{
	char	buf[128];

	/* Valid UTF-8 stays; so do backslashes: escaping is idempotent. */
	CHECK_STR(log_escape(buf, sizeof(buf), "n\xc3\xb6""de \xe2\x82\xac "
	    "\xf0\x9f\x98\x80"), "n\xc3\xb6""de \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK_STR(log_escape(buf, sizeof(buf), "C:\\dir\\n"), "C:\\dir\\n");
	/* C1 CSI as UTF-8, a lone 8-bit CSI, truncated, overlong, surrogate. */
	CHECK_STR(log_escape(buf, sizeof(buf), "\xc2\x9b""31m"),
	    "\\xc2\\x9b31m");
	CHECK_STR(log_escape(buf, sizeof(buf), "\x9b""31m"), "\\x9b31m");
	CHECK_STR(log_escape(buf, sizeof(buf), "x\xe2\x82"), "x\\xe2\\x82");
	CHECK_STR(log_escape(buf, sizeof(buf), "\xc0\xaf"), "\\xc0\\xaf");
	CHECK_STR(log_escape(buf, sizeof(buf), "\xed\xa0\x80"),
	    "\\xed\\xa0\\x80");
	CHECK_STR(log_escape(buf, sizeof(buf), "\xff"), "\\xff");
}

TEST(log_escape_bounds)
{
	char	buf[6];

	/* An escape or a character that does not fit is left out whole. */
	memset(buf, 'Z', sizeof(buf));
	CHECK_STR(log_escape(buf, sizeof(buf), "abcd\033"), "abcd");
	CHECK_STR(log_escape(buf, sizeof(buf), "ab\033"), "ab");
	CHECK_STR(log_escape(buf, 5, "ab\033"), "ab");
	CHECK_STR(log_escape(buf, sizeof(buf), "a\033"), "a\\x1b");
	CHECK_STR(log_escape(buf, sizeof(buf), "abc\xe2\x82\xac"), "abc");
	CHECK_STR(log_escape(buf, 1, "abc"), "");
}
