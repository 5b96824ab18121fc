/*
 * main.c -- dtrun: start a distributed job's ranks, forward their output,
 * stop them all at the first failure. Only this file decides to exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli.h"
#include "env.h"
#include "err.h"
#include "exitcodes.h"
#include "job.h"
#include "log.h"
#include "plan.h"
#include "restart.h"
#include "sync.h"
#include "sys.h"

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
	job_make_id(id, sizeof(id));
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
		rc = restart_run(&o, &p, id);
	}
	plan_free(&p);
	cli_free(&o);
	return rc;
}
