/*
 * port.c -- free ports on this machine. Only right for ranks on this
 * machine: dtrun uses it for local jobs, and each agent for its own host
 * (MASTER_PORT in HELLO, TF_CONFIG's ports on PORTS).
 */
#include <sys/socket.h>

#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/port.h"

/* Binds a TCP socket to an ephemeral port; returns the fd (port in *port) or -1. */
static int
port_bind(int *port)
{
	struct sockaddr_in	sin;
	socklen_t		len = sizeof(sin);
	int			fd;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(sin.sin_port);
	return fd;
}

void
port_pick(int *ports, size_t n)
{
	int	*fds = calloc(n ? n : 1, sizeof(*fds));
	size_t	 i;

	/* Hold them all until the end so the kernel hands out n different ones. */
	for (i = 0; i < n; i++)
		if (fds == NULL || (fds[i] = port_bind(&ports[i])) == -1)
			ports[i] = PORT_FALLBACK + (int)i;
	for (i = 0; fds != NULL && i < n; i++)
		if (fds[i] != -1)
			close(fds[i]);
	free(fds);
}
