/* t_wire.c -- frame codec and field readers. */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "common/wire.h"
#include "test.h"

TEST(wire_frame_roundtrip)
{
	struct dt_wbuf	 b;
	struct dt_rbuf	 r;
	const uint8_t	*pl;
	size_t		 plen, used, st, n;
	uint8_t		 type;
	char		*s, **v;
	char		*sv[] = { "a", "", "ccc" };

	dt_wbuf_init(&b);
	st = dt_frame_begin(&b, 7);
	dt_wbuf_u8(&b, 0xab);
	dt_wbuf_u16(&b, 0x1234);
	dt_wbuf_u32(&b, 0xdeadbeef);
	dt_wbuf_u64(&b, 0x0102030405060708ULL);
	dt_wbuf_str(&b, "hello");
	dt_wbuf_strv(&b, sv, 3);
	CHECK_INT(dt_frame_end(&b, st, 1 << 20), 0);

	for (n = 0; n < b.len; n++)
		CHECK_INT(dt_frame_parse(b.p, n, 1 << 20, &type, &pl, &plen, &used), DT_ERR_AGAIN);
	CHECK_INT(dt_frame_parse(b.p, b.len, 1 << 20, &type, &pl, &plen, &used), 0);
	CHECK_INT(type, 7);
	CHECK_INT(used, b.len);
	dt_rbuf_init(&r, pl, plen);
	CHECK_INT(dt_rbuf_u8(&r), 0xab);
	CHECK_INT(dt_rbuf_u16(&r), 0x1234);
	CHECK_INT(dt_rbuf_u32(&r), 0xdeadbeef);
	CHECK(dt_rbuf_u64(&r) == 0x0102030405060708ULL);
	s = dt_rbuf_strdup(&r, 100);
	CHECK_STR(s, "hello");
	free(s);
	v = dt_rbuf_strv(&r, 10, 10, &n);
	CHECK_INT(n, 3);
	CHECK_STR(v[0], "a");
	CHECK_STR(v[1], "");
	CHECK_STR(v[2], "ccc");
	CHECK(v[3] == NULL);
	dt_strv_free(v);
	CHECK_INT(dt_rbuf_end(&r), 0);
	dt_wbuf_free(&b);
}

TEST(wire_frame_limits)
{
	struct dt_wbuf	 b;
	const uint8_t	*pl;
	size_t		 plen, used, st;
	uint8_t		 type, big[100] = { 0 };
	uint8_t		 zero[5] = { 0, 0, 0, 0, 1 };
	uint8_t		 huge[5] = { 0xff, 0xff, 0xff, 0xff, 1 };

	dt_wbuf_init(&b);
	st = dt_frame_begin(&b, 1);
	dt_wbuf_put(&b, big, sizeof(big));
	CHECK_INT(dt_frame_end(&b, st, 64), DT_ERR_TOOBIG);
	CHECK_INT(b.len, 0);
	CHECK_INT(dt_frame_parse(zero, 5, 64, &type, &pl, &plen, &used), DT_ERR_PROTO);
	CHECK_INT(dt_frame_parse(huge, 5, 64, &type, &pl, &plen, &used), DT_ERR_TOOBIG);
	dt_wbuf_free(&b);
}

/* dt_be32 reads the order dt_wbuf_u32 writes, high bit included. */
TEST(wire_be32_matches_the_writer)
{
	struct dt_wbuf	b;

	dt_wbuf_init(&b);
	dt_wbuf_u32(&b, UINT32_C(0x80a1b2c3));
	CHECK(!b.oom);
	CHECK(dt_be32(b.p) == UINT32_C(0x80a1b2c3));
	dt_wbuf_free(&b);
}

TEST(wire_reader_underflow)
{
	struct dt_rbuf	r;
	uint8_t		d[6] = { 0, 0, 0, 9, 'a', 'b' };	/* claims 9, has 2 */
	uint8_t		nul[6] = { 0, 0, 0, 2, 'a', 0 };
	uint8_t		cnt[4] = { 0x7f, 0xff, 0xff, 0xff };
	size_t		n;

	dt_rbuf_init(&r, d, sizeof(d));
	CHECK(dt_rbuf_strdup(&r, 100) == NULL);
	CHECK(r.err);
	CHECK_INT(dt_rbuf_u32(&r), 0);		/* sticky */
	CHECK_INT(dt_rbuf_end(&r), DT_ERR_PROTO);

	dt_rbuf_init(&r, d, sizeof(d));
	CHECK(dt_rbuf_strdup(&r, 4) == NULL);	/* over max */

	dt_rbuf_init(&r, nul, sizeof(nul));
	CHECK(dt_rbuf_strdup(&r, 100) == NULL);	/* embedded NUL */

	dt_rbuf_init(&r, cnt, sizeof(cnt));
	CHECK(dt_rbuf_strv(&r, (size_t)-1, 100, &n) == NULL);	/* absurd count */
	CHECK_INT(n, 0);

	dt_rbuf_init(&r, d, 3);
	dt_rbuf_u32(&r);
	CHECK_INT(dt_rbuf_end(&r), DT_ERR_PROTO);
}

TEST(err_format)
{
	struct dt_err	e;
	char		buf[600];

	CHECK_INT(dt_errf(&e, "hosts", 3, 5, DT_ERR_PARSE, "bad range \"%s\"", "gpu[5-2]"), DT_ERR_PARSE);
	CHECK_STR(dt_err_str(&e, buf, sizeof(buf)), "hosts:3:5: bad range \"gpu[5-2]\"");
	dt_errf(&e, "hosts", 3, 0, DT_ERR_PARSE, "x");
	CHECK_STR(dt_err_str(&e, buf, sizeof(buf)), "hosts:3: x");
	dt_errf(&e, NULL, 0, 0, DT_ERR_PARSE, "y");
	CHECK_STR(dt_err_str(&e, buf, sizeof(buf)), "y");
	CHECK_STR(dt_strerror(DT_ERR_AUTH), "authentication failed");
	CHECK_STR(dt_strerror(-99), "unknown error");
}

TEST(wire_text_stays_a_c_string)
{
	struct dt_wbuf	b;
	size_t		i;

	dt_wbuf_init(&b);
	CHECK_INT(dt_wbuf_text(&b, NULL, 0), 0);
	CHECK_STR((char *)b.p, "");
	CHECK_INT(b.len, 0);
	CHECK_INT(dt_wbuf_text(&b, "abc", 2), 0);
	CHECK_INT(dt_wbuf_text(&b, " <- ", 4), 0);
	CHECK_STR((char *)b.p, "ab <- ");
	CHECK_INT(b.len, 6);
	/* Past the first allocation, each growth keeps it terminated. */
	for (i = 0; i < 1000; i++)
		CHECK_INT(dt_wbuf_text(&b, "x", 1), 0);
	CHECK_INT(b.len, 1006);
	CHECK_INT(strlen((char *)b.p), 1006);
	/* A length no buffer can hold fails and sticks. */
	CHECK_INT(dt_wbuf_text(&b, "x", (size_t)-1), -1);
	CHECK_INT(dt_wbuf_text(&b, "x", (size_t)-1 / 2), -1);
	CHECK(b.oom);
	CHECK_INT(dt_wbuf_text(&b, "x", 1), -1);
	CHECK_INT(b.len, 1006);
	dt_wbuf_free(&b);
}
