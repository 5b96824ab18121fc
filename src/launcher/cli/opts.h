/*
 * opts.h -- what dtrun's command line and engine.yaml ask for (struct
 * opts): filled by cli.c and plan.c, read by every part of the launcher.
 * Apart from cli.h so that the modules cli.c itself calls (peerflags.c)
 * can fill it without including the parser back.
 */
#ifndef DT_OPTS_H
#define DT_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/dtlimits.h"
#include "launcher/cli/opttable.h"
#include "launcher/cli/sshconf.h"
#include "launcher/cli/streams.h"

/* --heartbeat-timeout: the default and the bounds (0 turns it off). */
#define CLI_HEARTBEAT_DEFAULT	15
#define CLI_HEARTBEAT_MIN	1
#define CLI_HEARTBEAT_MAX	DT_HEARTBEAT_MAX_S

/* --max-restarts when engine.yaml says preemptible: true; --restart-delay's default. */
#define CLI_PREEMPTIBLE_RESTARTS 3
#define CLI_RESTART_DELAY	1
#define DEEP_BYTES_DEFAULT	(64ULL << 20)	/* --deep-bytes */
#define CHECK_DEEP_BYTES_MAX	(16ULL << 30)	/* --deep-bytes at most */
#define CLI_STRAGGLER_DEFAULT	0.10	/* --straggler-threshold: 10% slower */

struct dt_err;

enum launcher_kind { LAUNCH_AUTO = 0, LAUNCH_LOCAL, LAUNCH_SSH, LAUNCH_SLURM };

struct opts {
	int		 np;		/* -n; 0 = not given */
	int		 nproc_per_node;	/* 0 = not given */
	int		 nnodes_min;	/* --nnodes N or MIN:MAX; 0 = not given */
	int		 nnodes_max;
	const char	*nnodes;	/* as given, for messages */
	char		*notes[8];	/* what was taken of peers' options, for
					   plan_build to print (cli never prints) */
	size_t		 nnotes;
	enum launcher_kind launcher;
	const char	*prefix;	/* checked */
	const char	*output_dir;
	int		 timestamp;
	int		 escape_output;
	int		 collapse;	/* 1 --collapse, -1 --no-collapse, 0 auto */
	struct std_map	 redirects;	/* torchrun's --redirects: off the terminal */
	struct std_map	 tee;		/* torchrun's --tee: on it after all */
	const char	*ranks_filter;	/* --local-ranks-filter; NULL = every rank */
	const char	*role;		/* --role: ROLE_NAME; NULL = "default" */
	int		 module;	/* -m: python3 -m COMMAND */
	int		 no_python;	/* --no-python (dtrun's way anyway) */
	int		 nproc_auto;	/* --nproc-per-node auto, gpu or cpu: 1, 2, 3 */
	char		**exports;	/* "NAME=VALUE", from -x and --env-file */
	size_t		 nexports;
	uint64_t	 fwd_signals;	/* --forward-signals: bit 1 << N for signal N */
	const char	*setup;		/* --setup: run once per host first; NULL = none */
	double		 kill_grace;	/* seconds */
	double		 timeout;	/* seconds; 0 = none */
	double		 start_timeout;	/* rendezvous: all must join within; 0 = none */
	double		 heartbeat_timeout; /* a silent host is lost after; 0 = off */
	double		 hang_timeout;	/* no line from any rank this long: hung; 0 = off */
	int		 on_hang_report; /* --on-hang report: keep running */
	double		 straggler_threshold; /* 0.10: 10% slower; 0 = off */
	enum straggle_do { STRAGGLE_REPORT, STRAGGLE_STACK, STRAGGLE_STOP }
			 on_straggler;	/* --on-straggler */
	int		 max_restarts;	/* --max-restarts */
	double		 restart_delay;	/* --restart-delay: the first wait */
	int		 restart_same;	/* --restart-on-same-failure */
	int		 min_np;	/* --min-np: smallest world after a drop; 0 = -n */
	int		 spares;	/* --spares: hosts that wait for a lost
				   one's place */
	int		 dry_run;
	int		 check;		/* --check: check the hosts, run nothing */
	int		 preflight;	/* --preflight: a quick check before a job */
	int		 deep;		/* --deep, --preflight=deep: the network too */
	uint64_t	 deep_bytes;	/* --deep-bytes: each pair's */
	int		 verbose;
	int		 quiet;
	unsigned	 frameworks;	/* FW_* of framework.h; FW_DEFAULT if not given */
	int		 store_rank0;	/* --store rank0: rank 0 hosts PyTorch's store */
	const char	*iface;		/* --iface; NULL = choose */
	uint64_t	 seed;		/* --seed */
	int		 seeded;
	char		**cmd;		/* COMMAND ARGS..., NULL-terminated (points into argv) */
	int		 ncmd;

	/* Hosts and placement (src/hostfile). */
	char		**hosts;	/* -H/--hostfile args, in order */
	size_t		 nhosts;
	const char	*config;	/* -f engine.yaml */
	const char	*template;	/* --template */
	const char	*include;	/* --include (DeepSpeed syntax) */
	const char	*exclude;
	int		 oversubscribe;
	int		 nservers;	/* -s: MXNet parameter servers */

	/* ssh. */
	struct ssh_cli	 ssh;

	/* --sync-dst-dir, --sync-exclude (src/launcher/sync/sync.h). */
	const char	*sync_dst;
	char		**sync_exclude;	/* point into argv or engine.yaml */
	size_t		 nsync_exclude;

	/*
	 * given[OPT_*]: the command line gave it, so engine.yaml does not
	 * (the only way to ask; the values' defaults are opt_table's).
	 */
	unsigned char	 given[OPT_NIDS];
	char		*cmd_owned;	/* a command built from engine.yaml */
	char		*argv_owned[4];
	char		**cmd_module;	/* -m: "python3" "-m" and the command */
};

#endif
