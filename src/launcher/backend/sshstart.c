/*
 * sshstart.c -- the agent on an ssh host (backend_ssh.c): a session
 * channel runs this build's cached dtrun-agent, or one on PATH of the same
 * version; if neither is there (exit 97) a second channel uploads ours
 * into the cache, atomically, and the agent is started again.
 */
#include <stdlib.h>

#include <event2/buffer.h>

#include "launcher/backend/agentbin.h"
#include "launcher/cli/cli.h"
#include "common/exitcodes.h"
#include "launcher/job/job.h"
#include "common/log.h"
#include "util/strv.h"
#include "launcher/backend/sshint.h"

/* A shell word for s, single-quoted. "~/x" keeps ~ working as "$HOME"/'x'. */
static void
shell_word(char *buf, size_t len, const char *s)
{
	int	 home = s[0] == '~' && s[1] == '/';
	char	*q = shell_quote(home ? s + 2 : s);

	snprintf(buf, len, "%s%s", home ? "\"$HOME\"/" : "", q);
	free(q);
}

/* The agent cache directory on hosts, as a shell word. */
static void
ssh_cache_dir(char *buf, size_t len, const struct opts *o, const char *id)
{
	char	dir[1024];

	snprintf(dir, sizeof(dir), "%s/%s", o->ssh.agent_dir != NULL ?
	    o->ssh.agent_dir : "~/.cache/dtrun", id);
	shell_word(buf, len, dir);
}

/*
 * A remote command has sent EOF: close its channel and wait for the close,
 * after which its exit status is known. Returns the status, or -1 to wait
 * (armed), or -2 on error (c failed).
 */
static int
sshc_exit_status(struct sshc *c, LIBSSH2_CHANNEL *ch)
{
	int	rc;

	if (!c->close_sent) {
		rc = libssh2_channel_close(ch);
		if (rc == LIBSSH2_ERROR_EAGAIN) {
			sshc_arm(c, 0);
			return -1;
		}
		c->close_sent = 1;
	}
	rc = libssh2_channel_wait_closed(ch);
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		sshc_arm(c, 0);
		return -1;
	}
	c->close_sent = 0;
	if (rc != 0) {
		sshc_fail(c, DT_ERR_PROTO, "ssh: %s", ssh_errmsg(c));
		return -2;
	}
	return libssh2_channel_get_exit_status(ch);
}

/* OPEN, UP_OPEN: a session channel, for the agent or its upload. */
int
sshc_st_open(struct sshc *c)
{
	LIBSSH2_CHANNEL	*ch;

	if ((ch = libssh2_channel_open_session(c->s)) == NULL) {
		if (libssh2_session_last_errno(c->s) == LIBSSH2_ERROR_EAGAIN)
			sshc_arm(c, 0);
		else
			sshc_fail(c, DT_ERR_PROTO, "cannot open an ssh "
			    "channel: %s", ssh_errmsg(c));
		return 0;
	}
	if (c->st == SS_OPEN) {
		c->ch = ch;
		c->st = SS_EXEC;
	} else {
		c->up = ch;
		c->st = SS_UP_EXEC;
	}
	return 1;
}

/*
 * Runs cmd (made by mk from the agent cache directory) on ch; then
 * next. What: for the message if it cannot. Returns as a step does.
 */
static int
sshc_exec(struct sshc *c, LIBSSH2_CHANNEL *ch, const char *what,
    void (*mk)(char *, size_t, const char *), enum sstate next)
{
	const unsigned char	*bin;
	const char		*id;
	char			 cmd[4096], dir[2048];
	struct dt_err		 e;
	size_t			 len;
	int			 rc;

	if (agentbin_load(&bin, &len, &id, &e) != 0) {
		sshc_fail(c, DT_ERR_NOTFOUND, "%s", e.msg);
		return 0;
	}
	ssh_cache_dir(dir, sizeof(dir), c->h->o, id);
	mk(cmd, sizeof(cmd), dir);
	rc = libssh2_channel_exec(ch, cmd);
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		sshc_arm(c, 0);
		return 0;
	}
	if (rc != 0) {
		sshc_fail(c, DT_ERR_PROTO, "cannot %s: %s", what,
		    ssh_errmsg(c));
		return 0;
	}
	c->st = next;
	return 1;
}

/* The remote command that runs the cached agent, or a dtrun-agent of this build on PATH, or exits 97. */
static void
sshc_agent_cmd(char *cmd, size_t len, const char *dir)
{
	snprintf(cmd, len, "a=%s/dtrun-agent; "
	    "if [ -x \"$a\" ]; then exec \"$a\"; fi; "
	    "if p=$(command -v dtrun-agent 2>/dev/null) && "
	    "[ \"$(\"$p\" --version 2>/dev/null)\" = '%s' ]; "
	    "then exec \"$p\"; fi; exit %d", dir, agentbin_version_line(),
	    EXIT_NEED_AGENT);
}

/* The remote command that stores the agent it reads into the cache, atomically. */
static void
sshc_upload_cmd(char *cmd, size_t len, const char *dir)
{
	snprintf(cmd, len, "umask 077; d=%s; "
	    "mkdir -p \"$d\" && t=$(mktemp \"$d/.up.XXXXXX\") "
	    "&& cat >\"$t\" && chmod 700 \"$t\" && "
	    "mv -f \"$t\" \"$d/dtrun-agent\"", dir);
}

/* EXEC: start the agent. */
int
sshc_st_exec(struct sshc *c)
{
	return sshc_exec(c, c->ch, "run the agent", sshc_agent_cmd, SS_PROBE);
}

/* UP_EXEC: start the upload's receiving end. */
int
sshc_st_up_exec(struct sshc *c)
{
	c->up_off = 0;
	return sshc_exec(c, c->up, "upload the agent", sshc_upload_cmd,
	    SS_UP_WRITE);
}

/* PROBE: the agent's first bytes (RUNNING), or its exit: 97 asks for the upload. */
int
sshc_st_probe(struct sshc *c)
{
	unsigned char	buf[16384];
	ssize_t		n;
	int		rc;

	n = libssh2_channel_read(c->ch, (char *)buf, sizeof(buf));
	if (n > 0) {
		/* Its HELLO, or whatever came instead. */
		evbuffer_add(c->in, buf, n);
		c->st = SS_RUNNING;
		sshc_release(c);
		return 1;
	}
	if (n < 0 && n != LIBSSH2_ERROR_EAGAIN) {
		sshc_fail(c, DT_ERR_CLOSED, "ssh: %s", ssh_errmsg(c));
		return 0;
	}
	sshc_stderr(c, c->ch);
	if (c->st != SS_PROBE)
		return 0;
	if (!libssh2_channel_eof(c->ch)) {
		sshc_arm(c, 0);
		return 0;
	}
	if ((rc = sshc_exit_status(c, c->ch)) < 0)
		return 0;
	if (rc == EXIT_NEED_AGENT && !c->uploaded) {
		log_info("%s: no dtrun-agent of this build there: uploading "
		    "it", c->t.alias);
		c->st = SS_UP_OPEN;
		return 1;
	}
	sshc_fail(c, DT_ERR_NOTFOUND, "could not start dtrun-agent there "
	    "(exit status %d)", rc);
	return 0;
}

/* UP_WRITE: the agent binary into the upload channel. */
int
sshc_st_up_write(struct sshc *c)
{
	const unsigned char	*bin;
	const char		*id;
	struct dt_err		 e;
	size_t			 len;
	ssize_t			 n;

	if (agentbin_load(&bin, &len, &id, &e) != 0) {
		sshc_fail(c, DT_ERR_NOTFOUND, "%s", e.msg);
		return 0;
	}
	while (c->up_off < len) {
		n = libssh2_channel_write(c->up, (const char *)bin + c->up_off,
		    len - c->up_off);
		if (n == LIBSSH2_ERROR_EAGAIN) {
			sshc_stderr(c, c->up);
			sshc_arm(c, 0);
			return 0;
		}
		if (n < 0) {
			sshc_fail(c, DT_ERR_IO, "uploading the agent: %s",
			    ssh_errmsg(c));
			return 0;
		}
		c->up_off += n;
	}
	c->st = SS_UP_EOF;
	return 1;
}

/* UP_EOF: the end of the binary. */
int
sshc_st_up_eof(struct sshc *c)
{
	if (libssh2_channel_send_eof(c->up) == LIBSSH2_ERROR_EAGAIN) {
		sshc_arm(c, 0);
		return 0;
	}
	c->st = SS_UP_WAIT;
	return 1;
}

/* UP_WAIT: the upload's exit status; then the agent again (OPEN). */
int
sshc_st_up_wait(struct sshc *c)
{
	char	buf[512];
	int	rc;

	while (libssh2_channel_read(c->up, buf, sizeof(buf)) > 0)
		;
	sshc_stderr(c, c->up);
	if (!libssh2_channel_eof(c->up)) {
		sshc_arm(c, 0);
		return 0;
	}
	if ((rc = sshc_exit_status(c, c->up)) < 0)
		return 0;
	if (rc != 0) {
		c->up_err[c->up_errlen] = '\0';
		c->up_err[strcspn(c->up_err, "\n")] = '\0';
		sshc_fail(c, DT_ERR_IO, "could not store the agent there "
		    "(exit %d%s%s)", rc, c->up_errlen ? ": " : "", c->up_err);
		return 0;
	}
	c->uploaded = 1;
	c->st = SS_OPEN;
	return 1;
}
