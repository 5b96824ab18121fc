/*
 * env.h -- the environment every rank gets. The job sends the host part
 * once per host (JOB message) and the rank part with each rank (RANK); the
 * agent lays both over its own environment, rank part last.
 */
#ifndef DT_ENV_H
#define DT_ENV_H

#include <stdint.h>

struct ap_iface;
struct dt_err;
struct opts;
struct plan;
struct strv;

/* Everything the variables are made from; env_prepare fills it for a job. */
struct env_ctx {
	const struct opts	*o;
	const struct plan	*plan;
	const char		*job_id;
	unsigned		 frameworks;	/* FW_* of framework.h */
	char			 master_addr[256];	/* rank 0's host, as ranks reach it */
	int			 per_host;	/* each host's agent chooses its interface */
	char			 rank0_addr[256];	/* what those agents route to */
	int			 master_port;
	char			 ifname[64];	/* the interface (this machine's); "" = unknown */
	char			 ifaddr[64];	/* its IPv4 address: where hosts reach us */
	int			 nccl_ifname;	/* export NCCL_SOCKET_IFNAME */
	int			 gloo_ifname;	/* export GLOO_SOCKET_IFNAME */
	int			 ps_port;	/* MXNet's DMLC_PS_ROOT_PORT */
	int			*worker_ports;	/* per rank, for TF_CONFIG; NULL without */
	const char		*rdzv_addr;	/* host:port of dtrun's rendezvous */
	const char		*rdzv_token;	/* the job secret, hex */
	int			 attempt;	/* restarts so far (DTRUN_RESTART_COUNT) */
	int			 max_restarts;	/* --max-restarts */
};

/*
 * Fills c for a job: the frameworks, the network interface (--iface or
 * chosen; logged with -v), MASTER_ADDR, and free ports. Returns 0, or
 * DT_ERR_NOTFOUND with e naming the interfaces there are. env_release
 * frees what it allocated.
 */
int	env_prepare(struct env_ctx *c, const struct opts *, const struct plan *,
	    const char *job_id, struct dt_err *e);
void	env_release(struct env_ctx *c);

/* Appends the variables shared by every rank of host h, then the user's -x. */
void	env_host(const struct env_ctx *, int h, struct strv *);
/* Appends the variables of one rank (never one the user set with -x). */
void	env_rank(const struct env_ctx *, int rank, struct strv *);

/*
 * For host h's JOB: writes its --iface candidates into cands ("" = by the
 * route to c->rank0_addr) and returns the AP_IF_* variables its agent is to
 * set; 0 and "" when dtrun chose for every host (a job on this machine).
 */
unsigned env_host_iface(const struct env_ctx *, int h, char *cands,
	    size_t len);
/*
 * Host h's agent said what it chose (IFACE): -v shows it. Returns 0, or -1
 * after logging why it had none and the fix: the job must not start.
 */
int	env_host_chose(const struct env_ctx *, int h, const struct ap_iface *);

/* The address ranks use to reach host h (for TF_CONFIG, DMLC_NODE_HOST). */
const char *env_host_addr(const struct env_ctx *, int h);

/*
 * DTRUN_RANK_SEED of --seed: the (rank + 1)th output of a SplitMix64
 * generator seeded with seed, shifted right by one so that it fits a
 * signed 64-bit integer (TensorFlow, torch.manual_seed and Python take it).
 */
uint64_t env_rank_seed(uint64_t seed, unsigned rank);

#endif
