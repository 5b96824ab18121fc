/*
 * storewait.c -- who waits for which key. An index (the rendezvous
 * store's hash table again, mapping a key to a wkey's address) of the
 * keys someone waits for; each holds the list of its waiters, so a SET
 * wakes exactly its own waiters however many conns wait for other keys.
 * A waiter is also on its conn's list, to drop all of a conn's waits in
 * one walk when it is cancelled or closes.
 */
#include <stdlib.h>
#include <string.h>

#include "store/storeint.h"

struct wkey {
	struct wnode	*first;
	const uint8_t	*key;		/* the index item's copy */
	size_t		 keylen;
};

/* The wkey for key, or NULL: the index maps a key to a wkey's address. */
static struct wkey *
wait_find(struct dts_store *st, const uint8_t *key, size_t keylen)
{
	struct rdzv_item	*it = rdzv_store_find(st->wix, key, keylen);
	struct wkey		*k;

	if (it == NULL)
		return NULL;
	memcpy(&k, it->val, sizeof(k));
	return k;
}

/* Indexes a new wkey for key. Returns it, or NULL if out of memory. */
static struct wkey *
wait_newkey(struct dts_store *st, const uint8_t *key, size_t keylen)
{
	struct rdzv_item	*it;
	struct wkey		*k;

	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	if (rdzv_store_set(st->wix, key, keylen, &k, sizeof(k), &it) != 0) {
		free(k);
		return NULL;
	}
	k->key = it->key;
	k->keylen = it->keylen;
	return k;
}

int
wait_add(struct dts_conn *c, const uint8_t *key, size_t keylen)
{
	struct dts_store	*st = c->st;
	struct wkey		*k;
	struct wnode		*n;

	if ((n = calloc(1, sizeof(*n))) == NULL)
		return DT_ERR_NOMEM;
	if ((k = wait_find(st, key, keylen)) == NULL &&
	    (k = wait_newkey(st, key, keylen)) == NULL) {
		free(n);
		return DT_ERR_NOMEM;
	}
	n->c = c;
	n->k = k;
	if ((n->knext = k->first) != NULL)
		n->knext->kprev = &n->knext;
	n->kprev = &k->first;
	k->first = n;
	if ((n->cnext = c->waits) != NULL)
		n->cnext->cprev = &n->cnext;
	n->cprev = &c->waits;
	c->waits = n;
	return 0;
}

/* Takes k out of the table and frees it (its list must be empty). */
static void
wait_unkey(struct dts_store *st, struct wkey *k)
{
	rdzv_store_del(st->wix, k->key, k->keylen);
	free(k);
}

/* Unlinks n from its key's list and its conn's, and frees it. */
static void
wait_unnode(struct dts_store *st, struct wnode *n)
{
	struct wkey	*k = n->k;

	if ((*n->kprev = n->knext) != NULL)
		n->knext->kprev = n->kprev;
	if ((*n->cprev = n->cnext) != NULL)
		n->cnext->cprev = n->cprev;
	free(n);
	if (k->first == NULL)
		wait_unkey(st, k);
}

void
wait_drop(struct dts_conn *c)
{
	while (c->waits != NULL)
		wait_unnode(c->st, c->waits);
	if (c->waiting)
		c->st->waiting--;
	c->waiting = 0;
	c->wait_left = 0;
}

void
wait_wake(struct dts_store *st, const uint8_t *key, size_t keylen)
{
	struct wkey	*k;
	struct wnode	*n;
	struct dts_conn	*c;
	uint8_t		 b = SP_STOP_WAITING;

	if ((k = wait_find(st, key, keylen)) == NULL)
		return;
	/* The last node frees k: test for it before unlinking. */
	for (;;) {
		int last = (n = k->first)->knext == NULL;

		c = n->c;
		wait_unnode(st, n);
		if (--c->wait_left == 0) {
			wait_drop(c);
			if (st->cfg.reply(c->cookie, &b, 1) != 0)
				c->paused = 1;
			/* Bytes it sent while it waited are served next. */
			if (c->len > 0 && !c->onready) {
				c->onready = 1;
				c->rnext = st->ready;
				st->ready = c;
			}
		}
		if (last)
			break;
	}
}
