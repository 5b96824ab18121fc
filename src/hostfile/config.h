/*
 * config.h -- engine.yaml (-f FILE) and --template FILE as struct
 * hf_config. The schema is documented in dtrun.yaml(5).
 *
 * Engine ML's keys (apiVersion "1.1.0", "2.0.0" or "3.0.0"): command or
 * commands, numGPUs, environment; dataBucket, dataBucketSubdirectory,
 * preemptible (true: restarts on by default); dataBucket,
 * dataBucketSubdirectory, build, repository and pythonVersion are
 * accepted, have no meaning for dtrun, and are listed in notes for -v.
 * dtrun's own keys: hosts, hostfile, slotsPerHost, launcher, sync {dst,
 * exclude}, ssh {port, user, identityFile, options}, killGrace, timeout,
 * prefix, outputDir, framework, heartbeatTimeout, hangTimeout,
 * maxRestarts, restartDelay, setup, forwardSignals, collapse, spares.
 *
 * A template merges under the config as Determined's schemas.Merge(config,
 * template) does: a value the config leaves out or gives as null ("key:",
 * "key: null") takes the template's; scalars and lists (even []) from the
 * config win whole; maps merge key by key.
 *
 * Unknown keys (with a did-you-mean), wrong types, bad values and YAML
 * syntax errors are DT_ERR_PARSE with file:line:col of the key or value.
 * The loader only reads: the launcher decides what the command line
 * overrides (every field has a bit in set) and loads hostfile itself.
 */
#ifndef DT_HF_CONFIG_H
#define DT_HF_CONFIG_H

#include <stddef.h>

#include "common/err.h"
#include "hostfile/hostfile.h"

/* One field each; hf_config.set has bit 1 << HF_C_* when it was given. */
enum hf_cfield {
	HF_C_APIVERSION,
	HF_C_COMMANDS,		/* command or commands */
	HF_C_NUMGPUS,
	HF_C_ENVIRONMENT,
	HF_C_HOSTS,
	HF_C_HOSTFILE,
	HF_C_SLOTSPERHOST,
	HF_C_LAUNCHER,
	HF_C_SYNC_DST,
	HF_C_SYNC_EXCLUDE,
	HF_C_SSH_PORT,
	HF_C_SSH_USER,
	HF_C_SSH_IDENTITY,
	HF_C_SSH_OPTIONS,
	HF_C_KILLGRACE,
	HF_C_TIMEOUT,
	HF_C_PREFIX,
	HF_C_OUTPUTDIR,
	HF_C_FRAMEWORK,
	HF_C_HEARTBEAT,
	HF_C_HANGTIMEOUT,
	HF_C_PREEMPTIBLE,
	HF_C_MAXRESTARTS,
	HF_C_RESTARTDELAY,
	HF_C_SETUP,
	HF_C_FWDSIGNALS,
	HF_C_COLLAPSE,
	HF_C_SPARES,
	HF_C_NFIELDS
};

/* Nonzero if field f (HF_C_*) was given in the file or its template. */
#define hf_config_has(c, f)	(((c)->set >> (f)) & 1)

/* Where a field's value was written, for the launcher's own messages. */
struct hf_cpos {
	const char	*file;		/* NULL if not set */
	int		 line;
	int		 col;
};

/* One environment variable, in file order. */
struct hf_env {
	char		*name;
	char		*value;
};

struct hf_config {
	unsigned long	 set;		/* 1 << HF_C_* per field given */
	struct hf_cpos	 pos[HF_C_NFIELDS];
	char		*api_version;	/* "1.1.0", "2.0.0", "3.0.0" */
	char		**commands;	/* command: one; commands: in order */
	size_t		 ncommands;
	int		 num_gpus;	/* total worker ranks (-n) */
	struct hf_env	*env;
	size_t		 nenv;
	struct hf_hosts	 hosts;		/* hosts, ranges expanded */
	char		*hostfile;	/* relative to the file that named it */
	int		 slots_per_host; /* slots of hosts that give none */
	char		*launcher;	/* "local", "ssh" or "slurm" */
	char		*sync_dst;
	char		**sync_exclude;
	size_t		 nsync_exclude;
	int		 ssh_port;
	char		*ssh_user;
	char		*ssh_identity;
	char		**ssh_options;	/* each as for ssh -o */
	size_t		 nssh_options;
	/* Durations are in seconds, as the launcher keeps them. */
	double		 kill_grace;
	double		 timeout;
	double		 hang_timeout;	/* hangTimeout: */
	char		*prefix;
	char		*output_dir;
	char		*framework;	/* see dtrun.yaml(5) for the names */
	double		 heartbeat;	/* heartbeatTimeout; 0 = off */
	int		 preemptible;	/* preemptible: true */
	int		 collapse;	/* collapse: true (--collapse) */
	int		 max_restarts;	/* maxRestarts */
	int		 spares;	/* spares: held back for lost hosts */
	double		 restart_delay;	/* restartDelay */
	char		*setup;		/* setup: a command, once per host */
	char		**fwd_signals;	/* forwardSignals: names, unchecked */
	size_t		 nfwd_signals;
	/* For -v: "engine.yaml:5:1: dataBucket: ...; ignored". */
	char		**notes;
	size_t		 nnotes;
	/* private */
	char		**files;
	size_t		 nfiles;
};

/* Makes c empty. */
void	 hf_config_init(struct hf_config *c);

/* Frees what c holds and makes it empty again. */
void	 hf_config_free(struct hf_config *c);

/*
 * Loads engine.yaml path into c (initialised here), with template_path
 * (or NULL) merged under it. Returns 0 or a negative DT_ERR_* with *e
 * filled; c may be freed either way.
 */
int	 hf_config_load(struct hf_config *c, const char *path,
	     const char *template_path, struct dt_err *e);

/*
 * As hf_config_load, from buffers: the config named name, and the template
 * tname in tbuf[0..tlen) when tbuf is not NULL.
 */
int	 hf_config_load_buf(struct hf_config *c, const char *name,
	     const char *buf, size_t len, const char *tname, const char *tbuf,
	     size_t tlen, struct dt_err *e);

/*
 * The i-th key dtrun reads from engine.yaml, as a dotted path ("ssh.port"),
 * into buf; NULL past the last. Maps themselves ("ssh") and Engine ML's
 * keys that mean nothing to dtrun are left out. For the test that every
 * key has its option in the launcher's table, or is known to have none.
 */
const char *hf_config_key(size_t i, char *buf, size_t len);

/*
 * The number the file gave for key (dotted: "ssh.port"), for the launcher
 * to check as the option the key shares: an integer, a flag (0 or 1), or
 * a duration in seconds, into *v, and the key's HF_C_* into *field.
 * Returns 1, 0 if the file left it out, or -1 if key is no number key.
 */
int	 hf_config_number(const struct hf_config *c, const char *key,
	     double *v, int *field);

/*
 * Reads a duration ("30", "1.5", "500ms", "30s", "2m", "1h") into
 * seconds. Returns 0 or DT_ERR_PARSE (no message: callers say where).
 */
int	 hf_duration(const char *s, double *secs);

#endif
