/*
 * client.h -- the blocking rendezvous client a worker uses (libdtcomm):
 * plain sockets and poll, every call bounded by a timeout.
 *
 * Every call sends one request and waits for its answer. A server ERROR
 * comes back as its DT_ERR_* code with the server's text in *e; an ABORT
 * comes back as DT_ERR_ABORTED, and so does every later call.
 */
#ifndef DT_RDZV_CLIENT_H
#define DT_RDZV_CLIENT_H

#include <stddef.h>
#include <stdint.h>

struct dt_err;
struct rdzv_client;			/* opaque */

/* What JOIN tells a worker. */
struct rdzv_join_info {
	int	rank;
	int	world;
	int	local_rank;
	int	local_world;
	int	node_rank;
	int	nnodes;
};

/*
 * Splits "host:port" or "[v6addr]:port" into host[0..hostcap) and port.
 * Returns 0 or DT_ERR_PARSE.
 */
int	 rdzv_addr_split(const char *addr, char *host, size_t hostcap,
	     int *port);

/*
 * Connects to the server at addr ("host:port"), retrying a refused
 * connection until timeout seconds pass (0: no limit), and authenticates
 * with the secret both ways. addr "unix:@NAME" is the rank's own agent
 * on an abstract Unix socket (doc/agent-protocol.md): no secret, no
 * handshake, the agent vouches for us (secret may be NULL). timeout also bounds each later call. Returns
 * 0 with *cp set, or DT_ERR_AUTH (wrong secret, or a server that does not
 * know it), DT_ERR_TIMEOUT, DT_ERR_SYS, DT_ERR_PROTO, DT_ERR_CLOSED,
 * DT_ERR_ABORTED, with *e filled in.
 */
int	 rdzv_client_connect(const char *addr, const uint8_t *secret,
	     size_t slen, double timeout, struct rdzv_client **cp,
	     struct dt_err *e);

/* Sets the timeout of later calls in seconds; 0 waits without limit. */
void	 rdzv_client_set_timeout(struct rdzv_client *, double timeout);

/*
 * Joins the job as rank (from the launcher's plan), or with rank -1 by
 * (host, local_rank). Without a plan the answer comes once every rank has
 * joined. Returns 0 with *ji filled in, or a negative DT_ERR_*.
 */
int	 rdzv_client_join(struct rdzv_client *, int rank, const char *host,
	     int local_rank, struct rdzv_join_info *ji, struct dt_err *e);

/* Sets key (1 to RDZV_MAX_KEY bytes) to val[0..len). Returns 0 or DT_ERR_*. */
int	 rdzv_client_set(struct rdzv_client *, const char *key,
	     const void *val, size_t len, struct dt_err *e);

/*
 * Gets key into buf[0..cap), setting *len to the value's length; with wait,
 * until someone sets it, else DT_ERR_NOTFOUND if it is not set. A value
 * longer than cap gives DT_ERR_RANGE with *len set and buf untouched.
 */
int	 rdzv_client_get(struct rdzv_client *, const char *key, int wait,
	     void *buf, size_t cap, size_t *len, struct dt_err *e);

/* Adds delta to the counter at key; *out gets the new value. */
int	 rdzv_client_add(struct rdzv_client *, const char *key, int64_t delta,
	     int64_t *out, struct dt_err *e);

/* Waits until every rank of the job has called barrier. Needs a join first. */
int	 rdzv_client_barrier(struct rdzv_client *, struct dt_err *e);

/* A heartbeat: checks the server still answers. */
int	 rdzv_client_ping(struct rdzv_client *, struct dt_err *e);

/* The socket, for a caller that polls it (readable: ABORT or close). */
int	 rdzv_client_fd(const struct rdzv_client *);

/* Closes the connection and frees c (NULL is fine). */
void	 rdzv_client_free(struct rdzv_client *c);

#endif
