/*
 * t_opttable.c -- dtrun's option table agrees with itself, with --help,
 * with getopt's arrays and with engine.yaml's keys (t0040-docs.sh checks
 * the man page and completions against it).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "hostfile/config.h"
#include "launcher/cli/opttable.h"
#include "launcher/cli/yamlopts.h"
#include "test.h"

/* The row whose engine.yaml key is key, or NULL; *n counts them. */
static const struct opt_row *
row_of_yaml(const char *key, int *n)
{
	const struct opt_row	*found = NULL;
	size_t			 i;

	*n = 0;
	for (i = 0; i < opt_ntable; i++)
		if (opt_table[i].yaml != NULL &&
		    strcmp(opt_table[i].yaml, key) == 0) {
			found = &opt_table[i];
			(*n)++;
		}
	return found;
}

/* Nonzero if key is one of engine.yaml's keys that no option sets. */
static int
yaml_only(const char *key)
{
	size_t	i;

	for (i = 0; i < opt_nyaml_only; i++)
		if (strcmp(opt_yaml_only[i].key, key) == 0)
			return 1;
	return 0;
}

/* Nonzero if engine.yaml has key. */
static int
yaml_has(const char *key)
{
	char	buf[128];
	size_t	i;

	for (i = 0; hf_config_key(i, buf, sizeof(buf)) != NULL; i++)
		if (strcmp(buf, key) == 0)
			return 1;
	return 0;
}

TEST(opttable_every_yaml_key_has_a_row_or_says_why_not)
{
	char	buf[128];
	size_t	i;
	int	n;

	for (i = 0; hf_config_key(i, buf, sizeof(buf)) != NULL; i++) {
		(void)row_of_yaml(buf, &n);
		if (n + yaml_only(buf) != 1)
			t_fail(__FILE__, __LINE__, "engine.yaml key %s: in %d "
			    "rows of opt_table%s (want one row, or an "
			    "opt_yaml_only entry)", buf, n, yaml_only(buf) ?
			    " and in opt_yaml_only" : "");
	}
	CHECK(i >= 20);
	for (i = 0; i < opt_nyaml_only; i++)
		if (!yaml_has(opt_yaml_only[i].key))
			t_fail(__FILE__, __LINE__, "opt_yaml_only: %s is no "
			    "engine.yaml key", opt_yaml_only[i].key);
}

TEST(opttable_every_row_yaml_key_is_read_by_config)
{
	size_t	i;

	for (i = 0; i < opt_ntable; i++)
		if (opt_table[i].yaml != NULL && !yaml_has(opt_table[i].yaml))
			t_fail(__FILE__, __LINE__, "--%s: engine.yaml has no "
			    "key %s", opt_table[i].name, opt_table[i].yaml);
}

TEST(opttable_names_letters_and_ids_are_consistent)
{
	int	seen[OPT_NIDS] = { 0 }, letters[128] = { 0 };
	size_t	i, j;

	for (i = 0; i < opt_ntable; i++) {
		const struct opt_row *r = &opt_table[i];

		CHECK(r->id >= 0 && r->id < OPT_NIDS);
		CHECK(r->letter >= 0 && r->letter < 128);
		if (r->id < 0 || r->id >= OPT_NIDS || r->letter < 0 ||
		    r->letter >= 128)
			continue;
		seen[r->id]++;
		/* What the table keeps has a type to keep it as. */
		if (r->at != 0 && (r->type == OPTT_OTHER ||
		    r->type == OPTT_LIST))
			t_fail(__FILE__, __LINE__, "--%s: a place, no type",
			    r->name);
		if (r->min > r->max)
			t_fail(__FILE__, __LINE__, "--%s: min > max", r->name);
		if (r->letter != 0 && letters[r->letter]++)
			t_fail(__FILE__, __LINE__, "-%c twice", r->letter);
		/* A value's name in --help, exactly when it takes one. */
		if ((r->metavar != NULL) != (r->arg != OPTA_NONE))
			t_fail(__FILE__, __LINE__, "--%s: metavar and arg "
			    "disagree", r->name);
		for (j = 0; j < i; j++) {
			if (strcmp(opt_table[j].name, r->name) == 0)
				t_fail(__FILE__, __LINE__, "--%s twice",
				    r->name);
			/* Spellings of one option take the same value. */
			if (opt_table[j].id == r->id &&
			    (opt_table[j].arg != r->arg ||
			    opt_table[j].type != r->type ||
			    opt_table[j].at != r->at ||
			    opt_table[j].def != r->def ||
			    opt_table[j].min != r->min ||
			    opt_table[j].max != r->max))
				t_fail(__FILE__, __LINE__, "--%s and --%s: "
				    "one id, not one value",
				    opt_table[j].name, r->name);
		}
	}
	/* Every id cli.c handles has a row that gives it. */
	for (i = 0; i < OPT_NIDS; i++)
		if (seen[i] == 0)
			t_fail(__FILE__, __LINE__, "id %zu has no row", i);
}

TEST(opttable_getopt_arrays)
{
	struct opt_tab		t = { opt_table, 0, 0 };
	struct opt_getopt	g;
	size_t			i;

	t.n = opt_ntable;
	opt_getopt_build(&g, "+:", &t, 1);
	CHECK_STR(g.shorts, "+:n:H:f:s:r:t:x:p:i:J:F:mvqVh");
	for (i = 0; i < opt_ntable; i++) {
		CHECK_STR(g.longopts[i].name, opt_table[i].name);
		CHECK_INT(opt_getopt_id(&g, g.longopts[i].val),
		    opt_table[i].id);
		if (opt_table[i].letter != 0)
			CHECK_INT(opt_getopt_id(&g, opt_table[i].letter),
			    opt_table[i].id);
	}
	CHECK(g.longopts[opt_ntable].name == NULL);
	CHECK_INT(opt_getopt_id(&g, '?'), -1);
	CHECK_INT(opt_getopt_id(&g, ':'), -1);
	CHECK_INT(opt_getopt_id(&g, 'Z'), -1);
	free(g.longopts);
}

TEST(opttable_help_names_every_option)
{
	char	*text = NULL, *line, *nl, want[64];
	size_t	 len = 0, i;
	FILE	*f = open_memstream(&text, &len);

	cli_usage(f);
	fclose(f);
	for (i = 0; i < opt_ntable; i++) {
		if (opt_table[i].flags & OPTF_HIDDEN) {
			snprintf(want, sizeof(want), "--%s", opt_table[i].name);
			CHECK(strstr(text, want) == NULL);
			continue;
		}
		/* Spellings are named in the text after the list. */
		snprintf(want, sizeof(want), "--%s%s", opt_table[i].name,
		    opt_table[i].help ? (opt_table[i].arg ? " " : "") : "");
		if (strstr(text, want) == NULL)
			t_fail(__FILE__, __LINE__, "--help lacks \"%s\"", want);
	}
	/* The option list fits a terminal. */
	for (line = strstr(text, "\n  -n"); line != NULL && line[1] == ' ';
	    line = nl) {
		nl = strchr(line + 1, '\n');
		if (nl == NULL)
			break;
		if (nl - line - 1 > 79)
			t_fail(__FILE__, __LINE__, "--help line over 79: %.*s",
			    (int)(nl - line - 1), line + 1);
	}
	free(text);
}

/* Whether dtrun takes --NAME text on the command line. */
static int
flag_takes(const struct opt_row *r, const char *text)
{
	char		 flag[64];
	char		*argv[] = { "dtrun", flag, (char *)text, "x", NULL };
	struct opts	 o;
	struct dt_err	 e;
	int		 rc;

	snprintf(flag, sizeof(flag), "--%s", r->name);
	rc = cli_parse(4, argv, &o, &e);
	if (rc == CLI_RUN)
		cli_free(&o);
	return rc == CLI_RUN;
}

/* engine.yaml's "KEY: text" for row r, into buf (ssh.port: in a map). */
static void
yaml_text(const struct opt_row *r, const char *text, char *buf, size_t len)
{
	const char	*dot = strchr(r->yaml, '.');

	if (dot != NULL)
		snprintf(buf, len, "%.*s:\n  %s: %s\n", (int)(dot - r->yaml),
		    r->yaml, dot + 1, text);
	else
		snprintf(buf, len, "%s: %s\n", r->yaml, text);
}

/* Whether dtrun takes "KEY: text" in engine.yaml. */
static int
yaml_takes(const struct opt_row *r, const char *text)
{
	char		 buf[256], msg[512];
	char		*argv[] = { "dtrun", "x", NULL };
	struct hf_config c;
	struct opts	 o;
	struct dt_err	 e;
	int		 rc;

	yaml_text(r, text, buf, sizeof(buf));
	if (cli_parse(2, argv, &o, &e) != CLI_RUN)
		return -1;
	rc = hf_config_load_buf(&c, "t.yaml", buf, strlen(buf), NULL, NULL, 0,
	    &e);
	if (rc == 0)
		rc = yamlopts_apply(&o, &c, &e);
	/* A refusal says where: the file, the line and the column. */
	if (rc != 0 && strncmp(dt_err_str(&e, msg, sizeof(msg)), "t.yaml:",
	    7) != 0)
		t_fail(__FILE__, __LINE__, "%s: %s: \"%s\" names no place",
		    r->yaml, text, msg);
	cli_free(&o);
	hf_config_free(&c);
	return rc == 0;
}

/* A number as both routes read it: no exponent. */
static void
num_text(double v, char *buf, size_t len)
{
	if (v == (double)(long long)v)
		snprintf(buf, len, "%lld", (long long)v);
	else
		snprintf(buf, len, "%.6f", v);
}

/*
 * Every option with an engine.yaml key takes there exactly what its flag
 * takes: its min and max, and not one past them (hangTimeout: 1e10 was
 * taken where --hang-timeout 1e10 was refused).
 */
TEST(opttable_yaml_keys_take_their_flags_bounds)
{
	size_t	i, k;
	int	checked = 0;

	for (i = 0; i < opt_ntable; i++) {
		const struct opt_row *r = &opt_table[i];
		double	 v[6];
		char	 text[64];
		int	 flag, yaml, want;

		if (r->yaml == NULL || (r->type != OPTT_COUNT &&
		    r->type != OPTT_SECS))
			continue;
		checked++;
		v[0] = r->min;
		v[1] = r->max;
		v[2] = r->max + 1;
		v[3] = r->max * 1000;
		v[4] = r->type == OPTT_COUNT ? r->min - 1 : r->min / 2;
		v[5] = 0;
		for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			if (v[k] < 0)
				continue;
			num_text(v[k], text, sizeof(text));
			want = (v[k] >= r->min && v[k] <= r->max) ||
			    (v[k] == 0 && (r->flags & OPTF_OFF0));
			flag = flag_takes(r, text);
			yaml = yaml_takes(r, text);
			if (flag != want || yaml != want)
				t_fail(__FILE__, __LINE__, "--%s %s: %s, %s: "
				    "%s %s (the table: %s)", r->name, text,
				    flag ? "taken" : "refused", r->yaml, text,
				    yaml ? "taken" : "refused", want ?
				    "take it" : "refuse it");
		}
	}
	CHECK(checked >= 8);
}

/*
 * Each value the table keeps starts at the table's default: no -1 that
 * means "not given" (the table knows what was given).
 */
TEST(opttable_defaults_are_the_tables)
{
	char		*argv[] = { "dtrun", "x", NULL };
	struct opts	 o;
	struct dt_err	 e;
	size_t		 i;

	CHECK_INT(cli_parse(2, argv, &o, &e), CLI_RUN);
	for (i = 0; i < opt_ntable; i++) {
		const struct opt_row *r = &opt_table[i];

		if (r->at == 0 || r->type == OPTT_STRING)
			continue;
		if (opt_get(r, &o) != r->def)
			t_fail(__FILE__, __LINE__, "--%s: %g when not given, "
			    "the table says %g", r->name, opt_get(r, &o),
			    r->def);
		if (o.given[r->id])
			t_fail(__FILE__, __LINE__, "--%s given", r->name);
	}
	cli_free(&o);
}

/*
 * Row r's value after the command line gave cv (NULL: left it out; a
 * flag: given) and engine.yaml yv.
 */
static double
value_after(const struct opt_row *r, const char *cv, const char *yv)
{
	struct hf_config c;
	struct opts	 o;
	struct dt_err	 e;
	char		 flag[64], buf[128];
	char		*argv[] = { "dtrun", flag, (char *)cv, "x", NULL };
	double		 v = -1;
	int		 argc = 4;

	snprintf(flag, sizeof(flag), "--%s", r->name);
	if (cv == NULL) {
		argv[1] = "x";
		argc = 2;
	} else if (r->type == OPTT_BOOL) {
		argv[2] = "x";
		argc = 3;
	}
	yaml_text(r, yv, buf, sizeof(buf));
	if (cli_parse(argc, argv, &o, &e) != CLI_RUN)
		return -1;
	if (hf_config_load_buf(&c, "t.yaml", buf, strlen(buf), NULL, NULL, 0,
	    &e) == 0 && yamlopts_apply(&o, &c, &e) == 0)
		v = opt_get(r, &o);
	cli_free(&o);
	hf_config_free(&c);
	return v;
}

/* engine.yaml fills what the command line left out, and only that. */
TEST(opttable_the_command_line_wins_over_every_yaml_key)
{
	char	cv[32], yv[32];
	size_t	i;
	int	checked = 0;

	for (i = 0; i < opt_ntable; i++) {
		const struct opt_row *r = &opt_table[i];
		double	 c = r->type == OPTT_BOOL ? 1 : r->min;
		double	 y = r->type == OPTT_BOOL ? 0 : r->max;

		if (r->yaml == NULL || r->at == 0 || r->type == OPTT_STRING)
			continue;
		checked++;
		num_text(c, cv, sizeof(cv));
		num_text(y, yv, sizeof(yv));
		if (r->type == OPTT_BOOL)
			snprintf(yv, sizeof(yv), "false");
		if (value_after(r, cv, yv) != c)
			t_fail(__FILE__, __LINE__, "--%s %s, %s: %s: not the "
			    "flag's", r->name, cv, r->yaml, yv);
		/* A bool's false is off: 0, or -1 where 0 means "not said"
		   (collapse: on by default on a terminal with 8+ ranks). */
		if (r->type == OPTT_BOOL ? value_after(r, NULL, yv) > 0 :
		    value_after(r, NULL, yv) != y)
			t_fail(__FILE__, __LINE__, "%s: %s alone: not taken",
			    r->yaml, yv);
	}
	CHECK(checked >= 10);
}
