/* t_sync.c -- --sync-dst-dir: the rsync command line, its quoting, and the checks. */
#include <stdlib.h>
#include <string.h>

#include "launcher/cli/cli.h"
#include "common/err.h"
#include "launcher/plan/plan.h"
#include "launcher/plan/rundir.h"
#include "util/strv.h"
#include "launcher/sync/sync.h"
#include "test.h"

static char	*saved_home;

/* Sets $HOME for a test; home_restore puts the real one back. */
static void
home_set(const char *h)
{
	const char	*old = getenv("HOME");

	if (saved_home == NULL)
		saved_home = strdup(old != NULL ? old : "");
	setenv("HOME", h, 1);
}

static void
home_restore(void)
{
	if (saved_home != NULL)
		setenv("HOME", saved_home, 1);
	free(saved_home);
	saved_home = NULL;
}

/* Options that reach host as user u on port 2222 with key k, no ssh_config. */
static void
sync_opts(struct opts *o, const char *dst, char **key)
{
	memset(o, 0, sizeof(*o));
	o->sync_dst = dst;
	o->ssh.port = 2222;
	o->ssh.user = "u";
	o->ssh.identities = key;
	o->ssh.nidentities = 1;
	o->ssh.known_hosts = "/k/known hosts";
	o->ssh.strict = SSH_STRICT_ACCEPT_NEW;
	o->ssh.config = "/dev/null";
}

TEST(sync_argv_remote_quoting)
{
	struct opts		o;
	struct plan_host	ph = { .name = "node'1" };
	struct strv		v = { 0 };
	struct dt_err		e;
	char			*key[] = { "/k/it's key" };
	char			*ex[] = { "*.log" };

	sync_opts(&o, "~/jobs/a b-%h", key);
	o.sync_exclude = ex;
	o.nsync_exclude = 1;
	CHECK_INT(sync_argv(&o, &ph, 0, &v, &e), 0);
	CHECK_INT(v.n, 11);
	CHECK_STR(v.v[0], "rsync");
	CHECK_STR(v.v[2], "--delete");
	CHECK_STR(v.v[5], "--exclude=*.log");
	CHECK_STR(v.v[6], "-e");
	/* rsync's own -e quoting: '...' with '' for a quote. */
	CHECK_STR(v.v[7], "'ssh' '-F' '/dev/null' '-l' 'u' '-p2222' '-i' "
	    "'/k/it''s key' '-oUserKnownHostsFile=/k/known hosts' "
	    "'-oStrictHostKeyChecking=accept-new' '-oBatchMode=yes' "
	    "'-oConnectTimeout=15'");
	/* The remote shell's quoting; ~/ is dropped (ssh starts at home). */
	CHECK_STR(v.v[8], "--rsync-path=mkdir -p -- 'jobs/a b-node'\\''1' "
	    "&& rsync");
	CHECK_STR(v.v[9], "./");
	CHECK_STR(v.v[10], "node'1:jobs/a b-node'1/");
	CHECK(v.v[11] == NULL);
	strv_free(&v);
}

TEST(sync_argv_local_and_dir)
{
	struct opts		o;
	struct plan_host	ph = { .name = "h" };
	struct strv		v = { 0 };
	struct dt_err		e;
	char			buf[256], *key[] = { "k" };

	sync_opts(&o, "/x/%h/100%%", key);
	CHECK_STR(run_dir(&o, &ph, 0, buf, sizeof(buf)), "/x/h/100%");
	CHECK_INT(sync_argv(&o, &ph, 1, &v, &e), 0);
	CHECK_INT(v.n, 7);
	CHECK_STR(v.v[6], "/x/h/100%/");
	strv_free(&v);
	home_set("/home/me");
	o.sync_dst = "~/d";
	CHECK_STR(run_dir(&o, &ph, 1, buf, sizeof(buf)), "/home/me/d");
	CHECK_STR(run_dir(&o, &ph, 0, buf, sizeof(buf)), "d");
	home_restore();
}

TEST(sync_check_refuses)
{
	struct opts	o;
	struct dt_err	e;
	char		*ex[] = { "x" };

	memset(&o, 0, sizeof(o));
	CHECK_INT(sync_check(&o, &e), 0);
	o.sync_exclude = ex;
	o.nsync_exclude = 1;
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	CHECK(strstr(e.msg, "needs --sync-dst-dir") != NULL);
	home_set("/home/me");
	o.sync_dst = "/";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	o.sync_dst = "~/";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	o.sync_dst = "/home/me/";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	o.sync_dst = ".";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	o.sync_dst = "/x/%r";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	o.sync_dst = "/home/me/job";
	CHECK_INT(sync_check(&o, &e), 0);
	o.sync_dst = "~/job-%h";
	CHECK_INT(sync_check(&o, &e), 0);
	o.sync_dst = "/a/%h/%x";
	CHECK_INT(sync_check(&o, &e), DT_ERR_INVAL);
	home_restore();
}
