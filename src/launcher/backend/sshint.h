/*
 * sshint.h -- the insides of the ssh backend, shared by backend_ssh.c (the
 * connection's state machine: connect, jump hosts, handshake, auth, the
 * running link) and sshstart.c (starting or uploading the agent).
 */
#ifndef DT_SSHINT_H
#define DT_SSHINT_H

#include <stddef.h>

#include "launcher/backend/ssh2lib.h"
#include "launcher/cli/sshconf.h"

struct dt_err;
struct event_base;
struct opts;

enum sstate {
	SS_QUEUED,		/* waiting for a fan-out slot */
	SS_RESOLVE,		/* looking up the name, in a thread */
	SS_CONNECT,		/* TCP connect in progress */
	SS_TUNNEL,		/* waiting for the jump host's channel */
	SS_HANDSHAKE,
	SS_AUTH,		/* list methods, then try keys */
	SS_OPEN,		/* channel for the agent */
	SS_EXEC,
	SS_PROBE,		/* agent command started: HELLO, or exit 97 */
	SS_UP_OPEN,		/* channel for the upload */
	SS_UP_EXEC,
	SS_UP_WRITE,
	SS_UP_EOF,
	SS_UP_WAIT,
	SS_RUNNING,
	SS_FORWARD,		/* a jump host: opening the channel onwards */
	SS_JUMP,		/* a jump host: pumping the tunnel */
	SS_DEAD
};

struct sshc {
	struct job_host		*h;		/* NULL for a jump host */
	struct event_base	*base;
	struct ssh_target	 t;
	char			 name[300];	/* for messages: "jump host X" */
	/* how it is reached, when not by TCP */
	struct proxy_cmd	*proxy;
	struct sshc		*jump;		/* the jump host in front, ours */
	/* as a jump host */
	struct sshc		*child;		/* what it carries */
	struct tunnel		*tun;
	enum sstate		 st;
	int			 fd;
	struct resolve		*rs;
	int			 gai_rc;
	struct addrinfo		*ai, *ai_cur;
	LIBSSH2_SESSION		*s;
	LIBSSH2_CHANNEL		*ch, *up;
	struct sshauth		*auth;		/* the keys tried (sshauth.h) */
	/* events */
	struct event		*ev;
	struct event		*timer;		/* ConnectTimeout, each phase */
	enum sstate		 timed;		/* the phase it is armed for */
	struct link		*link;		/* to the agent (a host's, not a jump's) */
	struct evbuffer		*in;		/* read while probing, not yet the link's */
	struct evbuffer		*err;
	char			 why[300];	/* why the channel broke */
	int			 slot;		/* holds a fan-out slot */
	/* agent upload */
	int			 uploaded;
	int			 close_sent;	/* for the exit status of a finished command */
	size_t			 up_off;
	char			 up_err[512];
	size_t			 up_errlen;
	int			 busy, dead;
	int			 kicked;	/* the link asked to move bytes during a step */
};

/* backend_ssh.c: the connection's helpers the agent's start uses. */
void		 sshc_fail(struct sshc *c, int code, const char *fmt, ...)
		    __attribute__((format(printf, 3, 4)));
const char	*ssh_errmsg(struct sshc *c);
void		 sshc_arm(struct sshc *c, short what);
void		 sshc_release(struct sshc *c);
void		 sshc_stderr(struct sshc *c, LIBSSH2_CHANNEL *ch);

/* sshstart.c: the states that start the agent, or upload it first. */
int	sshc_st_open(struct sshc *c);
int	sshc_st_exec(struct sshc *c);
int	sshc_st_probe(struct sshc *c);
int	sshc_st_up_exec(struct sshc *c);
int	sshc_st_up_write(struct sshc *c);
int	sshc_st_up_eof(struct sshc *c);
int	sshc_st_up_wait(struct sshc *c);

void		 sshc_step(struct sshc *c);
int		 sshc_session_new(struct sshc *c);
struct sshc	*sshc_new(struct event_base *base);
void		 warnings_log(char **warn, size_t nwarn);

/* sshjump.c: the chain of jump hosts in front of c; a jump host's states. */
int	sshc_jumps(struct sshc *c, const struct opts *o, int depth,
	    struct dt_err *e);
int	sshc_st_forward(struct sshc *c);
int	sshc_st_jump(struct sshc *c);

#endif
