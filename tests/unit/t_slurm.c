/* t_slurm.c -- hosts and launcher from a Slurm allocation's environment. */
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "common/err.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "test.h"

/* Builds the plan for argv (NULL-terminated) under the current environment. */
static int
slurm_plan(struct plan *p, struct opts *o, struct dt_err *e,
    const char **argv)
{
	int	argc, rc, saved = log_level;

	for (argc = 0; argv[argc] != NULL; argc++)
		;
	if ((rc = cli_parse(argc, (char **)argv, o, e)) != CLI_RUN)
		return rc;
	log_level = -1;		/* no notice on the test's output */
	rc = plan_build(p, o, e);
	log_level = saved;
	return rc;
}

/* Sets or clears the allocation's variables. */
static void
slurm_env(const char *id, const char *nodes, const char *tasks)
{
	unsetenv("SLURM_JOBID");
	unsetenv("SLURM_NODELIST");
	if (id != NULL) {
		setenv("SLURM_JOB_ID", id, 1);
		setenv("SLURM_JOB_NODELIST", nodes, 1);
		setenv("SLURM_TASKS_PER_NODE", tasks, 1);
	} else {
		unsetenv("SLURM_JOB_ID");
		unsetenv("SLURM_JOB_NODELIST");
		unsetenv("SLURM_TASKS_PER_NODE");
	}
}

TEST(slurm_hosts_from_allocation)
{
	const char	*a[] = { "dtrun", "true", NULL };
	const char	*b[] = { "dtrun", "--launcher", "slurm", "-n", "3", "true",
			    NULL };
	struct opts	 o;
	struct plan	 p;
	struct dt_err	 e;

	/* Inside an allocation and no hosts given: Slurm by itself. */
	slurm_env("42", "gpu[01-03]", "2(x2),1");
	CHECK_INT(slurm_plan(&p, &o, &e, a), 0);
	CHECK_INT(o.launcher, LAUNCH_SLURM);
	CHECK_INT(p.nhosts, 3);
	CHECK_INT(p.nranks, 5);
	CHECK_STR(p.hosts[0].name, "gpu01");
	CHECK_STR(p.hosts[2].name, "gpu03");
	CHECK_INT(p.hosts[1].nranks, 2);
	CHECK_INT(p.hosts[2].nranks, 1);
	plan_free(&p);
	cli_free(&o);

	/* Fewer ranks than slots: only the hosts used get an agent. */
	CHECK_INT(slurm_plan(&p, &o, &e, b), 0);
	CHECK_INT(p.nranks, 3);
	CHECK_INT(p.nhosts, 2);
	CHECK_STR(p.hosts[1].name, "gpu02");
	plan_free(&p);
	cli_free(&o);
	slurm_env(NULL, NULL, NULL);
}

TEST(slurm_hosts_given_win)
{
	const char	*a[] = { "dtrun", "-H", "a:1,b:1", "true", NULL };
	const char	*b[] = { "dtrun", "--launcher", "local", "-n", "2", "true",
			    NULL };
	struct opts	 o;
	struct plan	 p;
	struct dt_err	 e;

	slurm_env("42", "gpu[01-03]", "2(x3)");
	CHECK_INT(slurm_plan(&p, &o, &e, a), 0);
	CHECK_INT(o.launcher, LAUNCH_SSH);
	CHECK_STR(p.hosts[1].name, "b");
	plan_free(&p);
	cli_free(&o);
	CHECK_INT(slurm_plan(&p, &o, &e, b), 0);
	CHECK_INT(o.launcher, LAUNCH_LOCAL);
	CHECK_INT(p.nhosts, 1);
	plan_free(&p);
	cli_free(&o);
	slurm_env(NULL, NULL, NULL);
}

TEST(slurm_outside_allocation)
{
	const char	*a[] = { "dtrun", "--launcher", "slurm", "true", NULL };
	const char	*b[] = { "dtrun", "--launcher", "slurm", "-H", "x", "true",
			    NULL };
	struct opts	 o;
	struct plan	 p;
	struct dt_err	 e;

	slurm_env(NULL, NULL, NULL);
	CHECK_INT(slurm_plan(&p, &o, &e, a), DT_ERR_NOTFOUND);
	CHECK(strstr(e.msg, "not inside a Slurm allocation") != NULL);
	plan_free(&p);
	cli_free(&o);
	CHECK_INT(slurm_plan(&p, &o, &e, b), DT_ERR_NOTFOUND);
	plan_free(&p);
	cli_free(&o);
	/* A malformed allocation is a clear parse error. */
	slurm_env("42", "gpu[03-01]", "1");
	CHECK(slurm_plan(&p, &o, &e, a) < 0);
	CHECK(e.msg[0] != '\0');
	plan_free(&p);
	cli_free(&o);
	slurm_env(NULL, NULL, NULL);
}
