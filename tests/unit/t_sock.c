/* t_sock.c -- socket set-up helpers: listen, connect, the keepalive policy. */
#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/sock.h"
#include "test.h"

/* 127.0.0.1:port as an addrinfo list (freeaddrinfo it). */
static struct addrinfo *
loopback(int port)
{
	struct addrinfo	hints, *ai = NULL;
	char		ps[16];

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo("127.0.0.1", ps, &hints, &ai) != 0)
		return NULL;
	return ai;
}

TEST(sock_listen_connect_keepalive)
{
	struct addrinfo	*ai;
	struct pollfd	 pfd;
	socklen_t	 sl;
	int		 lfd, fd, port, inprogress, v;

	CHECK((ai = loopback(0)) != NULL);
	CHECK((lfd = sock_listen(ai, 4)) >= 0);
	freeaddrinfo(ai);
	CHECK((port = sock_port(lfd)) > 0);
	CHECK((ai = loopback(port)) != NULL);
	CHECK((fd = sock_connect(ai, &inprogress)) >= 0);
	freeaddrinfo(ai);
	pfd.fd = fd;
	pfd.events = POLLOUT;
	CHECK(poll(&pfd, 1, 5000) == 1);
	CHECK_INT(sock_connect_error(fd), 0);
	sock_nodelay(fd);
	sock_keepalive(fd);
	sl = sizeof(v);
	CHECK(getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &sl) == 0 && v);
	CHECK(getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &v, &sl) == 0);
	CHECK_INT(v, SOCK_KEEPIDLE);
	CHECK(getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &v, &sl) == 0);
	CHECK_INT(v, SOCK_KEEPCNT);
	CHECK(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &sl) == 0 && v);
	close(fd);
	/* Nobody listens there any more: refused, at once or once tried. */
	close(lfd);
	CHECK((ai = loopback(port)) != NULL);
	fd = sock_connect(ai, &inprogress);
	freeaddrinfo(ai);
	if (fd >= 0) {
		pfd.fd = fd;
		CHECK(poll(&pfd, 1, 5000) == 1);
		CHECK(sock_connect_error(fd) != 0);
		close(fd);
	}
}
