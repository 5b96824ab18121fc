/*
 * sock.h -- TCP socket set-up, in one place (as redis's anet.c): every
 * socket dtrun, its agents, the rendezvous and libdtcomm open, connect or
 * listen on goes through here, with one keepalive policy. No I/O beyond
 * the set-up; errors come back as an errno value, never printed.
 */
#ifndef DT_SOCK_H
#define DT_SOCK_H

#include <sys/socket.h>

struct addrinfo;
struct sockaddr_un;

/*
 * The keepalive policy: a TCP peer silent SOCK_KEEPIDLE seconds is probed
 * every SOCK_KEEPINTVL seconds, and given up after SOCK_KEEPCNT unanswered
 * probes (about a minute in all), so a host that vanishes without a word
 * (power, a cut cable) breaks the connection instead of holding it open.
 * Data that stays unacknowledged as long gives up too (TCP_USER_TIMEOUT).
 */
#define SOCK_KEEPIDLE	30
#define SOCK_KEEPINTVL	10
#define SOCK_KEEPCNT	3

/*
 * Starts a non-blocking, close-on-exec connect to ai (its first address
 * only). Returns the fd, connected or (*inprogress = 1) still connecting:
 * wait for it to be writable, then ask sock_connect_error. Returns -1
 * with errno set if it failed at once.
 */
int	sock_connect(const struct addrinfo *ai, int *inprogress);
/* After a connect in progress: 0 if it is done, else its errno (EINPROGRESS: not yet). */
int	sock_connect_error(int fd);
/*
 * A non-blocking, close-on-exec socket bound to ai's first address (with
 * SO_REUSEADDR) and listening. Returns the fd, or -1 with errno set.
 */
int	sock_listen(const struct addrinfo *ai, int backlog);
/* The local port fd is bound to, or -1. */
int	sock_port(int fd);

/*
 * Fills sa with the address of @name in the abstract Unix namespace (an
 * agent's rendezvous socket: nothing in the file system). Returns the
 * length to bind or connect with, or 0 if name is empty or too long.
 */
socklen_t sock_abstract(struct sockaddr_un *sa, const char *name);
/* Small messages go out at once (TCP_NODELAY). */
void	sock_nodelay(int fd);
/* The keepalive policy above, on a connected TCP socket. */
void	sock_keepalive(int fd);
/* Whether a Unix socket's peer runs as our user (SO_PEERCRED). */
int	sock_peer_is_us(int fd);
/*
 * Whether a TCP connection's peer, on this host (a loopback listener),
 * runs as our user: its socket's owner in /proc/net/tcp. A peer gone or
 * not found is not us.
 */
int	sock_tcp_peer_is_us(int fd);

#endif
