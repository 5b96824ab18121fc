/*
 * config.c -- engine.yaml: reads the YAML tree (merged with a template),
 * checks every key against the schema of dtrun.yaml(5) and fills struct
 * hf_config. Unknown keys get a did-you-mean; Engine ML keys that mean
 * nothing to dtrun are noted for -v.
 */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strs.h"
#include "hostfile/config.h"
#include "hostfile/hf_impl.h"
#include "hostfile/hosts.h"
#include "hostfile/ynode.h"

#define CF_QUOTE	60	/* characters of a value quoted in messages */

/*
 * The max of an integer key that shares an option (numGPUs and -n): any
 * whole number here; the launcher holds it to the option's bounds
 * (hf_config_number), so the file takes what the flag takes.
 */
#define CF_OPTION	INT_MAX

/* How a key's value is read. */
enum cf_kind {
	CK_STR,			/* a string */
	CK_INT,			/* an integer in min..max */
	CK_DURATION,		/* seconds or "30s", into milliseconds */
	CK_CHOICE,		/* one of choices */
	CK_BOOL,		/* true or false */
	CK_LIST,		/* a list of strings (or one string) */
	CK_MAP,			/* a map of the keys in sub */
	CK_COMMAND,		/* command: one string */
	CK_COMMANDS,		/* commands: a list of strings */
	CK_ENV,			/* environment */
	CK_HOSTS,		/* hosts */
	CK_HOSTFILE,		/* hostfile: a path */
	CK_IGNORED		/* an Engine ML key dtrun does not use */
};

struct cf_key {
	const char		*name;
	enum cf_kind		 kind;
	int			 field;		/* HF_C_*, or -1 */
	size_t			 off;		/* value in struct hf_config */
	size_t			 noff;		/* its count, for lists */
	long			 min;
	long			 max;
	const char *const	*choices;	/* NULL-terminated */
	const struct cf_key	*sub;		/* ends with a NULL name */
};

static const char *const cf_versions[] = { "1.1.0", "2.0.0", "3.0.0", NULL };
static const char *const cf_launchers[] = { "local", "ssh", "slurm", NULL };
static const char *const cf_frameworks[] = {
	"none", "pytorch", "tensorflow", "mxnet", "horovod", "deepspeed",
	"jax", NULL
};

#define OFF(f)		offsetof(struct hf_config, f)

static const struct cf_key cf_sync_keys[] = {
	{ "dst", CK_STR, HF_C_SYNC_DST, OFF(sync_dst), 0, 0, 0, NULL, NULL },
	{ "exclude", CK_LIST, HF_C_SYNC_EXCLUDE, OFF(sync_exclude),
	    OFF(nsync_exclude), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL, NULL }
};

static const struct cf_key cf_ssh_keys[] = {
	{ "port", CK_INT, HF_C_SSH_PORT, OFF(ssh_port), 0, 0, CF_OPTION, NULL,
	    NULL },
	{ "user", CK_STR, HF_C_SSH_USER, OFF(ssh_user), 0, 0, 0, NULL, NULL },
	{ "identityFile", CK_STR, HF_C_SSH_IDENTITY, OFF(ssh_identity), 0, 0,
	    0, NULL, NULL },
	{ "options", CK_LIST, HF_C_SSH_OPTIONS, OFF(ssh_options),
	    OFF(nssh_options), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL, NULL }
};

static const struct cf_key cf_top_keys[] = {
	/* Engine ML's schema. */
	{ "apiVersion", CK_CHOICE, HF_C_APIVERSION, OFF(api_version), 0, 0, 0,
	    cf_versions, NULL },
	{ "command", CK_COMMAND, HF_C_COMMANDS, 0, 0, 0, 0, NULL, NULL },
	{ "commands", CK_COMMANDS, HF_C_COMMANDS, 0, 0, 0, 0, NULL, NULL },
	{ "numGPUs", CK_INT, HF_C_NUMGPUS, OFF(num_gpus), 0, 0, CF_OPTION,
	    NULL, NULL },
	{ "environment", CK_ENV, HF_C_ENVIRONMENT, 0, 0, 0, 0, NULL, NULL },
	{ "dataBucket", CK_IGNORED, -1, 0, 0, 0, 0, NULL, NULL },
	{ "dataBucketSubdirectory", CK_IGNORED, -1, 0, 0, 0, 0, NULL, NULL },
	{ "build", CK_IGNORED, -1, 0, 0, 0, 0, NULL, NULL },
	{ "preemptible", CK_BOOL, HF_C_PREEMPTIBLE, OFF(preemptible), 0, 0, 0,
	    NULL, NULL },
	{ "repository", CK_IGNORED, -1, 0, 0, 0, 0, NULL, NULL },
	{ "pythonVersion", CK_IGNORED, -1, 0, 0, 0, 0, NULL, NULL },
	/* dtrun's own. */
	{ "hosts", CK_HOSTS, HF_C_HOSTS, 0, 0, 0, 0, NULL, NULL },
	{ "hostfile", CK_HOSTFILE, HF_C_HOSTFILE, OFF(hostfile), 0, 0, 0,
	    NULL, NULL },
	{ "slotsPerHost", CK_INT, HF_C_SLOTSPERHOST, OFF(slots_per_host), 0,
	    1, HF_SLOTS_MAX, NULL, NULL },
	{ "launcher", CK_CHOICE, HF_C_LAUNCHER, OFF(launcher), 0, 0, 0,
	    cf_launchers, NULL },
	{ "sync", CK_MAP, -1, 0, 0, 0, 0, NULL, cf_sync_keys },
	{ "ssh", CK_MAP, -1, 0, 0, 0, 0, NULL, cf_ssh_keys },
	{ "killGrace", CK_DURATION, HF_C_KILLGRACE, OFF(kill_grace), 0, 0,
	    0, NULL, NULL },
	{ "timeout", CK_DURATION, HF_C_TIMEOUT, OFF(timeout), 0, 0, 0,
	    NULL, NULL },
	{ "hangTimeout", CK_DURATION, HF_C_HANGTIMEOUT, OFF(hang_timeout),
	    0, 0, 0, NULL, NULL },
	{ "prefix", CK_STR, HF_C_PREFIX, OFF(prefix), 0, 0, 0, NULL, NULL },
	{ "outputDir", CK_STR, HF_C_OUTPUTDIR, OFF(output_dir), 0, 0, 0, NULL,
	    NULL },
	{ "collapse", CK_BOOL, HF_C_COLLAPSE, OFF(collapse), 0, 0, 0, NULL,
	    NULL },
	{ "framework", CK_CHOICE, HF_C_FRAMEWORK, OFF(framework), 0, 0, 0,
	    cf_frameworks, NULL },
	{ "heartbeatTimeout", CK_DURATION, HF_C_HEARTBEAT, OFF(heartbeat),
	    0, 0, 0, NULL, NULL },
	{ "maxRestarts", CK_INT, HF_C_MAXRESTARTS, OFF(max_restarts), 0, 0,
	    CF_OPTION, NULL, NULL },
	{ "spares", CK_INT, HF_C_SPARES, OFF(spares), 0, 0, CF_OPTION,
	    NULL, NULL },
	{ "restartDelay", CK_DURATION, HF_C_RESTARTDELAY,
	    OFF(restart_delay), 0, 0, 0, NULL, NULL },
	{ "setup", CK_STR, HF_C_SETUP, OFF(setup), 0, 0, 0, NULL, NULL },
	{ "forwardSignals", CK_LIST, HF_C_FWDSIGNALS, OFF(fwd_signals),
	    OFF(nfwd_signals), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, 0, 0, NULL, NULL }
};

/* The config being filled. */
struct cf_ctx {
	struct hf_config	*c;
	const char		*path;	/* where to say a key was (a.b.c) */
	struct dt_err		*e;
};

/* The field at offset off of c, as type T. */
#define FIELD(c, off, T)	((T *)(void *)((char *)(c) + (off)))

void
hf_config_init(struct hf_config *c)
{
	memset(c, 0, sizeof(*c));
	hf_hosts_init(&c->hosts);
}

void
hf_config_free(struct hf_config *c)
{
	size_t	i;

	free(c->api_version);
	dt_strs_free(c->commands, c->ncommands);
	for (i = 0; i < c->nenv; i++) {
		free(c->env[i].name);
		free(c->env[i].value);
	}
	free(c->env);
	hf_hosts_free(&c->hosts);
	free(c->hostfile);
	free(c->launcher);
	free(c->sync_dst);
	dt_strs_free(c->sync_exclude, c->nsync_exclude);
	free(c->ssh_user);
	free(c->ssh_identity);
	dt_strs_free(c->ssh_options, c->nssh_options);
	free(c->prefix);
	free(c->output_dir);
	free(c->framework);
	free(c->setup);
	dt_strs_free(c->fwd_signals, c->nfwd_signals);
	dt_strs_free(c->notes, c->nnotes);
	dt_strs_free(c->files, c->nfiles);
	hf_config_init(c);
}

/* Fills the error at node n about key k: "KEY: message". */
static int
cf_error(struct cf_ctx *x, const struct ynode *n, const char *key,
    const char *fmt, const char *a)
{
	char	msg[400];

	snprintf(msg, sizeof(msg), fmt, CF_QUOTE, a);
	return dt_errf(x->e, n->file, n->line, n->col, DT_ERR_PARSE,
	    "%s%s%s: %s", x->path, x->path[0] ? "." : "", key, msg);
}

/* Checks that n is a string (not a list or map); 0 or the error. */
static int
cf_scalar(struct cf_ctx *x, const struct ynode *n, const char *key)
{
	if (n->type == YN_SCALAR)
		return 0;
	return cf_error(x, n, key, "expected a string, got %.*s",
	    ynode_kind(n));
}

/* Copies string n into *dst (freeing what was there). */
static int
cf_strdup(struct cf_ctx *x, const struct ynode *n, char **dst)
{
	free(*dst);
	if ((*dst = strdup(n->str)) == NULL)
		return dt_errf(x->e, n->file, n->line, n->col, DT_ERR_NOMEM,
		    "out of memory");
	return 0;
}

/* Reads n as a list of non-empty strings (or one string) into *v, *nv. */
static int
cf_strlist(struct cf_ctx *x, const struct ynode *n, const char *key,
    int one, char ***v, size_t *nv)
{
	const struct ynode	*i;
	size_t			 k = 0;
	int			 r;

	if (n->type == YN_MAP || (n->type == YN_SCALAR && !one))
		return cf_error(x, n, key, "expected a list of strings, got "
		    "%.*s", ynode_kind(n));
	dt_strs_free(*v, *nv);
	*nv = 0;
	for (i = n->type == YN_SCALAR ? n : n->child; i != NULL; i = i->next) {
		k++;
		if (n->type == YN_SCALAR)
			break;
	}
	if ((*v = calloc(k + 1, sizeof(**v))) == NULL)
		return DT_ERR_NOMEM;
	for (i = n->type == YN_SCALAR ? n : n->child; i != NULL; i = i->next) {
		if ((r = cf_scalar(x, i, key)) != 0)
			return r;
		if (ynode_isnull(i) || i->str[0] == '\0')
			return cf_error(x, i, key, "empty %.*s in the list",
			    "string");
		if ((r = cf_strdup(x, i, &(*v)[(*nv)++])) != 0)
			return r;
		if (n->type == YN_SCALAR)
			break;
	}
	return 0;
}

/* Reads an integer in k->min..k->max. */
static int
cf_int(struct cf_ctx *x, const struct ynode *n, const struct cf_key *k)
{
	char	fmt[160];
	long	v;
	int	r;

	if ((r = cf_scalar(x, n, k->name)) != 0)
		return r;
	if (k->max == CF_OPTION &&
	    hfi_uint(n->str, strlen(n->str), k->max, &v) != 0)
		return cf_error(x, n, k->name, "expected a whole number, got "
		    "\"%.*s\"", n->str);
	if (hfi_uint(n->str, strlen(n->str), k->max, &v) != 0 || v < k->min) {
		snprintf(fmt, sizeof(fmt), "expected an integer from %ld to "
		    "%ld, got \"%%.*s\"", k->min, k->max);
		return cf_error(x, n, k->name, fmt, n->str);
	}
	*FIELD(x->c, k->off, int) = (int)v;
	return 0;
}

/* Reads true or false (YAML 1.2's spellings). */
static int
cf_bool(struct cf_ctx *x, const struct ynode *n, const struct cf_key *k)
{
	int	r;

	if ((r = cf_scalar(x, n, k->name)) != 0)
		return r;
	if (strcmp(n->str, "true") == 0 || strcmp(n->str, "True") == 0 ||
	    strcmp(n->str, "TRUE") == 0)
		*FIELD(x->c, k->off, int) = 1;
	else if (strcmp(n->str, "false") == 0 || strcmp(n->str, "False") == 0 ||
	    strcmp(n->str, "FALSE") == 0)
		*FIELD(x->c, k->off, int) = 0;
	else
		return cf_error(x, n, k->name, "expected true or false, got "
		    "\"%.*s\"", n->str);
	return 0;
}

/* Reads one of k->choices. */
static int
cf_choice(struct cf_ctx *x, const struct ynode *n, const struct cf_key *k)
{
	const char *const	*ch;
	const char		*near;
	char			 fmt[256];
	size_t			 len = 0;
	int			 r;

	if ((r = cf_scalar(x, n, k->name)) != 0)
		return r;
	for (ch = k->choices; *ch != NULL; ch++)
		if (strcmp(*ch, n->str) == 0)
			return cf_strdup(x, n, FIELD(x->c, k->off, char *));
	/* Versions are too alike for a did-you-mean: list them. */
	near = k->choices == cf_versions ? NULL :
	    hfi_closest(n->str, strlen(n->str), k->choices);
	if (near != NULL) {
		snprintf(fmt, sizeof(fmt), "unknown value \"%%.*s\" (did you "
		    "mean \"%s\"?)", near);
		return cf_error(x, n, k->name, fmt, n->str);
	}
	len = snprintf(fmt, sizeof(fmt), "unknown value \"%%.*s\" (want");
	for (ch = k->choices; *ch != NULL && len < sizeof(fmt); ch++)
		len += snprintf(fmt + len, sizeof(fmt) - len, "%s %s",
		    ch == k->choices ? "" : ",", *ch);
	if (len < sizeof(fmt))
		snprintf(fmt + len, sizeof(fmt) - len, ")");
	return cf_error(x, n, k->name, fmt, n->str);
}

int
hf_duration(const char *s, double *secs)
{
	char	*end;
	double	 v, mul = 1;

	if (*s < '0' || *s > '9')
		return DT_ERR_PARSE;
	v = strtod(s, &end);
	if (strcmp(end, "ms") == 0)
		mul = 0.001;
	else if (strcmp(end, "m") == 0)
		mul = 60;
	else if (strcmp(end, "h") == 0)
		mul = 3600;
	else if (*end != '\0' && strcmp(end, "s") != 0)
		return DT_ERR_PARSE;
	v *= mul;
	/* Far past any option's bound, which the launcher checks. */
	if (!isfinite(v) || v > 1e12)
		return DT_ERR_PARSE;
	*secs = v;
	return 0;
}

/* Reads a duration. */
static int
cf_duration(struct cf_ctx *x, const struct ynode *n, const struct cf_key *k)
{
	int	r;

	if ((r = cf_scalar(x, n, k->name)) != 0)
		return r;
	if (hf_duration(n->str, FIELD(x->c, k->off, double)) != 0)
		return cf_error(x, n, k->name, "bad duration \"%.*s\" (want "
		    "seconds, or a number and ms, s, m or h: \"30s\")", n->str);
	return 0;
}

/* Nonzero if s is a valid environment variable name. */
static int
cf_envname(const char *s, size_t len)
{
	size_t	i;

	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
			return 0;
	return 1;
}

/*
 * Appends variable name[0..nlen)=value, replacing an earlier one; n is
 * where it was written, at its key when it has one.
 */
static int
cf_setenv(struct cf_ctx *x, const struct ynode *n, const char *name,
    size_t nlen, const char *value)
{
	struct hf_config	*c = x->c;
	struct hf_env		*ne;
	struct ynode		 at = *n;
	size_t			 i;

	if (n->key != NULL) {
		at.line = n->kline;
		at.col = n->kcol;
	}
	if (!cf_envname(name, nlen))
		return cf_error(x, &at, "environment", "bad variable name "
		    "\"%.*s\" (letters, digits and \"_\")", name);
	for (i = 0; i < c->nenv; i++)
		if (strncmp(c->env[i].name, name, nlen) == 0 &&
		    c->env[i].name[nlen] == '\0')
			break;
	if (i == c->nenv) {
		if (c->nenv == YN_KEYS_MAX)
			return cf_error(x, &at, "environment", "more than "
			    "10000 variables (at \"%.*s\")", name);
		if ((ne = realloc(c->env, (c->nenv + 1) * sizeof(*ne))) == NULL)
			return DT_ERR_NOMEM;
		c->env = ne;
		memset(&c->env[c->nenv], 0, sizeof(*ne));
		if ((c->env[c->nenv++].name = hfi_strndup(name, nlen)) == NULL)
			return DT_ERR_NOMEM;
	}
	free(c->env[i].value);
	if ((c->env[i].value = strdup(value)) == NULL)
		return DT_ERR_NOMEM;
	return 0;
}

/* environment: a map NAME: value, or a list of "NAME=value". */
static int
cf_env(struct cf_ctx *x, const struct ynode *n)
{
	const struct ynode	*i;
	const char		*eq;
	int			 r;

	if (n->type == YN_SCALAR)
		return cf_error(x, n, "environment", "expected a map of "
		    "variables (or a list of NAME=value), got %.*s",
		    ynode_kind(n));
	for (i = n->child; i != NULL; i = i->next) {
		if ((r = cf_scalar(x, i, "environment")) != 0)
			return r;
		if (n->type == YN_MAP)
			r = cf_setenv(x, i, i->key, strlen(i->key),
			    ynode_isnull(i) ? "" : i->str);
		else if ((eq = strchr(i->str, '=')) == NULL)
			r = cf_error(x, i, "environment", "\"%.*s\" is not "
			    "NAME=value", i->str);
		else
			r = cf_setenv(x, i, i->str, eq - i->str, eq + 1);
		if (r != 0)
			return r;
	}
	return 0;
}

/* hosts: a list of host entries, or one comma list. */
static int
cf_hosts(struct cf_ctx *x, const struct ynode *n)
{
	const struct ynode	*i;
	int			 r;

	if (n->type == YN_MAP)
		return cf_error(x, n, "hosts", "expected a list of hosts, got "
		    "%.*s", ynode_kind(n));
	hf_hosts_free(&x->c->hosts);
	if (n->type == YN_SCALAR)
		return hfi_parse_items(&x->c->hosts, n->file, n->line,
		    n->col + !n->plain, n->str, x->e);
	x->c->hosts.nexpanded = 0;
	for (i = n->child; i != NULL; i = i->next) {
		if ((r = cf_scalar(x, i, "hosts")) != 0)
			return r;
		if ((r = hf_parse_entry(&x->c->hosts, i->file, i->line,
		    i->col + !i->plain, i->str, strlen(i->str), x->e)) != 0)
			return r;
	}
	if (x->c->hosts.n == 0)
		return cf_error(x, n, "hosts", "the list is %.*s", "empty");
	return 0;
}

/* hostfile: a path, relative to the file that names it. */
static int
cf_hostfile(struct cf_ctx *x, const struct ynode *n)
{
	const char	*slash;
	int		 r;

	if ((r = cf_scalar(x, n, "hostfile")) != 0)
		return r;
	if (n->str[0] == '\0')
		return cf_error(x, n, "hostfile", "empty %.*s", "path");
	free(x->c->hostfile);
	slash = strrchr(n->file, '/');
	if (n->str[0] == '/' || slash == NULL)
		return cf_strdup(x, n, &x->c->hostfile);
	if (asprintf(&x->c->hostfile, "%.*s/%s", (int)(slash - n->file),
	    n->file, n->str) == -1) {
		x->c->hostfile = NULL;
		return DT_ERR_NOMEM;
	}
	return 0;
}

static int	cf_map(struct cf_ctx *, const struct ynode *,
		    const struct cf_key *);

/* Reads the value n of key k. */
static int
cf_value(struct cf_ctx *x, const struct ynode *n, const struct cf_key *k)
{
	struct hf_config	*c = x->c;
	const char		*outer = x->path;
	int			 r;

	switch (k->kind) {
	case CK_STR:
		if ((r = cf_scalar(x, n, k->name)) != 0)
			return r;
		return cf_strdup(x, n, FIELD(c, k->off, char *));
	case CK_INT:
		return cf_int(x, n, k);
	case CK_DURATION:
		return cf_duration(x, n, k);
	case CK_CHOICE:
		return cf_choice(x, n, k);
	case CK_BOOL:
		return cf_bool(x, n, k);
	case CK_LIST:
		return cf_strlist(x, n, k->name, 1, FIELD(c, k->off, char **),
		    FIELD(c, k->noff, size_t));
	case CK_MAP:
		if (n->type != YN_MAP)
			return cf_error(x, n, k->name, "expected a map, got "
			    "%.*s", ynode_kind(n));
		x->path = k->name;
		r = cf_map(x, n, k->sub);
		x->path = outer;
		return r;
	case CK_COMMAND:
		if (n->type != YN_SCALAR)
			return cf_error(x, n, k->name, "expected a string, got "
			    "%.*s (use commands: for a list)", ynode_kind(n));
		return cf_strlist(x, n, k->name, 1, &c->commands,
		    &c->ncommands);
	case CK_COMMANDS:
		if (n->type == YN_SCALAR)
			return cf_error(x, n, k->name, "expected a list of "
			    "strings, got %.*s (use command: for one)",
			    ynode_kind(n));
		return cf_strlist(x, n, k->name, 0, &c->commands,
		    &c->ncommands);
	case CK_ENV:
		return cf_env(x, n);
	case CK_HOSTS:
		return cf_hosts(x, n);
	case CK_HOSTFILE:
		return cf_hostfile(x, n);
	case CK_IGNORED:
		return hfi_note(&c->notes, &c->nnotes, "%s:%d:%d: %s: an Engine "
		    "ML field with no meaning for dtrun; ignored", n->file,
		    n->kline, n->kcol, k->name);
	}
	return 0;
}

/* Reads the keys of map n against the table keys. */
static int
cf_map(struct cf_ctx *x, const struct ynode *n, const struct cf_key *keys)
{
	const struct ynode	*i;
	const struct cf_key	*k;
	const char		*names[64], *near;
	size_t			 nn = 0;
	int			 r;

	for (k = keys; k->name != NULL; k++)
		names[nn++] = k->name;
	names[nn] = NULL;
	for (i = n->child; i != NULL; i = i->next) {
		for (k = keys; k->name != NULL; k++)
			if (strcmp(k->name, i->key) == 0)
				break;
		if (k->name == NULL) {
			near = hfi_closest(i->key, strlen(i->key), names);
			return dt_errf(x->e, i->file, i->kline, i->kcol,
			    DT_ERR_PARSE, "unknown key \"%s%s%.*s\"%s%s%s",
			    x->path, x->path[0] ? "." : "", CF_QUOTE, i->key,
			    near ? " (did you mean \"" : " (see dtrun.yaml(5) "
			    "for the keys)", near ? near : "", near ? "\"?)" :
			    "");
		}
		if (ynode_isnull(i))
			continue;	/* null: not given (a config's null
					   took its template's value already) */
		if (k->kind == CK_COMMAND || k->kind == CK_COMMANDS) {
			if (hf_config_has(x->c, HF_C_COMMANDS))
				return dt_errf(x->e, i->file, i->kline,
				    i->kcol, DT_ERR_PARSE, "give command or "
				    "commands, not both");
		}
		if ((r = cf_value(x, i, k)) != 0) {
			if (r == DT_ERR_NOMEM && x->e != NULL &&
			    x->e->code != DT_ERR_NOMEM)
				dt_errf(x->e, i->file, i->line, i->col, r,
				    "out of memory");
			return r;
		}
		if (k->field >= 0) {
			x->c->set |= 1UL << k->field;
			x->c->pos[k->field].file = i->file;
			x->c->pos[k->field].line = i->line;
			x->c->pos[k->field].col = i->col;
		}
	}
	return 0;
}

/* Parses buf as file name, keeping the name in c->files. */
static int
cf_parse(struct hf_config *c, const char *name, const char *buf, size_t len,
    struct ynode **root, struct dt_err *e)
{
	const char	*file;

	if ((file = hosts_intern(&c->files, &c->nfiles, name)) == NULL)
		return dt_errf(e, name, 0, 0, DT_ERR_NOMEM, "out of memory");
	return ynode_parse(file, buf, len, root, e);
}

int
hf_config_load_buf(struct hf_config *c, const char *name, const char *buf,
    size_t len, const char *tname, const char *tbuf, size_t tlen,
    struct dt_err *e)
{
	struct cf_ctx	 x;
	struct ynode	*root = NULL, *troot = NULL;
	int		 r;

	hf_config_init(c);
	if ((r = cf_parse(c, name, buf, len, &root, e)) != 0)
		return r;
	if (tbuf != NULL &&
	    (r = cf_parse(c, tname, tbuf, tlen, &troot, e)) != 0) {
		ynode_free(root);
		return r;
	}
	root = ynode_merge(root, troot);
	if (root == NULL || ynode_isnull(root))
		goto out;
	if (root->type != YN_MAP) {
		r = dt_errf(e, root->file, root->line, root->col, DT_ERR_PARSE,
		    "expected a map of keys (apiVersion:, command:, hosts: "
		    "...), got %s", ynode_kind(root));
		goto out;
	}
	x.c = c;
	x.path = "";
	x.e = e;
	r = cf_map(&x, root, cf_top_keys);
out:
	ynode_free(root);
	return r;
}

int
hf_config_load(struct hf_config *c, const char *path,
    const char *template_path, struct dt_err *e)
{
	char	*buf = NULL, *tbuf = NULL;
	size_t	 len = 0, tlen = 0;
	int	 r;

	hf_config_init(c);
	if ((r = hfi_slurp(path, "config", &buf, &len, e)) != 0)
		return r;
	if (template_path != NULL &&
	    (r = hfi_slurp(template_path, "template", &tbuf, &tlen, e)) != 0) {
		free(buf);
		return r;
	}
	r = hf_config_load_buf(c, path, buf, len, template_path, tbuf, tlen, e);
	free(buf);
	free(tbuf);
	return r;
}

const char *
hf_config_key(size_t i, char *buf, size_t len)
{
	const struct cf_key	*k, *s;

	for (k = cf_top_keys; k->name != NULL; k++) {
		if (k->kind == CK_IGNORED)
			continue;
		if (k->kind != CK_MAP) {
			if (i-- == 0) {
				snprintf(buf, len, "%s", k->name);
				return buf;
			}
			continue;
		}
		for (s = k->sub; s->name != NULL; s++)
			if (i-- == 0) {
				snprintf(buf, len, "%s.%s", k->name, s->name);
				return buf;
			}
	}
	return NULL;
}

/* The key at dotted path key ("ssh.port"), or NULL (maps are no value). */
static const struct cf_key *
cf_find(const char *key)
{
	const struct cf_key	*k;
	const char		*dot = strchr(key, '.');
	size_t			 n = dot != NULL ? (size_t)(dot - key) :
				    strlen(key);

	for (k = cf_top_keys; k->name != NULL; k++)
		if (strlen(k->name) == n && strncmp(k->name, key, n) == 0)
			break;
	if (k->name == NULL || (k->kind == CK_MAP) != (dot != NULL))
		return NULL;
	if (dot == NULL)
		return k;
	for (k = k->sub; k->name != NULL; k++)
		if (strcmp(k->name, dot + 1) == 0)
			return k;
	return NULL;
}

int
hf_config_number(const struct hf_config *c, const char *key, double *v,
    int *field)
{
	const struct cf_key	*k = cf_find(key);

	if (k == NULL || (k->kind != CK_INT && k->kind != CK_BOOL &&
	    k->kind != CK_DURATION))
		return -1;
	*field = k->field;
	if (!hf_config_has(c, k->field))
		return 0;
	if (k->kind == CK_DURATION)
		*v = *FIELD(c, k->off, double);
	else
		*v = *FIELD(c, k->off, int);
	return 1;
}
