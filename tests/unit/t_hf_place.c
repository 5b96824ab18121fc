/*
 * t_hf_place.c -- rank placement against the golden plans in
 * tests/data/hostfile/place/NAME.golden. Each says
 *
 *	# hosts: a:2,b:2		(or "@good/NAME.hosts" for a corpus file)
 *	# opts: -n 4 --nproc-per-node N --oversubscribe -s N --include X --exclude X
 *	# slots: 0 1 0 1		(optional: each process's device id)
 *	# error: MESSAGE		(or the plan, one "RANK HOST LOCAL_RANK" a line)
 */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "hostfile/hostfile.h"
#include "test.h"
#include "t_hf.h"

#define PLAN_MAX	8192

/* What a golden file asks for. */
struct golden {
	char			 hosts[256];
	char			 include[128];
	char			 exclude[128];
	char			 slots[256];
	struct hf_place_opts	 o;
};

/* Copies the value after "# key: " in line into dst when it matches. */
static int
golden_field(const char *line, const char *key, char *dst, size_t len)
{
	size_t	n = strlen(key);

	if (strncmp(line, key, n) != 0)
		return 0;
	line += n;
	line += strspn(line, " ");
	snprintf(dst, len, "%.*s", (int)strcspn(line, "\n"), line);
	return 1;
}

/* Reads "# opts:" words into g. */
static void
golden_opts(struct golden *g, char *opts)
{
	char	*w, *save = NULL;

	for (w = strtok_r(opts, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (strcmp(w, "--oversubscribe") == 0)
			g->o.oversubscribe = 1;
		else if (strcmp(w, "-n") == 0)
			g->o.np = atoi(strtok_r(NULL, " ", &save));
		else if (strcmp(w, "-s") == 0)
			g->o.nservers = atoi(strtok_r(NULL, " ", &save));
		else if (strcmp(w, "--nproc-per-node") == 0)
			g->o.nproc_per_node = atoi(strtok_r(NULL, " ", &save));
		else if (strcmp(w, "--include") == 0)
			snprintf(g->include, sizeof(g->include), "%s",
			    strtok_r(NULL, " ", &save));
		else if (strcmp(w, "--exclude") == 0)
			snprintf(g->exclude, sizeof(g->exclude), "%s",
			    strtok_r(NULL, " ", &save));
		else
			t_fail(__FILE__, __LINE__, "unknown golden opt %s", w);
	}
}

/* Loads g's hosts, filters and places them; returns the plan as text. */
static void
golden_run(struct golden *g, char *out, size_t len, char *slots, size_t slen)
{
	struct hf_hosts	hs;
	struct hf_plan	plan;
	struct dt_err	e;
	char		path[1024], eb[1024], line[512];
	size_t		i, n = 0, sn = 0;
	int		r;

	hf_hosts_init(&hs);
	if (g->hosts[0] == '@') {
		snprintf(path, sizeof(path), "%s/hostfile/%s", t_datadir,
		    g->hosts + 1);
		r = hf_parse_file(&hs, path, &e);
	} else
		r = hf_parse_list(&hs, g->hosts, &e);
	if (r == 0)
		r = hf_filter(&hs, g->include, g->exclude, &e);
	memset(&plan, 0, sizeof(plan));
	if (r == 0)
		r = hf_place(&hs, &g->o, &plan, &e);
	out[0] = slots[0] = '\0';
	if (r != 0)
		snprintf(out, len, "# error: %s\n", dt_err_str(&e, eb,
		    sizeof(eb)));
	for (i = 0; r == 0 && i < plan.nranks && n < len; i++) {
		hf_plan_line(&plan, i, line, sizeof(line));
		n += snprintf(out + n, len - n, "%s\n", line);
		if (sn < slen)
			sn += snprintf(slots + sn, slen - sn, "%s%d",
			    i ? " " : "", plan.ranks[i].slot);
	}
	hf_plan_free(&plan);
	hf_hosts_free(&hs);
}

/* Checks one golden file, rel under t_datadir/hostfile. */
static void
golden_one(const char *rel)
{
	struct golden	 g;
	FILE		*f;
	char		 line[512], opts[256] = "", want[PLAN_MAX] = "";
	char		 got[PLAN_MAX], slots[256], path[1024];
	size_t		 n = 0;

	memset(&g, 0, sizeof(g));
	snprintf(path, sizeof(path), "%s/hostfile/%s", t_datadir, rel);
	if ((f = fopen(path, "r")) == NULL) {
		t_fail(__FILE__, __LINE__, "cannot open %s", path);
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (golden_field(line, "# hosts:", g.hosts, sizeof(g.hosts)) ||
		    golden_field(line, "# opts:", opts, sizeof(opts)) ||
		    golden_field(line, "# slots:", g.slots, sizeof(g.slots)))
			continue;
		if (line[0] == '#' && strncmp(line, "# error:", 8) != 0)
			continue;
		n += snprintf(want + n, sizeof(want) - n, "%s", line);
	}
	fclose(f);
	golden_opts(&g, opts);
	golden_run(&g, got, sizeof(got), slots, sizeof(slots));
	if (strcmp(got, want) != 0)
		t_fail(__FILE__, __LINE__, "%s:\n%swant:\n%s", path, got, want);
	if (g.slots[0] != '\0' && strcmp(slots, g.slots) != 0)
		t_fail(__FILE__, __LINE__, "%s: slots %s, want %s", path, slots,
		    g.slots);
}

TEST(hf_place_golden)
{
	CHECK_INT(t_hf_each("place", ".golden", golden_one), 13);
}

/* hf_plan_dmlc_env callback: appends "K=V " to the buffer arg. */
static int
dmlc_collect(const char *k, const char *v, void *arg)
{
	char	*buf = arg;

	snprintf(buf + strlen(buf), PLAN_MAX - strlen(buf), "%s=%s ", k, v);
	return 0;
}

TEST(hf_place_dmlc_env)
{
	struct hf_hosts		hs;
	struct hf_plan		plan;
	struct hf_place_opts	o = { .nservers = 2, .ps_port = 9300 };
	struct dt_err		e;
	char			buf[PLAN_MAX];

	hf_hosts_init(&hs);
	CHECK_INT(hf_parse_list(&hs, "a:2,b", &e), 0);
	CHECK_INT(hf_place(&hs, &o, &plan, &e), 0);
	CHECK_INT(plan.nworkers, 3);
	CHECK_INT(plan.nranks, 6);
	CHECK_INT(plan.nhosts, 2);
	CHECK_INT(plan.host_nworkers[0], 2);
	CHECK_INT(plan.host_nprocs[0], 4);
	CHECK_INT(plan.host_nprocs[1], 2);
	buf[0] = '\0';
	CHECK_INT(hf_plan_dmlc_env(&plan, 4, dmlc_collect, buf), 0);
	CHECK_STR(buf, "DMLC_ROLE=server DMLC_PS_ROOT_URI=a "
	    "DMLC_PS_ROOT_PORT=9300 DMLC_NUM_WORKER=3 DMLC_NUM_SERVER=2 ");
	buf[0] = '\0';
	CHECK_INT(hf_plan_dmlc_env(&plan, 5, dmlc_collect, buf), 0);
	CHECK(strncmp(buf, "DMLC_ROLE=scheduler ", 20) == 0);
	buf[0] = '\0';
	CHECK_INT(hf_plan_dmlc_env(&plan, 0, dmlc_collect, buf), 0);
	CHECK(strncmp(buf, "DMLC_ROLE=worker ", 17) == 0);
	hf_plan_free(&plan);

	o.nservers = 0;
	CHECK_INT(hf_place(&hs, &o, &plan, &e), 0);
	buf[0] = '\0';
	CHECK_INT(hf_plan_dmlc_env(&plan, 0, dmlc_collect, buf), 0);
	CHECK_STR(buf, "");
	CHECK_STR(plan.hosts[1].file, "-H");
	hf_plan_free(&plan);
	hf_hosts_free(&hs);
}

TEST(hf_place_bad_options)
{
	struct hf_hosts		hs;
	struct hf_plan		plan;
	struct hf_place_opts	o = { .np = -1 };
	struct dt_err		e;
	char			eb[1024];

	hf_hosts_init(&hs);
	CHECK_INT(hf_place(&hs, &o, &plan, &e), DT_ERR_INVAL);
	CHECK_STR(e.msg, "no hosts to run on (give -H, --hostfile or hosts in "
	    "engine.yaml)");
	hf_plan_free(&plan);
	CHECK_INT(hf_parse_list(&hs, "a slots=2 max_slots=3", &e), 0);
	CHECK_INT(hf_place(&hs, &o, &plan, &e), DT_ERR_INVAL);
	hf_plan_free(&plan);
	o.np = 0;
	o.nproc_per_node = 4;
	CHECK_INT(hf_place(&hs, &o, &plan, &e), DT_ERR_RANGE);
	CHECK_STR(dt_err_str(&e, eb, sizeof(eb)), "-H:1:1: --nproc-per-node "
	    "4 is more than max_slots=3 of a");
	hf_plan_free(&plan);
	o.nproc_per_node = 3;
	CHECK_INT(hf_place(&hs, &o, &plan, &e), 0);
	CHECK_INT(plan.nranks, 3);
	CHECK_INT(plan.ranks[2].slot, 2);
	hf_plan_free(&plan);
	hf_hosts_free(&hs);
}
