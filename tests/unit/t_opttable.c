/*
 * t_opttable.c -- dtrun's option table agrees with itself, with --help,
 * with getopt's arrays and with engine.yaml's keys (t0040-docs.sh checks
 * the man page and completions against it).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/cli.h"
#include "hostfile/config.h"
#include "launcher/opttable.h"
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
			    opt_table[j].arg != r->arg)
				t_fail(__FILE__, __LINE__, "--%s and --%s: "
				    "one id, not one argument",
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
