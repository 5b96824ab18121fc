/* wire.c -- frames and field codecs; no I/O, fuzzed. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/wire.h"

void
dt_wbuf_init(struct dt_wbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void
dt_wbuf_free(struct dt_wbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

void
dt_wbuf_reset(struct dt_wbuf *b)
{
	b->len = 0;
	b->oom = 0;
}

/* Makes room for n more bytes; returns 0 or -1 (and sets oom). */
static int
wbuf_grow(struct dt_wbuf *b, size_t n)
{
	size_t	 cap;
	uint8_t	*p;

	if (b->oom)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	if (n > (size_t)-1 / 2 - b->len) {
		b->oom = 1;
		return -1;
	}
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

uint8_t *
dt_wbuf_reserve(struct dt_wbuf *b, size_t n)
{
	if (wbuf_grow(b, n) != 0)
		return NULL;
	return b->p + b->len;
}

void
dt_wbuf_put(struct dt_wbuf *b, const void *p, size_t n)
{
	if (n == 0 || wbuf_grow(b, n) != 0)
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

int
dt_wbuf_text(struct dt_wbuf *b, const void *p, size_t n)
{
	if (n == (size_t)-1)
		b->oom = 1;
	if (b->oom || wbuf_grow(b, n + 1) != 0)
		return -1;
	if (n > 0)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

void
dt_wbuf_u8(struct dt_wbuf *b, uint8_t v)
{
	dt_wbuf_put(b, &v, 1);
}

void
dt_wbuf_u16(struct dt_wbuf *b, uint16_t v)
{
	uint8_t	x[2] = { v >> 8, v };

	dt_wbuf_put(b, x, 2);
}

void
dt_wbuf_u32(struct dt_wbuf *b, uint32_t v)
{
	uint8_t	x[4] = { v >> 24, v >> 16, v >> 8, v };

	dt_wbuf_put(b, x, 4);
}

void
dt_wbuf_u64(struct dt_wbuf *b, uint64_t v)
{
	dt_wbuf_u32(b, v >> 32);
	dt_wbuf_u32(b, (uint32_t)v);
}

void
dt_wbuf_blob(struct dt_wbuf *b, const void *p, size_t n)
{
	if (n > UINT32_MAX) {
		b->oom = 1;
		return;
	}
	dt_wbuf_u32(b, n);
	dt_wbuf_put(b, p, n);
}

void
dt_wbuf_str(struct dt_wbuf *b, const char *s)
{
	dt_wbuf_blob(b, s, s == NULL ? 0 : strlen(s));
}

void
dt_wbuf_strv(struct dt_wbuf *b, char *const *v, size_t n)
{
	size_t	i;

	dt_wbuf_u32(b, n);
	for (i = 0; i < n; i++)
		dt_wbuf_str(b, v[i]);
}

size_t
dt_frame_begin(struct dt_wbuf *b, uint8_t type)
{
	size_t	start = b->len;

	dt_wbuf_u32(b, 0);
	dt_wbuf_u8(b, type);
	return start;
}

int
dt_frame_end(struct dt_wbuf *b, size_t start, size_t max)
{
	size_t	n;

	if (b->oom) {
		/* Never leave half a frame for the caller to send. */
		b->len = start < b->len ? start : b->len;
		return DT_ERR_NOMEM;
	}
	n = b->len - start - 4;
	if (n + 4 > max) {
		b->len = start;
		return DT_ERR_TOOBIG;
	}
	b->p[start] = n >> 24;
	b->p[start + 1] = n >> 16;
	b->p[start + 2] = n >> 8;
	b->p[start + 3] = n;
	return 0;
}

int
dt_frame_end_parts(struct dt_wbuf *b, size_t start, size_t max, uint8_t cont,
    size_t total)
{
	uint8_t	*copy, type;
	size_t	 len, part, off, first = start;
	int	 rc;

	if (b->oom || max <= DT_FRAME_HDR)
		return dt_frame_end(b, start, max);
	len = b->len - start - DT_FRAME_HDR;
	if (len + DT_FRAME_HDR <= max)
		return dt_frame_end(b, start, max);
	if (len > total) {
		b->len = start;
		return DT_ERR_TOOBIG;
	}
	if ((copy = malloc(len)) == NULL) {
		b->len = start;
		return DT_ERR_NOMEM;
	}
	type = b->p[start + 4];
	memcpy(copy, b->p + start + DT_FRAME_HDR, len);
	b->len = start;
	part = max - DT_FRAME_HDR;
	rc = 0;
	for (off = 0; off < len && rc == 0; off += part) {
		if (part > len - off)
			part = len - off;
		start = dt_frame_begin(b, off + part < len ? cont : type);
		dt_wbuf_put(b, copy + off, part);
		rc = dt_frame_end(b, start, max);
	}
	free(copy);
	if (rc != 0)
		b->len = first;		/* none of the message, not a part */
	return rc;
}

int
dt_frame_parse(const uint8_t *p, size_t n, size_t max, uint8_t *type,
    const uint8_t **payload, size_t *plen, size_t *used)
{
	uint32_t	len;

	if (n < 4)
		return DT_ERR_AGAIN;
	len = dt_be32(p);
	if (len == 0)
		return DT_ERR_PROTO;
	if ((size_t)len + 4 > max)
		return DT_ERR_TOOBIG;
	if (n - 4 < len)
		return DT_ERR_AGAIN;
	*type = p[4];
	*payload = p + 5;
	*plen = len - 1;
	*used = (size_t)len + 4;
	return 0;
}

void
dt_rbuf_init(struct dt_rbuf *r, const void *p, size_t n)
{
	r->p = p;
	r->len = n;
	r->off = 0;
	r->err = 0;
}

/* Returns a pointer to the next n bytes and advances, or NULL (and sets err). */
static const uint8_t *
rbuf_take(struct dt_rbuf *r, size_t n)
{
	const uint8_t	*p;

	if (r->err || r->len - r->off < n) {
		r->err = 1;
		return NULL;
	}
	p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t
dt_rbuf_u8(struct dt_rbuf *r)
{
	const uint8_t	*p = rbuf_take(r, 1);

	return p == NULL ? 0 : p[0];
}

uint16_t
dt_rbuf_u16(struct dt_rbuf *r)
{
	const uint8_t	*p = rbuf_take(r, 2);

	return p == NULL ? 0 : (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t
dt_rbuf_u32(struct dt_rbuf *r)
{
	const uint8_t	*p = rbuf_take(r, 4);

	if (p == NULL)
		return 0;
	return dt_be32(p);
}

uint64_t
dt_rbuf_u64(struct dt_rbuf *r)
{
	uint64_t	hi = dt_rbuf_u32(r);

	return hi << 32 | dt_rbuf_u32(r);
}

void
dt_rbuf_get(struct dt_rbuf *r, void *dst, size_t n)
{
	const uint8_t	*p = rbuf_take(r, n);

	if (p != NULL)
		memcpy(dst, p, n);
	else
		memset(dst, 0, n);
}

const uint8_t *
dt_rbuf_blob(struct dt_rbuf *r, size_t *n, size_t max)
{
	uint32_t	len = dt_rbuf_u32(r);

	*n = 0;
	if (r->err)
		return NULL;
	if (len > max) {
		r->err = 1;
		return NULL;
	}
	*n = len;
	return rbuf_take(r, len);
}

char *
dt_rbuf_strdup(struct dt_rbuf *r, size_t max)
{
	const uint8_t	*p;
	size_t		 n;
	char		*s;

	if ((p = dt_rbuf_blob(r, &n, max)) == NULL && r->err)
		return NULL;
	if (n > 0 && memchr(p, '\0', n) != NULL) {
		r->err = 1;
		return NULL;
	}
	if ((s = malloc(n + 1)) == NULL) {
		r->err = 1;
		return NULL;
	}
	if (n > 0)
		memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

char **
dt_rbuf_strv(struct dt_rbuf *r, size_t maxn, size_t maxlen, size_t *count)
{
	uint32_t	  n = dt_rbuf_u32(r);
	char		**v;
	size_t		  i;

	*count = 0;
	if (r->err)
		return NULL;
	/* Each string needs at least its 4-byte length: reject absurd counts early. */
	if (n > maxn || n > dt_rbuf_left(r) / 4) {
		r->err = 1;
		return NULL;
	}
	if ((v = calloc((size_t)n + 1, sizeof(*v))) == NULL) {
		r->err = 1;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if ((v[i] = dt_rbuf_strdup(r, maxlen)) == NULL) {
			dt_strv_free(v);
			r->err = 1;
			return NULL;
		}
	}
	*count = n;
	return v;
}

size_t
dt_rbuf_left(const struct dt_rbuf *r)
{
	return r->len - r->off;
}

int
dt_rbuf_end(const struct dt_rbuf *r)
{
	return r->err || r->off != r->len ? DT_ERR_PROTO : 0;
}

void
dt_strv_free(char **v)
{
	size_t	i;

	if (v == NULL)
		return;
	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	free(v);
}
