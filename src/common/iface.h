/*
 * iface.h -- the network interface a job's ranks talk over (--iface, or
 * chosen). It gives MASTER_ADDR and NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME.
 */
#ifndef DT_IFACE_H
#define DT_IFACE_H

#include <stddef.h>

struct dt_err;

/* One IPv4 address of an interface (an interface with two has two entries). */
struct iface {
	char	name[64];
	char	addr[64];	/* dotted quad */
	int	up;
	int	loopback;
};

struct iface_choice {
	char	name[64];
	char	addr[64];
	char	why[160];	/* for -v: "given with --iface" ... */
};

/*
 * Lists this machine's interfaces that have an IPv4 address, in the
 * kernel's order, into a malloc'd *list. Returns 0 or DT_ERR_SYS.
 */
int	iface_list(struct iface **list, size_t *n, struct dt_err *e);

/*
 * Chooses from list: the interface named want (when not NULL); else, when
 * every host is this machine (all_local), the loopback; else the first
 * interface that is up, not loopback, not a container or VM bridge
 * (docker*, veth*, virbr*, br-*, ...) and not link-local (169.254/16).
 * Returns 0, or DT_ERR_NOTFOUND with e naming the interfaces there are.
 */
int	iface_choose(const struct iface *list, size_t n, const char *want,
	    int all_local, struct iface_choice *out, struct dt_err *e);

/*
 * Chooses the interface this machine would send to dst (a dotted quad or a
 * name) from: the kernel's route, read by connecting a UDP socket (no
 * packet is sent) and matching the source address it got to list. This is
 * the per-host choice: a host's own route to rank 0's address. Returns 0,
 * or DT_ERR_NOTFOUND / DT_ERR_SYS with e saying why.
 */
int	iface_route(const struct iface *list, size_t n, const char *dst,
	    struct iface_choice *out, struct dt_err *e);

/*
 * The candidates an --iface list gives host: its items are IFACE (for every
 * host) or HOST=IFACE (for that host only), comma-separated, e.g.
 * "gpu01=ens5,ib0,eth0". Writes the host's own items if it has any, else
 * the items for every host, comma-separated in their order, into buf ("" when
 * there are none: choose by route). Returns 0, or DT_ERR_PARSE with e naming
 * the bad item (an empty one, "=eth0", "h=").
 */
int	iface_spec_host(const char *spec, const char *host, char *buf,
	    size_t len, struct dt_err *e);

/*
 * A host's own choice: the first of cands (comma-separated, from
 * iface_spec_host) that this machine has up with an IPv4 address (one
 * name: as iface_choose takes want), or, when cands is empty, iface_route
 * to rank0 (rank 0's address); when rank0 does not resolve here (NULL, or
 * a name only the launcher knows), or is a name that resolves to a loopback
 * address (this host's own name, on Debian), iface_choose's guess for a
 * host among others. Returns 0, or DT_ERR_NOTFOUND with e naming what
 * there is.
 */
int	iface_pick(const struct iface *list, size_t n, const char *cands,
	    const char *rank0, struct iface_choice *out, struct dt_err *e);

#endif
