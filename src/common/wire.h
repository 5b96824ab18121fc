/*
 * wire.h -- length-prefixed frames and bounds-checked field codecs.
 *
 * A frame on every dtrun stream (agent link, rendezvous) is
 *
 *	u32 length	of what follows (type + payload), network byte order
 *	u8  type
 *	    payload	length - 1 bytes of fields
 *
 * Fields are u8/u16/u32/u64 in network byte order, and strings/blobs as a
 * u32 length followed by the bytes. Nothing here does I/O, so all of it is
 * unit-tested and fuzzed.
 */
#ifndef DT_WIRE_H
#define DT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define DT_FRAME_HDR	5		/* u32 length + u8 type */

/* The u32 at p, in network byte order: every hand decode uses this one. */
static inline uint32_t
dt_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* A growable output buffer. After an allocation failure, oom stays set and puts are no-ops. */
struct dt_wbuf {
	uint8_t	*p;
	size_t	 len;
	size_t	 cap;
	int	 oom;
};

void	 dt_wbuf_init(struct dt_wbuf *);
void	 dt_wbuf_free(struct dt_wbuf *);
void	 dt_wbuf_reset(struct dt_wbuf *);	/* len = 0, keeps memory */
void	 dt_wbuf_put(struct dt_wbuf *, const void *, size_t);
void	 dt_wbuf_u8(struct dt_wbuf *, uint8_t);
void	 dt_wbuf_u16(struct dt_wbuf *, uint16_t);
void	 dt_wbuf_u32(struct dt_wbuf *, uint32_t);
void	 dt_wbuf_u64(struct dt_wbuf *, uint64_t);
/* Returns room for n more bytes at p + len (len unchanged), or NULL. */
uint8_t	*dt_wbuf_reserve(struct dt_wbuf *, size_t n);
/* u32 length + bytes. */
void	 dt_wbuf_blob(struct dt_wbuf *, const void *, size_t);
/* u32 length + bytes of a C string (no NUL on the wire). */
void	 dt_wbuf_str(struct dt_wbuf *, const char *);
/* u32 count + that many strings. */
void	 dt_wbuf_strv(struct dt_wbuf *, char *const *, size_t);
/*
 * Appends n bytes of text and keeps a NUL after them (not counted in len),
 * so (char *)p reads as a C string, "" after the first call. Returns 0, or
 * -1 when out of memory (oom is set).
 */
int	 dt_wbuf_text(struct dt_wbuf *, const void *, size_t);

/*
 * Starts a frame of the given type; returns the offset to pass to
 * dt_frame_end, which patches in the length. dt_frame_end returns 0, or
 * DT_ERR_TOOBIG if the frame exceeds max bytes (the frame is then removed),
 * or DT_ERR_NOMEM.
 */
size_t	 dt_frame_begin(struct dt_wbuf *, uint8_t type);
int	 dt_frame_end(struct dt_wbuf *, size_t start, size_t max);

/*
 * Like dt_frame_end, for a message that may not fit one frame: a payload
 * of up to total bytes is cut into frames of at most max bytes each, all
 * but the last of type cont, the last of the message's own type (what the
 * receiver joins again before decoding). Returns 0, DT_ERR_TOOBIG if the
 * payload exceeds total (the message is then removed), or DT_ERR_NOMEM.
 */
int	 dt_frame_end_parts(struct dt_wbuf *, size_t start, size_t max,
	     uint8_t cont, size_t total);

/*
 * Looks for one whole frame at the start of p[0..n). On success returns 0
 * and sets *type, *payload, *plen and *used (bytes to consume). Returns
 * DT_ERR_AGAIN if more bytes are needed, DT_ERR_TOOBIG if the announced
 * length exceeds max (the stream is then unusable), DT_ERR_PROTO for a
 * zero length.
 */
int	 dt_frame_parse(const uint8_t *p, size_t n, size_t max, uint8_t *type,
	     const uint8_t **payload, size_t *plen, size_t *used);

/*
 * A reader over one payload. Every getter checks the remaining length
 * first; on underflow or a bad field it sets err and returns 0/NULL, and
 * all later getters do the same, so a decoder checks err once at the end.
 */
struct dt_rbuf {
	const uint8_t	*p;
	size_t		 len;
	size_t		 off;
	int		 err;
};

void		 dt_rbuf_init(struct dt_rbuf *, const void *, size_t);
uint8_t		 dt_rbuf_u8(struct dt_rbuf *);
uint16_t	 dt_rbuf_u16(struct dt_rbuf *);
uint32_t	 dt_rbuf_u32(struct dt_rbuf *);
uint64_t	 dt_rbuf_u64(struct dt_rbuf *);
/* Copies exactly n bytes into dst. */
void		 dt_rbuf_get(struct dt_rbuf *, void *dst, size_t n);
/* A u32-length blob, returned in place (not copied); *n set to its length. */
const uint8_t	*dt_rbuf_blob(struct dt_rbuf *, size_t *n, size_t max);
/* A u32-length string, malloc'd and NUL-terminated; embedded NULs are an error. */
char		*dt_rbuf_strdup(struct dt_rbuf *, size_t max);
/* u32 count (<= maxn) + strings; returns a NULL-terminated malloc'd vector. */
char		**dt_rbuf_strv(struct dt_rbuf *, size_t maxn, size_t maxlen,
		     size_t *count);
/* Bytes left unread. */
size_t		 dt_rbuf_left(const struct dt_rbuf *);
/* Returns DT_ERR_PROTO unless every byte was read and no getter failed. */
int		 dt_rbuf_end(const struct dt_rbuf *);

/* Frees a vector from dt_rbuf_strv (or any NULL-terminated malloc'd vector). */
void		 dt_strv_free(char **);

#endif
