/*
 * tunnel.h -- a jump host's tunnel: one of the two ways to reach an ssh
 * server other than a TCP socket (the other is a ProxyCommand,
 * proxycmd.h). libssh2 gets one end of a socket pair; the tunnel pumps the
 * other end through a direct-tcpip channel of the jump host's session.
 */
#ifndef DT_TUNNEL_H
#define DT_TUNNEL_H

#include <libssh2.h>

struct dt_err;
struct event_base;

struct tunnel;				/* opaque */

/*
 * A tunnel from a socket pair to ch, a channel of session s: *fd gets
 * the end for a libssh2 session; the other end is pumped to and from ch
 * through bounded buffers.
 * cb(arg) runs when that end is ready: the owner then pumps its tunnels.
 * Returns NULL (errno set) if no socket pair could be made.
 */
struct tunnel	*tunnel_new(struct event_base *, LIBSSH2_SESSION *s,
		    LIBSSH2_CHANNEL *ch, int *fd, void (*cb)(void *), void *arg);
/*
 * Moves what it can both ways without blocking, and waits for its end to
 * be ready again. Returns 1 when it moved something, 0 when not, or a
 * negative DT_ERR_* when the tunnel is finished: DT_ERR_CLOSED when the
 * session end closed and the channel closed after it (e is then clear),
 * DT_ERR_IO with e saying why when the channel failed.
 */
int	 tunnel_pump(struct tunnel *t, struct dt_err *e);
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
 * tunnel_pump said it is finished). The session end is the session owner's to close.
 */
void	 tunnel_free(struct tunnel *t);

#endif
