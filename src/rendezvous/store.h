/*
 * store.h -- the rendezvous key-value store: a hash table of byte-string
 * keys to byte-string values, with hard limits on keys and bytes. No I/O;
 * the server hangs its list of waiters on an item that has no value yet.
 */
#ifndef DT_RDZV_STORE_H
#define DT_RDZV_STORE_H

#include <stddef.h>
#include <stdint.h>

struct rdzv_store;			/* opaque */
struct rdzv_conn;			/* the server's */

/* One key. A key someone waits for exists with isset 0 until it is set. */
struct rdzv_item {
	const uint8_t	*key;
	size_t		 keylen;
	const uint8_t	*val;
	size_t		 vallen;
	int		 isset;
	struct rdzv_conn *waiters;	/* the server's: who waits for isset */
};

/*
 * Makes an empty store that holds at most maxkeys keys and maxbytes bytes
 * of keys and values together. Returns NULL if out of memory.
 */
struct rdzv_store	*rdzv_store_new(size_t maxkeys, size_t maxbytes);

/* Frees the store and every item (not what waiters point to). */
void		 rdzv_store_free(struct rdzv_store *);

/* The item for key, or NULL. */
struct rdzv_item *rdzv_store_find(struct rdzv_store *, const uint8_t *key,
		     size_t keylen);

/*
 * The item for key, made unset if there is none. Returns 0 with *it set,
 * DT_ERR_RANGE if the store is full, or DT_ERR_NOMEM.
 */
int		 rdzv_store_reserve(struct rdzv_store *, const uint8_t *key,
		     size_t keylen, struct rdzv_item **it);

/*
 * Sets key to val[0..len), replacing any value. Returns 0 with *it set to
 * the item (its waiters untouched), DT_ERR_RANGE if the store is full, or
 * DT_ERR_NOMEM; on error the old value stays.
 */
int		 rdzv_store_set(struct rdzv_store *, const uint8_t *key,
		     size_t keylen, const void *val, size_t len,
		     struct rdzv_item **it);

/*
 * Adds delta to the counter at key (a decimal integer, as TCPStore keeps
 * it; a missing key counts as 0) and stores the result in *out. Returns 0
 * with *it set, DT_ERR_PARSE if the value is not a decimal integer,
 * DT_ERR_RANGE on overflow or a full store, or DT_ERR_NOMEM.
 */
int		 rdzv_store_add(struct rdzv_store *, const uint8_t *key,
		     size_t keylen, int64_t delta, int64_t *out,
		     struct rdzv_item **it);

/* Removes key and its value, if any (its waiters must be gone). */
void		 rdzv_store_del(struct rdzv_store *, const uint8_t *key,
		     size_t keylen);

/* The number of keys (set or waited for) and the bytes they hold. */
size_t		 rdzv_store_count(const struct rdzv_store *);
size_t		 rdzv_store_bytes(const struct rdzv_store *);

#endif
