/*
 * sshauth.c -- the host key check and public-key user authentication of
 * one ssh connection (see sshauth.h), moved out of backend_ssh.c, whose
 * state machine calls them in its HANDSHAKE and AUTH states.
 *
 * Authentication is a step function over libssh2's non-blocking calls:
 * each call may say EAGAIN, after which the connection waits on its
 * socket and calls sshauth_step again, which goes on where it stopped
 * (the methods listed, the ssh-agent's identities, then the key files).
 * Every key that did not get us in is noted for the final message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "launcher/backend/ssh2lib.h"
#include "launcher/backend/sshauth.h"
#include "launcher/cli/sshconf.h"
#include "util/strv.h"
#include "util/xmalloc.h"

struct sshauth {
	const struct ssh_target	*t;
	int			 listed;	/* the server's methods read */
	LIBSSH2_AGENT		*agent;
	struct libssh2_agent_publickey *agent_id;
	int			 agent_done;
	char			**keys;		/* key files to try */
	size_t			 nkeys, key;
	char			 tried[1024];	/* for the final message */
	int			 rsa;		/* one of them was RSA */
};

/* Adds a key file to try, once. */
static void
key_add(struct sshauth *a, const char *path)
{
	size_t	i;

	for (i = 0; i < a->nkeys; i++)
		if (strcmp(a->keys[i], path) == 0)
			return;
	strs_push(&a->keys, &a->nkeys, xstrdup(path));
}

/* The keys to try after the agent: explicit ones, then ssh's defaults. */
static void
keys_init(struct sshauth *a)
{
	static const char *const defaults[] = { "id_ed25519", "id_ecdsa",
	    "id_rsa", NULL };
	const char	*home = getenv("HOME");
	char		 path[4096];
	size_t		 i;

	for (i = 0; i < a->t->nidentities; i++)
		key_add(a, a->t->identities[i]);
	if (a->t->identities_only && a->t->nidentities > 0)
		return;
	for (i = 0; defaults[i] != NULL && home != NULL; i++) {
		snprintf(path, sizeof(path), "%s/.ssh/%s", home, defaults[i]);
		if (access(path, R_OK) == 0)
			key_add(a, path);
	}
}

/* Notes a key that did not get us in, for the final message. */
static void
tried_add(struct sshauth *a, const char *what, int is_rsa)
{
	size_t	n = strlen(a->tried);

	snprintf(a->tried + n, sizeof(a->tried) - n, "%s%s", n ? ", " : "",
	    what);
	if (is_rsa)
		a->rsa = 1;
}

/* True if the key at path is RSA (its .pub says so, or its name). */
static int
key_is_rsa(const char *path)
{
	char	pub[4096], line[16] = "";
	FILE	*f;

	snprintf(pub, sizeof(pub), "%s.pub", path);
	if ((f = fopen(pub, "r")) != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
		return strncmp(line, "ssh-rsa", 7) == 0;
	}
	return strstr(path, "rsa") != NULL;
}

/* "HOST", or "[HOST]:PORT" off port 22: how known_hosts names t. */
static void
sshauth_hostport(const struct ssh_target *t, char *buf, size_t len)
{
	if (t->port == 22)
		snprintf(buf, len, "%s", t->hostname);
	else
		snprintf(buf, len, "[%s]:%d", t->hostname, t->port);
}

/* A key known_hosts does not have: as StrictHostKeyChecking says; 0 or DT_ERR_*. */
static int
sshauth_newkey(LIBSSH2_KNOWNHOSTS *kh, const struct ssh_target *t,
    const char *hostport, const char *key, size_t len, int mask,
    struct dt_err *e)
{
	if (t->strict == SSH_STRICT_NO)
		return 0;
	if (t->strict != SSH_STRICT_ACCEPT_NEW)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "host key not known "
		    "(%s is not in %s, and StrictHostKeyChecking is yes): "
		    "check it and add it with ssh-keyscan -p %d %s >> %s, or "
		    "use --ssh-option StrictHostKeyChecking=accept-new",
		    hostport, t->known_hosts, t->port, t->hostname,
		    t->known_hosts);
	if (libssh2_knownhost_addc(kh, hostport, NULL, key, len,
	    "added by dtrun", 14, LIBSSH2_KNOWNHOST_TYPE_PLAIN |
	    LIBSSH2_KNOWNHOST_KEYENC_RAW | mask, NULL) != 0 ||
	    libssh2_knownhost_writefile(kh, t->known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_IO, "cannot add the host "
		    "key to %s", t->known_hosts);
	log_info("%s: added its host key to %s", t->alias, t->known_hosts);
	return 0;
}

/* Checks s's host key against known_hosts (see sshauth.h). */
int
sshauth_hostkey(LIBSSH2_SESSION *s, const struct ssh_target *t,
    struct dt_err *e)
{
	LIBSSH2_KNOWNHOSTS	*kh;
	struct libssh2_knownhost *found = NULL;
	const char		*key;
	size_t			 len;
	int			 type, mask, rc;
	static const int	 kmask[] = {
		[LIBSSH2_HOSTKEY_TYPE_RSA] = LIBSSH2_KNOWNHOST_KEY_SSHRSA,
		[LIBSSH2_HOSTKEY_TYPE_DSS] = LIBSSH2_KNOWNHOST_KEY_SSHDSS,
		[LIBSSH2_HOSTKEY_TYPE_ECDSA_256] = LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
		[LIBSSH2_HOSTKEY_TYPE_ECDSA_384] = LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
		[LIBSSH2_HOSTKEY_TYPE_ECDSA_521] = LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
		[LIBSSH2_HOSTKEY_TYPE_ED25519] = LIBSSH2_KNOWNHOST_KEY_ED25519,
	};
	char			 hostport[600];

	if ((key = libssh2_session_hostkey(s, &len, &type)) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "no host key from "
		    "the server");
	mask = type > 0 && type <= LIBSSH2_HOSTKEY_TYPE_ED25519 ? kmask[type] :
	    LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
	if ((kh = libssh2_knownhost_init(s)) == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	/* A missing file is an empty one. */
	libssh2_knownhost_readfile(kh, t->known_hosts,
	    LIBSSH2_KNOWNHOST_FILE_OPENSSH);
	rc = libssh2_knownhost_checkp(kh, t->hostname, t->port, key, len,
	    LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | mask,
	    &found);
	sshauth_hostport(t, hostport, sizeof(hostport));
	switch (rc) {
	case LIBSSH2_KNOWNHOST_CHECK_MATCH:
		rc = 0;
		break;
	case LIBSSH2_KNOWNHOST_CHECK_MISMATCH:
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "HOST KEY MISMATCH: "
		    "the key %s offers is not the one in %s (someone may be "
		    "intercepting; if the host was reinstalled, remove the old "
		    "key with ssh-keygen -f %s -R '%s')", hostport,
		    t->known_hosts, t->known_hosts, hostport);
		break;
	default:
		rc = sshauth_newkey(kh, t, hostport, key, len, mask, e);
	}
	libssh2_knownhost_free(kh);
	return rc;
}

/* Authentication as t->user, nothing tried yet. */
struct sshauth *
sshauth_new(const struct ssh_target *t)
{
	struct sshauth	*a = xcalloc(1, sizeof(*a));

	a->t = t;
	return a;
}

/*
 * The server's methods: it must offer public keys. Returns 1 when in
 * already (the "none" method), 0 to go on, or as sshauth_step does.
 */
static int
sshauth_list(struct sshauth *a, LIBSSH2_SESSION *s, struct dt_err *e)
{
	const char	*u = a->t->user;
	char		*list;

	list = libssh2_userauth_list(s, u, strlen(u));
	if (list == NULL) {
		if (libssh2_userauth_authenticated(s))
			return 1;
		if (libssh2_session_last_errno(s) == LIBSSH2_ERROR_EAGAIN)
			return DT_ERR_AGAIN;
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "ssh: %s",
		    ssh2lib_errmsg(s));
	}
	if (strstr(list, "publickey") == NULL)
		return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "the server offers "
		    "no public-key authentication (it offers: %s)", list);
	a->listed = 1;
	keys_init(a);
	return 0;
}

/* ssh-agent's identities, one by one; 1 when in, 0 when none was left, DT_ERR_AGAIN. */
static int
sshauth_agent(struct sshauth *a, LIBSSH2_SESSION *s)
{
	const char	*u = a->t->user;
	int		 rc;

	while (!a->agent_done) {
		if (a->agent == NULL) {
			if (getenv("SSH_AUTH_SOCK") == NULL ||
			    a->t->identities_only ||
			    (a->agent = libssh2_agent_init(s)) == NULL ||
			    libssh2_agent_connect(a->agent) != 0 ||
			    libssh2_agent_list_identities(a->agent) != 0) {
				a->agent_done = 1;
				break;
			}
			a->agent_id = NULL;
			if (libssh2_agent_get_identity(a->agent, &a->agent_id,
			    NULL) != 0) {
				a->agent_done = 1;
				break;
			}
		}
		rc = libssh2_agent_userauth(a->agent, u, a->agent_id);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return DT_ERR_AGAIN;
		if (rc == 0)
			return 1;
		tried_add(a, a->agent_id->comment && *a->agent_id->comment ?
		    a->agent_id->comment : "an ssh-agent key",
		    a->agent_id->blob_len > 11 &&
		    memcmp(a->agent_id->blob + 4, "ssh-rsa", 7) == 0);
		if (libssh2_agent_get_identity(a->agent, &a->agent_id,
		    a->agent_id) != 0)
			a->agent_done = 1;
	}
	return 0;
}

/* The key files, one by one; 1 when in, 0 when none was left, DT_ERR_AGAIN. */
static int
sshauth_files(struct sshauth *a, LIBSSH2_SESSION *s)
{
	const char	*u = a->t->user;
	int		 rc;

	for (; a->key < a->nkeys; a->key++) {
		rc = libssh2_userauth_publickey_fromfile_ex(s, u, strlen(u),
		    NULL, a->keys[a->key], NULL);
		if (rc == LIBSSH2_ERROR_EAGAIN)
			return DT_ERR_AGAIN;
		if (rc == 0)
			return 1;
		tried_add(a, a->keys[a->key], key_is_rsa(a->keys[a->key]));
	}
	return 0;
}

/* Public-key auth: the agent's keys, then the files (see sshauth.h). */
int
sshauth_step(struct sshauth *a, LIBSSH2_SESSION *s, struct dt_err *e)
{
	int	rc;

	if (!a->listed && (rc = sshauth_list(a, s, e)) != 0)
		return rc == DT_ERR_AGAIN ? 0 : rc;
	/* ssh-agent first, as OpenSSH does. */
	if ((rc = sshauth_agent(a, s)) != 0 ||
	    (rc = sshauth_files(a, s)) != 0)
		return rc == DT_ERR_AGAIN ? 0 : rc;
	return dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "authentication failed "
	    "for user %s (tried: %s)%s", a->t->user, a->tried[0] ? a->tried :
	    "no keys found; give one with -i", a->rsa ? "; note: this "
	    "libssh2 signs RSA keys with SHA-1, which OpenSSH 8.8+ refuses: "
	    "use an ed25519 or ecdsa key" : "");
}

/* Frees a's keys and its ssh-agent connection. */
void
sshauth_free(struct sshauth *a)
{
	size_t	i;

	if (a == NULL)
		return;
	if (a->agent != NULL) {
		libssh2_agent_disconnect(a->agent);
		libssh2_agent_free(a->agent);
	}
	for (i = 0; i < a->nkeys; i++)
		free(a->keys[i]);
	free(a->keys);
	free(a);
}
