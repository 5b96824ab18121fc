/*
 * agent-mute.c -- stands in for dtrun-agent under srun (DTRUN_AGENT): dials
 * dtrun and passes the handshake as the real one does, then sends two
 * bytes that are no whole frame and nothing more, as a hung agent would,
 * until dtrun closes the connection.
 *
 *	agent-mute --connect HOST:PORT	(the secret in DTRUN_AGENT_TOKEN)
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/connect.h"
#include "common/err.h"

int
main(int argc, char **argv)
{
	struct dt_err	 e;
	const char	*tok = getenv(AC_TOKEN_ENV), *node;
	uint8_t		 secret[AC_SECRET_MAX];
	char		 buf[4096];
	size_t		 slen;
	int		 fd;

	if (argc != 3 || strcmp(argv[1], "--connect") != 0 || tok == NULL ||
	    ac_token_decode(tok, secret, sizeof(secret), &slen) != 0) {
		fprintf(stderr, "usage: agent-mute --connect HOST:PORT (with "
		    "%s set)\n", AC_TOKEN_ENV);
		return 2;
	}
	if ((node = getenv("SLURMD_NODENAME")) == NULL)
		node = "localhost";
	if ((fd = ac_dial(argv[2], secret, slen, node, 60000, &e)) < 0) {
		fprintf(stderr, "agent-mute: %s\n", e.msg);
		return 1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (write(fd, "ab", 2) != 2)
		return 1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return 0;
}
