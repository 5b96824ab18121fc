/*
 * store.c -- the key-value store: a chained hash table (FNV-1a, doubling)
 * of items that own one allocation holding the key and the value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "rendezvous/store.h"

struct node {
	struct rdzv_item	 it;
	struct node		*next;
	uint64_t		 hash;
	uint8_t			*mem;		/* key, then value */
};

struct rdzv_store {
	struct node	**tab;
	size_t		  mask;
	size_t		  count;
	size_t		  bytes;
	size_t		  maxkeys;
	size_t		  maxbytes;
};

/* FNV-1a over the key. */
static uint64_t
store_hash(const uint8_t *p, size_t n)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

struct rdzv_store *
rdzv_store_new(size_t maxkeys, size_t maxbytes)
{
	struct rdzv_store	*st;

	if ((st = calloc(1, sizeof(*st))) == NULL)
		return NULL;
	st->mask = 255;
	if ((st->tab = calloc(st->mask + 1, sizeof(*st->tab))) == NULL) {
		free(st);
		return NULL;
	}
	st->maxkeys = maxkeys;
	st->maxbytes = maxbytes;
	return st;
}

void
rdzv_store_free(struct rdzv_store *st)
{
	struct node	*n, *next;
	size_t		 i;

	if (st == NULL)
		return;
	for (i = 0; i <= st->mask; i++) {
		for (n = st->tab[i]; n != NULL; n = next) {
			next = n->next;
			free(n->mem);
			free(n);
		}
	}
	free(st->tab);
	free(st);
}

/* The node for key with hash h, or NULL. */
static struct node *
store_lookup(const struct rdzv_store *st, const uint8_t *key, size_t keylen,
    uint64_t h)
{
	struct node	*n;

	for (n = st->tab[h & st->mask]; n != NULL; n = n->next)
		if (n->hash == h && n->it.keylen == keylen &&
		    memcmp(n->it.key, key, keylen) == 0)
			return n;
	return NULL;
}

struct rdzv_item *
rdzv_store_find(struct rdzv_store *st, const uint8_t *key, size_t keylen)
{
	struct node	*n = store_lookup(st, key, keylen,
			    store_hash(key, keylen));

	return n == NULL ? NULL : &n->it;
}

/* Doubles the table when it holds more keys than buckets; failure is harmless. */
static void
store_grow(struct rdzv_store *st)
{
	struct node	**tab, *n, *next;
	size_t		  i, mask;

	if (st->count <= st->mask)
		return;
	mask = st->mask * 2 + 1;
	if ((tab = calloc(mask + 1, sizeof(*tab))) == NULL)
		return;
	for (i = 0; i <= st->mask; i++) {
		for (n = st->tab[i]; n != NULL; n = next) {
			next = n->next;
			n->next = tab[n->hash & mask];
			tab[n->hash & mask] = n;
		}
	}
	free(st->tab);
	st->tab = tab;
	st->mask = mask;
}

/*
 * Gives node n (new when *np is NULL) a fresh allocation of key + len
 * value bytes, keeping the limits. Returns 0 or a negative DT_ERR_*.
 */
static int
store_place(struct rdzv_store *st, struct node **np, const uint8_t *key,
    size_t keylen, uint64_t h, const void *val, size_t len)
{
	struct node	*n = *np;
	size_t		 old = n == NULL ? 0 : n->it.keylen + n->it.vallen;
	uint8_t		*mem;

	if ((n == NULL && st->count >= st->maxkeys) ||
	    st->bytes - old + keylen + len > st->maxbytes)
		return DT_ERR_RANGE;
	if ((mem = malloc(keylen + len + 1)) == NULL)
		return DT_ERR_NOMEM;
	if (n == NULL) {
		if ((n = calloc(1, sizeof(*n))) == NULL) {
			free(mem);
			return DT_ERR_NOMEM;
		}
		n->hash = h;
		n->next = st->tab[h & st->mask];
		st->tab[h & st->mask] = n;
		st->count++;
		*np = n;
	}
	memcpy(mem, key, keylen);
	if (len > 0)
		memcpy(mem + keylen, val, len);
	mem[keylen + len] = '\0';
	free(n->mem);
	n->mem = mem;
	n->it.key = mem;
	n->it.keylen = keylen;
	n->it.val = mem + keylen;
	n->it.vallen = len;
	st->bytes = st->bytes - old + keylen + len;
	return 0;
}

int
rdzv_store_reserve(struct rdzv_store *st, const uint8_t *key, size_t keylen,
    struct rdzv_item **it)
{
	uint64_t	 h = store_hash(key, keylen);
	struct node	*n = store_lookup(st, key, keylen, h);
	int		 rc;

	if (n == NULL) {
		if ((rc = store_place(st, &n, key, keylen, h, NULL, 0)) != 0)
			return rc;
		store_grow(st);
	}
	*it = &n->it;
	return 0;
}

int
rdzv_store_set(struct rdzv_store *st, const uint8_t *key, size_t keylen,
    const void *val, size_t len, struct rdzv_item **it)
{
	uint64_t	 h = store_hash(key, keylen);
	struct node	*n = store_lookup(st, key, keylen, h);
	int		 rc, isnew = n == NULL;

	if ((rc = store_place(st, &n, key, keylen, h, val, len)) != 0)
		return rc;
	if (isnew)
		store_grow(st);
	n->it.isset = 1;
	*it = &n->it;
	return 0;
}

int
rdzv_store_add(struct rdzv_store *st, const uint8_t *key, size_t keylen,
    int64_t delta, int64_t *out, struct rdzv_item **it)
{
	struct rdzv_item	*cur = rdzv_store_find(st, key, keylen);
	char			 buf[32], *end;
	long long		 v = 0;

	if (cur != NULL && cur->isset) {
		if (cur->vallen == 0 || cur->vallen >= sizeof(buf))
			return DT_ERR_PARSE;
		memcpy(buf, cur->val, cur->vallen);
		buf[cur->vallen] = '\0';
		errno = 0;
		v = strtoll(buf, &end, 10);
		if (*end != '\0' || errno != 0)
			return DT_ERR_PARSE;
	}
	if ((delta > 0 && v > INT64_MAX - delta) ||
	    (delta < 0 && v < INT64_MIN - delta))
		return DT_ERR_RANGE;
	v += delta;
	snprintf(buf, sizeof(buf), "%lld", v);
	*out = v;
	return rdzv_store_set(st, key, keylen, buf, strlen(buf), it);
}

void
rdzv_store_del(struct rdzv_store *st, const uint8_t *key, size_t keylen)
{
	uint64_t	  h = store_hash(key, keylen);
	struct node	**np, *n;

	for (np = &st->tab[h & st->mask]; (n = *np) != NULL; np = &n->next) {
		if (n->hash == h && n->it.keylen == keylen &&
		    memcmp(n->it.key, key, keylen) == 0) {
			*np = n->next;
			st->count--;
			st->bytes -= n->it.keylen + n->it.vallen;
			free(n->mem);
			free(n);
			return;
		}
	}
}

size_t
rdzv_store_count(const struct rdzv_store *st)
{
	return st->count;
}

size_t
rdzv_store_bytes(const struct rdzv_store *st)
{
	return st->bytes;
}
