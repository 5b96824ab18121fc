/* auth.c -- job secrets, hex tokens and the HMAC challenge-response. */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "err.h"
#include "auth.h"
#include "mac.h"

/* Domain-separation labels: a worker's MAC can never pass as the server's. */
static const char	label_worker[] = "dtrun-rdzv-1 worker";
static const char	label_server[] = "dtrun-rdzv-1 server";

int
rdzv_auth_random(uint8_t *buf, size_t len, struct dt_err *e)
{
	if (len > (size_t)INT32_MAX || RAND_bytes(buf, (int)len) != 1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS,
		    "cannot get %zu random bytes from libcrypto", len);
	return 0;
}

int
rdzv_auth_mac(const uint8_t *secret, size_t slen, enum rdzv_role role,
    const uint8_t snonce[RDZV_NONCE_LEN], const uint8_t cnonce[RDZV_NONCE_LEN],
    uint8_t mac[RDZV_MAC_LEN])
{
	uint8_t		 msg[sizeof(label_worker) + 2 * RDZV_NONCE_LEN];
	const char	*label;
	unsigned int	 n = RDZV_MAC_LEN;

	if (slen < RDZV_SECRET_MIN || slen > RDZV_SECRET_MAX)
		return DT_ERR_INVAL;
	label = role == RDZV_ROLE_SERVER ? label_server : label_worker;
	memcpy(msg, label, sizeof(label_worker));	/* with the NUL */
	memcpy(msg + sizeof(label_worker), snonce, RDZV_NONCE_LEN);
	memcpy(msg + sizeof(label_worker) + RDZV_NONCE_LEN, cnonce,
	    RDZV_NONCE_LEN);
	if (HMAC(EVP_sha256(), secret, (int)slen, msg, sizeof(msg), mac,
	    &n) == NULL || n != RDZV_MAC_LEN)
		return DT_ERR_SYS;
	return 0;
}

int
rdzv_auth_check(const uint8_t *secret, size_t slen, enum rdzv_role role,
    const uint8_t snonce[RDZV_NONCE_LEN], const uint8_t cnonce[RDZV_NONCE_LEN],
    const uint8_t mac[RDZV_MAC_LEN])
{
	uint8_t	want[RDZV_MAC_LEN];
	int	rc;

	if ((rc = rdzv_auth_mac(secret, slen, role, snonce, cnonce, want)) != 0)
		return rc;
	rc = CRYPTO_memcmp(want, mac, RDZV_MAC_LEN) == 0 ? 0 : DT_ERR_AUTH;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

int
rdzv_hex_encode(const uint8_t *p, size_t n, char *out, size_t cap)
{
	return dt_hex_encode(p, n, out, cap) == 0 ? 0 : DT_ERR_RANGE;
}

int
rdzv_hex_decode(const char *s, uint8_t *out, size_t cap, size_t *len)
{
	size_t	n = strlen(s);

	*len = 0;
	if (n % 2 != 0)
		return DT_ERR_PARSE;
	if (n / 2 > cap)
		return DT_ERR_RANGE;
	return dt_hex_decode(s, out, cap, len) == 0 ? 0 : DT_ERR_PARSE;
}

int
rdzv_token_decode(const char *s, uint8_t *out, size_t cap, size_t *len,
    struct dt_err *e)
{
	int	rc;

	rc = rdzv_hex_decode(s, out, cap, len);
	if (rc == DT_ERR_PARSE)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH,
		    "rendezvous token is not a hex string");
	if (rc != 0 || *len > RDZV_SECRET_MAX)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH,
		    "rendezvous token is too long (over %d hex digits)",
		    2 * RDZV_SECRET_MAX);
	if (*len < RDZV_SECRET_MIN)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH,
		    "rendezvous token is too short (%zu bits, need at least %d)",
		    *len * 8, RDZV_SECRET_MIN * 8);
	return 0;
}
