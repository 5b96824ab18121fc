/*
 * t_connect.c -- the libc-only SHA-256/HMAC against OpenSSL, and the agent
 * handshake codec and MACs of src/host/connect.h.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "host/connect.h"
#include "common/err.h"
#include "common/mac.h"
#include "test.h"
#include "common/wire.h"

/* Hashes n bytes of a pattern with ours, in uneven pieces, and with OpenSSL. */
static void
sha_compare(size_t n)
{
	struct dt_sha256	s;
	uint8_t			*buf = malloc(n + 1), ours[32], theirs[32];
	size_t			 i, off, step;

	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 7));
	dt_sha256_init(&s);
	for (off = 0, step = 1; off < n; off += step, step = step * 3 % 97 + 1)
		dt_sha256_update(&s, buf + off,
		    off + step > n ? n - off : step);
	dt_sha256_final(&s, ours);
	SHA256(buf, n, theirs);
	if (memcmp(ours, theirs, 32) != 0)
		t_fail(__FILE__, __LINE__, "sha256 of %zu bytes differs", n);
	free(buf);
}

TEST(mac_sha256_matches_openssl)
{
	static const size_t	sizes[] = { 0, 1, 55, 56, 63, 64, 65, 119, 120,
				    128, 1000, 65537 };
	size_t			i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		sha_compare(sizes[i]);
}

TEST(mac_hmac_matches_openssl)
{
	uint8_t		key[131], msg[300], ours[32], theirs[32];
	unsigned int	tlen;
	size_t		klen, len[3];
	const void	*p[3];

	memset(msg, 'm', sizeof(msg));
	for (klen = 0; klen < sizeof(key); klen += 13) {
		memset(key, (int)klen, sizeof(key));
		p[0] = msg;
		len[0] = 10;
		p[1] = msg + 10;
		len[1] = 0;
		p[2] = msg + 10;
		len[2] = sizeof(msg) - 10;
		dt_hmac_sha256(key, klen, 3, p, len, ours);
		HMAC(EVP_sha256(), key, (int)klen, msg, sizeof(msg), theirs,
		    &tlen);
		CHECK_INT(tlen, 32);
		CHECK(memcmp(ours, theirs, 32) == 0);
	}
}

TEST(mac_compare_hex_random)
{
	uint8_t	a[40], b[40], back[40];
	char	hex[81];
	size_t	n;

	CHECK_INT(dt_random(a, sizeof(a)), 0);
	memcpy(b, a, sizeof(a));
	CHECK(dt_memeq_ct(a, b, sizeof(a)));
	b[39] ^= 1;
	CHECK(!dt_memeq_ct(a, b, sizeof(a)));
	CHECK_INT(dt_hex_encode(a, sizeof(a), hex, sizeof(hex)), 0);
	CHECK_INT(strlen(hex), 80);
	CHECK_INT(dt_hex_encode(a, sizeof(a), hex, 80), -1);
	CHECK_INT(dt_hex_decode(hex, back, sizeof(back), &n), 0);
	CHECK_INT(n, 40);
	CHECK(memcmp(a, back, 40) == 0);
	CHECK_INT(dt_hex_decode("0g", back, sizeof(back), &n), -1);
	CHECK_INT(dt_hex_decode("abc", back, sizeof(back), &n), -1);
	CHECK_INT(dt_hex_decode("ABcd", back, 1, &n), -1);
}

/* Parses the one frame at the front of b, checking its type. */
static const uint8_t *
one_frame(struct dt_wbuf *b, uint8_t want, size_t *plen)
{
	const uint8_t	*payload;
	size_t		 used;
	uint8_t		 type;

	if (dt_frame_parse(b->p, b->len, AC_FRAME_MAX, &type, &payload, plen,
	    &used) != 0 || type != want || used != b->len)
		return NULL;
	return payload;
}

TEST(connect_handshake_roundtrip)
{
	struct dt_wbuf		 b;
	struct ac_answer	 a, got;
	const uint8_t		*p;
	uint8_t			 secret[AC_SECRET_LEN], sn[AC_NONCE_LEN];
	uint8_t			 sn2[AC_NONCE_LEN], mac[AC_MAC_LEN];
	size_t			 n;

	dt_wbuf_init(&b);
	dt_random(secret, sizeof(secret));
	dt_random(sn, sizeof(sn));
	dt_random(a.cnonce, sizeof(a.cnonce));
	a.node = "gpu07";

	CHECK_INT(ac_put_challenge(&b, sn), 0);
	CHECK((p = one_frame(&b, AC_CHALLENGE, &n)) != NULL);
	CHECK_INT(ac_get_challenge(p, n, sn2), 0);
	CHECK(memcmp(sn, sn2, sizeof(sn)) == 0);
	/* Another version is refused as such. */
	b.p[DT_FRAME_HDR + 3] ^= 0x40;
	CHECK_INT(ac_get_challenge(p, n, sn2), DT_ERR_UNSUPPORTED);
	CHECK_INT(ac_get_challenge(p, n - 1, sn2), DT_ERR_UNSUPPORTED);
	dt_wbuf_reset(&b);

	ac_mac(secret, sizeof(secret), AC_ROLE_AGENT, sn, a.cnonce, a.node,
	    a.mac);
	CHECK_INT(ac_put_answer(&b, &a), 0);
	CHECK((p = one_frame(&b, AC_ANSWER, &n)) != NULL);
	CHECK_INT(ac_get_answer(p, n, &got), 0);
	CHECK_STR(got.node, "gpu07");
	CHECK(ac_mac_ok(secret, sizeof(secret), AC_ROLE_AGENT, sn, got.cnonce,
	    got.node, got.mac));
	/* The MAC binds the node, the role, both nonces and the secret. */
	CHECK(!ac_mac_ok(secret, sizeof(secret), AC_ROLE_AGENT, sn, got.cnonce,
	    "gpu08", got.mac));
	CHECK(!ac_mac_ok(secret, sizeof(secret), AC_ROLE_LAUNCHER, sn,
	    got.cnonce, got.node, got.mac));
	CHECK(!ac_mac_ok(secret, sizeof(secret), AC_ROLE_AGENT, got.cnonce, sn,
	    got.node, got.mac));
	secret[0] ^= 1;
	CHECK(!ac_mac_ok(secret, sizeof(secret), AC_ROLE_AGENT, sn, got.cnonce,
	    got.node, got.mac));
	free(got.node);
	/* Truncated and trailing bytes are errors. */
	CHECK_INT(ac_get_answer(p, n - 1, &got), DT_ERR_PROTO);
	dt_wbuf_reset(&b);
	a.node = "";
	ac_put_answer(&b, &a);
	p = one_frame(&b, AC_ANSWER, &n);
	CHECK_INT(ac_get_answer(p, n, &got), DT_ERR_PROTO);
	dt_wbuf_reset(&b);

	memset(mac, 7, sizeof(mac));
	CHECK_INT(ac_put_welcome(&b, mac), 0);
	CHECK((p = one_frame(&b, AC_WELCOME, &n)) != NULL);
	memset(sn2, 0, sizeof(sn2));
	CHECK_INT(ac_get_welcome(p, n, sn2), 0);
	CHECK(memcmp(sn2, mac, sizeof(mac)) == 0);
	CHECK_INT(ac_get_welcome(p, n + 1, sn2), DT_ERR_PROTO);
	dt_wbuf_free(&b);
}

TEST(connect_token_decode)
{
	uint8_t	s[AC_SECRET_MAX];
	char	tok[2 * AC_SECRET_MAX + 3];
	size_t	n;

	memset(tok, 'a', sizeof(tok));
	tok[2 * AC_SECRET_LEN] = '\0';
	CHECK_INT(ac_token_decode(tok, s, sizeof(s), &n), 0);
	CHECK_INT(n, AC_SECRET_LEN);
	tok[2 * AC_SECRET_MIN - 2] = '\0';	/* 120 bits: too short */
	CHECK_INT(ac_token_decode(tok, s, sizeof(s), &n), DT_ERR_AUTH);
	memset(tok, 'a', sizeof(tok));
	tok[2 * AC_SECRET_MAX + 2] = '\0';	/* too long */
	CHECK_INT(ac_token_decode(tok, s, sizeof(s), &n), DT_ERR_AUTH);
	CHECK_INT(ac_token_decode("zz", s, sizeof(s), &n), DT_ERR_AUTH);
}
