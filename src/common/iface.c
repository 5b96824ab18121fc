/*
 * iface.c -- choosing the network interface. What dtrun really wants is
 * the address every host can reach; without asking the other hosts, the
 * rule is: loopback when the whole job is on this machine, else the first
 * real interface (not loopback, not a bridge for containers or VMs).
 * --iface overrides it when the guess is wrong.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>

#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/iface.h"

/* Interfaces other hosts do not reach us through. */
static const char *const virtual_prefixes[] = {
	"docker", "veth", "virbr", "br-", "cni", "flannel", "cali", "vxlan",
	"lxc", "lxd", "podman", "kube-", "tunl", "ifb", "dummy",
};

int
iface_list(struct iface **list, size_t *n, struct dt_err *e)
{
	struct ifaddrs		*ifa, *i;
	struct sockaddr_in	*sin;
	struct iface		*v, *f;
	size_t			 cnt = 0;

	*list = NULL;
	*n = 0;
	if (getifaddrs(&ifa) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "getifaddrs: %s",
		    strerror(errno));
	for (i = ifa; i != NULL; i = i->ifa_next)
		cnt++;
	if ((v = calloc(cnt + 1, sizeof(*v))) == NULL) {
		freeifaddrs(ifa);
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOMEM, "out of memory");
	}
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		f = &v[(*n)++];
		sin = (struct sockaddr_in *)i->ifa_addr;
		snprintf(f->name, sizeof(f->name), "%s", i->ifa_name);
		inet_ntop(AF_INET, &sin->sin_addr, f->addr, sizeof(f->addr));
		f->up = (i->ifa_flags & IFF_UP) != 0;
		f->loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
	}
	freeifaddrs(ifa);
	*list = v;
	return 0;
}

/* True for bridges and tunnels of containers and VMs. */
static int
iface_virtual(const char *name)
{
	size_t	i;

	for (i = 0; i < sizeof(virtual_prefixes) / sizeof(virtual_prefixes[0]);
	    i++)
		if (strncmp(name, virtual_prefixes[i],
		    strlen(virtual_prefixes[i])) == 0)
			return 1;
	return 0;
}

/* Writes "lo 127.0.0.1, eth0 10.0.0.2" (or "none") into buf. */
static void
iface_names(const struct iface *list, size_t n, char *buf, size_t len)
{
	size_t	i, off = 0;

	snprintf(buf, len, "none");
	for (i = 0; i < n && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s %s%s",
		    i == 0 ? "" : ", ", list[i].name, list[i].addr,
		    list[i].up ? "" : " (down)");
}

/* Copies f into out with a reason. */
static int
iface_take(const struct iface *f, const char *why, struct iface_choice *out)
{
	snprintf(out->name, sizeof(out->name), "%s", f->name);
	snprintf(out->addr, sizeof(out->addr), "%s", f->addr);
	snprintf(out->why, sizeof(out->why), "%s", why);
	return 0;
}

int
iface_choose(const struct iface *list, size_t n, const char *want,
    int all_local, struct iface_choice *out, struct dt_err *e)
{
	char	have[512];
	size_t	i;

	memset(out, 0, sizeof(*out));
	iface_names(list, n, have, sizeof(have));
	if (want != NULL) {
		for (i = 0; i < n; i++) {
			if (strcmp(list[i].name, want) != 0)
				continue;
			if (!list[i].up)
				return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND,
				    "--iface %s: the interface is down "
				    "(interfaces: %s)", want, have);
			return iface_take(&list[i], "given with --iface", out);
		}
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "--iface %s: no "
		    "such interface with an IPv4 address (interfaces: %s)",
		    want, have);
	}
	for (i = 0; all_local && i < n; i++)
		if (list[i].up && list[i].loopback)
			return iface_take(&list[i], "every rank runs on this "
			    "machine", out);
	for (i = 0; i < n; i++) {
		if (!list[i].up || list[i].loopback ||
		    iface_virtual(list[i].name) ||
		    strncmp(list[i].addr, "169.254.", 8) == 0)
			continue;
		return iface_take(&list[i], all_local ? "every rank runs on "
		    "this machine, which has no loopback" : "the first up "
		    "interface that is not loopback, a container or VM "
		    "bridge, or link-local", out);
	}
	return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "no network interface "
	    "other hosts can reach: give one with --iface (interfaces: %s)",
	    have);
}

/* Resolves dst (IPv4) into sin; 0, or an error naming dst. */
static int
iface_resolve(const char *dst, struct sockaddr_in *sin, struct dt_err *e)
{
	struct addrinfo	 hints, *ai;
	int		 rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_DGRAM;
	if ((rc = getaddrinfo(dst, "9", &hints, &ai)) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND,
		    "%s: no IPv4 address (%s)", dst, gai_strerror(rc));
	memcpy(sin, ai->ai_addr, sizeof(*sin));
	freeaddrinfo(ai);
	return 0;
}

int
iface_route(const struct iface *list, size_t n, const char *dst,
    struct iface_choice *out, struct dt_err *e)
{
	struct sockaddr_in	 to, from;
	socklen_t		 len = sizeof(from);
	char			 src[64], have[512];
	size_t			 i;
	int			 fd, rc;

	memset(out, 0, sizeof(*out));
	if ((rc = iface_resolve(dst, &to, e)) != 0)
		return rc;
	/* A UDP connect only asks the routing table; nothing is sent. */
	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "socket: %s",
		    strerror(errno));
	if (connect(fd, (struct sockaddr *)&to, sizeof(to)) == -1 ||
	    getsockname(fd, (struct sockaddr *)&from, &len) == -1) {
		rc = errno;
		close(fd);
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND,
		    "no route to %s: %s", dst, strerror(rc));
	}
	close(fd);
	inet_ntop(AF_INET, &from.sin_addr, src, sizeof(src));
	for (i = 0; i < n; i++) {
		if (strcmp(list[i].addr, src) != 0 || !list[i].up)
			continue;
		iface_take(&list[i], "", out);
		snprintf(out->why, sizeof(out->why), "the route to %s", dst);
		return 0;
	}
	iface_names(list, n, have, sizeof(have));
	return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "the route to %s leaves "
	    "from %s, which no interface that is up has (interfaces: %s)",
	    dst, src, have);
}

/* Checks one --iface item; 0 or DT_ERR_PARSE naming it. */
static int
iface_item_check(const char *item, size_t len, struct dt_err *e)
{
	const char	*eq = memchr(item, '=', len);

	if (len == 0 || eq == item || (eq != NULL && eq == item + len - 1) ||
	    (eq != NULL && memchr(eq + 1, '=', item + len - eq - 1) != NULL))
		return dt_errf(e, NULL, 0, 0, DT_ERR_PARSE, "--iface: bad item "
		    "'%.*s': give IFACE or HOST=IFACE, comma-separated",
		    (int)len, item);
	return 0;
}

/*
 * Appends the items of spec that are for host (mine: HOST=IFACE with that
 * host) or for every host (!mine: bare IFACE) to buf.
 */
static void
iface_spec_collect(const char *spec, const char *host, int mine, char *buf,
    size_t len)
{
	const char	*p = spec, *end, *eq;
	size_t		 off = 0, hl = strlen(host), il;

	buf[0] = '\0';
	for (; *p != '\0'; p = *end == ',' ? end + 1 : end) {
		end = p + strcspn(p, ",");
		il = (size_t)(end - p);
		eq = memchr(p, '=', il);
		if (mine ? eq == NULL || (size_t)(eq - p) != hl ||
		    strncmp(p, host, hl) != 0 : eq != NULL)
			continue;
		if (eq != NULL) {
			il = (size_t)(end - eq - 1);
			p = eq + 1;
		}
		if (off < len)
			off += snprintf(buf + off, len - off, "%s%.*s",
			    off == 0 ? "" : ",", (int)il, p);
	}
}

int
iface_spec_host(const char *spec, const char *host, char *buf, size_t len,
    struct dt_err *e)
{
	const char	*p, *end;
	int		 rc;

	buf[0] = '\0';
	if (spec == NULL)
		return 0;
	for (p = spec; ; p = end + 1) {
		end = p + strcspn(p, ",");
		if ((rc = iface_item_check(p, (size_t)(end - p), e)) != 0)
			return rc;
		if (*end == '\0')
			break;
	}
	iface_spec_collect(spec, host, 1, buf, len);
	if (buf[0] == '\0')
		iface_spec_collect(spec, host, 0, buf, len);
	return 0;
}

int
iface_pick(const struct iface *list, size_t n, const char *cands,
    const char *rank0, struct iface_choice *out, struct dt_err *e)
{
	struct sockaddr_in	 sin;
	struct in_addr		 lit;
	const char		*p, *end, *why;
	char			 have[512];
	size_t			 i, l;

	memset(out, 0, sizeof(*out));
	if (cands == NULL || *cands == '\0') {
		if (rank0 == NULL || iface_resolve(rank0, &sin, e) != 0)
			why = "does not resolve here";
		/*
		 * A name (not a 127.x literal) that is a loopback address
		 * here is this host's own name (Debian maps it to
		 * 127.0.1.1): other hosts do not reach it over lo.
		 */
		else if ((ntohl(sin.sin_addr.s_addr) >> 24) != 127 ||
		    inet_pton(AF_INET, rank0, &lit) == 1)
			return iface_route(list, n, rank0, out, e);
		else
			why = "is a loopback address here";
		/* A name only the launcher knows (an ssh alias): guess. */
		if (iface_choose(list, n, NULL, 0, out, e) != 0)
			return DT_ERR_NOTFOUND;
		snprintf(out->why, sizeof(out->why), "%s %s, so the first real "
		    "interface up", rank0 != NULL ? rank0 : "rank 0's host",
		    why);
		return 0;
	}
	/* One name: as --iface always took it, with its messages. */
	if (strchr(cands, ',') == NULL)
		return iface_choose(list, n, cands, 0, out, e);
	for (p = cands; *p != '\0'; p = *end == ',' ? end + 1 : end) {
		end = p + strcspn(p, ",");
		l = (size_t)(end - p);
		for (i = 0; i < n; i++) {
			if (strlen(list[i].name) != l ||
			    strncmp(list[i].name, p, l) != 0 || !list[i].up)
				continue;
			iface_take(&list[i], "", out);
			snprintf(out->why, sizeof(out->why), "the first of "
			    "--iface %s that is up here", cands);
			return 0;
		}
	}
	iface_names(list, n, have, sizeof(have));
	return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "--iface %s: none is up "
	    "with an IPv4 address here (interfaces: %s)", cands, have);
}
