/*
 * server.h -- the rendezvous server: lives in the launcher's libevent loop,
 * authenticates workers, gives them ranks, and serves the key-value
 * store, barriers and abort notices (protocol in doc/rendezvous.md).
 *
 * It never blocks the loop: sockets are non-blocking, every connection's
 * buffers are bounded, and a connection that sends a bad frame, fails to
 * authenticate, or stalls mid-frame is dropped without disturbing others.
 */
#ifndef DT_RDZV_SERVER_H
#define DT_RDZV_SERVER_H

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct dt_err;
struct rdzv_server;			/* opaque */
struct rdzv_conn;			/* opaque: a virtual connection */

/* Where one rank of the launcher's plan runs. */
struct rdzv_rank_info {
	int		 rank;		/* its index in the plan */
	int		 local_rank;	/* 0 .. local_world - 1 on its host */
	int		 local_world;	/* ranks on its host */
	int		 node_rank;	/* 0 .. nnodes - 1 */
	const char	*host;		/* as the launcher names it (DTRUN_HOST) */
};

struct rdzv_server_cfg {
	/*
	 * No TCP listener: every worker comes through rdzv_server_vopen
	 * (dtrun's ranks, through their agents), so a port nobody needs
	 * is not open to anyone who can reach the host.
	 */
	int		 no_listen;
	const char	*bind_addr;	/* NULL: every address */
	int		 port;		/* 0: an ephemeral port */
	const uint8_t	*secret;	/* the job secret, copied */
	size_t		 secret_len;	/* RDZV_SECRET_MIN .. RDZV_SECRET_MAX */
	int		 world;		/* ranks in the job, >= 1 */
	int		 nnodes;	/* hosts in the plan (ignored without one) */
	/*
	 * The plan, world entries indexed by rank, copied. NULL: no plan;
	 * workers join by (host, local rank) and once all world have come,
	 * ranks are given in order of host name, then local rank.
	 */
	const struct rdzv_rank_info *ranks;
	double		 start_timeout;	/* seconds for all to join; 0: none */
	/*
	 * Count start_timeout from a worker's first request (its JOIN)
	 * instead of from now: a job whose workers never use the rendezvous
	 * (PyTorch env://) must not fail for it; one that does must not
	 * hang on a missing worker. rdzv_server_start_clock counts it from
	 * the workers' start too.
	 */
	int		 start_on_first_use;
	double		 io_timeout;	/* seconds for a handshake, a frame,
					   or a write to drain; 0: 10 */
	int		 max_conns;	/* 0: world + 1024 */
	/*
	 * Called from the loop (never from inside an rdzv_server_* call), and
	 * may call rdzv_server_abort or rdzv_server_free. on_timeout gets a
	 * message naming the ranks and hosts that never joined; every waiting
	 * worker has already been told the job aborts.
	 */
	void		(*on_timeout)(void *arg, const char *msg);
	/*
	 * The server cannot go on (out of descriptors at accept with no
	 * unauthenticated connection left to drop for room, said with the
	 * limit and the fix) and has aborted; may be NULL.
	 */
	void		(*on_error)(void *arg, const char *msg);
	void		(*on_all_joined)(void *arg);
	/* A rank's first join, with how many have joined; may be NULL. */
	void		(*on_join)(void *arg, int rank, int njoined);
	/*
	 * A joined rank's heartbeat (PING: dtcomm_heartbeat), so the launcher
	 * counts a rank that beats as alive; may be NULL.
	 */
	void		(*on_alive)(void *arg, int rank);
	void		*arg;
};

/* Counters, for tests and the launcher's verbose output. */
struct rdzv_server_stats {
	size_t		 conns;		/* open connections */
	size_t		 joined;	/* ranks that have joined */
	size_t		 accepted;	/* connections ever accepted */
	size_t		 auth_failed;	/* refused: wrong secret or version */
	size_t		 dropped;	/* bad frame, timeout, or overflow */
	/* Of those, unauthenticated ones dropped for room (max_conns or
	   out of descriptors). */
	size_t		 shed;
	size_t		 requests;	/* frames handled */
	size_t		 keys;		/* keys in the store */
};

/*
 * Starts listening on cfg's address and serving on base. Returns 0 with
 * *sp set, or a negative DT_ERR_* with *e filled in (DT_ERR_INVAL for a
 * bad cfg or plan, DT_ERR_SYS if the socket cannot be made).
 */
int	 rdzv_server_new(struct event_base *base,
	     const struct rdzv_server_cfg *cfg, struct rdzv_server **sp,
	     struct dt_err *e);

/*
 * The workers start now: start_timeout counts from here. With
 * start_on_first_use, a server to which no worker has made a request
 * by then (workers that do not use it, or not yet) counts afresh from
 * the first request; one that a worker used fails as without it.
 */
void	 rdzv_server_start_clock(struct rdzv_server *);

/* The TCP port the server listens on; 0 with no_listen. */
int	 rdzv_server_port(const struct rdzv_server *);

/*
 * Marks the job as aborting: every connected worker is sent ABORT with why,
 * those waiting (get, barrier, join) stop waiting, and every later request
 * is answered with ABORT. Idempotent; the first why is kept.
 */
void	 rdzv_server_abort(struct rdzv_server *, const char *why);

/*
 * With a plan: 1 if rank has joined, 0 if not (or rank is out of range).
 * Without one ranks are given only once all have come: 0 until then.
 */
int	 rdzv_server_joined(const struct rdzv_server *, int rank);

/*
 * A virtual connection: a worker's stream that reaches the server some
 * other way than its own socket (through its host's agent and the
 * agent's link), already vouched for, so it starts authenticated: no
 * CHALLENGE, the worker's first frame is its JOIN. Requests are handled
 * as on a socket, one at a time in order, each connection waiting on its
 * own. Answers go out through send, whole frames, from inside server
 * calls (send must not call back into the server). closed says the
 * server dropped the connection (a bad frame, a timeout, too much input
 * ahead of its answers): forget the handle. It is not called for
 * rdzv_server_vclose or rdzv_server_free.
 */
struct rdzv_vconn_cbs {
	void	(*send)(void *arg, const uint8_t *p, size_t n);
	void	(*closed)(void *arg);
	void	*arg;
};

/* Opens one (calling no callback); NULL when out of memory or over max_conns. */
struct rdzv_conn *rdzv_server_vopen(struct rdzv_server *,
	     const struct rdzv_vconn_cbs *);
/*
 * Feeds n bytes the worker sent (any split of its frames). Past 16
 * maximum frames waiting behind an unanswered request the connection is
 * dropped, as a socket's reader would have stopped reading.
 */
void	 rdzv_server_vinput(struct rdzv_conn *, const void *p, size_t n);
/* The worker went away: as a socket's close. */
void	 rdzv_server_vclose(struct rdzv_conn *);

/* Fills *st. */
void	 rdzv_server_stats(const struct rdzv_server *,
	     struct rdzv_server_stats *st);

/* Closes every connection and the listener and frees s (NULL is fine). */
void	 rdzv_server_free(struct rdzv_server *s);

#endif
