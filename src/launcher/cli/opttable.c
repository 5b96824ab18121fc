/*
 * opttable.c -- dtrun's option table (see opttable.h) and what is built
 * from it: getopt_long's arrays, the --help list, the list the docs tests
 * compare the man page and completions with, and the one parser and bound
 * check of typed values (opt_take, opt_check) that cli.c and yamlopts.c
 * both use. Values of a syntax of their own are taken by cli.c, one case
 * per id; dtrun-kill links this file for the rows marked OPTF_KILL.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtlimits.h"
#include "common/err.h"
#include "launcher/cli/opts.h"
#include "launcher/cli/opttable.h"
#include "launcher/cli/peerflags.h"
#include "util/xmalloc.h"

/* Short names for the table's columns, gone after it. */
#define V	OPTA_VALUE
#define N	OPTA_NONE
#define O	OPTA_OPTIONAL
#define K	OPTF_KILL
/* The type columns: type, where it is kept, default, min, max. */
#define AT(f)	(offsetof(struct opts, f) + 1)
#define COUNT(f, def, min, max)	OPTT_COUNT, AT(f), def, min, max
#define SECS(f, def, min, max)	OPTT_SECS, AT(f), def, min, max
#define FLAG(f)	OPTT_BOOL, AT(f), 0, 0, 1
#define STR(f)	OPTT_STRING, AT(f), 0, 0, 0
#define WORD	OPTT_STRING, 0, 0, 0, 0		/* checked by cli.c */
#define LIST	OPTT_LIST, 0, 0, 0, 0

const struct opt_row opt_table[] = {
	{ "np", 'n', V, OPT_NP, "N", "numGPUs", 0,
	    "number of ranks (default: every slot; 1 locally)",
	    COUNT(np, 0, 1, DT_COUNT_MAX) },
	{ "nproc-per-node", 0, V, OPT_NPROC, "N|auto|gpu|cpu", NULL, 0,
	    "ranks per host; auto: one per GPU this machine\n"
	    "has, else per core; gpu: per GPU; cpu: per core\n"
	    "(counted here: one host, or --launcher local)",
	    COUNT(nproc_per_node, 0, 1, DT_COUNT_MAX) },
	{ "hosts", 'H', V, OPT_HOSTS, "LIST|FILE", "hosts", K,
	    "hosts: a hostfile, or a list like a:2,gpu[01-04]:8", LIST },
	{ "hostfile", 0, V, OPT_HOSTFILE, "FILE", "hostfile", 0,
	    "hosts from FILE (host, host:N, host slots=N ...)", LIST },
	{ "config", 'f', V, OPT_CONFIG, "FILE", NULL, 0,
	    "an engine.yaml job file; options here win", STR(config) },
	{ "template", 0, V, OPT_TEMPLATE, "FILE", NULL, 0,
	    "merge FILE under the engine.yaml", STR(template) },
	{ "include", 0, V, OPT_INCLUDE, "SPEC", NULL, 0,
	    "only these hosts/devices (host1:0,1@host2);\n"
	    "picked devices become CUDA_VISIBLE_DEVICES", STR(include) },
	{ "exclude", 0, V, OPT_EXCLUDE, "SPEC", NULL, 0,
	    "not these hosts/devices", STR(exclude) },
	{ "oversubscribe", 0, N, OPT_OVERSUB, NULL, NULL, 0,
	    "allow more ranks than slots", FLAG(oversubscribe) },
	{ "servers", 's', V, OPT_SERVERS, "N", NULL, 0,
	    "MXNet parameter servers (and a scheduler)",
	    COUNT(nservers, 0, 0, DT_COUNT_MAX) },
	{ "launcher", 0, V, OPT_LAUNCHER, "KIND", "launcher", 0,
	    "local, ssh or slurm (default: ssh with hosts;\n"
	    "slurm inside a Slurm allocation without hosts)", OPT_UNTYPED },
	{ "prefix", 0, V, OPT_PREFIX, "FORMAT", "prefix", 0,
	    "line prefix: %r rank, %l local rank, %h host,\n"
	    "%s stream (out/err), %a attempt, %% percent;\n"
	    "default \"[%r] \"; \"\" turns prefixes off", WORD },
	{ "output-dir", 0, V, OPT_OUTPUT_DIR, "DIR", "outputDir", 0,
	    "also write DIR/rank.N/{stdout,stderr} (a restart K:\n"
	    "DIR/attempt.K/rank.N/); the job then goes on if\n"
	    "stdout is closed", WORD },
	{ "timestamp", 0, N, OPT_TIMESTAMP, NULL, NULL, 0,
	    "put the time in front of each forwarded line", FLAG(timestamp) },
	{ "collapse", 0, N, OPT_COLLAPSE, NULL, "collapse", 0,
	    "a line several ranks print goes to the terminal\n"
	    "once, as \"[0-7] line\" (not to --output-dir); the\n"
	    "default when stdout is a terminal and 8+ ranks run",
	    FLAG(collapse) },
	{ "no-collapse", 0, N, OPT_NO_COLLAPSE, NULL, NULL, 0,
	    "every rank's lines to the terminal as they come", WORD },
	{ "local-ranks-filter", 0, V, OPT_RANKS_FILTER, "LIST", NULL, 0,
	    "only these ranks' lines on the terminal (0,2,4-7);\n"
	    "--output-dir still gets every rank's", WORD },
	{ "redirects", 'r', V, OPT_REDIRECTS, "STD", NULL, 0,
	    "torchrun's: keep stdout (1), stderr (2) or both\n"
	    "(3) off the terminal, only in --output-dir's\n"
	    "files (needs it); per local rank: 0:3,1:2", OPT_UNTYPED },
	{ "tee", 't', V, OPT_TEE, "STD", NULL, 0,
	    "torchrun's: these streams on the terminal and in\n"
	    "--output-dir's files (dtrun's way: it only undoes\n"
	    "--redirects); same values", OPT_UNTYPED },
	{ "tag-output", 0, N, OPT_TAG_OUTPUT, NULL, NULL, 0,
	    "mpirun's prefix: --prefix \"[1,%r]<%s>:\"", OPT_UNTYPED },
	{ "escape-output", 0, N, OPT_ESCAPE_OUTPUT, NULL, NULL, 0,
	    "show control characters in ranks' lines as \\xHH\n"
	    "(for output from hosts you do not trust)", FLAG(escape_output) },
	{ "export", 'x', V, OPT_EXPORT, "NAME[=VALUE]|PATTERN", "environment",
	    0,
	    "pass a variable to the ranks (repeatable); a\n"
	    "pattern ('NCCL_*') passes every variable of\n"
	    "dtrun's environment whose name matches", LIST },
	{ "env-file", 0, V, OPT_ENV_FILE, "FILE", NULL, 0,
	    "pass FILE's NAME=VALUE lines to the ranks (# starts\n"
	    "a comment; values taken literally; repeatable)", LIST },
	{ "setup", 0, V, OPT_SETUP, "CMD", "setup", 0,
	    "run CMD (sh -c) once on each host before any rank\n"
	    "starts; the NAME=VALUE lines it prints are that\n"
	    "host's ranks' variables; if it fails on a host,\n"
	    "nothing starts anywhere (exit 2)", WORD },
	{ "forward-signals", 0, V, OPT_FORWARD_SIGNALS, "SIG[,SIG...]",
	    "forwardSignals", 0,
	    "signals dtrun passes to every rank, the job going\n"
	    "on (default USR1,USR2; none: ignore them);\n"
	    "INT, TERM and HUP always stop the job", OPT_UNTYPED },
	{ "kill-grace", 0, V, OPT_KILL_GRACE, "SECS", "killGrace", 0,
	    "between SIGTERM and SIGKILL when stopping (default 5)",
	    SECS(kill_grace, 5, 0, DT_SECS_MAX) },
	{ "timeout", 0, V, OPT_TIMEOUT, "SECS", "timeout", 0,
	    "stop the job after SECS and exit 124",
	    SECS(timeout, 0, 0.001, DT_SECS_MAX) },
	{ "heartbeat-timeout", 0, V, OPT_HEARTBEAT_TIMEOUT, "SECS",
	    "heartbeatTimeout", OPTF_OFF0,
	    "a host not heard from for SECS (powered off, cut\n"
	    "off) is lost: exit 255; its agent, not hearing\n"
	    "dtrun, stops its ranks (default 15, 1 to 86400;\n"
	    "0 = off)", SECS(heartbeat_timeout, CLI_HEARTBEAT_DEFAULT,
	    CLI_HEARTBEAT_MIN, CLI_HEARTBEAT_MAX) },
	{ "start-timeout", 0, V, OPT_START_TIMEOUT, "SECS", NULL, 0,
	    "once one rank joined the rendezvous, all must\n"
	    "within SECS (default 300; 0 = wait forever);\n"
	    "under Slurm, every node's agent must connect and\n"
	    "say HELLO too", SECS(start_timeout, 300, 0, DT_SECS_MAX) },
	{ "hang-timeout", 0, V, OPT_HANG_TIMEOUT, "SECS", "hangTimeout", 0,
	    "when no rank wrote a line for SECS, print every\n"
	    "rank's stack (merged) and stop the job, exit 123",
	    SECS(hang_timeout, 0, 0, DT_SECS_MAX) },
	{ "on-hang", 0, V, OPT_ON_HANG, "stop|report", NULL, 0,
	    "report: print the stacks and keep running", OPT_UNTYPED },
	{ "straggler-threshold", 0, V, OPT_STRAGGLER_THRESHOLD, "FRACTION",
	    NULL, 0,
	    "name a rank (or host) whose steps stay this much\n"
	    "slower than the median for 20 steps, once: 0.1 or 10%\n"
	    "(default 10%; 0: off); steps from DTRUN_PROGRESS,\n"
	    "else from the rhythm of the ranks' lines",
	    OPTT_FRACTION, AT(straggler_threshold),
	    CLI_STRAGGLER_DEFAULT, 0, 10 },
	{ "on-straggler", 0, V, OPT_ON_STRAGGLER, "report|stack|stop", NULL, 0,
	    "then: say so (default), show its stack too, or\n"
	    "stop the job (exit 122)", OPT_UNTYPED },
	{ "max-restarts", 0, V, OPT_MAX_RESTARTS, "N", "maxRestarts", 0,
	    "when a rank fails, a host is lost or the job hangs,\n"
	    "stop everything and start the whole job again, at\n"
	    "most N times in all (default 0; 3 with engine.yaml\n"
	    "preemptible: true)", COUNT(max_restarts, 0, 0, DT_COUNT_MAX) },
	{ "restart-delay", 0, V, OPT_RESTART_DELAY, "SECS", "restartDelay", 0,
	    "wait before restart K: SECS * 2^(K-1), at most\n"
	    "max(SECS, 300) (default 1)",
	    SECS(restart_delay, CLI_RESTART_DELAY, 0, DT_SECS_MAX) },
	{ "restart-on-same-failure", 0, N, OPT_RESTART_SAME, NULL, NULL, 0,
	    "restart even when an attempt fails as the one\n"
	    "before it did (the same rank exit code or signal,\n"
	    "exception and last frames); by default that stops",
	    FLAG(restart_same) },
	{ "min-np", 0, V, OPT_MIN_NP, "N", NULL, 0,
	    "a restart may drop lost hosts down to N ranks\n"
	    "(default: only while -n still fits)",
	    COUNT(min_np, 0, 1, DT_COUNT_MAX) },
	{ "spares", 0, V, OPT_SPARES, "N", "spares", 0,
	    "the last N hosts run no rank: a restart after a\n"
	    "lost host puts one in its place (its ranks and\n"
	    "NODE_RANK) instead of dropping it (default 0)",
	    COUNT(spares, 0, 0, DT_COUNT_MAX) },
	{ "dry-run", 0, N, OPT_DRY_RUN, NULL, NULL, 0,
	    "print the plan, one line per rank, and exit", FLAG(dry_run) },
	{ "check", 0, N, OPT_CHECK, NULL, NULL, 0,
	    "start no rank: reach every host as a run would and\n"
	    "print a table (agent, interface and address, TCP\n"
	    "to rank 0's host, clock skew, COMMAND in PATH,\n"
	    "python and torch versions, GPUs, libnccl), then\n"
	    "each problem with its fix; exit 0, or 78 when\n"
	    "there are problems (-v: every answer)", FLAG(check) },
	{ "preflight", 0, O, OPT_PREFLIGHT, "[=deep]", NULL, 0,
	    "before a job of several hosts, check quickly\n"
	    "(agents, interfaces, TCP to rank 0's host,\n"
	    "COMMAND, NCCL/GLOO_SOCKET_IFNAME); a problem stops\n"
	    "the job before any rank starts, exit 78 (default\n"
	    "off: it costs a round trip or two); =deep: the\n"
	    "network too, as --deep", OPT_UNTYPED },
	{ "deep", 0, N, OPT_DEEP, NULL, NULL, 0,
	    "with --check or --preflight: measure the network\n"
	    "between the hosts on the interfaces a run uses\n"
	    "(a ring, then pairs across the middle: round\n"
	    "trips, then throughput over parallel streams) and\n"
	    "name a slow host or link", FLAG(deep) },
	{ "deep-bytes", 0, V, OPT_DEEP_BYTES, "SIZE", NULL, 0,
	    "bytes each pair sends for --deep (K, M, G;\n"
	    "default 64M); a pair stops after 10 s anyway",
	    OPTT_SIZE, AT(deep_bytes), DEEP_BYTES_DEFAULT, 1,
	    CHECK_DEEP_BYTES_MAX },
	{ "ssh-port", 'p', V, OPT_SSH_PORT, "PORT", "ssh.port", K,
	    "ssh port (default 22, or ssh_config's)",
	    COUNT(ssh.port, 0, 1, DT_PORT_MAX) },
	{ "ssh-identity", 'i', V, OPT_SSH_IDENTITY, "FILE", "ssh.identityFile",
	    K, "ssh private key to try (repeatable)", LIST },
	{ "ssh-option", 0, V, OPT_SSH_OPTION, "K=V", "ssh.options", K,
	    "ssh -o option: User, Port, IdentityFile,\n"
	    "StrictHostKeyChecking, UserKnownHostsFile,\n"
	    "ConnectTimeout, ProxyJump, ProxyCommand\n"
	    "(repeatable); ConnectTimeout=SECS bounds each\n"
	    "step of reaching a host (and each jump host), up\n"
	    "to its agent's first message (default 15)", LIST },
	{ "ssh-jump", 'J', V, OPT_SSH_JUMP, "[USER@]HOST[:PORT][,...]", NULL,
	    K,
	    "reach hosts through these jump hosts, as ssh -J\n"
	    "(ProxyJump); each is checked against known_hosts", WORD },
	{ "ssh-config", 'F', V, OPT_SSH_CONFIG, "FILE", NULL, K,
	    "ssh_config to read (default ~/.ssh/config)", STR(ssh.config) },
	{ "ssh-fanout", 0, V, OPT_SSH_FANOUT, "N", NULL, K,
	    "hosts connecting at once (default 64)",
	    COUNT(ssh.fanout, 0, 1, DT_COUNT_MAX) },
	{ "ssh-agent-dir", 0, V, OPT_SSH_AGENT_DIR, "DIR", NULL, K,
	    "where hosts cache dtrun-agent (~/.cache/dtrun)", WORD },
	{ "framework", 0, V, OPT_FRAMEWORK, "NAME[,NAME...]", NULL, 0,
	    "the variables of: pytorch (default), tensorflow,\n"
	    "mxnet, horovod, mpi; or none (only DTRUN_*)", OPT_UNTYPED },
	{ "store", 0, V, OPT_STORE, "dtrun|rank0", NULL, 0,
	    "PyTorch's TCPStore (env://): dtrun serves it, each\n"
	    "rank a client of its host's agent at MASTER_ADDR=\n"
	    "127.0.0.1 (default); rank0: rank 0 hosts it at\n"
	    "rank 0's host, as env:// alone does", OPT_UNTYPED },
	{ "iface", 0, V, OPT_IFACE, "LIST", NULL, 0,
	    "network interface for NCCL and Gloo, per host: the\n"
	    "first a host has of LIST's IFACE,... (HOST=IFACE:\n"
	    "that host's own); default: lo on one machine, else\n"
	    "each host's route to rank 0's host", WORD },
	{ "role", 0, V, OPT_ROLE, "NAME", NULL, 0,
	    "ROLE_NAME for PyTorch (default \"default\")", WORD },
	{ "module", 'm', N, OPT_MODULE, NULL, NULL, 0,
	    "run COMMAND as a Python module: python3 -m COMMAND\n"
	    "(torchrun's -m)", FLAG(module) },
	{ "no-python", 0, N, OPT_NO_PYTHON, NULL, NULL, 0,
	    "torchrun's: run COMMAND itself, as dtrun always\n"
	    "does without -m", FLAG(no_python) },
	{ "seed", 0, V, OPT_SEED, "N", NULL, 0,
	    "export DTRUN_SEED=N and a per-rank DTRUN_RANK_SEED",
	    OPT_UNTYPED },
	{ "sync-dst-dir", 0, V, OPT_SYNC_DST, "DIR", "sync.dst", 0,
	    "first rsync this directory to DIR on every host,\n"
	    "deleting extras (%h in DIR: the host); run there", WORD },
	{ "sync-exclude", 0, V, OPT_SYNC_EXCLUDE, "PATTERN", "sync.exclude", 0,
	    "leave PATTERN out of the sync (repeatable)", LIST },
	{ "verbose", 'v', N, OPT_VERBOSE, NULL, NULL, 0,
	    "say more (repeat for debug output)", OPT_UNTYPED },
	{ "quiet", 'q', N, OPT_QUIET, NULL, NULL, 0, "only errors",
	    FLAG(quiet) },
	{ "version", 'V', N, OPT_VERSION, NULL, NULL, 0, "print the version",
	    OPT_UNTYPED },
	{ "help", 'h', N, OPT_HELP, NULL, NULL, 0, "this text", OPT_UNTYPED },

	/*
	 * The spellings torchrun and mpirun users type (peerflags.h), named
	 * in the text after --help's list. -np and -npernode are -n with
	 * "p" or "pernode" glued on (cli.c).
	 */
	{ "nproc_per_node", 0, V, OPT_NPROC, "N", NULL, 0, NULL,
	    COUNT(nproc_per_node, 0, 1, DT_COUNT_MAX) },
	{ "npernode", 0, V, OPT_NPROC, "N", NULL, 0, NULL,
	    COUNT(nproc_per_node, 0, 1, DT_COUNT_MAX) },
	{ "log-dir", 0, V, OPT_OUTPUT_DIR, "DIR", NULL, 0, NULL, WORD },
	{ "log_dir", 0, V, OPT_OUTPUT_DIR, "DIR", NULL, 0, NULL, WORD },
	{ "local_ranks_filter", 0, V, OPT_RANKS_FILTER, "LIST", NULL, 0, NULL,
	    WORD },
	{ "no_python", 0, N, OPT_NO_PYTHON, NULL, NULL, 0, NULL,
	    FLAG(no_python) },
	{ "monitor-interval", 0, V, OPT_PEER + PEER_MONITOR_INTERVAL, "SECS",
	    NULL, 0, NULL, OPT_UNTYPED },
	{ "monitor_interval", 0, V, OPT_PEER + PEER_MONITOR_INTERVAL, "SECS",
	    NULL, 0, NULL, OPT_UNTYPED },
	{ "nnodes", 0, V, OPT_NNODES, "N|MIN:MAX", NULL, 0, NULL,
	    OPT_UNTYPED },
	{ "master-port", 0, V, OPT_MASTER_PORT, "PORT", NULL, 0, NULL,
	    OPTT_COUNT, 0, 0, 1, DT_PORT_MAX },
	{ "master_port", 0, V, OPT_MASTER_PORT, "PORT", NULL, 0, NULL,
	    OPTT_COUNT, 0, 0, 1, DT_PORT_MAX },
	{ "master-addr", 0, V, OPT_MASTER_ADDR, "ADDR", NULL, 0, NULL, WORD },
	{ "master_addr", 0, V, OPT_MASTER_ADDR, "ADDR", NULL, 0, NULL, WORD },
	{ "max_restarts", 0, V, OPT_MAX_RESTARTS, "N", NULL, 0, NULL,
	    COUNT(max_restarts, 0, 0, DT_COUNT_MAX) },
	{ "standalone", 0, N, OPT_PEER + PEER_STANDALONE, NULL, NULL, 0, NULL,
	    OPT_UNTYPED },
	{ "rdzv-endpoint", 0, V, OPT_PEER + PEER_RDZV_ENDPOINT, "HOST:PORT",
	    NULL, 0, NULL, OPT_UNTYPED },
	{ "rdzv_endpoint", 0, V, OPT_PEER + PEER_RDZV_ENDPOINT, "HOST:PORT",
	    NULL, 0, NULL, OPT_UNTYPED },
	{ "rdzv-backend", 0, V, OPT_PEER + PEER_RDZV_BACKEND, "NAME", NULL, 0,
	    NULL, OPT_UNTYPED },
	{ "rdzv_backend", 0, V, OPT_PEER + PEER_RDZV_BACKEND, "NAME", NULL, 0,
	    NULL, OPT_UNTYPED },
	{ "rdzv-id", 0, V, OPT_PEER + PEER_RDZV_ID, "ID", NULL, 0, NULL,
	    OPT_UNTYPED },
	{ "rdzv_id", 0, V, OPT_PEER + PEER_RDZV_ID, "ID", NULL, 0, NULL,
	    OPT_UNTYPED },
	{ "node-rank", 0, V, OPT_PEER + PEER_NODE_RANK, "N", NULL, 0, NULL,
	    OPT_UNTYPED },
	{ "node_rank", 0, V, OPT_PEER + PEER_NODE_RANK, "N", NULL, 0, NULL,
	    OPT_UNTYPED },

	/* For t0040-docs.sh: the table itself, as opt_list writes it. */
	{ "list-options", 0, N, OPT_LIST_OPTIONS, NULL, NULL, OPTF_HIDDEN,
	    NULL, OPT_UNTYPED },
};
const size_t opt_ntable = sizeof(opt_table) / sizeof(opt_table[0]);

#undef V
#undef N
#undef O
#undef K
#undef COUNT
#undef SECS
#undef FLAG
#undef STR
#undef WORD
#undef LIST

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

/* The field of o that row r keeps its value in. */
#define OPT_FIELD(o, r, T)	((T *)(void *)((char *)(o) + (r)->at - 1))
#define OPT_CFIELD(o, r, T)	\
	((const T *)(const void *)((const char *)(o) + (r)->at - 1))

/* What a value of row r's type looks like, for what. */
static int
opt_want(const struct opt_row *r, const char *what, const char *s,
    struct dt_err *e)
{
	switch (r->type) {
	case OPTT_SECS:
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": want "
		    "seconds, a number >= 0 (e.g. %s 30 or %s 0.5)", what, s,
		    what, what);
	case OPTT_SIZE:
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": want "
		    "a size from %.15g byte to %.15g GiB (e.g. %s 256M)", what,
		    s, r->min, r->max / (1 << 30), what);
	case OPTT_FRACTION:
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": want a "
		    "fraction from 0 (off) to %.15g, or a percentage (e.g. %s "
		    "0.1 or %s 10%%)", what, s, r->max, what, what);
	default:
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s \"%s\": not a "
		    "number (give a whole number, e.g. %s 4)", what, s, what);
	}
}

/* Nonzero if v is within row r's bounds (or 0, where that turns it off). */
static int
opt_in(const struct opt_row *r, double v)
{
	return (v == 0 && (r->flags & OPTF_OFF0)) || (v >= r->min &&
	    v <= r->max);
}

int
opt_check(const struct opt_row *r, const char *what, double v,
    struct dt_err *e)
{
	char	num[32];

	if (opt_in(r, v))
		return 0;
	if (r->type == OPTT_SECS && v == 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s 0: give a time "
		    "above zero, or leave %s out", what, what);
	if (r->type == OPTT_SECS)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s %.15g: want "
		    "%.15g to %.15g seconds%s", what, v, r->min, r->max,
		    r->flags & OPTF_OFF0 ? ", or 0 to turn it off" : "");
	if (r->type == OPTT_COUNT && v < r->min)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s %.15g: need at "
		    "least %.15g", what, v, r->min);
	if (r->type == OPTT_COUNT)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s %.15g: want "
		    "%.15g to %.15g", what, v, r->min, r->max);
	snprintf(num, sizeof(num), "%.15g", v);
	return opt_want(r, what, num, e);
}

int
opt_parse_num(const struct opt_row *r, const char *what, const char *s,
    double *v, struct dt_err *e)
{
	static const char	 units[] = "KMG";
	const char		*u;
	char			*end;
	double			 x;
	int			 whole;

	errno = 0;
	x = strtod(s, &end);
	if (r->type == OPTT_SIZE && *end != '\0' && end[1] == '\0' &&
	    (u = strchr(units, *end & ~0x20)) != NULL) {
		x *= (double)(1ULL << (10 * (u - units + 1)));
		end++;
	} else if (r->type == OPTT_FRACTION && *end == '%' &&
	    end[1] == '\0') {
		x /= 100;
		end++;
	}
	/* Counts and sizes are whole numbers, in decimal. */
	whole = r->type == OPTT_COUNT || r->type == OPTT_SIZE;
	if (*s == '\0' || *end != '\0' || errno != 0 || !isfinite(x) ||
	    (whole && ((!isdigit((unsigned char)*s) &&
	    strchr("+-", *s) == NULL) || strpbrk(s, ".eExXpP") != NULL)) ||
	    (x < 0 && r->type != OPTT_COUNT))
		return opt_want(r, what, s, e);
	/* A size or fraction out of bounds: what they look like, as typed. */
	if ((r->type == OPTT_SIZE || r->type == OPTT_FRACTION) &&
	    !opt_in(r, x))
		return opt_want(r, what, s, e);
	if (opt_check(r, what, x, e) != 0)
		return DT_ERR_INVAL;
	*v = x;
	return 0;
}

void
opt_store(const struct opt_row *r, struct opts *o, double v, const char *s)
{
	switch (r->type) {
	case OPTT_COUNT:
	case OPTT_BOOL:
		*OPT_FIELD(o, r, int) = (int)v;
		break;
	case OPTT_SECS:
	case OPTT_FRACTION:
		*OPT_FIELD(o, r, double) = v;
		break;
	case OPTT_SIZE:
		*OPT_FIELD(o, r, uint64_t) = (uint64_t)v;
		break;
	case OPTT_STRING:
		*OPT_FIELD(o, r, const char *) = s;
		break;
	default:
		abort();	/* a place with no type: a test fails */
	}
}

double
opt_get(const struct opt_row *r, const struct opts *o)
{
	switch (r->type) {
	case OPTT_COUNT:
	case OPTT_BOOL:
		return *OPT_CFIELD(o, r, int);
	case OPTT_SECS:
	case OPTT_FRACTION:
		return *OPT_CFIELD(o, r, double);
	case OPTT_SIZE:
		return (double)*OPT_CFIELD(o, r, uint64_t);
	default:
		abort();	/* a string, or a row with no place */
	}
}

int
opt_take(const struct opt_row *r, const char *what, const char *s,
    struct opts *o, struct dt_err *e)
{
	double	v = 1;

	if (r->type != OPTT_BOOL && r->type != OPTT_STRING &&
	    opt_parse_num(r, what, s, &v, e) != 0)
		return DT_ERR_INVAL;
	opt_store(r, o, v, s);
	return 0;
}

void
opt_defaults(struct opts *o, const struct opt_tab *tabs, size_t ntabs)
{
	const struct opt_tab	*t;
	const struct opt_row	*r;

	OPT_EACH(tabs, ntabs, t, r)
		if (r->at != 0 && r->type != OPTT_STRING)
			opt_store(r, o, r->def, NULL);
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
