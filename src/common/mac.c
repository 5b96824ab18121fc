/*
 * mac.c -- SHA-256 (FIPS 180-4), HMAC (RFC 2104) and hex in plain C, for
 * the agent's authentication to its launcher.
 */
#include <sys/random.h>

#include <errno.h>
#include <string.h>

#include "common/mac.h"
#include "common/wire.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

#define ROR(x, n)	(((x) >> (n)) | ((x) << (32 - (n))))

/* Folds one 64-byte block into the state. */
static void
sha256_block(struct dt_sha256 *s, const uint8_t *p)
{
	uint32_t	w[64], a, b, c, d, e, f, g, h, t1, t2;
	int		i;

	for (i = 0; i < 16; i++)
		w[i] = dt_be32(p + 4 * i);
	for (; i < 64; i++)
		w[i] = w[i - 16] + (ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
		    (w[i - 15] >> 3)) + w[i - 7] + (ROR(w[i - 2], 17) ^
		    ROR(w[i - 2], 19) ^ (w[i - 2] >> 10));
	a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3];
	e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		    ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));
		h = g; g = f; f = e; e = d + t1;
		d = c; c = b; b = a; a = t1 + t2;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d;
	s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

void
dt_sha256_init(struct dt_sha256 *s)
{
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(s->h, iv, sizeof(iv));
	s->bytes = 0;
	s->nbuf = 0;
}

void
dt_sha256_update(struct dt_sha256 *s, const void *data, size_t n)
{
	const uint8_t	*p = data;
	size_t		 k;

	s->bytes += n;
	while (n > 0) {
		if (s->nbuf == 0 && n >= DT_SHA256_BLOCK) {
			sha256_block(s, p);
			p += DT_SHA256_BLOCK;
			n -= DT_SHA256_BLOCK;
			continue;
		}
		k = DT_SHA256_BLOCK - s->nbuf;
		if (k > n)
			k = n;
		memcpy(s->buf + s->nbuf, p, k);
		s->nbuf += k;
		p += k;
		n -= k;
		if (s->nbuf == DT_SHA256_BLOCK) {
			sha256_block(s, s->buf);
			s->nbuf = 0;
		}
	}
}

void
dt_sha256_final(struct dt_sha256 *s, uint8_t out[DT_SHA256_LEN])
{
	uint64_t	bits = s->bytes * 8;
	int		i;

	s->buf[s->nbuf++] = 0x80;
	if (s->nbuf > DT_SHA256_BLOCK - 8) {
		memset(s->buf + s->nbuf, 0, DT_SHA256_BLOCK - s->nbuf);
		sha256_block(s, s->buf);
		s->nbuf = 0;
	}
	memset(s->buf + s->nbuf, 0, DT_SHA256_BLOCK - 8 - s->nbuf);
	for (i = 0; i < 8; i++)
		s->buf[DT_SHA256_BLOCK - 1 - i] = (uint8_t)(bits >> (8 * i));
	sha256_block(s, s->buf);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
	explicit_bzero(s, sizeof(*s));	/* an HMAC's state holds its key */
}

void
dt_hmac_sha256(const uint8_t *key, size_t klen, size_t n,
    const void *const *p, const size_t *len, uint8_t out[DT_SHA256_LEN])
{
	struct dt_sha256	s;
	uint8_t			k[DT_SHA256_BLOCK], pad[DT_SHA256_BLOCK];
	uint8_t			inner[DT_SHA256_LEN];
	size_t			i;

	memset(k, 0, sizeof(k));
	if (klen > DT_SHA256_BLOCK) {
		dt_sha256_init(&s);
		dt_sha256_update(&s, key, klen);
		dt_sha256_final(&s, k);
	} else if (klen > 0)
		memcpy(k, key, klen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	dt_sha256_init(&s);
	dt_sha256_update(&s, pad, sizeof(pad));
	for (i = 0; i < n; i++)
		dt_sha256_update(&s, p[i], len[i]);
	dt_sha256_final(&s, inner);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	dt_sha256_init(&s);
	dt_sha256_update(&s, pad, sizeof(pad));
	dt_sha256_update(&s, inner, sizeof(inner));
	dt_sha256_final(&s, out);
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
	explicit_bzero(inner, sizeof(inner));
}

int
dt_memeq_ct(const void *a, const void *b, size_t n)
{
	const volatile uint8_t	*x = a, *y = b;
	uint8_t			 d = 0;
	size_t			 i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

int
dt_random(void *buf, size_t n)
{
	uint8_t	*p = buf;
	ssize_t	 r;

	while (n > 0) {
		r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += r;
		n -= r;
	}
	return 0;
}

int
dt_hex_encode(const void *data, size_t n, char *out, size_t cap)
{
	static const char	 digits[] = "0123456789abcdef";
	const uint8_t		*p = data;
	size_t			 i;

	if (cap < 1 || (cap - 1) / 2 < n)
		return -1;
	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 0xf];
	}
	out[2 * n] = '\0';
	return 0;
}

/* The value of one hex digit, or -1. */
static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
dt_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *n)
{
	size_t	len = strlen(s), i;
	int	hi, lo;

	if (len % 2 != 0 || len / 2 > cap)
		return -1;
	for (i = 0; i < len / 2; i++) {
		if ((hi = hexval(s[2 * i])) < 0 ||
		    (lo = hexval(s[2 * i + 1])) < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	*n = len / 2;
	return 0;
}
