/*
 * mac.h -- SHA-256, HMAC-SHA256, a constant-time compare, random bytes and
 * hex tokens, with nothing but libc: dtrun-agent is copied to hosts that
 * have nothing installed, so it cannot lean on libcrypto. The unit tests
 * check these against OpenSSL.
 */
#ifndef DT_MAC_H
#define DT_MAC_H

#include <stddef.h>
#include <stdint.h>

#define DT_SHA256_LEN	32
#define DT_SHA256_BLOCK	64

struct dt_sha256 {
	uint32_t	h[8];
	uint64_t	bytes;		/* hashed so far */
	uint8_t		buf[DT_SHA256_BLOCK];
	size_t		nbuf;
};

void	dt_sha256_init(struct dt_sha256 *);
void	dt_sha256_update(struct dt_sha256 *, const void *, size_t);
void	dt_sha256_final(struct dt_sha256 *, uint8_t out[DT_SHA256_LEN]);

/* HMAC-SHA256 over the n pieces p[i] of length len[i], as if concatenated. */
void	dt_hmac_sha256(const uint8_t *key, size_t klen, size_t n,
	    const void *const *p, const size_t *len,
	    uint8_t out[DT_SHA256_LEN]);

/* Compares n bytes in time that depends only on n; returns 1 if equal. */
int	dt_memeq_ct(const void *, const void *, size_t n);

/* Fills buf with n bytes of the kernel's CSPRNG; 0, or -1 with errno set. */
int	dt_random(void *buf, size_t n);

/* Writes the lowercase hex of p[0..n) and a NUL; 0, or -1 if cap < 2n + 1. */
int	dt_hex_encode(const void *p, size_t n, char *out, size_t cap);
/* Decodes hex (either case) into out[0..cap), setting *n; 0, or -1 if bad. */
int	dt_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *n);

#endif
