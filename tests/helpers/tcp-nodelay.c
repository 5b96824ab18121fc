/*
 * tcp-nodelay.c -- tcp-nodelay PID PORT: prints "nodelay=0" or "nodelay=1"
 * for each TCP socket of process PID connected to PORT, as that process set
 * it (TCP_NODELAY). It borrows the socket with pidfd_getfd(2), which needs
 * ptrace rights over PID (root, or the same user under ptrace_scope 0).
 * Exits 0 if it printed at least one line, 1 if PID has no such socket,
 * 77 if the kernel or rights do not allow borrowing.
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether fd is a TCP socket whose peer's port is port. */
static int
peer_port_is(int fd, int port)
{
	struct sockaddr_storage	ss;
	socklen_t		len = sizeof(ss);
	int			type;
	socklen_t		tlen = sizeof(type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 ||
	    type != SOCK_STREAM)
		return 0;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0)
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port) == port;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == port;
	return 0;
}

int
main(int argc, char **argv)
{
	char		 dir[64];
	struct dirent	*de;
	DIR		*d;
	int		 pid, port, pidfd, fd, on, found = 0;
	socklen_t	 len;

	if (argc != 3) {
		fprintf(stderr, "usage: tcp-nodelay PID PORT\n");
		return 2;
	}
	pid = atoi(argv[1]);
	port = atoi(argv[2]);
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		perror("pidfd_open");
		return errno == ENOSYS ? 77 : 1;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	if ((d = opendir(dir)) == NULL) {
		perror(dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		fd = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(de->d_name), 0);
		if (fd < 0) {
			if (errno == EPERM || errno == ENOSYS) {
				perror("pidfd_getfd");
				return 77;
			}
			continue;
		}
		len = sizeof(on);
		if (peer_port_is(fd, port) &&
		    getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) == 0) {
			printf("nodelay=%d\n", on != 0);
			found = 1;
		}
		close(fd);
	}
	closedir(d);
	return found ? 0 : 1;
}
