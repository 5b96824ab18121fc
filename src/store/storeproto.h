/*
 * storeproto.h -- the wire protocol of PyTorch's c10d TCPStore, client to
 * server: an incremental decoder that does no I/O, and the reply encoders.
 *
 * A query is one opcode byte and its fields; integers are in the client's
 * byte order (little-endian on every machine torch runs on), strings and
 * byte vectors are a u64 length and the bytes. Two generations of clients
 * number the opcodes differently (doc/store.md has the table):
 *
 *   legacy     torch <= 2.1: SET=0 ... WATCH_KEY=7 DELETE_KEY=8 APPEND=9
 *              MULTI_GET=10 MULTI_SET=11 CANCEL_WAIT=12; no handshake.
 *   validated  torch >= 2.2: the first query is VALIDATE=0 with the u32
 *              0x3C85F7CE; then SET=1 ... GETNUMKEYS=7 DELETE_KEY=8 ...
 *              CANCEL_WAIT=12 PING=13 QUEUE_PUSH=14 ... BARRIER=18.
 *
 * The decoder tells the two apart by a connection's first five bytes.
 */
#ifndef DT_STOREPROTO_H
#define DT_STOREPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

#define SP_MAGIC	0x3C85F7CEu	/* VALIDATE's number (torch >= 2.2) */

/* The queries, named once for both generations. */
enum sp_op {
	SP_VALIDATE, SP_SET, SP_COMPARE_SET, SP_GET, SP_ADD, SP_CHECK,
	SP_WAIT, SP_GETNUMKEYS, SP_WATCH_KEY, SP_DELETE_KEY, SP_APPEND,
	SP_MULTI_GET, SP_MULTI_SET, SP_CANCEL_WAIT, SP_PING, SP_QUEUE_PUSH,
	SP_QUEUE_POP, SP_QUEUE_LEN, SP_LIST_KEYS, SP_BARRIER, SP_NOPS
};

enum sp_gen { SP_GEN_UNKNOWN, SP_GEN_LEGACY, SP_GEN_VALIDATED };

/* Reply bytes: WAIT's and CANCEL_WAIT's, and CHECK's. */
#define SP_STOP_WAITING		0
#define SP_WAIT_CANCELED	1
#define SP_READY		0
#define SP_NOT_READY		1

/* A byte string inside the buffer being decoded. */
struct sp_str {
	const uint8_t	*p;
	size_t		 len;
};

/*
 * One decoded query. Its strings point into the caller's buffer and into
 * the decoder's array, both valid until the next sp_decode or a change of
 * the buffer. COMPARE_SET: val is the expected value, val2 the desired.
 * CHECK, WAIT, MULTI_GET: keys[0..nkeys); MULTI_SET: keys and vals.
 */
struct sp_query {
	enum sp_op	 op;
	uint8_t		 wire;		/* the opcode as sent */
	struct sp_str	 key;
	struct sp_str	 val;
	struct sp_str	 val2;
	int64_t		 num;		/* ADD's delta, BARRIER's world */
	uint32_t	 u32;		/* VALIDATE's magic, PING's nonce */
	size_t		 nkeys;
	struct sp_str	*keys;
	struct sp_str	*vals;
};

/* Hard limits: a query past one is refused before its bytes arrive. */
struct sp_limits {
	size_t	max_key;	/* bytes in one key */
	size_t	max_value;	/* bytes in one value */
	size_t	max_nkeys;	/* keys in one CHECK, WAIT, MULTI_* */
	size_t	max_query;	/* bytes in one whole query */
};

/* A connection's decoder: its generation and an array for key lists. */
struct sp_dec {
	enum sp_gen	 gen;
	struct sp_limits lim;
	struct sp_str	*arr;
	size_t		 arrcap;
};

/* Starts a decoder for a new connection with the limits lim. */
void		 sp_dec_init(struct sp_dec *, const struct sp_limits *lim);

/* Frees what the decoder holds (not the struct). */
void		 sp_dec_free(struct sp_dec *);

/*
 * Decodes the query at the start of buf[0..len). Returns the number of
 * bytes it takes (> 0) with *q filled; DT_ERR_AGAIN when buf holds only a
 * part of it (nothing taken: call again with more bytes); or, with e
 * filled, DT_ERR_PROTO (an opcode no client sends, a wrong magic),
 * DT_ERR_TOOBIG (past a limit) or DT_ERR_NOMEM. Every query of both
 * generations decodes; which ones are served is the store's business.
 */
long		 sp_decode(struct sp_dec *, const uint8_t *buf, size_t len,
		     struct sp_query *q, struct dt_err *e);

/* The query's name as torch spells it ("COMPARE_SET"). */
const char	*sp_op_name(enum sp_op);

/* The opcode generation g gives op, or -1 if g has none. */
int		 sp_wire_op(enum sp_gen g, enum sp_op op);

/* Reply encoders: write the value at out and return the bytes written. */
size_t		 sp_put_u32(uint8_t *out, uint32_t v);
size_t		 sp_put_i64(uint8_t *out, int64_t v);
/* A byte vector's length; its bytes follow it on the wire. */
size_t		 sp_put_len(uint8_t *out, uint64_t len);

#endif
