/*
 * plan.h -- the job's processes and where they run, built from the
 * command line, engine.yaml and the hostfile library's placement. Workers
 * come first (rank = index, host-major: one host's workers are contiguous),
 * then MXNet's parameter servers and scheduler when -s asks for them.
 * After the hosts with ranks come the spares (--spares): hosts with an
 * agent and no rank, each ready to take a lost host's place at a restart.
 */
#ifndef DT_PLAN_H
#define DT_PLAN_H

#include <stddef.h>

#include "hostfile/config.h"
#include "hostfile/hostfile.h"

struct dt_err;
struct opts;

struct plan_host {
	char	*name;		/* as the user wrote it; "localhost" locally */
	char	*user;		/* NULL = default */
	int	 port;		/* 0 = default */
	int	 nranks;	/* processes here, any role */
	int	 nworkers;	/* workers here: LOCAL_WORLD_SIZE */
	int	*ranks;		/* the nranks process indices on this host */
	char	*devices;	/* "2,3": the device ids --include/--exclude
				   left, for CUDA_VISIBLE_DEVICES; NULL when
				   no filter picked ids here */
	int	 here;		/* names this machine: its agent is started
				   here (no ssh) though other hosts use ssh */
};

struct plan_rank {
	int	 host;		/* index into hosts: NODE_RANK */
	int	 local_rank;	/* index among its role on its host */
	int	 slot;		/* device id on the host, -1 = none */
	int	 role;		/* HF_ROLE_* */
};

/* A spare that took a lost host's place (plan_drop). */
struct plan_swap {
	char	*lost;
	char	*spare;
};

struct plan {
	struct plan_host *hosts;	/* nnodes with ranks, then spares */
	size_t		 nhosts;	/* every host with an agent */
	size_t		 nnodes;	/* hosts with ranks: NNODES */
	struct plan_rank *ranks;
	size_t		 nranks;	/* every process */
	int		 nworkers;	/* WORLD_SIZE */
	int		 local;		/* every agent runs on this machine */
	int		 here_auto;	/* the launcher was chosen: hosts that
					   name this machine need no ssh */
	struct hf_plan	 hf;		/* the library's plan, for DMLC_* */
	struct hf_config cfg;		/* engine.yaml: opts may point into it */
	/* What the ranks were placed over, so a restart can place them again. */
	struct hf_hosts	 hs;
	struct hf_place_opts po;
	size_t		*use;		/* hs indices placed over, in order */
	size_t		 nuse;
	size_t		*spare;		/* hs indices of the spares left */
	size_t		 nspare;
	struct plan_swap *swaps;	/* the last plan_drop's */
	size_t		 nswaps;
	int		 np;		/* workers asked for (-n, or every slot) */
};

/*
 * Builds the plan: loads -f engine.yaml (filling what the command line
 * left unset in o), reads the hosts, picks the launcher, places the
 * processes. Returns 0, or a negative DT_ERR_* with e naming the file,
 * line and fix. Notes for -v go to log_info.
 */
int	plan_build(struct plan *, struct opts *, struct dt_err *e);
/* True if every agent runs here: the local launcher, or hosts that are all loopback names. */
int	plan_on_loopback(const struct plan *);
/* True for a host name that is this machine's loopback (127.x, localhost; here.c). */
int	plan_loopback_name(const char *);
/* True for a name of this machine: loopback, our host name, our addresses (here.c). */
int	plan_here_name(const char *);
/*
 * For a restart: the hosts named in names[0..n) were lost. Each takes the
 * first spare left into its place (p->swaps says which), or is dropped
 * when none is; a lost spare is only dropped. Then the ranks are placed
 * again, in the same host order: as many workers as first asked, or, when
 * that does not fit and min_np > 0, as many as the other slots take, down
 * to min_np. Returns 0, or DT_ERR_RANGE with e saying why they do not fit
 * (p is then unchanged: those hosts are kept for the next attempt).
 */
int	plan_drop(struct plan *, char *const *names, size_t n, int min_np,
	    struct dt_err *e);
/* Prints the plan for --dry-run: "#" headers, then "RANK HOST LOCAL_RANK COMMAND..." lines. */
void	plan_print(const struct plan *, const struct opts *, const char *job_id);
void	plan_free(struct plan *);

#endif
