/*
 * here.c -- whether a host name names this machine: localhost, a 127.x or
 * ::1 address, our own host name (or its first label), or one of our
 * interfaces' addresses. Such a host is reached through the local backend
 * (no ssh), as mpirun runs "localhost" here. Nothing is looked up in DNS:
 * a name is this machine's only when it is spelled as we know it.
 */
#include <sys/types.h>

#include <ifaddrs.h>
#include <netdb.h>
#include <string.h>
#include <unistd.h>

#include "launcher/plan/plan.h"
#include "util/xmalloc.h"

/* This machine's interface addresses, read once: a job asks per host. */
static char	(*here_addrs)[NI_MAXHOST];
static size_t	  here_naddrs;
static int	  here_read;

/* Reads the addresses of this machine's interfaces into here_addrs. */
static void
here_load(void)
{
	struct ifaddrs	*ifa, *a;
	size_t		 n = 0, len;

	here_read = 1;
	if (getifaddrs(&ifa) == -1)
		return;
	for (a = ifa; a != NULL; a = a->ifa_next)
		n++;
	here_addrs = xcalloc(n ? n : 1, sizeof(*here_addrs));
	for (a = ifa; a != NULL; a = a->ifa_next) {
		if (a->ifa_addr == NULL || (a->ifa_addr->sa_family != AF_INET &&
		    a->ifa_addr->sa_family != AF_INET6))
			continue;
		len = a->ifa_addr->sa_family == AF_INET ?
		    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (getnameinfo(a->ifa_addr, len, here_addrs[here_naddrs],
		    NI_MAXHOST, NULL, 0, NI_NUMERICHOST) == 0)
			here_naddrs++;
	}
	freeifaddrs(ifa);
}

/* True if name is one of the addresses of this machine's interfaces. */
static int
here_addr(const char *name)
{
	size_t	i;

	if (!here_read)
		here_load();
	for (i = 0; i < here_naddrs; i++)
		if (strcmp(here_addrs[i], name) == 0)
			return 1;
	return 0;
}

/* True if name is our host name, or its first label (gpu01 of gpu01.lab). */
static int
here_hostname(const char *name)
{
	char	me[256];
	size_t	n;

	if (gethostname(me, sizeof(me)) == -1)
		return 0;
	me[sizeof(me) - 1] = '\0';
	if (strcmp(name, me) == 0)
		return 1;
	n = strcspn(me, ".");
	return n > 0 && strncmp(name, me, n) == 0 && name[n] == '\0';
}

int
plan_loopback_name(const char *name)
{
	return strncmp(name, "127.", 4) == 0 || strcmp(name, "localhost") == 0;
}

int
plan_here_name(const char *name)
{
	if (plan_loopback_name(name) || strcmp(name, "::1") == 0 ||
	    strcmp(name, "localhost.localdomain") == 0 ||
	    strcmp(name, "ip6-localhost") == 0)
		return 1;
	return here_hostname(name) || here_addr(name);
}
