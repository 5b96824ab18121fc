/*
 * tcpstore.h -- a TCPStore-compatible key-value store that knows nothing of
 * sockets. The caller makes a dts_conn per client connection, feeds it
 * the bytes the client sends, and gets the bytes to send back through the
 * reply callback: at once for most queries, later for a WAIT on a key
 * that is not set yet (whoever sets it wakes the waiter). So the same
 * store serves a TCP listener, or clients carried over another channel.
 */
#ifndef DT_STORE_H
#define DT_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct dts_store;			/* opaque */
struct dts_conn;			/* opaque: one client connection */

/* Defaults: torch's own limits on keys and key lists, our value cap. */
#define DTS_MAX_KEY		8192
#define DTS_MAX_VALUE		(64u << 20)
#define DTS_MAX_NKEYS		(128u * 1024)
#define DTS_MAX_BYTES		(1024u << 20)
#define DTS_MAX_KEYS		(4u << 20)

struct dts_cfg {
	size_t	max_key;	/* bytes of one key (0: DTS_MAX_KEY) */
	size_t	max_value;	/* bytes of one value (0: DTS_MAX_VALUE) */
	size_t	max_nkeys;	/* keys in one query (0: DTS_MAX_NKEYS) */
	size_t	max_bytes;	/* keys and values in all (0: DTS_MAX_BYTES) */
	size_t	max_keys;	/* keys in all (0: DTS_MAX_KEYS) */
	/*
	 * Bytes for the client of the conn made with cookie (copy them: buf
	 * is gone after the call). Called from dts_conn_feed and
	 * dts_conn_resume, for that conn or for others whose WAIT it ends.
	 * Must not call the store. Returns 0, or 1 when the client's replies
	 * pile up unread: the conn then serves no more queries (it holds
	 * them) until dts_conn_resume, so a client that never reads cannot
	 * make the server hold its GETs' values over and over.
	 */
	int	(*reply)(void *cookie, const void *buf, size_t len);
	/*
	 * A conn other than the one being fed broke the protocol in bytes it
	 * had sent while it waited: close it (after dts_conn_feed returns)
	 * and dts_conn_free it. msg says why. May be NULL only if unused.
	 */
	void	(*fail)(void *cookie, int code, const char *msg);
};

struct dts_stats {
	size_t	keys;		/* keys set */
	size_t	bytes;		/* their keys and values */
	size_t	conns;
	size_t	waiting;	/* conns in a WAIT */
	size_t	queries;	/* served since the start */
};

/* Makes an empty store. Returns NULL with *e filled. */
struct dts_store *dts_store_new(const struct dts_cfg *, struct dt_err *e);

/* Frees the store; every conn must have been freed first. */
void		 dts_store_free(struct dts_store *);

/* A new client connection, named to the callbacks by cookie. NULL: no memory. */
struct dts_conn	*dts_conn_new(struct dts_store *, void *cookie);

/* The client is gone: forget its bytes and its waits. NULL is a no-op. */
void		 dts_conn_free(struct dts_conn *);

/*
 * Takes bytes the client sent, serves every whole query in them and keeps
 * the rest for the next call. Returns 0, or a negative DT_ERR_* with *e
 * saying why the connection must be closed (a query not TCPStore's, one
 * past a limit, one this store does not serve, a full store); torch's
 * client has no error reply, so closing is how it learns. Then the conn
 * serves nothing more: close it and dts_conn_free it.
 */
int		 dts_conn_feed(struct dts_conn *, const void *buf, size_t len,
		     struct dt_err *e);

/* True while the conn is paused by its reply callback: read no more from it. */
int		 dts_conn_paused(const struct dts_conn *);

/*
 * The client has read its replies: serve what the conn holds. Returns as
 * dts_conn_feed does (and may pause it again).
 */
int		 dts_conn_resume(struct dts_conn *, struct dt_err *e);

/* The generation the conn's client speaks (an enum sp_gen), once known. */
int		 dts_conn_gen(const struct dts_conn *);

/* Fills *st. */
void		 dts_store_stats(const struct dts_store *, struct dts_stats *st);

#endif
