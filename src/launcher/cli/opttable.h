/*
 * opttable.h -- dtrun's options, one row each, as tmux's options-table.c:
 * the --help list, getopt_long's arrays, the engine.yaml key an option
 * shares, and the ssh options dtrun-kill passes on all come from
 * opt_table, and so do each value's type, default, bounds and place in
 * struct opts, for the command line and engine.yaml alike. Adding a count,
 * seconds, size, fraction, flag or plain string is one row; a value with
 * a syntax of its own (OPTT_OTHER, lists, checked words) also needs a case
 * for its id in cli.c. The tests (t_opttable.c, t0040-docs.sh) fail while
 * --help, the completions, the man pages or engine.yaml's keys and bounds
 * disagree with it.
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
	OPT_FRAMEWORK, OPT_STORE, OPT_IFACE, OPT_SEED, OPT_SYNC_DST, OPT_SYNC_EXCLUDE,
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
#define OPTF_OFF0	0x4	/* 0 is taken too, below min: it turns it off */

/*
 * What an option's value is, on the command line and in engine.yaml
 * alike. The numbers are checked against the row's min and max on both
 * routes (opt_check), so a key never takes what its flag refuses.
 */
enum opt_type {
	OPTT_OTHER,	/* taken by its id's case in cli.c: a choice, a mask */
	OPTT_COUNT,	/* a whole number (int) */
	OPTT_SECS,	/* seconds (double), decimals allowed */
	OPTT_SIZE,	/* bytes (uint64_t): a number, K, M or G after it */
	OPTT_FRACTION,	/* a fraction (double): 0.1 or 10% */
	OPTT_BOOL,	/* a flag (int): given turns it on */
	OPTT_STRING,	/* a word (const char *) */
	OPTT_LIST	/* repeatable: every value is kept */
};

/* A row's type columns for an option cli.c takes by its id's case. */
#define OPT_UNTYPED	OPTT_OTHER, 0, 0, 0, 0

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
	enum opt_type	 type;
	size_t		 at;		/* offsetof(struct opts, field) + 1, or
					   0: cli.c stores it itself */
	double		 def;		/* the value when neither route gives one */
	double		 min;		/* bounds of a number, both routes */
	double		 max;
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
 * Checks number v of row r, given as what (the option as typed, or its
 * engine.yaml key), against the row's min and max: 0, or DT_ERR_INVAL
 * with e saying what is taken. Both routes check here, so a key never
 * takes what its flag refuses.
 */
struct dt_err;
struct opts;
int	opt_check(const struct opt_row *r, const char *what, double v,
	    struct dt_err *e);

/*
 * Reads s as a number of row r's type (count, seconds, size, fraction)
 * into *v and checks it (opt_check). Returns 0 or DT_ERR_INVAL with e
 * naming what and the fix.
 */
int	opt_parse_num(const struct opt_row *r, const char *what,
	    const char *s, double *v, struct dt_err *e);

/* Keeps v (a number or flag) or s (a string) in o where row r says. */
void	opt_store(const struct opt_row *r, struct opts *o, double v,
	    const char *s);

/* The number or flag row r keeps in o. */
double	opt_get(const struct opt_row *r, const struct opts *o);

/*
 * Takes value s of row r (one that has a place in struct opts), given as
 * what: parsed, checked and kept. Returns 0 or DT_ERR_INVAL with e set.
 */
int	opt_take(const struct opt_row *r, const char *what, const char *s,
	    struct opts *o, struct dt_err *e);

/* Sets every field the rows of tabs keep to its default. */
void	opt_defaults(struct opts *o, const struct opt_tab *tabs,
	    size_t ntabs);

/*
 * Writes one line per row that is not hidden, for the docs tests:
 * "--NAME -L|- value|none YAMLKEY|-".
 */
void	opt_list(FILE *f, const struct opt_tab *tabs, size_t ntabs);

#endif
