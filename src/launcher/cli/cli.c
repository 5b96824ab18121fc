/*
 * cli.c -- dtrun's options. Which options there are, their letters, help,
 * types, defaults and bounds are opt_table's (opttable.c); typed values
 * are taken by opt_take, the others here, one case per id.
 * Parsing stops at the first non-option word (the command), so "dtrun -n
 * 2 python -u x.py" needs no "--". Errors say what was wrong and how to
 * fix it; main() prints them and exits 2.
 *
 * Room launcher/cli/: the command line, engine.yaml's options and the one
 * typed option table (opttable.c), ssh_config, output prefixes and
 * streams. It includes nothing else of the launcher (t0041's rooms).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "launcher/cli/cli.h"
#include "common/envfile.h"
#include "common/wire.h"
#include "common/dtlimits.h"
#include "common/err.h"
#include "launcher/cli/fwname.h"
#include "common/iface.h"
#include "launcher/cli/peerflags.h"
#include "launcher/cli/opttable.h"
#include "launcher/cli/prefix.h"
#include "util/strv.h"
#include "util/xmalloc.h"

/* --help before the option list (opt_table's) and after it. */
static const char cli_usage_head[] =
"usage: dtrun [options] [--] COMMAND [ARGS...]\n"
"       dtrun --check [options] [COMMAND [ARGS...]]\n"
"       dtrun top [JOBID]     watch a running job's ranks (top, JSON: --json)\n"
"       dtrun-kill JOBID      stop a job, or --stacks: print its stacks\n"
"\n"
"Starts COMMAND as the ranks of one distributed job, forwards their output\n"
"line by line, and stops them all as soon as one fails.\n"
"\n";

static const char cli_usage_tail[] =
"\n"
"torchrun's and mpirun's spellings: -np N (-n), --nproc_per_node N and\n"
"-npernode/--npernode N (--nproc-per-node), --max_restarts N, --log-dir and\n"
"--log_dir DIR (--output-dir), --local_ranks_filter, --no_python; --nnodes N|MIN:MAX\n"
"checks the number of hosts; --master-port/--master_port P and\n"
"--master-addr/--master_addr A set MASTER_PORT and MASTER_ADDR (as -x does);\n"
"--standalone, --rdzv-backend/--rdzv_backend, --rdzv-id/--rdzv_id are not\n"
"needed (dtrun runs its own rendezvous) and are ignored with a note, as are\n"
"--monitor-interval/--monitor_interval (agents hear of a rank's end at once),\n"
"--rdzv-endpoint/--rdzv_endpoint on localhost and --node-rank/--node_rank 0;\n"
"other values of these two are refused: run dtrun once, naming every host.\n"
"\n"
"Exit status: 0 when every rank exits 0; else the first failing rank's code\n"
"(128+N if it died of signal N); 124 after --timeout; 125 when ranks never\n"
"joined the rendezvous; 123 when --hang-timeout found the job hung; 141\n"
"when stdout was closed; 2 for usage errors; 255 when a host is lost (its\n"
"link broke, or it was silent past --heartbeat-timeout); 78 when --check\n"
"or --preflight found problems. After restarts: the last attempt's.\n"
"\n"
"When a job hangs: kill -QUIT dtrun (Ctrl-\\) or dtrun-kill --stacks JOBID\n"
"prints every rank's stack, merged, and the job goes on (needs gdb, or\n"
"elfutils' eu-stack, on the hosts; python3-dbg for Python frames).\n";

/* Parses --seed: a whole number from 0 to 2^64 - 1. */
static int
parse_seed(const char *s, struct opts *o, struct dt_err *e)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end != '\0' || errno != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--seed \"%s\": "
		    "want a whole number from 0 to 18446744073709551615 (e.g. "
		    "--seed 42)", s);
	o->seed = v;
	o->seeded = 1;
	return 0;
}

/* Appends kv (taken over) to o->exports. */
static void
export_take(struct opts *o, char *kv)
{
	strs_push(&o->exports, &o->nexports, kv);
}

/*
 * -x 'NCCL_*': every variable of our environment whose name matches, in
 * environ's order. Matching none exports none: a pattern names a family
 * that may be empty on this machine.
 */
static int
add_export_pattern(struct opts *o, const char *pat, struct dt_err *e)
{
	const char	*p;
	char		 name[256];
	char		**ev;
	size_t		 n;

	for (p = pat; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("_*?[]!-", *p) == NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "-x \"%s\": "
			    "not a variable name or a pattern of names (use -x "
			    "NAME, -x NAME=VALUE or -x 'NCCL_*')", pat);
	for (ev = environ; *ev != NULL; ev++) {
		if ((p = strchr(*ev, '=')) == NULL ||
		    (n = p - *ev) >= sizeof(name))
			continue;
		memcpy(name, *ev, n);
		name[n] = '\0';
		if (fnmatch(pat, name, 0) == 0)
			export_take(o, xstrdup(*ev));
	}
	return 0;
}

/* -x NAME, -x NAME=VALUE or -x PATTERN: appends "NAME=VALUE"s to o->exports. */
static int
add_export(struct opts *o, const char *arg, struct dt_err *e)
{
	const char	*eq = strchr(arg, '=');
	const char	*val;
	size_t		 n = eq ? (size_t)(eq - arg) : strlen(arg);
	char		*kv;

	if (eq == NULL && strpbrk(arg, "*?[") != NULL)
		return add_export_pattern(o, arg, e);
	if (!envfile_name_ok(arg, n))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "-x \"%s\": not a "
		    "variable name (use -x NAME, -x NAME=VALUE or -x "
		    "'NCCL_*')", arg);
	if (eq != NULL)
		kv = xstrdup(arg);
	else {
		/* mpirun warns and goes on; scripts written for it rely on that. */
		if ((val = getenv(arg)) == NULL) {
			if (o->nnotes < sizeof(o->notes) / sizeof(o->notes[0]))
				xasprintf(&o->notes[o->nnotes++], "-x %s: not "
				    "set here, not passed (set it, or use -x "
				    "%s=VALUE)", arg, arg);
			return 0;
		}
		xasprintf(&kv, "%s=%s", arg, val);
	}
	export_take(o, kv);
	return 0;
}

/* --env-file FILE: its NAME=VALUE lines, in order, after what came before. */
static int
add_env_file(struct opts *o, const char *path, struct dt_err *e)
{
	char	**v = NULL;
	size_t	  n = 0, i;
	int	  rc;

	if ((rc = envfile_load(path, &v, &n, e)) != 0) {
		dt_strv_free(v);
		return rc;
	}
	for (i = 0; i < n; i++)
		export_take(o, v[i]);
	free(v);
	return 0;
}

/* The signals --forward-signals takes; the others mean something to dtrun or cannot be caught. */
static const struct {
	const char	*name;
	int		 signo;
} fwd_names[] = {
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "ALRM", SIGALRM },
	{ "WINCH", SIGWINCH }, { "CONT", SIGCONT }, { "URG", SIGURG },
	{ "PWR", SIGPWR }, { "XCPU", SIGXCPU }, { "XFSZ", SIGXFSZ },
	{ "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
};
#define FWD_ALLOWED	"USR1, USR2, ALRM, WINCH, CONT, URG, PWR, XCPU, XFSZ, " \
			"VTALRM or PROF"

/* Why sig may not be forwarded, or NULL if it is no signal dtrun knows. */
static const char *
fwd_refused(const char *name)
{
	static const char *const stop[] = { "INT", "TERM", "HUP", NULL };
	static const char *const own[] = { "KILL", "STOP", "QUIT", "CHLD",
	    "PIPE", "SEGV", "BUS", "FPE", "ILL", "TRAP", "ABRT", "SYS",
	    "TSTP", "TTIN", "TTOU", "IO", "STKFLT", NULL };
	size_t	i;

	for (i = 0; stop[i] != NULL; i++)
		if (strcasecmp(name, stop[i]) == 0)
			return "it stops the job (dtrun passes INT, TERM and "
			    "HUP on as a stop, then kills after --kill-grace)";
	for (i = 0; own[i] != NULL; i++)
		if (strcasecmp(name, own[i]) == 0)
			return "dtrun cannot pass it on (it cannot be caught, "
			    "or means something to dtrun itself)";
	return NULL;
}

int
cli_parse_signals(const char *list, const char *what, uint64_t *mask,
    struct dt_err *e)
{
	const char	*p, *end, *why;
	char		 w[32];
	size_t		 i, n;
	uint64_t	 m = 0;

	if (strcasecmp(list, "none") == 0) {
		*mask = 0;
		return 0;
	}
	for (p = list;; p = end + 1) {
		end = strchr(p, ',');
		n = end == NULL ? strlen(p) : (size_t)(end - p);
		if (n >= sizeof(w))
			n = sizeof(w) - 1;
		memcpy(w, p, n);
		w[n] = '\0';
		/* SIGUSR1, sigusr1 and USR1 are one signal. */
		p = strncasecmp(w, "SIG", 3) == 0 ? w + 3 : w;
		for (i = 0; i < sizeof(fwd_names) / sizeof(fwd_names[0]); i++)
			if (strcasecmp(p, fwd_names[i].name) == 0)
				break;
		if (i < sizeof(fwd_names) / sizeof(fwd_names[0]))
			m |= 1ULL << fwd_names[i].signo;
		else if ((why = fwd_refused(p)) != NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s %s: %s; "
			    "forward %s", what, w, why, FWD_ALLOWED);
		else
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": "
			    "not a signal name (give a list like USR1,USR2, "
			    "or none; known: %s)", what, w, FWD_ALLOWED);
		if (end == NULL)
			break;
	}
	*mask = m;
	return 0;
}

const char *
cli_signals_str(uint64_t mask, char *buf, size_t len)
{
	size_t	i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(fwd_names) / sizeof(fwd_names[0]); i++)
		if (mask & (1ULL << fwd_names[i].signo) && at < len)
			at += snprintf(buf + at, len - at, "%s%s",
			    at ? "," : "", fwd_names[i].name);
	if (at == 0)
		snprintf(buf, len, "none");
	return buf;
}

/* dtrun's whole table, and getopt_long's arrays built from it once. */
static struct opt_tab		cli_tab;
static struct opt_getopt	cli_getopt;

/* dtrun's row for option id (the table is built by then). */
static const struct opt_row *
cli_row(int id)
{
	return opt_find(&cli_tab, 1, id);
}

/* The long option being read, as typed ("--master_port"), for messages. */
static char cli_typed[40];

/* What an option handler returns for an option of another topic. */
#define CLI_NOTMINE	1000

/*
 * One handler per topic: each takes the options of its topic by their
 * opt_table id (the value in getopt's optarg) and returns 0, a negative
 * DT_ERR_* with *e filled, or CLI_NOTMINE. A new option is a row in
 * opttable.c; one with a syntax of its own also a case in its topic's
 * switch (the rest are opt_take's, by their row).
 */

/*
 * -n N; and mpirun's -np N and -npernode N, which getopt reads as -n with
 * "p" or "pernode" glued on: their value is the next word.
 */
static int
cli_opt_n(struct opts *o, int argc, char **argv, struct dt_err *e)
{
	const char	*name = "-n";
	int		 id = OPT_NP;

	if (strcmp(optarg, "p") == 0 || strcmp(optarg, "pernode") == 0) {
		name = optarg[1] == '\0' ? "-np" : "-npernode";
		if (optarg[1] != '\0')
			id = OPT_NPROC;
		if (optind >= argc)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s needs "
			    "a value (see dtrun --help)", name);
		optarg = argv[optind++];
	}
	o->given[id] = 1;
	return opt_take(cli_row(id), name, optarg, o, e);
}

/* How many ranks, on which hosts: -H, -f, --include, -s... (-n: cli_opt_n) */
static int
cli_opt_hosts(struct opts *o, int id, struct dt_err *e)
{
	int	rc = 0;

	switch (id) {
	case OPT_NPROC:
		/* torchrun's words; cli_finish counts them. */
		o->nproc_auto = strcmp(optarg, "auto") == 0 ? 1 :
		    strcmp(optarg, "gpu") == 0 ? 2 :
		    strcmp(optarg, "cpu") == 0 ? 3 : 0;
		if (o->nproc_auto == 0)
			rc = opt_take(cli_row(id), cli_typed, optarg, o, e);
		break;
	case OPT_LAUNCHER:
		if (strcmp(optarg, "local") == 0)
			o->launcher = LAUNCH_LOCAL;
		else if (strcmp(optarg, "ssh") == 0)
			o->launcher = LAUNCH_SSH;
		else if (strcmp(optarg, "slurm") == 0)
			o->launcher = LAUNCH_SLURM;
		else
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--launcher \"%s\": unknown (use local, ssh "
			    "or slurm)", optarg);
		break;
	case OPT_HOSTS:
	case OPT_HOSTFILE:
		strs_push(&o->hosts, &o->nhosts, optarg);
		break;
	default:
		return CLI_NOTMINE;
	}
	return rc;
}

/* Reaching hosts: the ssh options, and --sync-dst-dir's copy. */
static int
cli_opt_ssh(struct opts *o, int id, struct dt_err *e)
{
	int	rc = 0;

	switch (id) {
	case OPT_SSH_IDENTITY:
		strs_push(&o->ssh.identities, &o->ssh.nidentities, optarg);
		break;
	case OPT_SSH_OPTION:
		rc = ssh_cli_option(&o->ssh, optarg, e);
		/* -o Port=N is -p N: engine.yaml's ssh.port does not win. */
		o->given[OPT_SSH_PORT] |= o->ssh.port != 0;
		break;
	case OPT_SSH_JUMP:
		/* The shortcut wins over any --ssh-option proxy. */
		o->ssh.proxy_command = NULL;
		o->ssh.proxy_jump = optarg;
		break;
	case OPT_SSH_AGENT_DIR:
		if (optarg[0] == '\0')
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--ssh-agent-dir needs a directory");
		o->ssh.agent_dir = optarg;
		break;
	case OPT_SYNC_DST:
		if (optarg[0] == '\0')
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--sync-dst-dir needs a directory");
		o->sync_dst = optarg;
		break;
	case OPT_SYNC_EXCLUDE:
		strs_push(&o->sync_exclude, &o->nsync_exclude, optarg);
		break;
	default:
		return CLI_NOTMINE;
	}
	return rc;
}

/* What dtrun prints and where ranks' output goes. */
static int
cli_opt_output(struct opts *o, int id, struct dt_err *e)
{
	int	rc = 0;

	switch (id) {
	case OPT_PREFIX:
		o->prefix = optarg;
		rc = prefix_check(optarg, e);
		break;
	case OPT_OUTPUT_DIR:
		if (optarg[0] == '\0')
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--output-dir needs a directory name");
		o->output_dir = optarg;
		break;
	case OPT_NO_COLLAPSE:
		/* Given, as --collapse: engine.yaml's collapse: yields. */
		o->collapse = -1;
		o->given[OPT_COLLAPSE] = 1;
		break;
	case OPT_REDIRECTS:
		rc = std_map_parse("--redirects", optarg, &o->redirects, e);
		break;
	case OPT_TEE:
		rc = std_map_parse("--tee", optarg, &o->tee, e);
		break;
	case OPT_RANKS_FILTER:
		rc = rank_list_check(cli_typed, optarg, e);
		o->ranks_filter = optarg;
		break;
	case OPT_TAG_OUTPUT:
		/* mpirun's "[1,0]<stdout>:line" (its job is always 1 here). */
		o->prefix = "[1,%r]<std%s>:";
		o->given[OPT_PREFIX] = 1;
		break;
	case OPT_VERBOSE:
		o->verbose++;
		break;
	case OPT_PREFLIGHT:
		o->preflight = 1;
		if (optarg != NULL && strcmp(optarg, "deep") != 0)
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--preflight=%s: want --preflight or "
			    "--preflight=deep", optarg);
		o->deep |= optarg != NULL;
		break;
	default:
		return CLI_NOTMINE;
	}
	return rc;
}

/* The ranks' environment: -x, --env-file, --setup, --framework... */
static int
cli_opt_env(struct opts *o, int id, struct dt_err *e)
{
	char	ifbuf[512];
	int	rc = 0;

	switch (id) {
	case OPT_EXPORT:
		rc = add_export(o, optarg, e);
		break;
	case OPT_ENV_FILE:
		rc = add_env_file(o, optarg, e);
		break;
	case OPT_SETUP:
		if (optarg[0] == '\0')
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--setup needs a command (run by sh -c on "
			    "each host)");
		o->setup = optarg;
		break;
	case OPT_FRAMEWORK:
		rc = fw_parse(optarg, &o->frameworks, e);
		break;
	case OPT_STORE:
		if (strcmp(optarg, "dtrun") == 0)
			o->store_rank0 = 0;
		else if (strcmp(optarg, "rank0") == 0)
			o->store_rank0 = 1;
		else
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--store %s: want dtrun (dtrun serves PyTorch's "
			    "TCPStore) or rank0 (rank 0 hosts it)", optarg);
		break;
	case OPT_IFACE:
		if (optarg[0] == '\0')
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--iface needs an interface name (see ip "
			    "link)");
		else
			rc = iface_spec_host(optarg, "", ifbuf, sizeof(ifbuf),
			    e);
		o->iface = optarg;
		break;
	case OPT_SEED:
		rc = parse_seed(optarg, o, e);
		break;
	case OPT_ROLE:
		if (optarg[0] == '\0' || strchr(optarg, '=') != NULL)
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--role "
			    "\"%s\": want a name (e.g. --role trainer)", optarg);
		o->role = optarg;
		break;
	default:
		return CLI_NOTMINE;
	}
	return rc;
}

/* Signals, timeouts, hangs and restarts. */
static int
cli_opt_run(struct opts *o, int id, struct dt_err *e)
{
	int	rc = 0;

	switch (id) {
	case OPT_FORWARD_SIGNALS:
		rc = cli_parse_signals(optarg, "--forward-signals",
		    &o->fwd_signals, e);
		break;
	case OPT_ON_HANG:
		if (strcmp(optarg, "report") == 0 ||
		    strcmp(optarg, "stop") == 0)
			o->on_hang_report = optarg[0] == 'r';
		else
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--on-hang %s: want stop or report",
			    optarg);
		break;
	case OPT_ON_STRAGGLER:
		if (strcmp(optarg, "report") == 0)
			o->on_straggler = STRAGGLE_REPORT;
		else if (strcmp(optarg, "stack") == 0)
			o->on_straggler = STRAGGLE_STACK;
		else if (strcmp(optarg, "stop") == 0)
			o->on_straggler = STRAGGLE_STOP;
		else
			rc = dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
			    "--on-straggler %s: want report, stack or stop",
			    optarg);
		break;
	default:
		return CLI_NOTMINE;
	}
	return rc;
}

/* torchrun's and mpirun's options, as peerflags.h takes them. */
static int
cli_opt_peers(struct opts *o, int id, struct dt_err *e)
{
	const char	*name = cli_typed;
	char		*kv;
	double		 port;
	int		 rc;

	switch (id) {
	case OPT_NNODES:
		return peer_nnodes(o, optarg, e);
	case OPT_MASTER_PORT:
		rc = opt_parse_num(cli_row(id), name, optarg, &port, e);
		if (rc == 0) {
			xasprintf(&kv, "MASTER_PORT=%.0f", port);
			export_take(o, kv);
		}
		return rc;
	case OPT_MASTER_ADDR:
		if (optarg[0] == '\0' || strchr(optarg, '=') != NULL)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": "
			    "want rank 0's host name or address", name, optarg);
		xasprintf(&kv, "MASTER_ADDR=%s", optarg);
		export_take(o, kv);
		return 0;
	}
	if (id >= OPT_PEER && id <= OPT_PEER_LAST)
		return peer_flag(o, id - OPT_PEER, name, optarg, e);
	return CLI_NOTMINE;
}

/* The defaults every option starts from. */
static void
cli_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	opt_defaults(o, &cli_tab, 1);
	o->prefix = PREFIX_DEFAULT;
	o->fwd_signals = CLI_FWD_DEFAULT;
}

/* One handler per topic, for the options with a syntax of their own. */
static int (*const cli_groups[])(struct opts *, int, struct dt_err *) = {
	cli_opt_hosts, cli_opt_ssh, cli_opt_output, cli_opt_env, cli_opt_run,
	cli_opt_peers,
};

/*
 * The word an unknown short option came in: getopt moves past it only
 * when the letter was its last ("-N 4"), not inside one ("-mca").
 */
static const char *
cli_bad_word(int argc, char **argv)
{
	if (optind < argc && argv[optind][0] == '-' &&
	    strchr(argv[optind] + 1, optopt) != NULL)
		return argv[optind];
	return argv[optind - 1];
}

/* getopt's complaints (':' missing value, '?' unknown) as messages. */
static int
cli_bad_option(int c, int argc, char **argv, struct dt_err *e)
{
	const char	*word, *hint;

	if (c == ':')
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s needs a "
		    "value (see dtrun --help)", argv[optind - 1]);
	word = optopt != 0 && optopt < 256 ? cli_bad_word(argc, argv) :
	    argv[optind - 1];
	/* A torchrun or mpirun option: say what dtrun does instead. */
	if ((hint = peer_unknown_hint(word)) != NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s is not "
		    "dtrun's: %s (see dtrun --help)", word, hint);
	if (optopt != 0 && optopt < 256)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
		    "unknown option -%c (see dtrun --help)", optopt);
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL,
	    "unknown option %s (see dtrun --help)", argv[optind - 1]);
}

/* GPUs this machine shows (CUDA_VISIBLE_DEVICES may hide some), or 0. */
static int
cli_gpus(void)
{
	const char	*vis = getenv("CUDA_VISIBLE_DEVICES"), *p;
	DIR		*d;
	struct dirent	*de;
	int		 n = 0, nvis = 1;

	if ((d = opendir("/proc/driver/nvidia/gpus")) != NULL) {
		while ((de = readdir(d)) != NULL)
			n += de->d_name[0] != '.';
		closedir(d);
	}
	if (vis == NULL)
		return n;
	if (*vis == '\0')
		return 0;
	for (p = vis; *p != '\0'; p++)
		nvis += *p == ',';
	return nvis < n ? nvis : n;
}

/*
 * --nproc-per-node auto, gpu or cpu, as torchrun counts them: on this
 * machine, so only where the ranks run here.
 */
static int
cli_nproc_auto(struct opts *o, struct dt_err *e)
{
	static const char *const word[] = { "", "auto", "gpu", "cpu" };
	long	cores = sysconf(_SC_NPROCESSORS_ONLN);
	int	gpus = o->nproc_auto == 3 ? 0 : cli_gpus();

	if (o->launcher == LAUNCH_SLURM || (o->nhosts > 0 &&
	    o->launcher != LAUNCH_LOCAL) || (o->launcher == LAUNCH_AUTO &&
	    getenv("SLURM_JOB_ID") != NULL))
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--nproc-per-node "
		    "%s counts this machine's %s, not other hosts': give a "
		    "number (e.g. --nproc-per-node 8), or slots per host "
		    "(-H a:8,b:8)", word[o->nproc_auto],
		    o->nproc_auto == 3 ? "cores" : "GPUs");
	if (o->nproc_auto == 2 && gpus == 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--nproc-per-node "
		    "gpu: this machine shows no GPU (no NVIDIA driver, or "
		    "CUDA_VISIBLE_DEVICES hides them); use cpu or a number");
	o->nproc_per_node = gpus > 0 ? gpus : cores > 0 ? (int)cores : 1;
	return 0;
}

/*
 * torchrun's rule for the interpreter: -m runs "python3 -m COMMAND";
 * --no-python (dtrun's way anyway) and -m together are refused as there.
 */
static int
cli_python(struct opts *o, struct dt_err *e)
{
	int	i;

	if (o->module && o->no_python)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "-m and --no-python "
		    "together: a module needs the interpreter (drop one)");
	if (!o->module || o->cmd == NULL)
		return CLI_RUN;
	o->cmd_module = xcalloc(o->ncmd + 3, sizeof(char *));
	o->cmd_module[0] = "python3";
	o->cmd_module[1] = "-m";
	for (i = 0; i < o->ncmd; i++)
		o->cmd_module[i + 2] = o->cmd[i];
	o->cmd = o->cmd_module;
	o->ncmd += 2;
	return CLI_RUN;
}

/* After the options: the frameworks' defaults, and the command. */
static int
cli_finish(int argc, char **argv, struct opts *o, struct dt_err *e)
{
	int	rc;

	if ((o->deep || o->given[OPT_DEEP_BYTES]) && !o->check &&
	    !o->preflight)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s measures the "
		    "network for a check: give --check or --preflight with it",
		    o->deep ? "--deep" : "--deep-bytes");
	if (o->frameworks == 0)
		o->frameworks = FW_DEFAULT;
	if ((rc = fw_check(o->frameworks, e)) != 0)
		return rc;
	if (o->nproc_auto != 0 && (rc = cli_nproc_auto(o, e)) != 0)
		return rc;
	if (o->redirects.given && o->output_dir == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--redirects keeps "
		    "output off the terminal for the files: name their "
		    "directory with --log-dir DIR (torchrun would pick a "
		    "temporary one)");
	if (optind >= argc) {
		/* The command may be in engine.yaml; --check needs none. */
		if (o->config != NULL || o->check)
			return CLI_RUN;
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "no command given "
		    "(usage: dtrun [options] [--] COMMAND [ARGS...])");
	}
	if (argv[optind][0] == '\0')
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "the command is an "
		    "empty string");
	o->cmd = argv + optind;
	o->ncmd = argc - optind;
	return cli_python(o, e);
}

/* Builds getopt_long's arrays from opt_table at the first use. */
static const struct opt_getopt *
cli_arrays(void)
{
	if (cli_getopt.longopts == NULL) {
		cli_tab.rows = opt_table;
		cli_tab.n = opt_ntable;
		/* Stop at the command; a missing value comes back as ':'. */
		opt_getopt_build(&cli_getopt, "+:", &cli_tab, 1);
	}
	return &cli_getopt;
}

/* Takes option id (getopt's optarg its value); 0, CLI_* or DT_ERR_*. */
static int
cli_take(struct opts *o, int id, int argc, char **argv, struct dt_err *e)
{
	const struct opt_row	*r;
	size_t			 g;
	int			 rc = CLI_NOTMINE;

	/* -npernode is -n's letter: cli_opt_n says which was given. */
	if (id != OPT_NP)
		o->given[id] = 1;
	if (id == OPT_VERSION)
		return CLI_VERSION;
	if (id == OPT_HELP)
		return CLI_HELP;
	if (id == OPT_LIST_OPTIONS)
		return CLI_LIST;
	if (id == OPT_NP)
		rc = cli_opt_n(o, argc, argv, e);
	for (g = 0; g < sizeof(cli_groups) / sizeof(cli_groups[0]) &&
	    rc == CLI_NOTMINE; g++)
		rc = cli_groups[g](o, id, e);
	/* The rest only need keeping where their row says. */
	if (rc == CLI_NOTMINE && (r = cli_row(id)) != NULL && r->at != 0)
		rc = opt_take(r, cli_typed, optarg, o, e);
	return rc;
}

/*
 * mpirun's one-dash words ("-hostfile", "-ppn") that getopt would read as
 * dtrun's letters (-h, -p): refused with what dtrun takes instead. Only
 * at the start of a word, before the command.
 */
static int
cli_one_dash(int argc, char **argv, struct dt_err *e)
{
	const char	*w, *hint;
	int		 at = optind > 0 ? optind : 1;	/* 0: not begun */

	if (at >= argc)
		return 0;
	w = argv[at];
	if (w[0] != '-' || w[1] == '-' || w[1] == '\0' || w[2] == '\0' ||
	    (hint = peer_unknown_hint(w)) == NULL)
		return 0;
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s is not dtrun's: %s "
	    "(see dtrun --help)", w, hint);
}

int
cli_parse(int argc, char **argv, struct opts *o, struct dt_err *e)
{
	const struct opt_getopt	*g = cli_arrays();
	int			 c, rc, li, id, before, fresh = 1;

	cli_defaults(o);
	dt_err_clear(e);
	optind = 0;		/* glibc: restart, so the unit tests can call us again */
	opterr = 0;
	/* fresh: getopt is at the start of a word (it moved on a word). */
	while (li = -1, before = optind, (rc = fresh ?
	    cli_one_dash(argc, argv, e) : 0) == 0 && (c = getopt_long(argc,
	    argv, g->shorts, g->longopts, &li)) != -1) {
		fresh = optind != before;
		if (li >= 0)
			snprintf(cli_typed, sizeof(cli_typed), "--%s",
			    g->longopts[li].name);
		else
			snprintf(cli_typed, sizeof(cli_typed), "-%c", c);
		id = opt_getopt_id(g, c);
		rc = id < 0 ? CLI_NOTMINE : cli_take(o, id, argc, argv, e);
		if (rc == CLI_NOTMINE)
			rc = cli_bad_option(c, argc, argv, e);
		if (rc != 0) {
			cli_free(o);
			return rc;
		}
	}
	if (rc != 0) {
		cli_free(o);
		return rc;
	}
	if ((rc = cli_finish(argc, argv, o, e)) < 0)
		cli_free(o);
	return rc;
}

void
cli_usage(FILE *f)
{
	(void)cli_arrays();
	fputs(cli_usage_head, f);
	opt_usage(f, &cli_tab, 1);
	fputs(cli_usage_tail, f);
}

void
cli_list(FILE *f)
{
	(void)cli_arrays();
	opt_list(f, &cli_tab, 1);
}

void
cli_free(struct opts *o)
{
	size_t	i;

	for (i = 0; i < o->nexports; i++)
		free(o->exports[i]);
	free(o->exports);
	o->exports = NULL;
	o->nexports = 0;
	free(o->hosts);
	o->hosts = NULL;
	o->nhosts = 0;
	free(o->ssh.identities);
	o->ssh.identities = NULL;
	o->ssh.nidentities = 0;
	free(o->sync_exclude);
	o->sync_exclude = NULL;
	o->nsync_exclude = 0;
	free(o->cmd_owned);
	o->cmd_owned = NULL;
	free(o->cmd_module);
	o->cmd_module = NULL;
	for (i = 0; i < o->nnotes; i++)
		free(o->notes[i]);
	o->nnotes = 0;
}
