/*
 * peerflags.h -- the options torchrun and mpirun users type out of habit.
 * Those that mean what one of dtrun's does are taken as it (opttable.c
 * gives --nproc_per_node, --npernode and --max_restarts their option's id;
 * cli.c reads -np as -n); --nnodes becomes a check of the host count;
 * --master-port and --master-addr set the variable; the rest mean nothing
 * under one launcher that runs its own rendezvous: each is taken with a
 * note saying what dtrun does instead, or refused where going on would
 * surprise (a job meant for several nodes).
 */
#ifndef DT_PEERFLAGS_H
#define DT_PEERFLAGS_H

#include <stddef.h>

struct dt_err;
struct opts;

/* torchrun's options with no meaning here (peer_flag's which). */
enum peer_flag {
	PEER_STANDALONE,	/* --standalone */
	PEER_RDZV_ENDPOINT,	/* --rdzv-endpoint HOST:PORT */
	PEER_RDZV_BACKEND,	/* --rdzv-backend NAME */
	PEER_RDZV_ID,		/* --rdzv-id ID */
	PEER_NODE_RANK,		/* --node-rank N */
	PEER_MONITOR_INTERVAL,	/* --monitor-interval SECS */
};

/*
 * Takes the option which (as typed: name) with arg (NULL for
 * --standalone): adds a note to o, or returns DT_ERR_INVAL with e saying
 * what to do instead. Returns 0 or that.
 */
int	peer_flag(struct opts *o, enum peer_flag which, const char *name,
	    const char *arg, struct dt_err *e);

/* --nnodes N or MIN:MAX into o. Returns 0 or DT_ERR_INVAL with e set. */
int	peer_nnodes(struct opts *o, const char *arg, struct dt_err *e);

/*
 * Checks --nnodes against the number of hosts the job runs on. Returns 0
 * or DT_ERR_INVAL with e naming both counts.
 */
int	peer_nnodes_check(const struct opts *o, size_t nhosts,
	    struct dt_err *e);

/*
 * What dtrun does instead of a peer's option it has no row for (typed as
 * "--map-by", "-mca" or "--rdzv_conf=x"), or NULL.
 */
const char	*peer_unknown_hint(const char *typed);

#endif
