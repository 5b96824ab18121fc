/*
 * yamlopts.c -- engine.yaml's values for the options the command line
 * left unset (o->given). Which key goes with which option, and the
 * bounds a number is held to, are opttable.c's: a key takes what its flag
 * takes (t_opttable.c checks every one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "hostfile/config.h"
#include "common/err.h"
#include "common/log.h"
#include "launcher/cli/opttable.h"
#include "launcher/cli/prefix.h"
#include "launcher/cli/yamlopts.h"
#include "util/strv.h"
#include "util/xmalloc.h"

/* Joins engine.yaml's commands into one "sh -c" word: run in order, stop at the first failure. */
static void
yamlopts_command(struct opts *o, const struct hf_config *c)
{
	size_t	i, len = 1;
	char	*s;

	for (i = 0; i < c->ncommands; i++)
		len += strlen(c->commands[i]) + 4;
	s = xmalloc(len);
	s[0] = '\0';
	for (i = 0; i < c->ncommands; i++) {
		if (i > 0)
			strcat(s, " && ");
		strcat(s, c->commands[i]);
	}
	o->cmd_owned = s;
	o->argv_owned[0] = "/bin/sh";
	o->argv_owned[1] = "-c";
	o->argv_owned[2] = s;
	o->argv_owned[3] = NULL;
	o->cmd = o->argv_owned;
	o->ncmd = 3;
}

/* Points e, a bad value of field f, at where the file gave it. */
static int
yamlopts_at(struct dt_err *e, const struct hf_config *c, int f)
{
	e->line = c->pos[f].line;
	e->col = c->pos[f].col;
	snprintf(e->file, sizeof(e->file), "%s", c->pos[f].file);
	return DT_ERR_PARSE;
}

/*
 * engine.yaml's numbers and flags (numGPUs, killGrace, spares...) that the
 * command line left unset, each checked by the row of the option whose key
 * it is: the file takes what the flag takes.
 */
static int
yamlopts_numbers(struct opts *o, const struct hf_config *c,
    struct dt_err *e)
{
	const struct opt_row	*r;
	double			 v;
	int			 f;

	for (r = opt_table; r < opt_table + opt_ntable; r++) {
		if (r->yaml == NULL || r->at == 0 || o->given[r->id] ||
		    hf_config_number(c, r->yaml, &v, &f) != 1)
			continue;
		if (opt_check(r, r->yaml, v, e) != 0)
			return yamlopts_at(e, c, f);
		opt_store(r, o, v, NULL);
	}
	return 0;
}

/* forwardSignals: a list of names (each may be "USR1,USR2"), or none. */
static int
yamlopts_signals(struct opts *o, const struct hf_config *c,
    struct dt_err *e)
{
	uint64_t	m, all = 0;
	size_t		i;

	for (i = 0; i < c->nfwd_signals; i++) {
		if (cli_parse_signals(c->fwd_signals[i], "forwardSignals", &m,
		    e) != 0)
			return DT_ERR_PARSE;
		all |= m;
	}
	o->fwd_signals = all;
	return 0;
}

/* Fills the options the command line left unset from engine.yaml. */
int
yamlopts_apply(struct opts *o, struct hf_config *c, struct dt_err *e)
{
	size_t	 i, n;
	char	**v;

	for (i = 0; i < c->nnotes; i++)
		log_info("%s", c->notes[i]);
	if (o->ncmd == 0 && (c->ncommands > 0 || !o->check)) {
		if (c->ncommands == 0)
			return dt_errf(e, o->config, 0, 0, DT_ERR_INVAL, "no "
			    "command: give one on the command line, or "
			    "command: in this file");
		yamlopts_command(o, c);
	}
	if (yamlopts_numbers(o, c, e) != 0)
		return DT_ERR_PARSE;
	if (!o->given[OPT_MAX_RESTARTS] &&
	    !hf_config_has(c, HF_C_MAXRESTARTS) && c->preemptible)
		o->max_restarts = CLI_PREEMPTIBLE_RESTARTS;
	if (c->nenv > 0) {
		/* The file's environment first, so -x wins. */
		n = c->nenv + o->nexports;
		v = xreallocarray(NULL, n, sizeof(char *));
		for (i = 0; i < c->nenv; i++)
			xasprintf(&v[i], "%s=%s", c->env[i].name,
			    c->env[i].value);
		if (o->nexports > 0)
			memcpy(v + c->nenv, o->exports,
			    o->nexports * sizeof(char *));
		free(o->exports);
		o->exports = v;
		o->nexports = n;
	}
	if (!o->given[OPT_LAUNCHER] && hf_config_has(c, HF_C_LAUNCHER))
		o->launcher = strcmp(c->launcher, "ssh") == 0 ? LAUNCH_SSH :
		    strcmp(c->launcher, "slurm") == 0 ? LAUNCH_SLURM :
		    LAUNCH_LOCAL;
	if (!o->given[OPT_SETUP] && hf_config_has(c, HF_C_SETUP) &&
	    c->setup[0] != '\0')
		o->setup = c->setup;
	if (!o->given[OPT_FORWARD_SIGNALS] &&
	    hf_config_has(c, HF_C_FWDSIGNALS) && yamlopts_signals(o, c, e) != 0)
		return yamlopts_at(e, c, HF_C_FWDSIGNALS);
	if (!o->given[OPT_PREFIX] && hf_config_has(c, HF_C_PREFIX)) {
		if (prefix_check(c->prefix, e) != 0)
			return yamlopts_at(e, c, HF_C_PREFIX);
		o->prefix = c->prefix;
	}
	if (!o->given[OPT_OUTPUT_DIR] && hf_config_has(c, HF_C_OUTPUTDIR))
		o->output_dir = c->output_dir;
	/*
	 * collapse: false turns it off (-1), not back to the default (0):
	 * on a terminal with 8 or more ranks. The flags win (given).
	 */
	if (!o->given[OPT_COLLAPSE] && hf_config_has(c, HF_C_COLLAPSE) &&
	    !c->collapse)
		o->collapse = -1;
	/* ssh.user has no option: --ssh-option User= sets it too. */
	if (o->ssh.user == NULL && hf_config_has(c, HF_C_SSH_USER))
		o->ssh.user = c->ssh_user;
	if (hf_config_has(c, HF_C_SSH_IDENTITY)) {
		strs_push(&o->ssh.identities, &o->ssh.nidentities,
		    c->ssh_identity);
	}
	if (!o->given[OPT_SYNC_DST] && hf_config_has(c, HF_C_SYNC_DST))
		o->sync_dst = c->sync_dst;
	if (c->nsync_exclude > 0) {
		/* The file's excludes, then the command line's: all apply. */
		n = c->nsync_exclude + o->nsync_exclude;
		v = xreallocarray(NULL, n, sizeof(char *));
		memcpy(v, c->sync_exclude, c->nsync_exclude * sizeof(char *));
		memcpy(v + c->nsync_exclude, o->sync_exclude,
		    o->nsync_exclude * sizeof(char *));
		free(o->sync_exclude);
		o->sync_exclude = v;
		o->nsync_exclude = n;
	}
	for (i = 0; i < c->nssh_options; i++) {
		if (ssh_cli_option(&o->ssh, c->ssh_options[i], e) != 0) {
			e->line = c->pos[HF_C_SSH_OPTIONS].line;
			snprintf(e->file, sizeof(e->file), "%s", o->config);
			return DT_ERR_PARSE;
		}
	}
	return 0;
}
