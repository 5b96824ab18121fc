/*
 * sock.c -- TCP socket set-up (see sock.h).
 */
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/sock.h"

/* A non-blocking, close-on-exec socket for ai; -1 with errno. */
static int
sock_new(const struct addrinfo *ai)
{
	return socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol);
}

/* Closes fd and returns -1, errno kept for the caller. */
static int
sock_fail(int fd)
{
	int	err = errno;

	close(fd);
	errno = err;
	return -1;
}

int
sock_connect(const struct addrinfo *ai, int *inprogress)
{
	int	fd;

	*inprogress = 0;
	if ((fd = sock_new(ai)) == -1)
		return -1;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		return sock_fail(fd);
	*inprogress = 1;
	return fd;
}

int
sock_connect_error(int fd)
{
	socklen_t	sl;
	int		err;

	sl = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) == -1)
		return errno;
	return err;
}

int
sock_listen(const struct addrinfo *ai, int backlog)
{
	int	fd, on = 1;

	if ((fd = sock_new(ai)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    listen(fd, backlog) == 0)
		return fd;
	return sock_fail(fd);
}

int
sock_port(int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == -1)
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return -1;
}

void
sock_nodelay(int fd)
{
	int	on = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

void
sock_keepalive(int fd)
{
	int		on = 1, idle = SOCK_KEEPIDLE, intvl = SOCK_KEEPINTVL;
	int		cnt = SOCK_KEEPCNT;
	unsigned	timeout = (SOCK_KEEPIDLE + SOCK_KEEPINTVL *
			    SOCK_KEEPCNT) * 1000;

	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &timeout,
	    sizeof(timeout));
}

socklen_t
sock_abstract(struct sockaddr_un *sa, const char *name)
{
	size_t	n = strlen(name);

	if (n == 0 || n >= sizeof(sa->sun_path) - 1)
		return 0;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, n);	/* sun_path[0] = 0: abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int
sock_peer_is_us(int fd)
{
	struct ucred	uc;
	socklen_t	len = sizeof(uc);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 &&
	    uc.uid == getuid();
}

/*
 * /proc/net/tcp's address field for sin: the raw 32-bit address as the
 * kernel prints it (%08X of the in-memory value) and the port in hex; in
 * /proc/net/tcp6 (v6: a v4-mapped socket, as torch's client makes), the
 * four words of ::ffff:ADDR.
 */
static void
tcp_hex(const struct sockaddr_in *sin, int v6, char *buf, size_t len)
{
	uint32_t	ffff = htonl(0xffff);

	if (v6)
		snprintf(buf, len, "0000000000000000%08X%08X:%04X",
		    (unsigned)ffff, (unsigned)sin->sin_addr.s_addr,
		    (unsigned)ntohs(sin->sin_port));
	else
		snprintf(buf, len, "%08X:%04X",
		    (unsigned)sin->sin_addr.s_addr,
		    (unsigned)ntohs(sin->sin_port));
}

/*
 * The owner of the socket of table (/proc/net/tcp or tcp6) whose ends are
 * local and rem: 1 ours, 0 another's, -1 not there.
 */
static int
tcp_owner_is_us(const char *table, const char *local, const char *rem)
{
	char		 line[512], l[64], r[64];
	unsigned	 uid;
	FILE		*f;
	int		 ok = -1;

	if ((f = fopen(table, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		/* "sl local rem st tx:rx tr:when retrnsmt uid ..." */
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %u", l, r,
		    &uid) != 3)
			continue;
		if (strcmp(l, local) == 0 && strcmp(r, rem) == 0) {
			ok = uid == (unsigned)getuid();
			break;
		}
	}
	fclose(f);
	return ok;
}

int
sock_tcp_peer_is_us(int fd)
{
	struct sockaddr_in	 me, peer;
	socklen_t		 len;
	char			 want_l[64], want_r[64];
	int			 v6, ok = -1;

	len = sizeof(me);
	if (getsockname(fd, (struct sockaddr *)&me, &len) != 0 ||
	    me.sin_family != AF_INET)
		return 0;
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0 ||
	    peer.sin_family != AF_INET)
		return 0;
	/* The peer's own socket: its local end is our remote one. */
	for (v6 = 0; v6 <= 1 && ok < 0; v6++) {
		tcp_hex(&peer, v6, want_l, sizeof(want_l));
		tcp_hex(&me, v6, want_r, sizeof(want_r));
		ok = tcp_owner_is_us(v6 ? "/proc/net/tcp6" : "/proc/net/tcp",
		    want_l, want_r);
	}
	return ok == 1;
}
