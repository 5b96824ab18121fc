/*
 * pack.h -- PACKED frames: whole frames compressed (LZ4) into one frame,
 * for streams where every byte costs: an ssh channel encrypts each byte on
 * the sending host and decrypts it in dtrun, and libssh2 decrypts 16 bytes
 * a call. Ranks' output is text, which LZ4 shrinks several times at a few
 * GB/s, so fewer bytes cross the channel for less work on both ends.
 *
 *	u32 length	1 + 4 + the block's bytes
 *	u8  PACK_TYPE
 *	u32 raw		the frames' length before packing
 *	    block	one LZ4 block holding those raw bytes: whole frames,
 *			none of them PACKED
 *
 * The link packs (link_pack) and unpacks; its owner never sees a PACKED
 * frame. Nothing here does I/O.
 */
#ifndef DT_PACK_H
#define DT_PACK_H

#include <stddef.h>
#include <stdint.h>

struct dt_err;
struct dt_wbuf;
struct evbuffer;

/* The frame type, in the both-ways range of the agent protocol. */
#define PACK_TYPE	129
/*
 * Fewer bytes are sent as they are: a line or a heartbeat gains little,
 * and packing would cost a call and a frame header on each.
 */
#define PACK_MIN	2048

/*
 * Appends n bytes of whole frames to b as one PACKED frame of at most max
 * bytes, if that saves at least an eighth of them. Returns 1 if it did, 0
 * if not (b is then as before: send the bytes as they are).
 */
int	pack_frames(struct dt_wbuf *b, const void *p, size_t n, size_t max);

/*
 * Appends the frames a PACKED frame's payload holds to out, at most max
 * bytes. Returns 0, or DT_ERR_PROTO (a bad or oversized block) or
 * DT_ERR_NOMEM with e (may be NULL) filled; out is then as before.
 */
int	pack_unpack(const uint8_t *payload, size_t len, size_t max,
	    struct evbuffer *out, struct dt_err *e);

#endif
