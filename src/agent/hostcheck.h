/*
 * hostcheck.h -- the agent's side of dtrun --check and --preflight: what
 * this host has for a job (a CHECK's GATHER step) and whether it reaches
 * rank 0's host (its PROBE step), answered in one CHECKED each. Nothing
 * here starts a rank. The answers are "key=value" strings:
 *
 *	version, proto		this agent's release and protocol
 *	setup_err		the job's --setup, run first, failed (the
 *				rest is answered without its variables)
 *	iface, addr, iface_why	the interface a run would choose here
 *	iface_err		why none could be chosen
 *	ifaces			every interface with an IPv4 address
 *	shm_mb, disk_free_mb	/dev/shm's size, the job directory's free MiB
 *	nofile			the open-files limit the ranks get
 *	kernel, glibc		uname -r, gnu_get_libc_version()
 *	memlock			RLIMIT_MEMLOCK in KiB, or "unlimited"
 *	rdma			how many devices /sys/class/infiniband has
 *	overcommit		/proc/sys/vm/overcommit_memory (0, 1, 2)
 *	hugepages, thp		HugePages_Total; the transparent huge pages
 *				mode in force (always, madvise, never)
 *	listen, listen_err	rank 0's host: ADDR:PORT the others probe
 *	cmd, cmd_err		the command as this host's PATH finds it
 *	nccl_ifname, gloo_ifname
 *				NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME, given
 *				and selecting an interface here
 *	nccl_ifname_err, gloo_ifname_err
 *				given, and selecting none
 *	python, torch, torch_cuda, torch_err, python_err
 *				a python command's interpreter (not FAST)
 *	gpu (one per GPU: nvidia-smi -L), gpu_err (it failed),
 *	driver (nvidia-smi's driver_version of the first GPU),
 *	gpu_ecc (one per GPU with uncorrected ECC errors: INDEX:COUNT),
 *	dcgm, dcgm_err (DEEP, where dcgmi exists: its quick diagnostic),
 *	nccl (libnccl.so's path), nccl_version (X.Y.Z when the path
 *	resolves to libnccl.so.X.Y.Z),
 *	probe_err		(not FAST)
 *	reach, reach_ms, reach_err	PROBE: connecting to rank 0's listener
 *	deep_listen, deep_err	--deep: ADDR:PORT the others' PAIRs reach
 *	pair_to, pair_err	PAIR: the listener measured, or why not
 *	pair_rtt_us, pair_rtt_min_us, pair_rtt_max_us
 *				PAIR without bytes: the median round trip,
 *				the fastest and the slowest
 *	pair_bytes, pair_us, pair_capped
 *				PAIR with bytes: what arrived in how long
 *				(capped: it stopped after that many s)
 */
#ifndef DT_HOSTCHECK_H
#define DT_HOSTCHECK_H

#include <sys/types.h>

#include <stddef.h>

#include "proto/agentproto.h"

struct dt_err;
struct event_base;
struct hostcheck;
struct iface;

#define HOSTCHECK_SUB_S		30	/* the interpreter and GPU probe, and
					   the setup, each at most */
#define HOSTCHECK_CONNECT_S	5	/* a PROBE's connect, at most */
#define HOSTCHECK_VAL_MAX	1024	/* bytes of one answer's value */
#define HOSTCHECK_ACCEPTS	256	/* PROBEs taken a wake-up: fair to the
					   rest of the loop */
#define HOSTCHECK_PAUSE_MS	100	/* out of descriptors, with none to
					   spare: the listener rests this long */

/* Called with each step's answers (once per hostcheck_run). */
typedef void (*hostcheck_done_fn)(void *arg, const struct ap_checked *);

/* A checker on base; NULL when out of memory. */
struct hostcheck *hostcheck_new(struct event_base *, int devnull,
		    hostcheck_done_fn, void *arg);

/*
 * Runs one step of c on this host; done is called with its answers, now
 * or later. Returns 0, or -1 when a step is already under way (the
 * launcher sends one at a time).
 */
int		 hostcheck_run(struct hostcheck *, const struct ap_check *c);

/* A child was reaped: 1 if it was the probe's shell, else 0. */
int		 hostcheck_reaped(struct hostcheck *, pid_t, int status);

/* Stops listening for PROBEs (the job is coming). */
void		 hostcheck_close(struct hostcheck *);

void		 hostcheck_free(struct hostcheck *);

/*
 * True if spec selects the interface name: with nccl, NCCL's syntax (a
 * comma-separated list of name prefixes; "=" before the list: exact
 * names; "^" before that: every interface but those); else Gloo's (exact
 * names, comma-separated).
 */
int		 hostcheck_ifname_match(const char *spec, const char *name,
		    int nccl);

/*
 * Checks spec (the value of var) against this host's n interfaces.
 * Returns 0 if it selects one that is up, else DT_ERR_NOTFOUND with e
 * (may be NULL) filled, naming what there is.
 */
int		 hostcheck_ifname(const char *var, const char *spec,
		    const struct iface *list, size_t n, struct dt_err *e);

#endif
