/*
 * plan.h -- which rank runs where. Ranks are host-major: the ranks of one
 * host are contiguous, and a host's node rank is its index.
 */
#ifndef DT_PLAN_H
#define DT_PLAN_H

#include <stddef.h>

struct dt_err;
struct opts;

struct plan_host {
	char	*name;		/* as the user wrote it; "localhost" locally */
	char	*user;		/* NULL = default */
	int	 port;		/* 0 = default */
	int	 nranks;
	int	 first_rank;
};

struct plan_rank {
	int	 host;		/* index into hosts */
	int	 local_rank;
};

struct plan {
	struct plan_host *hosts;
	size_t		 nhosts;
	struct plan_rank *ranks;
	size_t		 nranks;
	int		 local;	/* every host is this machine */
};

/* The local launcher's plan: every rank on this machine. Returns 0 or DT_ERR_*. */
int	plan_local(struct plan *, const struct opts *, struct dt_err *);
/* Prints the plan for --dry-run: "#" headers, then "RANK HOST LOCAL_RANK COMMAND..." lines. */
void	plan_print(const struct plan *, const struct opts *, const char *job_id);
void	plan_free(struct plan *);

#endif
