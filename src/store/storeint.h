/*
 * storeint.h -- what tcpstore.c and storewait.c share: the store, the conn,
 * and the table of who waits for which key. Not for other modules.
 */
#ifndef DT_STOREINT_H
#define DT_STOREINT_H

#include "rendezvous/store.h"
#include "store/tcpstore.h"
#include "store/storeproto.h"

struct wkey;

/* One conn waiting for one key: on the key's list and on the conn's. */
struct wnode {
	struct dts_conn	 *c;
	struct wkey	 *k;
	struct wnode	 *knext, **kprev;
	struct wnode	 *cnext, **cprev;
};

struct dts_conn {
	struct dts_store *st;
	void		 *cookie;
	struct sp_dec	  dec;
	uint8_t		 *buf;		/* bytes not served yet */
	size_t		  len, cap;
	struct wnode	 *waits;
	size_t		  wait_left;	/* keys of its WAIT still unset */
	int		  waiting;
	int		  dead;
	int		  onready;
	int		  paused;	/* its replies pile up unread */
	struct dts_conn	 *rnext;
};

struct dts_store {
	struct dts_cfg	  cfg;
	struct sp_limits  lim;
	struct rdzv_store *kv;
	struct rdzv_store *wix;		/* key -> its waiters (a wkey *) */
	struct dts_conn	 *ready;	/* woken with bytes to serve */
	size_t		  conns, waiting, queries;
};

/* Makes c wait for key. Returns 0 or DT_ERR_NOMEM. */
int	 wait_add(struct dts_conn *c, const uint8_t *key, size_t keylen);

/* Ends c's waits (its WAIT is answered, cancelled, or c is gone). */
void	 wait_drop(struct dts_conn *c);

/* key is set: counts it off for each of its waiters, waking the done ones. */
void	 wait_wake(struct dts_store *st, const uint8_t *key, size_t keylen);

#endif
