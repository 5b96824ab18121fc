/*
 * opttable.h -- dtrun's options, one row each, as tmux's options-table.c:
 * the --help list, getopt_long's arrays, the engine.yaml key an option
 * shares, and the ssh options dtrun-kill passes on all come from
 * opt_table. Adding an option is one row here and one case for its id in
 * cli.c; the tests (t_opttable.c, t0040-docs.sh) fail while --help, the
 * completions, the man pages or engine.yaml's keys disagree with it.
 */
#ifndef DT_OPTTABLE_H
#define DT_OPTTABLE_H

#include <stddef.h>
#include <stdio.h>

struct option;

/* What a row means to cli.c's handlers; a spelling shares its option's. */
enum opt_id {
	OPT_NP, OPT_NPROC, OPT_NNODES, OPT_MASTER_PORT, OPT_MASTER_ADDR,
	OPT_HOSTS, OPT_HOSTFILE, OPT_CONFIG, OPT_TEMPLATE, OPT_INCLUDE,
	OPT_EXCLUDE, OPT_OVERSUB, OPT_SERVERS, OPT_LAUNCHER,
	OPT_PREFIX, OPT_OUTPUT_DIR, OPT_TIMESTAMP, OPT_ESCAPE_OUTPUT,
	OPT_COLLAPSE, OPT_NO_COLLAPSE, OPT_TEE, OPT_REDIRECTS, OPT_RANKS_FILTER, OPT_TAG_OUTPUT,
	OPT_ROLE, OPT_MODULE, OPT_NO_PYTHON,
	OPT_EXPORT, OPT_ENV_FILE, OPT_SETUP, OPT_FORWARD_SIGNALS,
	OPT_KILL_GRACE, OPT_TIMEOUT, OPT_HEARTBEAT_TIMEOUT, OPT_START_TIMEOUT,
	OPT_HANG_TIMEOUT, OPT_ON_HANG, OPT_STRAGGLER_THRESHOLD,
	OPT_ON_STRAGGLER, OPT_MAX_RESTARTS, OPT_RESTART_DELAY,
	OPT_RESTART_SAME, OPT_MIN_NP, OPT_SPARES, OPT_DRY_RUN, OPT_CHECK,
	OPT_PREFLIGHT,
	OPT_DEEP, OPT_DEEP_BYTES,
	OPT_SSH_PORT, OPT_SSH_IDENTITY, OPT_SSH_OPTION, OPT_SSH_JUMP,
	OPT_SSH_CONFIG, OPT_SSH_FANOUT, OPT_SSH_AGENT_DIR,
	OPT_FRAMEWORK, OPT_IFACE, OPT_SEED, OPT_SYNC_DST, OPT_SYNC_EXCLUDE,
	OPT_VERBOSE, OPT_QUIET, OPT_VERSION, OPT_HELP, OPT_LIST_OPTIONS,
	/* torchrun's with no meaning here: OPT_PEER + enum peer_flag. */
	OPT_PEER,
	OPT_PEER_LAST = OPT_PEER + 5,
	OPT_NIDS			/* dtrun-kill's own ids start here */
};

/* OPTA_OPTIONAL: --name or --name=VALUE; the docs list it as a flag. */
enum opt_arg { OPTA_NONE, OPTA_VALUE, OPTA_OPTIONAL };

#define OPTF_KILL	0x1	/* dtrun-kill takes it too and passes it on */
#define OPTF_HIDDEN	0x2	/* for the tests: not in --help, docs or completions */

struct opt_row {
	const char	*name;		/* the long option, without "--" */
	int		 letter;	/* its short option, or 0 */
	enum opt_arg	 arg;
	int		 id;		/* OPT_* (dtrun-kill: its own, from OPT_NIDS) */
	const char	*metavar;	/* the value in --help: "N", "LIST|FILE" */
	const char	*yaml;		/* the engine.yaml key that sets it too, or NULL */
	unsigned	 flags;		/* OPTF_* */
	const char	*help;		/* --help's lines, '\n' between; NULL: a
					   spelling named in the text after the list */
};

/* dtrun's options, in --help's order. */
extern const struct opt_row opt_table[];
extern const size_t opt_ntable;

/* engine.yaml's keys that no option sets, each with why. */
struct opt_yaml_only {
	const char	*key;		/* dotted: "ssh.user" */
	const char	*why;
};
extern const struct opt_yaml_only opt_yaml_only[];
extern const size_t opt_nyaml_only;

/* The rows of a table that have every flag of need (0: all of them). */
struct opt_tab {
	const struct opt_row	*rows;
	size_t			 n;
	unsigned		 need;
};

/* getopt_long's arrays for some tables, built once at startup. */
struct opt_getopt {
	struct option	*longopts;	/* ends with a zero row */
	char		 shorts[64];	/* lead, then "n:" per letter */
	int		 byletter[128];	/* id of each short option, or -1 */
};

/*
 * Fills g from the rows of tabs[0..ntabs); shorts starts with lead ("+:"
 * stops at the command and reports a missing value as ':'). Aborts if the
 * letters do not fit, which a test would have caught.
 */
void	opt_getopt_build(struct opt_getopt *g, const char *lead,
	    const struct opt_tab *tabs, size_t ntabs);

/* The row id for what getopt_long returned (c), or -1 for '?' and ':'. */
int	opt_getopt_id(const struct opt_getopt *g, int c);

/* The first row of tabs with id (its own spelling, not an alias'), or NULL. */
const struct opt_row *opt_find(const struct opt_tab *tabs, size_t ntabs,
	    int id);

/*
 * Writes the option list of --help: "  -n, --np N" and the help, which
 * starts in column 26 or, when the option is longer, on the next line.
 * Rows without help (spellings) and hidden ones are left out.
 */
void	opt_usage(FILE *f, const struct opt_tab *tabs, size_t ntabs);

/*
 * Writes one line per row that is not hidden, for the docs tests:
 * "--NAME -L|- value|none YAMLKEY|-".
 */
void	opt_list(FILE *f, const struct opt_tab *tabs, size_t ntabs);

#endif
