/* t_rdzv_auth.c -- secrets, tokens and the HMAC challenge-response. */
#include <stdint.h>
#include <string.h>

#include "common/err.h"
#include "rendezvous/auth.h"
#include "test.h"

TEST(rdzv_auth_right_and_wrong_secret)
{
	uint8_t	secret[RDZV_SECRET_LEN], other[RDZV_SECRET_LEN];
	uint8_t	sn[RDZV_NONCE_LEN], cn[RDZV_NONCE_LEN], mac[RDZV_MAC_LEN];
	uint8_t	smac[RDZV_MAC_LEN];

	CHECK_INT(rdzv_auth_random(secret, sizeof(secret), NULL), 0);
	memcpy(other, secret, sizeof(other));
	other[31] ^= 1;
	rdzv_auth_random(sn, sizeof(sn), NULL);
	rdzv_auth_random(cn, sizeof(cn), NULL);
	CHECK_INT(rdzv_auth_mac(secret, sizeof(secret), RDZV_ROLE_WORKER, sn,
	    cn, mac), 0);
	CHECK_INT(rdzv_auth_check(secret, sizeof(secret), RDZV_ROLE_WORKER, sn,
	    cn, mac), 0);
	/* One bit of the secret, either nonce, or the role changes everything. */
	CHECK_INT(rdzv_auth_check(other, sizeof(other), RDZV_ROLE_WORKER, sn,
	    cn, mac), DT_ERR_AUTH);
	CHECK_INT(rdzv_auth_check(secret, sizeof(secret), RDZV_ROLE_WORKER, cn,
	    sn, mac), DT_ERR_AUTH);
	CHECK_INT(rdzv_auth_check(secret, sizeof(secret), RDZV_ROLE_SERVER, sn,
	    cn, mac), DT_ERR_AUTH);
	rdzv_auth_mac(secret, sizeof(secret), RDZV_ROLE_SERVER, sn, cn, smac);
	CHECK(memcmp(mac, smac, sizeof(mac)) != 0);
	mac[0] ^= 0x80;
	CHECK_INT(rdzv_auth_check(secret, sizeof(secret), RDZV_ROLE_WORKER, sn,
	    cn, mac), DT_ERR_AUTH);
	/* Secrets under 128 bits are refused. */
	CHECK_INT(rdzv_auth_mac(secret, RDZV_SECRET_MIN - 1, RDZV_ROLE_WORKER,
	    sn, cn, mac), DT_ERR_INVAL);
}

TEST(rdzv_auth_known_answer)
{
	/* HMAC-SHA256(16 x 0x0b, "dtrun-rdzv-1 worker\0" || 32 x 0 || 32 x 1), from Python hmac. */
	uint8_t	key[16], sn[32], cn[32], mac[32];
	char	hex[65];

	memset(key, 0x0b, sizeof(key));
	memset(sn, 0, sizeof(sn));
	memset(cn, 1, sizeof(cn));
	CHECK_INT(rdzv_auth_mac(key, sizeof(key), RDZV_ROLE_WORKER, sn, cn,
	    mac), 0);
	rdzv_hex_encode(mac, sizeof(mac), hex, sizeof(hex));
	CHECK_STR(hex, "28c8bba151bfc3fc942e847bab4e452cb5c797d68430a850ab1ab17b1e4ae3c6");
}

TEST(rdzv_auth_secrets_differ)
{
	uint8_t	a[RDZV_SECRET_LEN], b[RDZV_SECRET_LEN];

	rdzv_auth_random(a, sizeof(a), NULL);
	rdzv_auth_random(b, sizeof(b), NULL);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
	CHECK(RDZV_SECRET_LEN * 8 >= 128);
}

TEST(rdzv_auth_hex_tokens)
{
	uint8_t		p[4] = { 0x00, 0xab, 0x7f, 0xff }, q[40];
	char		hex[9];
	size_t		n;
	struct dt_err	e;

	CHECK_INT(rdzv_hex_encode(p, 4, hex, sizeof(hex)), 0);
	CHECK_STR(hex, "00ab7fff");
	CHECK_INT(rdzv_hex_encode(p, 4, hex, 8), DT_ERR_RANGE);
	CHECK_INT(rdzv_hex_decode("00AB7fff", q, sizeof(q), &n), 0);
	CHECK_INT(n, 4);
	CHECK(memcmp(p, q, 4) == 0);
	CHECK_INT(rdzv_hex_decode("abc", q, sizeof(q), &n), DT_ERR_PARSE);
	CHECK_INT(rdzv_hex_decode("zz", q, sizeof(q), &n), DT_ERR_PARSE);
	CHECK_INT(rdzv_hex_decode("0011", q, 1, &n), DT_ERR_RANGE);
	CHECK_INT(rdzv_token_decode("00ab", q, sizeof(q), &n, &e),
	    DT_ERR_AUTH);
	CHECK(strstr(e.msg, "too short") != NULL);
	CHECK_INT(rdzv_token_decode("not hex!", q, sizeof(q), &n, &e),
	    DT_ERR_AUTH);
	CHECK(strstr(e.msg, "not a hex") != NULL);
	CHECK_INT(rdzv_token_decode("000102030405060708090a0b0c0d0e0f", q,
	    sizeof(q), &n, &e), 0);
	CHECK_INT(n, 16);
}
