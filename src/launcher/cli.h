/* cli.h -- dtrun's command line. */
#ifndef DT_CLI_H
#define DT_CLI_H

#include <stddef.h>
#include <signal.h>
#include <stdint.h>

#include "dtlimits.h"
#include "sshconf.h"

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
	char		**exports;	/* "NAME=VALUE", from -x and --env-file */
	size_t		 nexports;
	uint64_t	 fwd_signals;	/* --forward-signals: bit 1 << N for signal N */
	int		 fwd_signals_set;
	const char	*setup;		/* --setup: run once per host first; NULL = none */
	double		 kill_grace;	/* seconds */
	double		 timeout;	/* seconds; 0 = none */
	double		 start_timeout;	/* rendezvous: all must join within; 0 = none */
	double		 heartbeat_timeout; /* a silent host is lost after; 0 = off */
	double		 hang_timeout;	/* no line from any rank this long: hung; 0 = off */
	int		 on_hang_report; /* --on-hang report: keep running */
	int		 max_restarts;	/* --max-restarts; -1 = not given (0) */
	double		 restart_delay;	/* --restart-delay: the first wait */
	int		 min_np;	/* --min-np: smallest world after a drop; 0 = -n */
	int		 dry_run;
	int		 check;		/* --check: check the hosts, run nothing */
	int		 preflight;	/* --preflight: a quick check before a job */
	int		 verbose;
	int		 quiet;
	unsigned	 frameworks;	/* FW_* of framework.h; FW_DEFAULT if not given */
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

	/* --sync-dst-dir, --sync-exclude (src/launcher/sync.h). */
	const char	*sync_dst;
	char		**sync_exclude;	/* point into argv or engine.yaml */
	size_t		 nsync_exclude;

	/* What the command line gave, so engine.yaml fills in only the rest. */
	int		 prefix_set, kill_grace_set, timeout_set, hang_timeout_set;
	int		 heartbeat_timeout_set, restart_delay_set;
	char		*cmd_owned;	/* a command built from engine.yaml */
	char		*argv_owned[4];
};

/* --heartbeat-timeout: the default and the bounds (0 turns it off). */
#define CLI_HEARTBEAT_DEFAULT	15
#define CLI_HEARTBEAT_MIN	1
#define CLI_HEARTBEAT_MAX	DT_HEARTBEAT_MAX_S

/* --max-restarts when engine.yaml says preemptible: true; --restart-delay's default. */
#define CLI_PREEMPTIBLE_RESTARTS 3
#define CLI_RESTART_DELAY	1

#define CLI_RUN		0
#define CLI_HELP	1	/* print usage, exit 0 */
#define CLI_VERSION	2	/* print version, exit 0 */

/*
 * Parses argv into o (defaults first). Returns CLI_RUN, CLI_HELP or
 * CLI_VERSION, or a negative DT_ERR_* with e's message naming the problem
 * and the fix. Never prints or exits. o->exports is malloc'd: cli_free.
 */
int	cli_parse(int argc, char **argv, struct opts *o, struct dt_err *e);
void	cli_free(struct opts *);
/*
 * Checks a heartbeat timeout from what (an option or a file's key): 0, or
 * CLI_HEARTBEAT_MIN to _MAX seconds. Returns 0 or DT_ERR_INVAL with e set.
 */
int	cli_check_heartbeat(double secs, const char *what, struct dt_err *e);

/*
 * Parses a --forward-signals list ("USR1,USR2", "SIGWINCH", "none") from
 * what (an option or a file's key) into *mask (bit 1 << N for signal N).
 * Returns 0 or DT_ERR_INVAL with e naming the word and the signals allowed.
 */
int	cli_parse_signals(const char *list, const char *what, uint64_t *mask,
	    struct dt_err *e);
/* "USR1,USR2" for mask, into buf; "none" when empty. */
const char *cli_signals_str(uint64_t mask, char *buf, size_t len);
#define CLI_FWD_DEFAULT	((1ULL << SIGUSR1) | (1ULL << SIGUSR2))

/* The --help text. */
extern const char cli_usage[];

#endif
