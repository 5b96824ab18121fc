/* t_sshconf.c -- ProxyJump and ProxyCommand as ssh_config and -o give them. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/err.h"
#include "launcher/cli/sshconf.h"
#include "test.h"

/* Writes text to a fresh config file; returns its path (static). */
static const char *
config_write(const char *text)
{
	static char	 path[] = "/tmp/dtrun-sshconf.XXXXXX";
	int		 fd;
	FILE		*f;

	snprintf(path, sizeof(path), "/tmp/dtrun-sshconf.XXXXXX");
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	return path;
}

/* Frees what a resolve warned about. */
static void
warnings_free(char **w, size_t n)
{
	while (n > 0)
		free(w[--n]);
	free(w);
}

TEST(sshconf_proxy_first_wins_and_expands)
{
	struct ssh_cli		 c = { 0 };
	struct ssh_target	 t;
	struct dt_err		 e;
	char			**w = NULL;
	size_t			 nw = 0;
	const char		*path;

	path = config_write("Host gpu*\n  HostName 10.0.0.7\n  Port 2222\n"
	    "  User me\n  ProxyCommand nc %h %p # %r\n  ProxyJump bastion\n");
	CHECK(path != NULL);
	c.config = path;
	CHECK_INT(ssh_resolve(&c, "gpu1", NULL, 0, &t, &w, &nw, &e), 0);
	CHECK(t.proxy_jump == NULL);
	CHECK_STR(t.proxy_command, "nc 10.0.0.7 2222 # me");
	CHECK_INT(nw, 0);
	ssh_target_free(&t);

	/* The command line comes first; "none" is none. */
	CHECK_INT(ssh_cli_option(&c, "ProxyJump=none", &e), 0);
	CHECK_INT(ssh_cli_option(&c, "ProxyCommand=cat", &e), 0);
	CHECK_INT(ssh_resolve(&c, "gpu1", NULL, 0, &t, &w, &nw, &e), 0);
	CHECK(t.proxy_jump == NULL && t.proxy_command == NULL);
	ssh_target_free(&t);
	warnings_free(w, nw);
	unlink(path);
}

TEST(sshconf_jump_chain)
{
	struct ssh_cli		 c = { 0 };
	struct ssh_target	 t;
	struct dt_err		 e;
	char			**w = NULL;
	size_t			 nw = 0;
	const char		*path;

	path = config_write("Host b\n  HostName 10.0.0.2\n  ProxyJump z\n"
	    "Host *\n  ConnectTimeout 4\n");
	CHECK(path != NULL);
	c.config = path;
	c.user = "targetuser";		/* not the jump hosts' */
	c.port = 2200;
	c.proxy_jump = "a,b";
	/* The last hop, reached through the ones before it. */
	CHECK_INT(ssh_resolve_jump(&c, "ops@a:2022,b", &t, &w, &nw, &e), 0);
	CHECK_STR(t.hostname, "10.0.0.2");
	CHECK_INT(t.port, 22);
	CHECK(t.connect_timeout == 4);
	CHECK_STR(t.proxy_jump, "ops@a:2022");
	ssh_target_free(&t);
	/* The first hop keeps its own user and port, and no proxy. */
	CHECK_INT(ssh_resolve_jump(&c, "ops@a:2022", &t, &w, &nw, &e), 0);
	CHECK_STR(t.user, "ops");
	CHECK_INT(t.port, 2022);
	CHECK(t.proxy_jump == NULL);
	ssh_target_free(&t);
	/* A first hop's own ProxyJump in ssh_config stays. */
	CHECK_INT(ssh_resolve_jump(&c, "b", &t, &w, &nw, &e), 0);
	CHECK_STR(t.proxy_jump, "z");
	ssh_target_free(&t);
	CHECK_INT(ssh_resolve_jump(&c, "[::1]:2", &t, &w, &nw, &e), 0);
	CHECK_STR(t.hostname, "::1");
	CHECK_INT(t.port, 2);
	ssh_target_free(&t);
	CHECK_INT(ssh_resolve_jump(&c, "a,b:99999", &t, &w, &nw, &e),
	    DT_ERR_INVAL);
	CHECK(strstr(e.msg, "bad jump host \"b:99999\"") != NULL);
	CHECK_INT(ssh_resolve_jump(&c, "a,", &t, &w, &nw, &e), DT_ERR_INVAL);
	warnings_free(w, nw);
	unlink(path);
}
