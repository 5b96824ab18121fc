/*
 * connect.h -- how an agent that srun started reaches dtrun: it dials
 * dtrun's TCP listener, and both ends prove they know the job's agent
 * secret before any agent protocol flows.
 *
 *	launcher CHALLENGE(version, snonce)
 *	agent	 ANSWER(cnonce, node, HMAC(secret, "dtrun-agent-1 agent" ||
 *		     snonce || cnonce || node))
 *	launcher WELCOME(HMAC(secret, "dtrun-agent-1 launcher" || snonce ||
 *		     cnonce || node))
 *
 * then the agent protocol of proto.h on the same stream, HELLO first. The
 * node name is under the MAC, so nobody in between can move an agent to
 * another node's ranks. The secret reaches the agent in its environment
 * (AC_TOKEN_ENV, hex), never on a command line, and never crosses the wire.
 * Frames are those of wire.h; encoders and decoders do no I/O.
 */
#ifndef DT_AGENT_CONNECT_H
#define DT_AGENT_CONNECT_H

#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "common/dtlimits.h"

#define AC_VERSION	1
#define AC_NONCE_LEN	32
#define AC_MAC_LEN	32
#define AC_SECRET_LEN	DT_SECRET_LEN	/* what dtrun makes */
#define AC_SECRET_MIN	DT_SECRET_MIN	/* 128 bits: shorter is refused */
#define AC_SECRET_MAX	DT_SECRET_MAX
#define AC_NODE_MAX	DT_HOST_MAX
#define AC_FRAME_MAX	1024
#define AC_TOKEN_ENV	"DTRUN_AGENT_TOKEN"

enum ac_type {
	AC_CHALLENGE = 96,	/* launcher -> agent */
	AC_ANSWER = 97,		/* agent -> launcher */
	AC_WELCOME = 98,	/* launcher -> agent */
};

/* Which end a MAC speaks for. */
enum ac_role { AC_ROLE_AGENT, AC_ROLE_LAUNCHER };

struct ac_answer {
	uint8_t		 cnonce[AC_NONCE_LEN];
	uint8_t		 mac[AC_MAC_LEN];
	char		*node;		/* malloc'd by ac_get_answer */
};

/* Encoders: append one frame. Return 0, DT_ERR_NOMEM or DT_ERR_TOOBIG. */
int	ac_put_challenge(struct dt_wbuf *, const uint8_t snonce[AC_NONCE_LEN]);
int	ac_put_answer(struct dt_wbuf *, const struct ac_answer *);
int	ac_put_welcome(struct dt_wbuf *, const uint8_t mac[AC_MAC_LEN]);

/*
 * Decoders of one payload. Return 0 or DT_ERR_PROTO (nothing to free
 * then); ac_get_challenge returns DT_ERR_UNSUPPORTED for another version.
 * A node name must be 1 to AC_NODE_MAX bytes; free it with free().
 */
int	ac_get_challenge(const uint8_t *, size_t, uint8_t snonce[AC_NONCE_LEN]);
int	ac_get_answer(const uint8_t *, size_t, struct ac_answer *);
int	ac_get_welcome(const uint8_t *, size_t, uint8_t mac[AC_MAC_LEN]);

/* Computes role's MAC over the nonces and the node name. */
void	ac_mac(const uint8_t *secret, size_t slen, enum ac_role role,
	    const uint8_t snonce[AC_NONCE_LEN],
	    const uint8_t cnonce[AC_NONCE_LEN], const char *node,
	    uint8_t mac[AC_MAC_LEN]);
/* Recomputes role's MAC and compares in constant time; 1 if it matches. */
int	ac_mac_ok(const uint8_t *secret, size_t slen, enum ac_role role,
	    const uint8_t snonce[AC_NONCE_LEN],
	    const uint8_t cnonce[AC_NONCE_LEN], const char *node,
	    const uint8_t mac[AC_MAC_LEN]);

/*
 * Decodes the hex token of AC_TOKEN_ENV (dt_hex_encode makes it) into out,
 * setting *n. Returns 0, or DT_ERR_AUTH if it is not hex or not
 * AC_SECRET_MIN to AC_SECRET_MAX bytes long.
 */
int	ac_token_decode(const char *s, uint8_t *out, size_t cap, size_t *n);

struct dt_err;
/*
 * The agent's side: connects to addr ("HOST:PORT", "[V6]:PORT") and runs
 * the handshake as node, all within timeout_ms. Returns the connected fd,
 * ready for the agent protocol, or a negative DT_ERR_* with *e saying what
 * went wrong (never the secret).
 */
int	ac_dial(const char *addr, const uint8_t *secret, size_t slen,
	    const char *node, int timeout_ms, struct dt_err *e);

#endif
