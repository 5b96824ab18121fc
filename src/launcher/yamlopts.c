/*
 * yamlopts.c -- engine.yaml's values for the options the command line
 * left unset (yamlopts.h). Which key goes with which option is
 * opttable.c's; t_opttable.c holds the two together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli.h"
#include "hostfile/config.h"
#include "common/err.h"
#include "common/log.h"
#include "launcher/prefix.h"
#include "launcher/yamlopts.h"
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
	if (o->np == 0 && hf_config_has(c, HF_C_NUMGPUS))
		o->np = c->num_gpus;
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
	if (o->launcher == LAUNCH_AUTO && hf_config_has(c, HF_C_LAUNCHER))
		o->launcher = strcmp(c->launcher, "ssh") == 0 ? LAUNCH_SSH :
		    strcmp(c->launcher, "slurm") == 0 ? LAUNCH_SLURM :
		    LAUNCH_LOCAL;
	if (!o->kill_grace_set && hf_config_has(c, HF_C_KILLGRACE))
		o->kill_grace = c->kill_grace_ms / 1000.0;
	if (!o->timeout_set && hf_config_has(c, HF_C_TIMEOUT))
		o->timeout = c->timeout_ms / 1000.0;
	if (!o->heartbeat_timeout_set && hf_config_has(c, HF_C_HEARTBEAT)) {
		o->heartbeat_timeout = c->heartbeat_ms / 1000.0;
		if (cli_check_heartbeat(o->heartbeat_timeout,
		    "heartbeatTimeout", e) != 0)
			return yamlopts_at(e, c, HF_C_HEARTBEAT);
	}
	if (o->setup == NULL && hf_config_has(c, HF_C_SETUP) &&
	    c->setup[0] != '\0')
		o->setup = c->setup;
	if (!o->fwd_signals_set && hf_config_has(c, HF_C_FWDSIGNALS) &&
	    yamlopts_signals(o, c, e) != 0)
		return yamlopts_at(e, c, HF_C_FWDSIGNALS);
	if (!o->hang_timeout_set && hf_config_has(c, HF_C_HANGTIMEOUT))
		o->hang_timeout = c->hang_timeout_ms / 1000.0;
	if (o->max_restarts < 0 && hf_config_has(c, HF_C_MAXRESTARTS))
		o->max_restarts = c->max_restarts;
	else if (o->max_restarts < 0 && c->preemptible)
		o->max_restarts = CLI_PREEMPTIBLE_RESTARTS;
	if (o->spares < 0 && hf_config_has(c, HF_C_SPARES))
		o->spares = c->spares;
	if (!o->restart_delay_set && hf_config_has(c, HF_C_RESTARTDELAY))
		o->restart_delay = c->restart_delay_ms / 1000.0;
	if (!o->prefix_set && hf_config_has(c, HF_C_PREFIX)) {
		if (prefix_check(c->prefix, e) != 0)
			return yamlopts_at(e, c, HF_C_PREFIX);
		o->prefix = c->prefix;
	}
	if (o->output_dir == NULL && hf_config_has(c, HF_C_OUTPUTDIR))
		o->output_dir = c->output_dir;
	/* --collapse and --no-collapse win over collapse: true or false. */
	if (!o->collapse && hf_config_has(c, HF_C_COLLAPSE))
		o->collapse = c->collapse ? 1 : -1;
	if (o->ssh.port == 0 && hf_config_has(c, HF_C_SSH_PORT))
		o->ssh.port = c->ssh_port;
	if (o->ssh.user == NULL && hf_config_has(c, HF_C_SSH_USER))
		o->ssh.user = c->ssh_user;
	if (hf_config_has(c, HF_C_SSH_IDENTITY)) {
		o->ssh.identities = xreallocarray(o->ssh.identities,
		    o->ssh.nidentities + 1, sizeof(char *));
		o->ssh.identities[o->ssh.nidentities++] = c->ssh_identity;
	}
	if (o->sync_dst == NULL && hf_config_has(c, HF_C_SYNC_DST))
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
