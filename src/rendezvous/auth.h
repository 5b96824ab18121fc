/*
 * auth.h -- the job secret, its hex token form, and the challenge-response
 * that proves both ends of a rendezvous connection know it.
 *
 * The server sends a random nonce; the worker answers with its own nonce
 * and HMAC-SHA256(secret, "dtrun-rdzv-1 worker" || snonce || cnonce); the
 * server answers with HMAC-SHA256(secret, "dtrun-rdzv-1 server" || snonce
 * || cnonce), so a worker also knows it reached the real server. MACs are
 * compared in constant time.
 */
#ifndef DT_RDZV_AUTH_H
#define DT_RDZV_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rendezvous/proto.h"
#include "common/dtlimits.h"

#define RDZV_SECRET_MIN		DT_SECRET_MIN	/* bytes (128 bits): shorter is refused */
#define RDZV_SECRET_LEN		DT_SECRET_LEN	/* bytes made by rdzv_auth_secret */
#define RDZV_SECRET_MAX		DT_SECRET_MAX

/* Which end a MAC speaks for. */
enum rdzv_role {
	RDZV_ROLE_WORKER,
	RDZV_ROLE_SERVER,
};

struct dt_err;

/*
 * Fills buf[0..len) with random bytes from the kernel (dt_random: a
 * secret or a nonce). Returns 0, or DT_ERR_SYS with *e filled in.
 */
int	 rdzv_auth_random(uint8_t *buf, size_t len, struct dt_err *e);

/*
 * Computes the MAC of one role over the two nonces into mac. Returns 0,
 * or DT_ERR_INVAL if the secret's length is outside [RDZV_SECRET_MIN,
 * RDZV_SECRET_MAX] (the MAC itself cannot fail: it is plain C, mac.c).
 */
int	 rdzv_auth_mac(const uint8_t *secret, size_t slen, enum rdzv_role role,
	     const uint8_t snonce[RDZV_NONCE_LEN],
	     const uint8_t cnonce[RDZV_NONCE_LEN], uint8_t mac[RDZV_MAC_LEN]);

/*
 * Recomputes the MAC and compares it with mac in constant time. Returns 0
 * if they match, DT_ERR_AUTH if not, or an error of rdzv_auth_mac.
 */
int	 rdzv_auth_check(const uint8_t *secret, size_t slen,
	     enum rdzv_role role, const uint8_t snonce[RDZV_NONCE_LEN],
	     const uint8_t cnonce[RDZV_NONCE_LEN],
	     const uint8_t mac[RDZV_MAC_LEN]);

/*
 * Writes the lowercase hex form of p[0..n) and a NUL into out, which must
 * hold 2 * n + 1 bytes. Returns 0 or DT_ERR_RANGE if it does not.
 */
int	 rdzv_hex_encode(const uint8_t *p, size_t n, char *out, size_t cap);

/*
 * Decodes a hex token (either case, even length, nothing else) into
 * out[0..cap), setting *len. Returns 0, DT_ERR_PARSE for a character that
 * is not hex or an odd length, or DT_ERR_RANGE if it does not fit.
 */
int	 rdzv_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *len);

/*
 * Decodes a job token as rdzv_hex_decode does and checks it holds a secret
 * of RDZV_SECRET_MIN to RDZV_SECRET_MAX bytes. Returns 0, or DT_ERR_AUTH
 * with *e saying what is wrong with the token (never the token itself).
 */
int	 rdzv_token_decode(const char *s, uint8_t *out, size_t cap,
	     size_t *len, struct dt_err *e);

#endif
