/*
 * proto.h -- the rendezvous wire protocol, version 1 (doc/rendezvous.md).
 *
 * Every message is one frame of src/common/wire.h (u32 length, u8 type,
 * payload) no larger than RDZV_MAX_FRAME bytes in all. Decoding does no
 * I/O and allocates nothing: a decoded message points into the payload it
 * came from, so it lives only as long as that buffer.
 */
#ifndef DT_RDZV_PROTO_H
#define DT_RDZV_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtlimits.h"
#include "common/wire.h"

#define RDZV_VERSION	1
#define RDZV_MAGIC	0x44545a56u	/* "DTZV" */

#define RDZV_NONCE_LEN	32
#define RDZV_MAC_LEN	32
#define RDZV_MAX_KEY	256		/* bytes in a key, at least 1 */
#define RDZV_MAX_VALUE	65536		/* bytes in a value */
#define RDZV_MAX_HOST	DT_HOST_MAX	/* bytes in a host name */
#define RDZV_MAX_TEXT	1024		/* bytes in an error or abort text */
/* The largest frame, length word included: a SET with the largest key and value. */
#define RDZV_MAX_FRAME	(DT_FRAME_HDR + 4 + RDZV_MAX_KEY + 4 + RDZV_MAX_VALUE)

/* Message types: below 0x80 from a worker, 0x80 and up from the server. */
enum rdzv_type {
	RDZV_AUTH	= 0x01,		/* magic version cnonce mac */
	RDZV_JOIN	= 0x02,		/* rank local_rank host */
	RDZV_SET	= 0x03,		/* key value */
	RDZV_GET	= 0x04,		/* flags key */
	RDZV_ADD	= 0x05,		/* key delta */
	RDZV_BARRIER	= 0x06,		/* (empty) */
	RDZV_PING	= 0x07,		/* seq */

	RDZV_CHALLENGE	= 0x81,		/* magic version snonce */
	RDZV_AUTH_OK	= 0x82,		/* mac */
	RDZV_JOIN_OK	= 0x83,		/* rank world local_rank local_world node nnodes */
	RDZV_VALUE	= 0x84,		/* value */
	RDZV_OK		= 0x85,		/* (empty): SET and BARRIER done */
	RDZV_INT	= 0x86,		/* num: the counter after an ADD */
	RDZV_PONG	= 0x87,		/* seq */
	RDZV_ERROR	= 0xe0,		/* code text */
	RDZV_ABORT	= 0xe1,		/* text */
};

#define RDZV_GET_WAIT	0x01		/* GET flags: wait until the key is set */

/*
 * One decoded message. Only the fields of its type are meaningful; byte
 * strings point into the decoded payload and are not NUL-terminated.
 */
struct rdzv_msg {
	uint8_t		 type;
	uint32_t	 magic;
	uint16_t	 version;
	uint8_t		 nonce[RDZV_NONCE_LEN];	/* CHALLENGE: server's; AUTH: worker's */
	uint8_t		 mac[RDZV_MAC_LEN];
	int32_t		 rank;			/* JOIN: -1 = let the server choose */
	int32_t		 local_rank;		/* JOIN: -1 = unknown */
	int32_t		 world;
	int32_t		 local_world;
	int32_t		 node_rank;
	int32_t		 nnodes;
	uint8_t		 flags;
	int32_t		 code;			/* ERROR: a negative DT_ERR_* */
	int64_t		 num;			/* ADD: delta; INT: value */
	uint64_t	 seq;
	const uint8_t	*host;			/* JOIN */
	size_t		 hostlen;
	const uint8_t	*key;
	size_t		 keylen;
	const uint8_t	*val;			/* SET, VALUE */
	size_t		 vallen;
	const uint8_t	*text;			/* ERROR, ABORT */
	size_t		 textlen;
};

/*
 * Decodes the payload of a frame of the given type into m. Checks every
 * field's length and limit and that nothing is left over. Returns 0, or
 * DT_ERR_PROTO for an unknown type or a malformed payload.
 */
int		 rdzv_msg_decode(uint8_t type, const uint8_t *payload,
		     size_t plen, struct rdzv_msg *m);

/*
 * Looks for one whole frame at the start of p[0..n) and decodes it. Returns
 * 0 with *used set to the bytes to consume, DT_ERR_AGAIN if more bytes are
 * needed, DT_ERR_TOOBIG if the frame announces more than RDZV_MAX_FRAME
 * bytes, or DT_ERR_PROTO. After TOOBIG or PROTO the stream is unusable.
 */
int		 rdzv_msg_parse(const uint8_t *p, size_t n, struct rdzv_msg *m,
		     size_t *used);

/*
 * Appends m as one frame to b. Returns 0, DT_ERR_INVAL for an unknown type
 * or a field over its limit (nothing is appended), or DT_ERR_NOMEM.
 */
int		 rdzv_msg_encode(struct dt_wbuf *b, const struct rdzv_msg *m);

/* The message type's name ("JOIN"), or "unknown". */
const char	*rdzv_msg_name(uint8_t type);

#endif
