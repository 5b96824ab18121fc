/*
 * main.c -- dtrun: start a distributed job's ranks, forward their output,
 * stop them all at the first failure. Only this file decides to exit.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launcher/job/agents.h"
#include "launcher/backend/local.h"
#include "launcher/check/check.h"
#include "launcher/cli/cli.h"
#include "launcher/plan/netplan.h"
#include "common/err.h"
#include "common/exitcodes.h"
#include "launcher/job/hooks.h"
#include "launcher/job/job.h"
#include "common/log.h"
#include "launcher/plan/plan.h"
#include "launcher/job/restart.h"
#include "launcher/job/signals.h"
#include "launcher/output/output.h"
#include "launcher/stacks/stackask.h"
#include "launcher/store/storefeat.h"
#include "launcher/watch/straggle.h"
#include "launcher/sync/sync.h"
#include "launcher/watch/topcli.h"
#include "common/sys.h"

/* Makes a unique job id into buf. */
static void
make_id(char *buf, size_t len)
{
	unsigned char	r[6];
	int		fd;
	size_t		i, n;

	/* Time first, so ids sort by start; then randomness against clashes. */
	n = snprintf(buf, len, "%lx-", (unsigned long)time(NULL));
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd == -1 || read(fd, r, sizeof(r)) != (ssize_t)sizeof(r)) {
		for (i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(getpid() >> (i * 3) ^ clock());
	}
	if (fd != -1)
		close(fd);
	for (i = 0; i < sizeof(r) && n + 2 < len; i++, n += 2)
		snprintf(buf + n, len - n, "%02x", r[i]);
}

/*
 * The features a job runs with, on the core's hooks (job/hooks.h), in the
 * order each moment calls them: the output first, so its status line is
 * cleared before anything else prints. A new feature is one line here.
 */
static const struct job_feature *const job_features[] = {
	&output_feature,
	&stacks_feature,
	&watch_feature,
	&check_feature,
	&sync_feature,
	&store_feature,
	NULL
};

/* dtrun --check runs no rank: nothing to watch, nothing to copy. */
static const struct job_feature *const check_features[] = {
	&output_feature,
	&stacks_feature,
	&check_feature,
	NULL
};

/* dtrun --check: the whole check as one attempt of the job (check.h); dtrun's exit status. */
static int
check_run(const struct opts *o, const struct plan *p, const char *id)
{
	struct job_attempt	 a;
	struct job_scope	*sc;
	struct features		*fs;
	int			 rc;

	memset(&a, 0, sizeof(a));
	a.timeout = o->timeout;
	signals_hold(1);
	if ((sc = job_scope_new(o)) == NULL)
		return EXIT_INTERNAL;
	fs = features_new(check_features, agents_base(sc), o, id);
	a.features = fs;
	rc = job_run(sc, o, p, id, &a);
	features_free(fs);
	job_scope_free(sc);
	job_attempt_free(&a);
	return rc;
}

int
main(int argc, char **argv)
{
	struct opts	o;
	struct plan	p;
	struct env_ctx	ec;
	struct dt_err	e;
	char		msg[1024], id[64];
	int		rc;

	log_init("dtrun");
	/* A subcommand, not a command to run: dtrun top [JOB]. */
	if (argc > 1 && strcmp(argv[1], "top") == 0)
		return topcli_main(argc - 1, argv + 1);
	rc = cli_parse(argc, argv, &o, &e);
	if (rc == CLI_HELP || rc == CLI_LIST) {
		(rc == CLI_HELP ? cli_usage : cli_list)(stdout);
		return EXIT_OK;
	}
	if (rc == CLI_VERSION) {
		printf("dtrun %s\n", DT_VERSION);
		return EXIT_OK;
	}
	if (rc < 0) {
		log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
		return EXIT_CONFIG;
	}
	log_level = o.quiet ? -1 : o.verbose;

	/* The sync options once the plan has settled the launcher. */
	if (plan_build(&p, &o, &e) != 0 || sync_check(&o, &e) != 0) {
		log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
		plan_free(&p);
		cli_free(&o);
		return EXIT_CONFIG;
	}
	make_id(id, sizeof(id));
	if (o.dry_run) {
		/* Check what a run would check: --iface, for one. */
		if (env_prepare(&ec, &o, &p, id, &e) != 0) {
			log_error("%s", dt_err_str(&e, msg, sizeof(msg)));
			rc = EXIT_CONFIG;
		} else {
			plan_print(&p, &o, id);
			rc = EXIT_OK;
		}
		env_release(&ec);
	} else if (o.check) {
		dt_raise_nofile();
		rc = check_run(&o, &p, id);
	} else {
		dt_raise_nofile();
		dt_malloc_steady();
		if (p.local)
			local_prespawn();
		rc = restart_run(&o, &p, id, job_features);
		local_prespawn_discard();
	}
	plan_free(&p);
	cli_free(&o);
	return rc;
}
