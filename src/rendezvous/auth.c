/*
 * auth.c -- job secrets, hex tokens and the HMAC challenge-response, on the
 * plain-C SHA-256 of src/common/mac.c (checked against OpenSSL in the unit
 * tests): workers linking libdtcomm need no libcrypto, and a local job
 * never loads it.
 */
#include <errno.h>
#include <string.h>

#include "common/err.h"
#include "rendezvous/auth.h"
#include "common/mac.h"

/* Domain-separation labels: a worker's MAC can never pass as the server's. */
static const char	label_worker[] = "dtrun-rdzv-1 worker";
static const char	label_server[] = "dtrun-rdzv-1 server";

int
rdzv_auth_random(uint8_t *buf, size_t len, struct dt_err *e)
{
	if (dt_random(buf, len) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS,
		    "cannot get %zu random bytes: %s", len, strerror(errno));
	return 0;
}

int
rdzv_auth_mac(const uint8_t *secret, size_t slen, enum rdzv_role role,
    const uint8_t snonce[RDZV_NONCE_LEN], const uint8_t cnonce[RDZV_NONCE_LEN],
    uint8_t mac[RDZV_MAC_LEN])
{
	const void	*p[3];
	size_t		 len[3];

	if (slen < RDZV_SECRET_MIN || slen > RDZV_SECRET_MAX)
		return DT_ERR_INVAL;
	/* label (with its NUL) || server nonce || client nonce */
	p[0] = role == RDZV_ROLE_SERVER ? label_server : label_worker;
	len[0] = sizeof(label_worker);
	p[1] = snonce;
	len[1] = RDZV_NONCE_LEN;
	p[2] = cnonce;
	len[2] = RDZV_NONCE_LEN;
	dt_hmac_sha256(secret, slen, 3, p, len, mac);
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
	rc = dt_memeq_ct(want, mac, RDZV_MAC_LEN) ? 0 : DT_ERR_AUTH;
	explicit_bzero(want, sizeof(want));
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
