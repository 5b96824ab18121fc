/*
 * proxy.h -- the two ways to reach an ssh server other than a TCP socket,
 * each handed to libssh2 as one end of a socket pair: a ProxyCommand run
 * with the other end as its stdin and stdout, or a tunnel that pumps the
 * other end through a direct-tcpip channel of a jump host's session.
 */
#ifndef DT_PROXY_H
#define DT_PROXY_H

#include <stddef.h>
#include <sys/types.h>

#include <libssh2.h>

struct dt_err;
struct event_base;

struct proxy_cmd;			/* opaque */
struct tunnel;				/* opaque */

/*
 * Runs cmd with /bin/sh -c "exec CMD" in its own process group; its stdin
 * and stdout are a socket, whose other end (non-blocking) is put in *fd;
 * each line of its stderr is logged as "NAME: ProxyCommand: LINE". Returns
 * 0, or DT_ERR_SYS with e saying why.
 */
int	 proxy_cmd_start(struct event_base *, const char *name,
	    const char *cmd, int *fd, struct proxy_cmd **, struct dt_err *e);
/* Takes the exit status of pid if it is p's; returns 1 if it was. */
int	 proxy_cmd_reaped(struct proxy_cmd *p, pid_t pid, int status);
/*
 * If the command closed its end of fd, waits a moment for its exit (seen
 * just after the close), says how it ended into buf ("exited with status
 * 3") and returns 1; else 0.
 */
int	 proxy_cmd_ended(struct proxy_cmd *p, int fd, char *buf, size_t len);
/* Kills the command's process group if it still runs, reaps it, frees p. */
void	 proxy_cmd_free(struct proxy_cmd *p);

/*
 * A tunnel from a socket pair to ch, a channel of session s: *fd gets the end for a libssh2
 * session; the other end is pumped to and from ch through bounded buffers.
 * cb(arg) runs when that end is ready: the owner then pumps its tunnels.
 * Returns NULL (errno set) if no socket pair could be made.
 */
struct tunnel	*tunnel_new(struct event_base *, LIBSSH2_SESSION *s,
		    LIBSSH2_CHANNEL *ch, int *fd, void (*cb)(void *), void *arg);
/*
 * Moves what it can both ways without blocking, and waits for its end to
 * be ready again. Returns 1 when it moved something, 0 when not, -1 when
 * the tunnel is finished: an error (said in why), or the session end
 * closed and the channel closed after it (why is then "").
 */
int	 tunnel_pump(struct tunnel *t, char *why, size_t len);
/* Whether the channel has sent EOF: the far end closed the connection. */
int	 tunnel_eof(struct tunnel *t);
/*
 * True when the channel's session already holds bytes (or the end) that
 * tunnel_pump would move to the socket pair now: read off the jump host's
 * socket by an earlier libssh2 call, they would wake nobody.
 */
int	 tunnel_held(struct tunnel *t);
/*
 * Frees t and its channel (when the session is being freed, or after
 * tunnel_pump said -1). The session end is the session owner's to close.
 */
void	 tunnel_free(struct tunnel *t);

#endif
