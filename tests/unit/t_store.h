/*
 * t_store.h -- what the store's unit tests share: recorded conversations
 * (tests/data/store), a query builder, and a reply collector.
 */
#ifndef DT_T_STORE_H
#define DT_T_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a file under tests/data/store (malloc'd; NULL if unreadable). */
uint8_t	*ts_load(const char *name, size_t *len);

/* A query being built: appended little-endian, as torch's clients send. */
struct ts_q {
	uint8_t	b[8192];
	size_t	n;
};
void	 ts_u8(struct ts_q *, uint8_t v);
void	 ts_u32(struct ts_q *, uint32_t v);
void	 ts_u64(struct ts_q *, uint64_t v);
/* A length-prefixed string. */
void	 ts_str(struct ts_q *, const char *s);

/* What the store sent one conn, and whether it failed it. */
struct ts_out {
	uint8_t	*p;
	size_t	 len, cap;
	int	 failed;
	int	 pause;		/* what ts_reply returns: 1 pauses the conn */
};
/* The store's callbacks, with a struct ts_out as the cookie. */
int	 ts_reply(void *cookie, const void *buf, size_t len);
void	 ts_fail(void *cookie, int code, const char *msg);

#endif
