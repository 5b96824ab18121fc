/*
 * tcp-connect.c -- a ProxyCommand for tests, like "nc HOST PORT": connects
 * to HOST PORT and copies stdin to the socket and the socket to stdout
 * until both sides end. With a third argument, writes its pid there first.
 */
#include <sys/socket.h>

#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Copies what can be read from in to out; 0 at EOF or error, else 1. */
static int
copy(int in, int out)
{
	char	buf[16384];
	ssize_t	n, o, w;

	if ((n = read(in, buf, sizeof(buf))) <= 0)
		return 0;
	for (o = 0; o < n; o += w)
		if ((w = write(out, buf + o, n - o)) <= 0)
			return 0;
	return 1;
}

int
main(int argc, char **argv)
{
	struct addrinfo	 hints, *ai;
	struct pollfd	 p[2];
	FILE		*f;
	int		 s, rc, up = 1, down = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: tcp-connect HOST PORT [PIDFILE]\n");
		return 2;
	}
	if (argc > 3 && (f = fopen(argv[3], "w")) != NULL) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(argv[1], argv[2], &hints, &ai)) != 0) {
		fprintf(stderr, "tcp-connect: %s: %s\n", argv[1],
		    gai_strerror(rc));
		return 1;
	}
	if ((s = socket(ai->ai_family, SOCK_STREAM, 0)) == -1 ||
	    connect(s, ai->ai_addr, ai->ai_addrlen) == -1) {
		fprintf(stderr, "tcp-connect: %s port %s: %m\n", argv[1],
		    argv[2]);
		return 1;
	}
	while (up || down) {
		p[0].fd = up ? 0 : -1;
		p[0].events = POLLIN;
		p[1].fd = down ? s : -1;
		p[1].events = POLLIN;
		if (poll(p, 2, -1) == -1)
			return 1;
		if (up && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !copy(0, s)) {
			up = 0;
			shutdown(s, SHUT_WR);
		}
		if (down && (p[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
		    !copy(s, 1)) {
			down = 0;
			close(1);
		}
	}
	return 0;
}
