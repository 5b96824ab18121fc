/*
 * slowdns.c -- an LD_PRELOAD stand-in for a slow name server, for tests.
 *
 * getaddrinfo() of the name in $SLOWDNS_NAME does not return until the
 * file $SLOWDNS_GATE exists, then answers for $SLOWDNS_ADDR. Every other
 * name goes to the real getaddrinfo(). A test opens the gate only once it
 * has seen other hosts get on while this lookup hangs, which fails (by
 * never finishing) if the lookup holds up the launcher's event loop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
getaddrinfo(const char *node, const char *service,
    const struct addrinfo *hints, struct addrinfo **res)
{
	int		(*real)(const char *, const char *,
			    const struct addrinfo *, struct addrinfo **);
	const char	*name = getenv("SLOWDNS_NAME");
	const char	*gate = getenv("SLOWDNS_GATE");
	const char	*addr = getenv("SLOWDNS_ADDR");

	*(void **)&real = dlsym(RTLD_NEXT, "getaddrinfo");
	if (node != NULL && name != NULL && gate != NULL && addr != NULL &&
	    strcmp(node, name) == 0) {
		/* Not numeric: the launcher tries AI_NUMERICHOST first. */
		if (hints != NULL && (hints->ai_flags & AI_NUMERICHOST))
			return EAI_NONAME;
		while (access(gate, F_OK) != 0)
			usleep(20000);
		node = addr;
	}
	return real(node, service, hints, res);
}
