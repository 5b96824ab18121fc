/*
 * opttable.c -- dtrun's option table (see opttable.h) and what is built
 * from it: getopt_long's arrays, the --help list and the list the docs
 * tests compare the man page and completions with. The values themselves
 * are taken by cli.c, one case per id; dtrun-kill links this file for the
 * rows marked OPTF_KILL.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/opttable.h"
#include "launcher/peerflags.h"
#include "util/xmalloc.h"

/* Short names for the table's columns, gone after it. */
#define V	OPTA_VALUE
#define N	OPTA_NONE
#define O	OPTA_OPTIONAL
#define K	OPTF_KILL

const struct opt_row opt_table[] = {
	{ "np", 'n', V, OPT_NP, "N", "numGPUs", 0,
	    "number of ranks (default: every slot; 1 locally)" },
	{ "nproc-per-node", 0, V, OPT_NPROC, "N|auto|gpu|cpu", NULL, 0,
	    "ranks per host; auto: one per GPU this machine\n"
	    "has, else per core; gpu: per GPU; cpu: per core\n"
	    "(counted here: one host, or --launcher local)" },
	{ "hosts", 'H', V, OPT_HOSTS, "LIST|FILE", "hosts", K,
	    "hosts: a hostfile, or a list like a:2,gpu[01-04]:8" },
	{ "hostfile", 0, V, OPT_HOSTFILE, "FILE", "hostfile", 0,
	    "hosts from FILE (host, host:N, host slots=N ...)" },
	{ "config", 'f', V, OPT_CONFIG, "FILE", NULL, 0,
	    "an engine.yaml job file; options here win" },
	{ "template", 0, V, OPT_TEMPLATE, "FILE", NULL, 0,
	    "merge FILE under the engine.yaml" },
	{ "include", 0, V, OPT_INCLUDE, "SPEC", NULL, 0,
	    "only these hosts/devices (host1:0,1@host2);\n"
	    "picked devices become CUDA_VISIBLE_DEVICES" },
	{ "exclude", 0, V, OPT_EXCLUDE, "SPEC", NULL, 0,
	    "not these hosts/devices" },
	{ "oversubscribe", 0, N, OPT_OVERSUB, NULL, NULL, 0,
	    "allow more ranks than slots" },
	{ "servers", 's', V, OPT_SERVERS, "N", NULL, 0,
	    "MXNet parameter servers (and a scheduler)" },
	{ "launcher", 0, V, OPT_LAUNCHER, "KIND", "launcher", 0,
	    "local, ssh or slurm (default: ssh with hosts;\n"
	    "slurm inside a Slurm allocation without hosts)" },
	{ "prefix", 0, V, OPT_PREFIX, "FORMAT", "prefix", 0,
	    "line prefix: %r rank, %l local rank, %h host,\n"
	    "%s stream (out/err), %a attempt, %% percent;\n"
	    "default \"[%r] \"; \"\" turns prefixes off" },
	{ "output-dir", 0, V, OPT_OUTPUT_DIR, "DIR", "outputDir", 0,
	    "also write DIR/rank.N/{stdout,stderr} (a restart K:\n"
	    "DIR/attempt.K/rank.N/); the job then goes on if\n"
	    "stdout is closed" },
	{ "timestamp", 0, N, OPT_TIMESTAMP, NULL, NULL, 0,
	    "put the time in front of each forwarded line" },
	{ "collapse", 0, N, OPT_COLLAPSE, NULL, "collapse", 0,
	    "a line several ranks print goes to the terminal\n"
	    "once, as \"[0-7] line\" (not to --output-dir); the\n"
	    "default when stdout is a terminal and 8+ ranks run" },
	{ "no-collapse", 0, N, OPT_NO_COLLAPSE, NULL, NULL, 0,
	    "every rank's lines to the terminal as they come" },
	{ "local-ranks-filter", 0, V, OPT_RANKS_FILTER, "LIST", NULL, 0,
	    "only these ranks' lines on the terminal (0,2,4-7);\n"
	    "--output-dir still gets every rank's" },
	{ "redirects", 'r', V, OPT_REDIRECTS, "STD", NULL, 0,
	    "torchrun's: keep stdout (1), stderr (2) or both\n"
	    "(3) off the terminal, only in --output-dir's\n"
	    "files (needs it); per local rank: 0:3,1:2" },
	{ "tee", 't', V, OPT_TEE, "STD", NULL, 0,
	    "torchrun's: these streams on the terminal and in\n"
	    "--output-dir's files (dtrun's way: it only undoes\n"
	    "--redirects); same values" },
	{ "tag-output", 0, N, OPT_TAG_OUTPUT, NULL, NULL, 0,
	    "mpirun's prefix: --prefix \"[1,%r]<%s>:\"" },
	{ "escape-output", 0, N, OPT_ESCAPE_OUTPUT, NULL, NULL, 0,
	    "show control characters in ranks' lines as \\xHH\n"
	    "(for output from hosts you do not trust)" },
	{ "export", 'x', V, OPT_EXPORT, "NAME[=VALUE]|PATTERN", "environment",
	    0,
	    "pass a variable to the ranks (repeatable); a\n"
	    "pattern ('NCCL_*') passes every variable of\n"
	    "dtrun's environment whose name matches" },
	{ "env-file", 0, V, OPT_ENV_FILE, "FILE", NULL, 0,
	    "pass FILE's NAME=VALUE lines to the ranks (# starts\n"
	    "a comment; values taken literally; repeatable)" },
	{ "setup", 0, V, OPT_SETUP, "CMD", "setup", 0,
	    "run CMD (sh -c) once on each host before any rank\n"
	    "starts; the NAME=VALUE lines it prints are that\n"
	    "host's ranks' variables; if it fails on a host,\n"
	    "nothing starts anywhere (exit 2)" },
	{ "forward-signals", 0, V, OPT_FORWARD_SIGNALS, "SIG[,SIG...]",
	    "forwardSignals", 0,
	    "signals dtrun passes to every rank, the job going\n"
	    "on (default USR1,USR2; none: ignore them);\n"
	    "INT, TERM and HUP always stop the job" },
	{ "kill-grace", 0, V, OPT_KILL_GRACE, "SECS", "killGrace", 0,
	    "between SIGTERM and SIGKILL when stopping (default 5)" },
	{ "timeout", 0, V, OPT_TIMEOUT, "SECS", "timeout", 0,
	    "stop the job after SECS and exit 124" },
	{ "heartbeat-timeout", 0, V, OPT_HEARTBEAT_TIMEOUT, "SECS",
	    "heartbeatTimeout", 0,
	    "a host not heard from for SECS (powered off, cut\n"
	    "off) is lost: exit 255; its agent, not hearing\n"
	    "dtrun, stops its ranks (default 15, 1 to 86400;\n"
	    "0 = off)" },
	{ "start-timeout", 0, V, OPT_START_TIMEOUT, "SECS", NULL, 0,
	    "once one rank joined the rendezvous, all must\n"
	    "within SECS (default 300; 0 = wait forever);\n"
	    "under Slurm, every node's agent must connect and\n"
	    "say HELLO too" },
	{ "hang-timeout", 0, V, OPT_HANG_TIMEOUT, "SECS", "hangTimeout", 0,
	    "when no rank wrote a line for SECS, print every\n"
	    "rank's stack (merged) and stop the job, exit 123" },
	{ "on-hang", 0, V, OPT_ON_HANG, "stop|report", NULL, 0,
	    "report: print the stacks and keep running" },
	{ "straggler-threshold", 0, V, OPT_STRAGGLER_THRESHOLD, "FRACTION",
	    NULL, 0,
	    "name a rank (or host) whose steps stay this much\n"
	    "slower than the median for 20 steps, once: 0.1 or 10%\n"
	    "(default 10%; 0: off); steps from DTRUN_PROGRESS,\n"
	    "else from the rhythm of the ranks' lines" },
	{ "on-straggler", 0, V, OPT_ON_STRAGGLER, "report|stack|stop", NULL, 0,
	    "then: say so (default), show its stack too, or\n"
	    "stop the job (exit 122)" },
	{ "max-restarts", 0, V, OPT_MAX_RESTARTS, "N", "maxRestarts", 0,
	    "when a rank fails, a host is lost or the job hangs,\n"
	    "stop everything and start the whole job again, at\n"
	    "most N times in all (default 0; 3 with engine.yaml\n"
	    "preemptible: true)" },
	{ "restart-delay", 0, V, OPT_RESTART_DELAY, "SECS", "restartDelay", 0,
	    "wait before restart K: SECS * 2^(K-1), at most\n"
	    "max(SECS, 300) (default 1)" },
	{ "restart-on-same-failure", 0, N, OPT_RESTART_SAME, NULL, NULL, 0,
	    "restart even when an attempt fails as the one\n"
	    "before it did (the same rank exit code or signal,\n"
	    "exception and last frames); by default that stops" },
	{ "min-np", 0, V, OPT_MIN_NP, "N", NULL, 0,
	    "a restart may drop lost hosts down to N ranks\n"
	    "(default: only while -n still fits)" },
	{ "spares", 0, V, OPT_SPARES, "N", "spares", 0,
	    "the last N hosts run no rank: a restart after a\n"
	    "lost host puts one in its place (its ranks and\n"
	    "NODE_RANK) instead of dropping it (default 0)" },
	{ "dry-run", 0, N, OPT_DRY_RUN, NULL, NULL, 0,
	    "print the plan, one line per rank, and exit" },
	{ "check", 0, N, OPT_CHECK, NULL, NULL, 0,
	    "start no rank: reach every host as a run would and\n"
	    "print a table (agent, interface and address, TCP\n"
	    "to rank 0's host, clock skew, COMMAND in PATH,\n"
	    "python and torch versions, GPUs, libnccl), then\n"
	    "each problem with its fix; exit 0, or 78 when\n"
	    "there are problems (-v: every answer)" },
	{ "preflight", 0, O, OPT_PREFLIGHT, "[=deep]", NULL, 0,
	    "before a job of several hosts, check quickly\n"
	    "(agents, interfaces, TCP to rank 0's host,\n"
	    "COMMAND, NCCL/GLOO_SOCKET_IFNAME); a problem stops\n"
	    "the job before any rank starts, exit 78 (default\n"
	    "off: it costs a round trip or two); =deep: the\n"
	    "network too, as --deep" },
	{ "deep", 0, N, OPT_DEEP, NULL, NULL, 0,
	    "with --check or --preflight: measure the network\n"
	    "between the hosts on the interfaces a run uses\n"
	    "(a ring, then pairs across the middle: round\n"
	    "trips, then throughput over parallel streams) and\n"
	    "name a slow host or link" },
	{ "deep-bytes", 0, V, OPT_DEEP_BYTES, "SIZE", NULL, 0,
	    "bytes each pair sends for --deep (K, M, G;\n"
	    "default 64M); a pair stops after 10 s anyway" },
	{ "ssh-port", 'p', V, OPT_SSH_PORT, "PORT", "ssh.port", K,
	    "ssh port (default 22, or ssh_config's)" },
	{ "ssh-identity", 'i', V, OPT_SSH_IDENTITY, "FILE", "ssh.identityFile",
	    K, "ssh private key to try (repeatable)" },
	{ "ssh-option", 0, V, OPT_SSH_OPTION, "K=V", "ssh.options", K,
	    "ssh -o option: User, Port, IdentityFile,\n"
	    "StrictHostKeyChecking, UserKnownHostsFile,\n"
	    "ConnectTimeout, ProxyJump, ProxyCommand\n"
	    "(repeatable); ConnectTimeout=SECS bounds each\n"
	    "step of reaching a host (and each jump host), up\n"
	    "to its agent's first message (default 15)" },
	{ "ssh-jump", 'J', V, OPT_SSH_JUMP, "[USER@]HOST[:PORT][,...]", NULL,
	    K,
	    "reach hosts through these jump hosts, as ssh -J\n"
	    "(ProxyJump); each is checked against known_hosts" },
	{ "ssh-config", 'F', V, OPT_SSH_CONFIG, "FILE", NULL, K,
	    "ssh_config to read (default ~/.ssh/config)" },
	{ "ssh-fanout", 0, V, OPT_SSH_FANOUT, "N", NULL, K,
	    "hosts connecting at once (default 64)" },
	{ "ssh-agent-dir", 0, V, OPT_SSH_AGENT_DIR, "DIR", NULL, K,
	    "where hosts cache dtrun-agent (~/.cache/dtrun)" },
	{ "framework", 0, V, OPT_FRAMEWORK, "NAME[,NAME...]", NULL, 0,
	    "the variables of: pytorch (default), tensorflow,\n"
	    "mxnet, horovod, mpi; or none (only DTRUN_*)" },
	{ "iface", 0, V, OPT_IFACE, "LIST", NULL, 0,
	    "network interface for NCCL and Gloo, per host: the\n"
	    "first a host has of LIST's IFACE,... (HOST=IFACE:\n"
	    "that host's own); default: lo on one machine, else\n"
	    "each host's route to rank 0's host" },
	{ "role", 0, V, OPT_ROLE, "NAME", NULL, 0,
	    "ROLE_NAME for PyTorch (default \"default\")" },
	{ "module", 'm', N, OPT_MODULE, NULL, NULL, 0,
	    "run COMMAND as a Python module: python3 -m COMMAND\n"
	    "(torchrun's -m)" },
	{ "no-python", 0, N, OPT_NO_PYTHON, NULL, NULL, 0,
	    "torchrun's: run COMMAND itself, as dtrun always\n"
	    "does without -m" },
	{ "seed", 0, V, OPT_SEED, "N", NULL, 0,
	    "export DTRUN_SEED=N and a per-rank DTRUN_RANK_SEED" },
	{ "sync-dst-dir", 0, V, OPT_SYNC_DST, "DIR", "sync.dst", 0,
	    "first rsync this directory to DIR on every host,\n"
	    "deleting extras (%h in DIR: the host); run there" },
	{ "sync-exclude", 0, V, OPT_SYNC_EXCLUDE, "PATTERN", "sync.exclude", 0,
	    "leave PATTERN out of the sync (repeatable)" },
	{ "verbose", 'v', N, OPT_VERBOSE, NULL, NULL, 0,
	    "say more (repeat for debug output)" },
	{ "quiet", 'q', N, OPT_QUIET, NULL, NULL, 0, "only errors" },
	{ "version", 'V', N, OPT_VERSION, NULL, NULL, 0, "print the version" },
	{ "help", 'h', N, OPT_HELP, NULL, NULL, 0, "this text" },

	/*
	 * The spellings torchrun and mpirun users type (peerflags.h), named
	 * in the text after --help's list. -np and -npernode are -n with
	 * "p" or "pernode" glued on (cli.c).
	 */
	{ "nproc_per_node", 0, V, OPT_NPROC, "N", NULL, 0, NULL },
	{ "npernode", 0, V, OPT_NPROC, "N", NULL, 0, NULL },
	{ "log-dir", 0, V, OPT_OUTPUT_DIR, "DIR", NULL, 0, NULL },
	{ "log_dir", 0, V, OPT_OUTPUT_DIR, "DIR", NULL, 0, NULL },
	{ "local_ranks_filter", 0, V, OPT_RANKS_FILTER, "LIST", NULL, 0, NULL },
	{ "no_python", 0, N, OPT_NO_PYTHON, NULL, NULL, 0, NULL },
	{ "monitor-interval", 0, V, OPT_PEER + PEER_MONITOR_INTERVAL, "SECS",
	    NULL, 0, NULL },
	{ "monitor_interval", 0, V, OPT_PEER + PEER_MONITOR_INTERVAL, "SECS",
	    NULL, 0, NULL },
	{ "nnodes", 0, V, OPT_NNODES, "N|MIN:MAX", NULL, 0, NULL },
	{ "master-port", 0, V, OPT_MASTER_PORT, "PORT", NULL, 0, NULL },
	{ "master_port", 0, V, OPT_MASTER_PORT, "PORT", NULL, 0, NULL },
	{ "master-addr", 0, V, OPT_MASTER_ADDR, "ADDR", NULL, 0, NULL },
	{ "master_addr", 0, V, OPT_MASTER_ADDR, "ADDR", NULL, 0, NULL },
	{ "max_restarts", 0, V, OPT_MAX_RESTARTS, "N", NULL, 0, NULL },
	{ "standalone", 0, N, OPT_PEER + PEER_STANDALONE, NULL, NULL, 0, NULL },
	{ "rdzv-endpoint", 0, V, OPT_PEER + PEER_RDZV_ENDPOINT, "HOST:PORT",
	    NULL, 0, NULL },
	{ "rdzv_endpoint", 0, V, OPT_PEER + PEER_RDZV_ENDPOINT, "HOST:PORT",
	    NULL, 0, NULL },
	{ "rdzv-backend", 0, V, OPT_PEER + PEER_RDZV_BACKEND, "NAME", NULL, 0,
	    NULL },
	{ "rdzv_backend", 0, V, OPT_PEER + PEER_RDZV_BACKEND, "NAME", NULL, 0,
	    NULL },
	{ "rdzv-id", 0, V, OPT_PEER + PEER_RDZV_ID, "ID", NULL, 0, NULL },
	{ "rdzv_id", 0, V, OPT_PEER + PEER_RDZV_ID, "ID", NULL, 0, NULL },
	{ "node-rank", 0, V, OPT_PEER + PEER_NODE_RANK, "N", NULL, 0, NULL },
	{ "node_rank", 0, V, OPT_PEER + PEER_NODE_RANK, "N", NULL, 0, NULL },

	/* For t0040-docs.sh: the table itself, as opt_list writes it. */
	{ "list-options", 0, N, OPT_LIST_OPTIONS, NULL, NULL, OPTF_HIDDEN,
	    NULL },
};
const size_t opt_ntable = sizeof(opt_table) / sizeof(opt_table[0]);

#undef V
#undef N
#undef O
#undef K

const struct opt_yaml_only opt_yaml_only[] = {
	{ "apiVersion", "which Engine ML schema the file follows" },
	{ "command", "the command is the words after the options" },
	{ "commands", "the command is the words after the options" },
	{ "preemptible", "only changes --max-restarts' default" },
	{ "slotsPerHost", "-H gives slots per host (a:2)" },
	{ "ssh.user", "--ssh-option User=NAME, or USER@ in -H" },
	/*
	 * Read and checked, but plan.c applies nothing of it, and its names
	 * (deepspeed, jax) are not --framework's: to settle before it
	 * becomes --framework's key.
	 */
	{ "framework", "read, but not applied yet" },
};
const size_t opt_nyaml_only = sizeof(opt_yaml_only) /
    sizeof(opt_yaml_only[0]);

/* Walks the rows of tabs, each table's with its need flags. */
#define OPT_EACH(tabs, ntabs, t, r)					\
	for ((t) = (tabs); (t) < (tabs) + (ntabs); (t)++)		\
		for ((r) = (t)->rows; (r) < (t)->rows + (t)->n; (r)++)	\
			if (((r)->flags & (t)->need) == (t)->need)

void
opt_getopt_build(struct opt_getopt *g, const char *lead,
    const struct opt_tab *tabs, size_t ntabs)
{
	const struct opt_tab	*t;
	const struct opt_row	*r;
	size_t			 n = 0, at;

	OPT_EACH(tabs, ntabs, t, r)
		n++;
	g->longopts = xcalloc(n + 1, sizeof(*g->longopts));
	memset(g->byletter, -1, sizeof(g->byletter));
	at = strlen(lead);
	if (at >= sizeof(g->shorts))
		abort();
	memcpy(g->shorts, lead, at + 1);
	n = 0;
	OPT_EACH(tabs, ntabs, t, r) {
		/* A long option's val is 256 + id, above every letter. */
		g->longopts[n].name = r->name;
		g->longopts[n].has_arg = r->arg == OPTA_VALUE ?
		    required_argument : r->arg == OPTA_OPTIONAL ?
		    optional_argument : no_argument;
		g->longopts[n++].val = 256 + r->id;
		if (r->letter == 0)
			continue;
		if (at + 3 > sizeof(g->shorts) || r->letter >= 128)
			abort();
		g->byletter[r->letter] = r->id;
		g->shorts[at++] = (char)r->letter;
		if (r->arg == OPTA_VALUE)
			g->shorts[at++] = ':';
		g->shorts[at] = '\0';
	}
}

int
opt_getopt_id(const struct opt_getopt *g, int c)
{
	if (c >= 256)
		return c - 256;
	if (c > 0 && c < 128 && c != '?' && c != ':')
		return g->byletter[c];
	return -1;
}

const struct opt_row *
opt_find(const struct opt_tab *tabs, size_t ntabs, int id)
{
	const struct opt_tab	*t;
	const struct opt_row	*r;

	OPT_EACH(tabs, ntabs, t, r)
		if (r->id == id)
			return r;
	return NULL;
}

/* Where --help's explanations start. */
#define OPT_HELP_COL	26

/* One row of --help's list. */
static void
opt_usage_row(FILE *f, const struct opt_row *r)
{
	const char	*p, *nl;
	int		 len;

	if (r->letter != 0)
		len = fprintf(f, "  -%c, --%s", r->letter, r->name);
	else
		len = fprintf(f, "      --%s", r->name);
	/* An optional value is glued on: --preflight[=deep]. */
	if (r->metavar != NULL)
		len += fprintf(f, r->arg == OPTA_OPTIONAL ? "%s" : " %s",
		    r->metavar);
	if (len >= OPT_HELP_COL) {
		fputc('\n', f);
		len = 0;
	}
	for (p = r->help; *p != '\0'; p = nl + (*nl == '\n')) {
		nl = p + strcspn(p, "\n");
		fprintf(f, "%*s%.*s\n", OPT_HELP_COL - len, "", (int)(nl - p),
		    p);
		len = 0;
	}
}

void
opt_usage(FILE *f, const struct opt_tab *tabs, size_t ntabs)
{
	const struct opt_tab	*t;
	const struct opt_row	*r;

	OPT_EACH(tabs, ntabs, t, r)
		if (r->help != NULL && !(r->flags & OPTF_HIDDEN))
			opt_usage_row(f, r);
}

void
opt_list(FILE *f, const struct opt_tab *tabs, size_t ntabs)
{
	const struct opt_tab	*t;
	const struct opt_row	*r;

	OPT_EACH(tabs, ntabs, t, r)
		if (!(r->flags & OPTF_HIDDEN))
			fprintf(f, "--%s %s%c %s %s\n", r->name,
			    r->letter ? "-" : "", r->letter ? r->letter : '-',
			    r->arg == OPTA_VALUE ? "value" : "none",
			    r->yaml != NULL ? r->yaml : "-");
}
