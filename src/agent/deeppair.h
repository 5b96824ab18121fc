/*
 * deeppair.h -- dtrun --check --deep on one host: the pair listener the
 * other hosts' agents send to, and this host's end of a PAIR, which
 * measures the path to another host's listener as a job's traffic would
 * cross it: round trips on one connection, or the throughput of bytes
 * spread over several connections at once (NCCL's socket transport opens
 * several per peer).
 *
 * Between two agents, on one TCP connection: the listener's challenge,
 * 16 bytes (a nonce), then the sender's hello: the header, 16 bytes:
 * "DTDP", u32 kind, u64 n (big-endian), and 32 bytes of HMAC-SHA256 under
 * the check's key (dtrun gives every agent of the check the same one) over
 * DEEP_LABEL, the nonce and the header. A connection that does not prove
 * itself so within DEEP_AUTH_S is closed, and one that is still proving
 * itself is closed first when the listener needs room: a stranger never
 * takes a pair's place. The listener answers a proven hello with "p"; a
 * connection closed before that was shed in a crowd, and is opened again
 * (DEEP_RETRIES). Kind 1 PING: n round
 * trips; the listener echoes every byte it reads, and each round trip is
 * 8 bytes out and back. Kind 2 BULK: n bytes follow; once it read them
 * all the listener answers one byte, and the sender's clock stops at the
 * last connection's answer.
 */
#ifndef DT_DEEPPAIR_H
#define DT_DEEPPAIR_H

#include <stddef.h>
#include <stdint.h>

struct dt_err;
struct event_base;
struct deep_srv;
struct deep_pair;

#define DEEP_PINGS		16	/* round trips a PING measures */
#define DEEP_CONNECT_S		5	/* a PAIR's connects, at most */
#define DEEP_PING_S		10	/* its round trips, at most */
#define DEEP_BULK_S		10	/* its bytes: then it reports what
					   arrived by then */
#define DEEP_SRV_CONNS		256	/* the listener's proven connections
					   at once (a quarter of the open-
					   files limit, if that is less) */
#define DEEP_SRV_PENDING	128	/* its connections still to prove
					   themselves (an eighth of the limit,
					   if less); past it the oldest goes */
#define DEEP_AUTH_S		5	/* to prove itself, at most */
#define DEEP_SRV_IDLE_S		30	/* one silent this long: closed */
#define DEEP_KEY_LEN		32	/* the check's key, bytes */
#define DEEP_NONCE_LEN		16
#define DEEP_BYTES_MAX		(64ULL << 30) /* a PAIR's bytes, at most */

/* What one PAIR measured. */
struct deep_result {
	int		 err;		/* 0, or an errno: see why */
	char		 why[256];
	uint64_t	 rtt_us;	/* PING: the median round trip */
	uint64_t	 rtt_min_us;
	uint64_t	 rtt_max_us;
	uint64_t	 bytes;		/* BULK: arrived at the listener */
	uint64_t	 us;		/* in this long */
	int		 capped;	/* stopped at DEEP_BULK_S */
};

typedef void (*deep_done_fn)(void *arg, const struct deep_result *);

/*
 * Listens on addr (IPv4, any port) for the others' PAIRs, which prove
 * they hold key (DEEP_KEY_LEN bytes), writing "ADDR:PORT" into where.
 * NULL on failure, with e filled.
 */
struct deep_srv	*deep_srv_new(struct event_base *, const char *addr,
		    const uint8_t *key, char *where, size_t len,
		    struct dt_err *e);
void		 deep_srv_free(struct deep_srv *);

/*
 * Measures the path to target ("ADDR:PORT", a deep_srv of the same key):
 * round trips when bytes is 0, else bytes over streams connections. done
 * is called once, never from inside this call; NULL (e filled) when it
 * cannot start.
 */
struct deep_pair *deep_pair_start(struct event_base *, const char *target,
		    const uint8_t *key, uint64_t bytes, uint32_t streams,
		    deep_done_fn, void *arg, struct dt_err *e);
void		 deep_pair_free(struct deep_pair *);

#endif
