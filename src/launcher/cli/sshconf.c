/*
 * sshconf.c -- resolve how to reach a host, as OpenSSH's ssh_config(5)
 * would for the options dtrun honours. Options dtrun cannot honour are
 * reported, never silently ignored.
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/dtlimits.h"
#include "common/err.h"
#include "launcher/cli/sshconf.h"
#include "util/strv.h"
#include "util/xmalloc.h"

/* Options that change how ssh connects, which dtrun cannot honour. */
static const char *const unsupported[] = {
	"LocalForward", "RemoteForward",
	"DynamicForward", "ControlMaster", "ControlPath", "ControlPersist",
	"CertificateFile", "HostKeyAlias", "PKCS11Provider", "IdentityAgent",
	"CanonicalizeHostname", "GSSAPIAuthentication", "Match", NULL
};

/* The home directory of the user we run as. */
static const char *
home_dir(void)
{
	const char	*h = getenv("HOME");
	struct passwd	*pw;

	if (h != NULL && h[0] != '\0')
		return h;
	if ((pw = getpwuid(getuid())) != NULL)
		return pw->pw_dir;
	return "/";
}

/* Expands a leading ~ and the tokens %h %p %r %u %d %%; returns malloc'd. */
static char *
expand_path(const char *in, const struct ssh_target *t)
{
	char		 buf[4096];
	size_t		 n = 0;
	const char	*p, *add;
	char		 num[16];
	struct passwd	*pw;

	if (in[0] == '~' && (in[1] == '/' || in[1] == '\0')) {
		n = snprintf(buf, sizeof(buf), "%s", home_dir());
		in++;
	}
	for (p = in; *p != '\0' && n < sizeof(buf) - 1; p++) {
		add = NULL;
		if (*p == '%' && p[1] != '\0') {
			switch (*++p) {
			case 'h': add = t->hostname ? t->hostname : t->alias; break;
			case 'n': add = t->alias; break;
			case 'r': add = t->user ? t->user : ""; break;
			case 'p':
				snprintf(num, sizeof(num), "%d", t->port ? t->port : 22);
				add = num;
				break;
			case 'd': add = home_dir(); break;
			case 'u':
				pw = getpwuid(getuid());
				add = pw ? pw->pw_name : "";
				break;
			case '%': add = "%"; break;
			default: add = ""; break;
			}
			n += snprintf(buf + n, sizeof(buf) - n, "%s", add);
		} else
			buf[n++] = *p;
	}
	buf[n < sizeof(buf) ? n : sizeof(buf) - 1] = '\0';
	return xstrdup(buf);
}

static void	proxy_finish(struct ssh_target *);

/* Parses yes/accept-new/no/ask/off into s; returns 0 or -1. */
static int
parse_strict(const char *v, enum ssh_strict *s)
{
	if (strcasecmp(v, "yes") == 0 || strcasecmp(v, "ask") == 0)
		*s = SSH_STRICT_YES;
	else if (strcasecmp(v, "accept-new") == 0)
		*s = SSH_STRICT_ACCEPT_NEW;
	else if (strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0)
		*s = SSH_STRICT_NO;
	else
		return -1;
	return 0;
}

/* Parses a port 1..65535; returns it or -1. */
static int
parse_port(const char *v)
{
	char	*end;
	long	 p = strtol(v, &end, 10);

	return *v == '\0' || *end != '\0' || p < 1 || p > DT_PORT_MAX ? -1 : (int)p;
}

int
ssh_cli_option(struct ssh_cli *c, const char *kv, struct dt_err *e)
{
	char		 key[64];
	const char	*v;
	size_t		 n = strcspn(kv, "= \t");
	double		 d;
	char		*end;

	if (n == 0 || n >= sizeof(key) || kv[n] == '\0')
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-option "
		    "\"%s\": want KEY=VALUE, as for ssh -o", kv);
	memcpy(key, kv, n);
	key[n] = '\0';
	v = kv + n + 1;
	while (*v == ' ' || *v == '\t' || *v == '=')
		v++;
	if (strcasecmp(key, "User") == 0)
		c->user = v;
	else if (strcasecmp(key, "Port") == 0) {
		if ((c->port = parse_port(v)) < 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-"
			    "option Port=%s: want a port, 1 to 65535", v);
	} else if (strcasecmp(key, "IdentityFile") == 0) {
		strs_push(&c->identities, &c->nidentities, (char *)v);
	} else if (strcasecmp(key, "StrictHostKeyChecking") == 0) {
		if (parse_strict(v, &c->strict) != 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-"
			    "option StrictHostKeyChecking=%s: use yes, "
			    "accept-new or no", v);
	} else if (strcasecmp(key, "UserKnownHostsFile") == 0)
		c->known_hosts = v;
	else if (strcasecmp(key, "ConnectTimeout") == 0) {
		d = strtod(v, &end);
		if (*v == '\0' || *end != '\0' || d <= 0)
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-"
			    "option ConnectTimeout=%s: want seconds above 0", v);
		c->connect_timeout = d;
	} else if (strcasecmp(key, "ProxyJump") == 0 ||
	    strcasecmp(key, "ProxyCommand") == 0) {
		if (*v == '\0')
			return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-"
			    "option %s: empty (use none for none)", key);
		/* The first of the two wins, as in ssh. */
		if (c->proxy_jump == NULL && c->proxy_command == NULL) {
			if (strcasecmp(key, "ProxyJump") == 0)
				c->proxy_jump = v;
			else
				c->proxy_command = v;
		}
	} else
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--ssh-option %s: "
		    "not supported (dtrun knows User, Port, IdentityFile, "
		    "StrictHostKeyChecking, UserKnownHostsFile, "
		    "ConnectTimeout, ProxyJump, ProxyCommand)", key);
	return 0;
}

/* Matches host against an ssh_config pattern list ("a* !ab ?c"). */
static int
ssh_match_patterns(const char *patterns, const char *host)
{
	char	buf[1024], *tok, *save;
	int	matched = 0;

	snprintf(buf, sizeof(buf), "%s", patterns);
	for (tok = strtok_r(buf, " \t,", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t,", &save)) {
		if (tok[0] == '!') {
			if (fnmatch(tok + 1, host, FNM_CASEFOLD) == 0)
				return 0;	/* a negated match vetoes */
		} else if (fnmatch(tok, host, FNM_CASEFOLD) == 0)
			matched = 1;
	}
	return matched;
}

/* Appends a formatted warning. */
static void
warn_add(char ***w, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void
warn_add(char ***w, size_t *n, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = xstrdup("?");
	va_end(ap);
	strs_push(w, n, s);
}

/* Reads the config file into t's unset fields; first value wins. */
static int
read_config(const char *path, int explicit, struct ssh_target *t,
    char ***w, size_t *nw, struct dt_err *e)
{
	FILE	*f;
	char	 line[2048], *k, *v, *p;
	int	 lineno = 0, active = 1, i, port;
	double	 d;
	enum ssh_strict st;

	if ((f = fopen(path, "r")) == NULL) {
		if (!explicit && errno == ENOENT)
			return 0;
		return dt_errf(e, path, 0, 0, DT_ERR_IO, "cannot read ssh "
		    "config: %s", strerror(errno));
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		for (k = line; isspace((unsigned char)*k); k++)
			;
		if (*k == '\0' || *k == '#')
			continue;
		v = k + strcspn(k, " \t=");
		if (*v != '\0')
			*v++ = '\0';
		while (*v == ' ' || *v == '\t' || *v == '=')
			v++;
		for (p = v + strlen(v); p > v && isspace((unsigned char)p[-1]); p--)
			*--p = '\0';
		if (strlen(v) >= 2 && v[0] == '"' && v[strlen(v) - 1] == '"') {
			v[strlen(v) - 1] = '\0';
			v++;
		}
		if (strcasecmp(k, "Host") == 0) {
			active = ssh_match_patterns(v, t->alias);
			continue;
		}
		if (!active)
			continue;
		if (strcasecmp(k, "HostName") == 0) {
			if (t->hostname == NULL)
				t->hostname = expand_path(v, t);
		} else if (strcasecmp(k, "User") == 0) {
			if (t->user == NULL)
				t->user = xstrdup(v);
		} else if (strcasecmp(k, "Port") == 0) {
			if ((port = parse_port(v)) < 0) {
				fclose(f);
				return dt_errf(e, path, lineno, 0, DT_ERR_PARSE,
				    "Port %s: want a port, 1 to 65535", v);
			}
			if (t->port == 0)
				t->port = port;
		} else if (strcasecmp(k, "IdentityFile") == 0) {
			strs_push(&t->identities, &t->nidentities,
			    expand_path(v, t));
		} else if (strcasecmp(k, "IdentitiesOnly") == 0) {
			t->identities_only = strcasecmp(v, "yes") == 0;
		} else if (strcasecmp(k, "StrictHostKeyChecking") == 0) {
			if (parse_strict(v, &st) == 0) {
				if (t->strict == SSH_STRICT_UNSET)
					t->strict = st;
			} else
				warn_add(w, nw, "%s:%d: StrictHostKeyChecking "
				    "%s: not understood; ignored", path,
				    lineno, v);
		} else if (strcasecmp(k, "UserKnownHostsFile") == 0) {
			if (t->known_hosts == NULL) {
				v[strcspn(v, " \t")] = '\0';	/* first file */
				t->known_hosts = expand_path(v, t);
			}
		} else if (strcasecmp(k, "ConnectTimeout") == 0) {
			d = atof(v);
			if (t->connect_timeout == 0 && d > 0)
				t->connect_timeout = d;
		} else if (strcasecmp(k, "ProxyJump") == 0 ||
		    strcasecmp(k, "ProxyCommand") == 0) {
			/* The first of the two wins; expanded once complete. */
			if (t->proxy_jump == NULL && t->proxy_command == NULL) {
				if (strcasecmp(k, "ProxyJump") == 0)
					t->proxy_jump = xstrdup(v);
				else
					t->proxy_command = xstrdup(v);
			}
		} else {
			for (i = 0; unsupported[i] != NULL; i++)
				if (strcasecmp(k, unsupported[i]) == 0)
					warn_add(w, nw, "%s:%d: %s is not "
					    "supported by dtrun's ssh; ignored "
					    "for %s", path, lineno,
					    unsupported[i], t->alias);
		}
	}
	fclose(f);
	return 0;
}

int
ssh_resolve(const struct ssh_cli *c, const char *alias, const char *user,
    int port, struct ssh_target *t, char ***w, size_t *nw, struct dt_err *e)
{
	char	 path[4096];
	size_t	 i;
	int	 rc;

	memset(t, 0, sizeof(*t));
	t->alias = xstrdup(alias);
	if (user != NULL)
		t->user = xstrdup(user);
	else if (c->user != NULL)
		t->user = xstrdup(c->user);
	t->port = port ? port : c->port;
	for (i = 0; i < c->nidentities; i++) {
		strs_push(&t->identities, &t->nidentities,
		    expand_path(c->identities[i], t));
	}
	t->strict = c->strict;
	if (c->known_hosts != NULL)
		t->known_hosts = expand_path(c->known_hosts, t);
	t->connect_timeout = c->connect_timeout;
	if (c->proxy_jump != NULL)
		t->proxy_jump = xstrdup(c->proxy_jump);
	if (c->proxy_command != NULL)
		t->proxy_command = xstrdup(c->proxy_command);

	if (c->config != NULL)
		rc = read_config(c->config, 1, t, w, nw, e);
	else {
		snprintf(path, sizeof(path), "%s/.ssh/config", home_dir());
		rc = read_config(path, 0, t, w, nw, e);
	}
	if (rc != 0)
		return rc;

	if (t->hostname == NULL)
		t->hostname = xstrdup(alias);
	if (t->user == NULL) {
		struct passwd *pw = getpwuid(getuid());
		t->user = xstrdup(pw != NULL ? pw->pw_name : "root");
	}
	if (t->port == 0)
		t->port = 22;
	if (t->strict == SSH_STRICT_UNSET)
		t->strict = SSH_STRICT_YES;
	if (t->known_hosts == NULL) {
		snprintf(path, sizeof(path), "%s/.ssh/known_hosts", home_dir());
		t->known_hosts = xstrdup(path);
	}
	if (t->connect_timeout == 0)
		t->connect_timeout = 15;
	proxy_finish(t);
	return 0;
}

/* "none" means no proxy; a ProxyCommand's tokens need the final values. */
static void
proxy_finish(struct ssh_target *t)
{
	char	*cmd;

	if (t->proxy_jump != NULL && strcasecmp(t->proxy_jump, "none") == 0) {
		free(t->proxy_jump);
		t->proxy_jump = NULL;
	}
	if ((cmd = t->proxy_command) != NULL) {
		t->proxy_command = strcasecmp(cmd, "none") == 0 ? NULL :
		    expand_path(cmd, t);
		free(cmd);
	}
}

/*
 * Splits "[user@]host[:port]" (host may be "[v6addr]") into its parts;
 * returns 0 or -1.
 */
static int
jump_parse(const char *hop, char *user, size_t ulen, char *host,
    size_t hlen, int *port)
{
	const char	*at = strrchr(hop, '@'), *h, *colon;
	size_t		 n;

	user[0] = '\0';
	*port = 0;
	if (at != NULL) {
		n = at - hop;
		if (n == 0 || n >= ulen)
			return -1;
		memcpy(user, hop, n);
		user[n] = '\0';
	}
	h = at != NULL ? at + 1 : hop;
	if (*h == '[') {
		if ((colon = strchr(h, ']')) == NULL ||
		    (colon[1] != ':' && colon[1] != '\0'))
			return -1;
		n = colon - h - 1;
		h++;
		colon = colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = strchr(h, ':');
		n = colon != NULL ? (size_t)(colon - h) : strlen(h);
	}
	if (n == 0 || n >= hlen)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	if (colon != NULL && (*port = parse_port(colon + 1)) < 0)
		return -1;
	return 0;
}

int
ssh_resolve_jump(const struct ssh_cli *c, const char *chain,
    struct ssh_target *t, char ***w, size_t *nw, struct dt_err *e)
{
	struct ssh_cli	 hc = *c;
	const char	*last = strrchr(chain, ',');
	char		 user[256], host[1024];
	int		 port, rc;

	last = last != NULL ? last + 1 : chain;
	if (jump_parse(last, user, sizeof(user), host, sizeof(host),
	    &port) != 0) {
		memset(t, 0, sizeof(*t));
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "ProxyJump \"%s\": "
		    "bad jump host \"%s\" (want [user@]host[:port], comma-"
		    "separated)", chain, last);
	}
	/* The target's user, port and proxy are not the jump host's. */
	hc.user = NULL;
	hc.port = 0;
	hc.proxy_jump = NULL;
	hc.proxy_command = NULL;
	rc = ssh_resolve(&hc, host, user[0] ? user : NULL, port, t, w, nw, e);
	if (rc != 0 || last == chain)
		return rc;
	/* The hosts before it are its way in, whatever its config says. */
	free(t->proxy_command);
	free(t->proxy_jump);
	t->proxy_command = NULL;
	xasprintf(&t->proxy_jump, "%.*s", (int)(last - 1 - chain), chain);
	return 0;
}

void
ssh_target_free(struct ssh_target *t)
{
	size_t	i;

	free(t->alias);
	free(t->hostname);
	free(t->user);
	for (i = 0; i < t->nidentities; i++)
		free(t->identities[i]);
	free(t->identities);
	free(t->known_hosts);
	free(t->proxy_jump);
	free(t->proxy_command);
	memset(t, 0, sizeof(*t));
}
