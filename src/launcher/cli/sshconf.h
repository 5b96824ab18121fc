/*
 * sshconf.h -- how to reach one host over ssh: dtrun's --ssh-* options,
 * -i, -p, the hostfile's user@ and port, and ~/.ssh/config (or -F FILE),
 * combined as OpenSSH would. The first value obtained wins, in this order:
 * the hostfile entry, the command line, the config file, the defaults.
 */
#ifndef DT_SSHCONF_H
#define DT_SSHCONF_H

#include <stddef.h>

struct dt_err;

enum ssh_strict { SSH_STRICT_UNSET = 0, SSH_STRICT_YES, SSH_STRICT_ACCEPT_NEW,
    SSH_STRICT_NO };

/* What the command line says (every field optional). */
struct ssh_cli {
	const char	*user;		/* --ssh-option User= */
	int		 port;		/* -p; 0 = unset */
	char		**identities;	/* -i (repeatable), then -o IdentityFile */
	size_t		 nidentities;
	enum ssh_strict	 strict;
	const char	*known_hosts;	/* UserKnownHostsFile */
	double		 connect_timeout; /* seconds; 0 = unset */
	const char	*config;	/* -F FILE; NULL = ~/.ssh/config */
	int		 fanout;	/* --ssh-fanout; 0 = default */
	const char	*agent_dir;	/* --ssh-agent-dir: agent cache on hosts */
	const char	*proxy_jump;	/* -J, -o ProxyJump: "[user@]host[:port],..." */
	const char	*proxy_command;	/* -o ProxyCommand, unexpanded */
};

/* Everything needed to connect to one host. */
struct ssh_target {
	char		*alias;		/* the name as given */
	char		*hostname;	/* what to connect to (HostName) */
	char		*user;
	int		 port;
	char		**identities;	/* explicit ones; defaults added at auth */
	size_t		 nidentities;
	int		 identities_only;
	enum ssh_strict	 strict;
	char		*known_hosts;
	double		 connect_timeout;
	char		*proxy_jump;	/* the jump hosts, or NULL */
	char		*proxy_command;	/* %h %p %r expanded, or NULL */
};

/* At most this many jump hosts in front of one host (config loops too). */
#define SSH_JUMP_MAX	8

/*
 * Applies "KEY=VALUE" (or "KEY VALUE"), ssh's -o names, to c. Knows User,
 * Port, IdentityFile, StrictHostKeyChecking (yes/accept-new/no, and ask
 * taken as yes), UserKnownHostsFile, ConnectTimeout, ProxyJump and
 * ProxyCommand (the first of those two given wins, as in ssh; "none" is
 * none). Returns 0, or
 * DT_ERR_INVAL with e naming the option and what is accepted.
 */
int	ssh_cli_option(struct ssh_cli *c, const char *kv, struct dt_err *e);

/*
 * Fills t for host alias (user/port from the hostfile, or NULL/0). Reads
 * the config file; each option it cannot honour for this host
 * (LocalForward, ControlMaster, ...) is appended to *warnings as "FILE:LINE: KEY ...".
 * Returns 0, or DT_ERR_IO/DT_ERR_PARSE for an unreadable -F file or a bad
 * value there.
 */
int	ssh_resolve(const struct ssh_cli *c, const char *alias, const char *user,
	    int port, struct ssh_target *t, char ***warnings, size_t *nwarnings,
	    struct dt_err *e);
void	ssh_target_free(struct ssh_target *);

/*
 * Fills t for the last jump host of chain ("[user@]host[:port],...", as
 * for ssh -J), which is reached through the hosts before it: t->proxy_jump
 * is set to those, or, for the first hop, left as its own config says. The
 * command line's user, port and proxy do not apply to jump hosts (as in
 * ssh); its keys, known_hosts and ConnectTimeout do. Returns 0, or
 * DT_ERR_INVAL for a malformed chain, or what ssh_resolve returns.
 */
int	ssh_resolve_jump(const struct ssh_cli *c, const char *chain,
	    struct ssh_target *t, char ***warnings, size_t *nwarnings,
	    struct dt_err *e);

#endif
