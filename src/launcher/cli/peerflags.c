/*
 * peerflags.c -- torchrun's options that have no meaning under dtrun, and
 * --nnodes as a check (see peerflags.h). The notes say what dtrun does
 * instead, in the terms of the option the user typed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "launcher/cli/opts.h"
#include "launcher/cli/peerflags.h"
#include "util/xmalloc.h"

/* Keeps a note for plan_build to print; past the room, the first ones stay. */
static void
peer_note(struct opts *o, const char *name, const char *what)
{
	if (o->nnotes < sizeof(o->notes) / sizeof(o->notes[0]))
		xasprintf(&o->notes[o->nnotes++], "%s: ignored: %s", name,
		    what);
}

/* True if the host of "HOST:PORT" (or "HOST") is this machine's loopback. */
static int
peer_is_local(const char *ep)
{
	size_t	n = strcspn(ep, ":");

	return n == 0 || (n == 9 && strncmp(ep, "localhost", n) == 0) ||
	    (n == 9 && strncmp(ep, "127.0.0.1", n) == 0);
}

int
peer_flag(struct opts *o, enum peer_flag which, const char *name,
    const char *arg, struct dt_err *e)
{
	switch (which) {
	case PEER_STANDALONE:
		peer_note(o, name, "not needed, dtrun -n N runs a one-host job "
		    "with its own rendezvous");
		return 0;
	case PEER_RDZV_BACKEND:
	case PEER_RDZV_ID:
		peer_note(o, name, "dtrun runs its own rendezvous (MASTER_ADDR"
		    "/MASTER_PORT), under its own job id (TORCHELASTIC_RUN_ID)");
		return 0;
	case PEER_RDZV_ENDPOINT:
		if (peer_is_local(arg)) {
			peer_note(o, name, "dtrun runs its own rendezvous on "
			    "rank 0's host");
			return 0;
		}
		break;
	case PEER_MONITOR_INTERVAL:
		peer_note(o, name, "dtrun's agents hear of a rank's end at "
		    "once, they do not poll");
		return 0;
	case PEER_NODE_RANK:
		if (strcmp(arg, "0") == 0) {
			peer_note(o, name, "dtrun numbers the hosts itself, in "
			    "the order -H gives them");
			return 0;
		}
		break;
	}
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "%s %s: dtrun is not run "
	    "once per node: run it once, naming every host (-H a,b or "
	    "--hostfile FILE, rank 0's host first), and it starts them all "
	    "with its own rendezvous", name, arg);
}

/* One count of --nnodes: a whole number from 1. */
static int
peer_count(const char *s, size_t n, int *out)
{
	long	v = 0;
	size_t	i;

	if (n == 0 || n > 7)
		return -1;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = (int)v;
	return v < 1 ? -1 : 0;
}

int
peer_nnodes(struct opts *o, const char *arg, struct dt_err *e)
{
	const char	*colon = strchr(arg, ':');
	size_t		 n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (peer_count(arg, n, &o->nnodes_min) != 0 ||
	    peer_count(colon ? colon + 1 : arg, colon ? strlen(colon + 1) : n,
	    &o->nnodes_max) != 0 || o->nnodes_min > o->nnodes_max)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--nnodes \"%s\": "
		    "want a number of hosts, or MIN:MAX (e.g. --nnodes 2 or "
		    "--nnodes 1:4)", arg);
	o->nnodes = arg;
	return 0;
}

int
peer_nnodes_check(const struct opts *o, size_t nhosts, struct dt_err *e)
{
	if (o->nnodes_min == 0 || ((int)nhosts >= o->nnodes_min &&
	    (int)nhosts <= o->nnodes_max))
		return 0;
	return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--nnodes %s: the job "
	    "runs on %zu host%s (give the hosts with -H or --hostfile, or "
	    "fix --nnodes)", o->nnodes, nhosts, nhosts == 1 ? "" : "s");
}

/* Peers' options dtrun has no row for, each with what dtrun does instead. */
static const struct {
	const char	*name;		/* without dashes, '_' as '-' */
	const char	*hint;
} peer_hints[] = {
	/* torchrun's */
	{ "rdzv-conf", "dtrun runs its own rendezvous; its wait is "
	    "--start-timeout SECS" },
	{ "start-method", "dtrun's agent starts each rank as a fresh process "
	    "(as spawn): leave it out" },
	{ "run-path", "name the interpreter: dtrun ... python3 train.py" },
	{ "local-addr", "dtrun finds rank 0's address itself; to choose the "
	    "interface, --iface" },
	/* mpirun's (Open MPI, MPICH) */
	{ "host", "-H a,b (or -H a:2,b:2)" },
	{ "hosts", "-H a,b" },
	{ "machinefile", "--hostfile FILE" },
	{ "N", "--nproc-per-node N" },
	{ "ppn", "--nproc-per-node N" },
	{ "map-by", "dtrun places ranks host by host (-H a:4,b:4, "
	    "--nproc-per-node); --dry-run shows where" },
	{ "rank-by", "dtrun numbers ranks host by host; --dry-run shows it" },
	{ "bind-to", "dtrun binds nothing: put numactl or taskset in the "
	    "command" },
	{ "report-bindings", "dtrun binds nothing; --dry-run shows the plan" },
	{ "display-map", "--dry-run" },
	{ "mca", "MCA parameters are Open MPI's: -x OMPI_MCA_NAME=VALUE" },
	{ "output-filename", "--output-dir DIR" },
	{ "merge-stderr-to-stdout", "run the command under sh -c '... 2>&1'" },
	{ "timestamp-output", "--timestamp" },
	{ "wdir", "dtrun runs the ranks in its own directory (and with "
	    "--sync-dst-dir, there): cd first" },
	{ "allow-run-as-root", "not needed: leave it out" },
	{ "envall", "-x '*' passes every variable" },
	{ "genv", "-x NAME=VALUE" },
	{ "bynode", "dtrun places ranks host by host (-H a:1,b:1 for one "
	    "each)" },
	/* dtrun's own, typed with one dash as mpirun takes them */
	{ "hostfile", "--hostfile FILE (two dashes)" },
	{ "tag-output", "--tag-output (two dashes)" },
	{ "oversubscribe", "--oversubscribe (two dashes)" },
};

const char *
peer_unknown_hint(const char *typed)
{
	char	name[40];
	size_t	i, n;

	typed += strspn(typed, "-");
	n = strcspn(typed, "=");
	if (n == 0 || n >= sizeof(name))
		return NULL;
	for (i = 0; i < n; i++)
		name[i] = typed[i] == '_' ? '-' : typed[i];
	name[n] = '\0';
	for (i = 0; i < sizeof(peer_hints) / sizeof(peer_hints[0]); i++)
		if (strcmp(name, peer_hints[i].name) == 0)
			return peer_hints[i].hint;
	return NULL;
}
