/*
 * pack.c -- PACKED frames (pack.h): one LZ4 block of whole frames.
 */
#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>
#include <lz4.h>

#include "common/err.h"
#include "common/pack.h"
#include "common/wire.h"

int
pack_frames(struct dt_wbuf *b, const void *p, size_t n, size_t max)
{
	size_t	 start, room;
	uint8_t	*dst;
	int	 bound, got;

	if (n == 0 || n > (size_t)LZ4_MAX_INPUT_SIZE)
		return 0;
	bound = LZ4_compressBound((int)n);
	start = dt_frame_begin(b, PACK_TYPE);
	dt_wbuf_u32(b, (uint32_t)n);
	if ((dst = dt_wbuf_reserve(b, (size_t)bound)) == NULL) {
		b->len = start;
		b->oom = 0;	/* nothing was lost: the bytes go as they are */
		return 0;
	}
	/* Worth it only if it saves an eighth: else the work is for nothing. */
	room = n - n / 8;
	if (room <= b->len - start) {
		b->len = start;		/* too few bytes to gain anything */
		return 0;
	}
	room -= b->len - start;
	if (room > (size_t)bound)
		room = (size_t)bound;
	got = LZ4_compress_default(p, (char *)dst, (int)n, (int)room);
	if (got <= 0) {
		b->len = start;
		return 0;
	}
	b->len += (size_t)got;
	if (dt_frame_end(b, start, max) != 0)
		return 0;	/* it removed the frame */
	return 1;
}

int
pack_unpack(const uint8_t *payload, size_t len, size_t max,
    struct evbuffer *out, struct dt_err *e)
{
	struct evbuffer_iovec	v;
	struct dt_rbuf		r;
	uint32_t		raw;
	size_t			blen;
	int			got;

	dt_rbuf_init(&r, payload, len);
	raw = dt_rbuf_u32(&r);
	blen = dt_rbuf_left(&r);
	if (r.err || blen == 0) {
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO,
		    "short PACKED frame");
	}
	if (raw == 0 || raw > max || blen > (size_t)LZ4_MAX_INPUT_SIZE) {
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO,
		    "PACKED frame over the size limit");
	}
	if (evbuffer_reserve_space(out, raw, &v, 1) != 1) {
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM,
		    "out of memory");
	}
	got = LZ4_decompress_safe((const char *)payload + 4, v.iov_base,
	    (int)blen, (int)raw);
	if (got != (int)raw) {
		v.iov_len = 0;
		evbuffer_commit_space(out, &v, 1);
		return dt_errf(e, NULL, 0, 0, DT_ERR_PROTO,
		    "bad PACKED frame");
	}
	v.iov_len = raw;
	evbuffer_commit_space(out, &v, 1);
	return 0;
}
