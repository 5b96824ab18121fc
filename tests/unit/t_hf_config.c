/*
 * t_hf_config.c -- engine.yaml: the samples in tests/data/hostfile/yaml
 * (NAME.yaml against NAME.expect; with-*.yaml merged over template.yaml),
 * the bad ones in yaml/bad (NAME.yaml against the error in NAME.err),
 * template merges and durations.
 */
#include <stdlib.h>
#include <string.h>

#include "hostfile/config.h"
#include "common/err.h"
#include "test.h"
#include "t_hf.h"

#define DUMP_MAX	8192

/* Appends to the dump. */
#define OUT(...)	(n += snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))

/* Appends " [a] [b]" for a string list. */
static size_t
cfg_list(char *buf, size_t n, size_t len, char **v, size_t nv)
{
	size_t	i;

	for (i = 0; i < nv; i++)
		OUT(" [%s]", v[i]);
	return n;
}

/* Writes every field c has, in HF_C_* order, with its position. */
static const char *
cfg_dump(const struct hf_config *c, char *buf, size_t len)
{
	static const char *const names[HF_C_NFIELDS] = {
		"apiVersion", "commands", "numGPUs", "environment", "hosts",
		"hostfile", "slotsPerHost", "launcher", "sync.dst",
		"sync.exclude", "ssh.port", "ssh.user", "ssh.identityFile",
		"ssh.options", "killGrace", "timeout", "prefix", "outputDir",
		"framework", "heartbeatTimeout", "hangTimeout", "preemptible",
		"maxRestarts", "restartDelay", "setup", "forwardSignals",
		"collapse", "spares"
	};
	const struct hf_host	*h;
	size_t			 n = 0, i;
	int			 f;

	buf[0] = '\0';
	for (f = 0; f < HF_C_NFIELDS; f++) {
		if (!hf_config_has(c, f))
			continue;
		OUT("%s:", names[f]);
		switch (f) {
		case HF_C_APIVERSION: OUT(" %s", c->api_version); break;
		case HF_C_COMMANDS:
			n = cfg_list(buf, n, len, c->commands, c->ncommands);
			break;
		case HF_C_NUMGPUS: OUT(" %d", c->num_gpus); break;
		case HF_C_ENVIRONMENT:
			for (i = 0; i < c->nenv; i++)
				OUT(" %s=%s", c->env[i].name, c->env[i].value);
			break;
		case HF_C_HOSTS:
			for (i = 0; i < c->hosts.n; i++) {
				h = &c->hosts.v[i];
				OUT("%s %s slots=%d%s", i ? "," : "", h->name,
				    h->slots, h->slots_set ? "" : " default");
				if (h->user)
					OUT(" user=%s", h->user);
				if (h->port)
					OUT(" port=%d", h->port);
				OUT(" @%d:%d", h->line, h->col);
			}
			break;
		case HF_C_HOSTFILE: OUT(" %s", c->hostfile); break;
		case HF_C_SLOTSPERHOST: OUT(" %d", c->slots_per_host); break;
		case HF_C_LAUNCHER: OUT(" %s", c->launcher); break;
		case HF_C_SYNC_DST: OUT(" %s", c->sync_dst); break;
		case HF_C_SYNC_EXCLUDE:
			n = cfg_list(buf, n, len, c->sync_exclude,
			    c->nsync_exclude);
			break;
		case HF_C_SSH_PORT: OUT(" %d", c->ssh_port); break;
		case HF_C_SSH_USER: OUT(" %s", c->ssh_user); break;
		case HF_C_SSH_IDENTITY: OUT(" %s", c->ssh_identity); break;
		case HF_C_SSH_OPTIONS:
			n = cfg_list(buf, n, len, c->ssh_options,
			    c->nssh_options);
			break;
		case HF_C_KILLGRACE: OUT(" %gs", c->kill_grace); break;
		case HF_C_TIMEOUT: OUT(" %gs", c->timeout); break;
		case HF_C_PREFIX: OUT(" %s", c->prefix); break;
		case HF_C_OUTPUTDIR: OUT(" %s", c->output_dir); break;
		case HF_C_FRAMEWORK: OUT(" %s", c->framework); break;
		case HF_C_PREEMPTIBLE: OUT(" %d", c->preemptible); break;
		case HF_C_MAXRESTARTS: OUT(" %d", c->max_restarts); break;
		case HF_C_RESTARTDELAY: OUT(" %gs", c->restart_delay); break;
		case HF_C_SETUP: OUT(" %s", c->setup); break;
		case HF_C_FWDSIGNALS:
			n = cfg_list(buf, n, len, c->fwd_signals,
			    c->nfwd_signals);
			break;
		case HF_C_COLLAPSE: OUT(" %d", c->collapse); break;
		case HF_C_SPARES: OUT(" %d", c->spares); break;
		}
		OUT(" @%s:%d:%d\n", c->pos[f].file, c->pos[f].line,
		    c->pos[f].col);
	}
	for (i = 0; i < c->nnotes; i++)
		OUT("note: %s\n", c->notes[i]);
	return buf;
}

/*
 * Loads rel (over yaml/template.yaml for with-*) under its base name
 * and returns the dump, or "ERR: file:line:col: msg".
 */
static const char *
cfg_load(const char *rel, char *out, size_t len)
{
	struct hf_config	 c;
	struct dt_err		 e;
	char			 eb[1024], *buf, *tbuf = NULL;
	const char		*name = strrchr(rel, '/') + 1;
	size_t			 n, tn = 0;

	if ((buf = t_hf_read(rel, &n)) == NULL) {
		snprintf(out, len, "cannot read %s", rel);
		return out;
	}
	if (strncmp(name, "with-", 5) == 0)
		tbuf = t_hf_read("yaml/template.yaml", &tn);
	if (hf_config_load_buf(&c, name, buf, n, "template.yaml", tbuf, tn,
	    &e) != 0)
		snprintf(out, len, "ERR: %s", dt_err_str(&e, eb, sizeof(eb)));
	else
		cfg_dump(&c, out, len);
	hf_config_free(&c);
	free(buf);
	free(tbuf);
	return out;
}

/* Checks one sample against NAME.expect (or NAME.err). */
static void
cfg_one(const char *rel, const char *ext, const char *prefix)
{
	char	 got[DUMP_MAX], exp[512], *want;

	if (strcmp(rel, "yaml/template.yaml") == 0)
		return;		/* the template of with-*.yaml */
	snprintf(exp, sizeof(exp), "%.*s%s", (int)strlen(rel) - 5, rel, ext);
	if ((want = t_hf_read(exp, NULL)) == NULL) {
		t_fail(__FILE__, __LINE__, "no %s", exp);
		return;
	}
	if (prefix[0] != '\0')
		want[strcspn(want, "\n")] = '\0';	/* an error is one line */
	cfg_load(rel, got, sizeof(got));
	if (strncmp(got, prefix, strlen(prefix)) != 0 ||
	    strcmp(got + strlen(prefix), want) != 0)
		t_fail(__FILE__, __LINE__, "%s:\n%s\nwant:\n%s%s", rel, got,
		    prefix, want);
	free(want);
}

/* cfg_each callbacks for the good and the bad samples. */
static void
cfg_good(const char *rel)
{
	cfg_one(rel, ".expect", "");
}

static void
cfg_bad(const char *rel)
{
	cfg_one(rel, ".err", "ERR: ");
}

TEST(hf_config_samples)
{
	CHECK_INT(t_hf_each("yaml", ".yaml", cfg_good), 10);
}

TEST(hf_config_bad_samples)
{
	CHECK_INT(t_hf_each("yaml/bad", ".yaml", cfg_bad), 31);
}

TEST(hf_config_load_files)
{
	struct hf_config	c;
	struct dt_err		e;
	char			path[1024], tpath[1024], want[1100], eb[2048];

	snprintf(path, sizeof(path), "%s/hostfile/yaml/with-template.yaml",
	    t_datadir);
	snprintf(tpath, sizeof(tpath), "%s/hostfile/yaml/template.yaml",
	    t_datadir);
	CHECK_INT(hf_config_load(&c, path, tpath, &e), 0);
	CHECK_INT(c.num_gpus, 4);
	CHECK_INT(c.hosts.n, 1);
	CHECK_STR(c.hosts.v[0].file, path);
	CHECK_STR(c.pos[HF_C_APIVERSION].file, tpath);
	/* launcher: null in the job takes the template's ssh. */
	CHECK(hf_config_has(&c, HF_C_LAUNCHER));
	CHECK_STR(c.pos[HF_C_LAUNCHER].file, tpath);
	hf_config_free(&c);

	snprintf(path, sizeof(path), "%s/hostfile/yaml/dtrun-full.yaml",
	    t_datadir);
	CHECK_INT(hf_config_load(&c, path, NULL, &e), 0);
	snprintf(want, sizeof(want), "%s/hostfile/yaml/hosts/cluster.txt",
	    t_datadir);
	CHECK_STR(c.hostfile, want);
	hf_config_free(&c);

	CHECK_INT(hf_config_load(&c, "no/such.yaml", NULL, &e),
	    DT_ERR_NOTFOUND);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "no/such.yaml: cannot open "
	    "config: No such file or directory");
	hf_config_free(&c);
	CHECK_INT(hf_config_load(&c, path, "no/tmpl.yaml", &e),
	    DT_ERR_NOTFOUND);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "no/tmpl.yaml: cannot open "
	    "template: No such file or directory");
	hf_config_free(&c);
}

/* Loads config text over template text; returns the dump or the error. */
static const char *
cfg_merge(const char *conf, const char *tmpl, char *out)
{
	struct hf_config	c;
	struct dt_err		e;
	char			eb[1024];

	if (hf_config_load_buf(&c, "c.yaml", conf, strlen(conf), "t.yaml",
	    tmpl, tmpl ? strlen(tmpl) : 0, &e) != 0)
		snprintf(out, DUMP_MAX, "ERR: %s", dt_err_str(&e, eb,
		    sizeof(eb)));
	else
		cfg_dump(&c, out, DUMP_MAX);
	hf_config_free(&c);
	return out;
}

TEST(hf_config_template_merge)
{
	char	b[DUMP_MAX];

	/* Scalars: the config wins; a template-only key comes through. */
	CHECK_STR(cfg_merge("numGPUs: 2\n", "numGPUs: 8\nprefix: /opt\n", b),
	    "numGPUs: 2 @c.yaml:1:10\nprefix: /opt @t.yaml:2:9\n");
	/* Lists are not merged: the config's replaces the template's. */
	CHECK_STR(cfg_merge("sync: {exclude: [b]}\n",
	    "sync: {exclude: [a], dst: /x}\n", b),
	    "sync.dst: /x @t.yaml:1:27\n"
	    "sync.exclude: [b] @c.yaml:1:17\n");
	/* ... unless it is null: then the template's. */
	CHECK_STR(cfg_merge("sync: {exclude: null}\n",
	    "sync: {exclude: [a]}\n", b),
	    "sync.exclude: [a] @t.yaml:1:17\n");
	/* A null scalar takes the template's (numGPUs: null over 4 is 4). */
	CHECK_STR(cfg_merge("numGPUs: null\n", "numGPUs: 4\n", b),
	    "numGPUs: 4 @t.yaml:1:10\n");
	CHECK_STR(cfg_merge("environment: {A: null}\n",
	    "environment: {A: \"1\"}\n", b),
	    "environment: A=1 @c.yaml:1:14\n");
	/* A null with nothing under it stays not given. */
	CHECK_STR(cfg_merge("numGPUs: ~\n", "prefix: x\n", b),
	    "prefix: x @t.yaml:1:9\n");
	/* A list over a scalar: the config's kind wins. */
	CHECK_STR(cfg_merge("commands: [b]\n", "commands: a\n", b),
	    "commands: [b] @c.yaml:1:11\n");
	/* Maps merge recursively; null in the config keeps the template's. */
	CHECK_STR(cfg_merge("ssh:\n  user: me\n  port:\n",
	    "ssh: {port: 22, user: you, identityFile: k}\n", b),
	    "ssh.port: 22 @t.yaml:1:13\nssh.user: me @c.yaml:2:9\n"
	    "ssh.identityFile: k @t.yaml:1:42\n");
	/* An empty config is the template. */
	CHECK_STR(cfg_merge("", "launcher: local\n", b),
	    "launcher: local @t.yaml:1:11\n");
	CHECK_STR(cfg_merge("# nothing\n", NULL, b), "");
	/* Errors in the template name the template. */
	CHECK_STR(cfg_merge("numGPUs: 2\n", "numGPU: 8\n", b),
	    "ERR: t.yaml:1:1: unknown key \"numGPU\" (did you mean "
	    "\"numGPUs\"?)");
	CHECK_STR(cfg_merge("command: a\n", "commands: [b]\n", b),
	    "ERR: t.yaml:1:1: give command or commands, not both");
	CHECK_STR(cfg_merge("numGPUs: 2\n", "numGPUs: [\n", b),
	    "ERR: t.yaml:2:1: YAML: did not find expected node content "
	    "while parsing a flow node");
	/* Anchors and aliases are copies. */
	CHECK_STR(cfg_merge("x: &h [a:2]\nhosts: *h\n", NULL, b),
	    "ERR: c.yaml:1:1: unknown key \"x\" (see dtrun.yaml(5) for the "
	    "keys)");
	CHECK_STR(cfg_merge("sync: {exclude: &e [a, b]}\nssh: {options: *e}\n",
	    NULL, b), "sync.exclude: [a] [b] @c.yaml:1:17\n"
	    "ssh.options: [a] [b] @c.yaml:1:17\n");
}

TEST(hf_config_values)
{
	char	b[DUMP_MAX];

	CHECK_STR(cfg_merge("hosts: \"a:2, b[1-2]\"\n", NULL, b),
	    "hosts: a slots=2 @1:9, b1 slots=1 default @1:14, b2 slots=1 "
	    "default @1:14 @c.yaml:1:8\n");
	CHECK_STR(cfg_merge("hosts: []\n", NULL, b),
	    "ERR: c.yaml:1:8: hosts: the list is empty");
	CHECK_STR(cfg_merge("environment: {A: 1, B: '', C: true, A: 2}\n",
	    NULL, b), "ERR: c.yaml:1:37: key \"A\" given twice (first at "
	    "line 1)");
	CHECK_STR(cfg_merge("environment: {A: 1, B: '', C: true, D: ~}\n", NULL,
	    b), "environment: A=1 B= C=true D= @c.yaml:1:14\n");
	CHECK_STR(cfg_merge("environment: [A=1, A=2=3]\n", NULL, b),
	    "environment: A=2=3 @c.yaml:1:14\n");
	CHECK_STR(cfg_merge("commands: [a, '']\n", NULL, b),
	    "ERR: c.yaml:1:15: commands: empty string in the list");
	CHECK_STR(cfg_merge("killGrace: 250ms\ntimeout: 0\n", NULL, b),
	    "killGrace: 0.25s @c.yaml:1:12\ntimeout: 0s @c.yaml:2:10\n");
	CHECK_STR(cfg_merge("ssh: {user: [a]}\n", NULL, b),
	    "ERR: c.yaml:1:13: ssh.user: expected a string, got a list");
	CHECK_STR(cfg_merge("launcher: Local\n", NULL, b),
	    "ERR: c.yaml:1:11: launcher: unknown value \"Local\" (did you "
	    "mean \"local\"?)");
}

TEST(hf_config_durations)
{
	double	secs;

	CHECK_INT(hf_duration("30", &secs), 0);
	CHECK(secs == 30);
	CHECK_INT(hf_duration("1.5s", &secs), 0);
	CHECK(secs == 1.5);
	CHECK_INT(hf_duration("2m", &secs), 0);
	CHECK(secs == 120);
	CHECK_INT(hf_duration("1h", &secs), 0);
	CHECK(secs == 3600);
	CHECK_INT(hf_duration("10ms", &secs), 0);
	CHECK(secs == 0.01);
	CHECK_INT(hf_duration("-1", &secs), DT_ERR_PARSE);
	CHECK_INT(hf_duration("1d", &secs), DT_ERR_PARSE);
	CHECK_INT(hf_duration("s", &secs), DT_ERR_PARSE);
	CHECK_INT(hf_duration("1e300", &secs), DT_ERR_PARSE);
	CHECK_INT(hf_duration("", &secs), DT_ERR_PARSE);
}

TEST(hf_config_examples_load)
{
	static const char *const files[] = {
		"engine-v1.yaml", "engine-v2.yaml", "engine-v3.yaml",
		"engine-dtrun.yaml", "engine-with-template.yaml",
	};
	struct hf_config	c;
	struct dt_err		e;
	char			path[1024], tpath[1024], eb[2048];
	size_t			i;

	/* tests/data -> examples */
	snprintf(tpath, sizeof(tpath), "%s/../../examples/engine-template.yaml",
	    t_datadir);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/../../examples/%s", t_datadir,
		    files[i]);
		if (hf_config_load(&c, path, strstr(files[i], "with-") ?
		    tpath : NULL, &e) != 0)
			t_fail(__FILE__, __LINE__, "%s", dt_err_str(&e, eb,
			    sizeof(eb)));
		hf_config_free(&c);
	}
}

TEST(hf_config_map_cap)
{
	struct hf_config	 c;
	struct dt_err		 e;
	char			*buf, eb[1024];
	size_t			 n = 0, len = 10001 * 16 + 32;
	int			 i;

	if ((buf = malloc(len)) == NULL)
		return;
	n += snprintf(buf + n, len - n, "environment:\n");
	for (i = 0; i < 10001; i++)
		n += snprintf(buf + n, len - n, "  V%d: x\n", i);
	CHECK_INT(hf_config_load_buf(&c, "big.yaml", buf, n, NULL, NULL, 0,
	    &e), DT_ERR_RANGE);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "big.yaml:10002:3: more than "
	    "10000 keys in one map");
	hf_config_free(&c);
	free(buf);
}
