/* t_topsrv.c -- the dtrun top socket: a viewer still connected when the job ends. */
#include <sys/socket.h>
#include <sys/un.h>

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "launcher/watch/topsrv.h"
#include "test.h"

/*
 * A viewer that connected and sent nothing is still there at topsrv_free:
 * its connection is closed (it reads the end) and its state freed, not
 * left open until the process exits.
 */
TEST(topsrv_free_closes_a_connected_viewer)
{
	struct event_base	*base = event_base_new();
	struct sockaddr_un	 sa;
	struct topsrv		*s;
	struct pollfd		 pfd;
	char			 dir[] = "/tmp/t_topsrv.XXXXXX", sub[64], c;
	char			*old = getenv("XDG_RUNTIME_DIR");
	int			 fd;

	CHECK(base != NULL && mkdtemp(dir) != NULL);
	old = old != NULL ? strdup(old) : NULL;
	setenv("XDG_RUNTIME_DIR", dir, 1);
	CHECK((s = topsrv_new(base, "viewer-left")) != NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dtrun/viewer-left%s",
	    dir, TOPSRV_SUFFIX);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK_INT(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* The accept happens in the loop. */
	event_base_loop(base, EVLOOP_NONBLOCK);
	topsrv_free(s);
	/* libevent closes a freed bufferevent's fd by the base's end at last. */
	event_base_free(base);
	pfd.fd = fd;
	pfd.events = POLLIN;
	CHECK_INT(poll(&pfd, 1, 0), 1);
	CHECK_INT(recv(fd, &c, 1, MSG_DONTWAIT), 0);
	close(fd);
	if (old != NULL)
		setenv("XDG_RUNTIME_DIR", old, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	free(old);
	snprintf(sub, sizeof(sub), "%s/dtrun", dir);
	rmdir(sub);
	rmdir(dir);
}
