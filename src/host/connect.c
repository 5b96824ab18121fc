/*
 * connect.c -- the agent's TCP link to dtrun under Slurm: the handshake's
 * codec (no I/O), and the agent's dialing, done with blocking calls under
 * one deadline before the agent's event loop starts.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host/connect.h"
#include "common/sock.h"
#include "common/err.h"
#include "common/mac.h"
#include "common/sys.h"
#include "common/wire.h"

int
ac_put_challenge(struct dt_wbuf *b, const uint8_t snonce[AC_NONCE_LEN])
{
	size_t	st = dt_frame_begin(b, AC_CHALLENGE);

	dt_wbuf_u32(b, AC_VERSION);
	dt_wbuf_put(b, snonce, AC_NONCE_LEN);
	return dt_frame_end(b, st, AC_FRAME_MAX);
}

int
ac_put_answer(struct dt_wbuf *b, const struct ac_answer *a)
{
	size_t	st = dt_frame_begin(b, AC_ANSWER);

	dt_wbuf_put(b, a->cnonce, AC_NONCE_LEN);
	dt_wbuf_put(b, a->mac, AC_MAC_LEN);
	dt_wbuf_str(b, a->node);
	return dt_frame_end(b, st, AC_FRAME_MAX);
}

int
ac_put_welcome(struct dt_wbuf *b, const uint8_t mac[AC_MAC_LEN])
{
	size_t	st = dt_frame_begin(b, AC_WELCOME);

	dt_wbuf_put(b, mac, AC_MAC_LEN);
	return dt_frame_end(b, st, AC_FRAME_MAX);
}

int
ac_get_challenge(const uint8_t *p, size_t n, uint8_t snonce[AC_NONCE_LEN])
{
	struct dt_rbuf	r;
	uint32_t	v;

	dt_rbuf_init(&r, p, n);
	v = dt_rbuf_u32(&r);
	if (r.err == 0 && v != AC_VERSION)
		return DT_ERR_UNSUPPORTED;
	dt_rbuf_get(&r, snonce, AC_NONCE_LEN);
	return dt_rbuf_end(&r);
}

int
ac_get_answer(const uint8_t *p, size_t n, struct ac_answer *a)
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	dt_rbuf_get(&r, a->cnonce, AC_NONCE_LEN);
	dt_rbuf_get(&r, a->mac, AC_MAC_LEN);
	a->node = dt_rbuf_strdup(&r, AC_NODE_MAX);
	if (dt_rbuf_end(&r) != 0 || a->node == NULL || a->node[0] == '\0') {
		free(a->node);
		a->node = NULL;
		return DT_ERR_PROTO;
	}
	return 0;
}

int
ac_get_welcome(const uint8_t *p, size_t n, uint8_t mac[AC_MAC_LEN])
{
	struct dt_rbuf	r;

	dt_rbuf_init(&r, p, n);
	dt_rbuf_get(&r, mac, AC_MAC_LEN);
	return dt_rbuf_end(&r);
}

void
ac_mac(const uint8_t *secret, size_t slen, enum ac_role role,
    const uint8_t snonce[AC_NONCE_LEN], const uint8_t cnonce[AC_NONCE_LEN],
    const char *node, uint8_t mac[AC_MAC_LEN])
{
	const char	*label = role == AC_ROLE_AGENT ? "dtrun-agent-1 agent" :
			    "dtrun-agent-1 launcher";
	const void	*p[4];
	size_t		 len[4];

	/* The label ends at its NUL: "agent" never reads as "launcher". */
	p[0] = label;
	len[0] = strlen(label) + 1;
	p[1] = snonce;
	len[1] = AC_NONCE_LEN;
	p[2] = cnonce;
	len[2] = AC_NONCE_LEN;
	p[3] = node;
	len[3] = strlen(node);
	dt_hmac_sha256(secret, slen, 4, p, len, mac);
}

int
ac_mac_ok(const uint8_t *secret, size_t slen, enum ac_role role,
    const uint8_t snonce[AC_NONCE_LEN], const uint8_t cnonce[AC_NONCE_LEN],
    const char *node, const uint8_t mac[AC_MAC_LEN])
{
	uint8_t	want[AC_MAC_LEN];
	int	ok;

	ac_mac(secret, slen, role, snonce, cnonce, node, want);
	ok = dt_memeq_ct(want, mac, AC_MAC_LEN);
	explicit_bzero(want, sizeof(want));
	return ok;
}

int
ac_token_decode(const char *s, uint8_t *out, size_t cap, size_t *n)
{
	if (dt_hex_decode(s, out, cap, n) != 0 || *n < AC_SECRET_MIN ||
	    *n > AC_SECRET_MAX)
		return DT_ERR_AUTH;
	return 0;
}

/* Reads exactly n bytes before the deadline; 0 or a DT_ERR_*. */
static int
read_full(int fd, void *buf, size_t n, double deadline)
{
	uint8_t	*p = buf;
	ssize_t	 r;
	int	 rc;

	while (n > 0) {
		r = read(fd, p, n);
		if (r > 0) {
			p += r;
			n -= r;
		} else if (r == 0)
			return DT_ERR_CLOSED;
		else if (errno == EAGAIN) {
			if ((rc = dt_poll_until(fd, POLLIN, deadline)) != 0)
				return rc;
		} else if (errno != EINTR)
			return DT_ERR_IO;
	}
	return 0;
}

/* Writes all of p[0..n) before the deadline; 0 or a DT_ERR_*. */
static int
write_full(int fd, const void *buf, size_t n, double deadline)
{
	const uint8_t	*p = buf;
	ssize_t		 r;
	int		 rc;

	while (n > 0) {
		r = write(fd, p, n);
		if (r > 0) {
			p += r;
			n -= r;
		} else if (r < 0 && errno == EAGAIN) {
			if ((rc = dt_poll_until(fd, POLLOUT, deadline)) != 0)
				return rc;
		} else if (r < 0 && errno != EINTR)
			return DT_ERR_IO;
	}
	return 0;
}

/*
 * Reads one frame of the wanted type into buf, byte-exact (what follows it
 * belongs to the agent protocol). Returns the payload length or a DT_ERR_*.
 */
static int
read_frame(int fd, uint8_t want, uint8_t *buf, size_t cap, double deadline)
{
	uint8_t		hdr[DT_FRAME_HDR];
	uint32_t	len;
	int		rc;

	if ((rc = read_full(fd, hdr, sizeof(hdr), deadline)) != 0)
		return rc;
	len = dt_be32(hdr);
	if (hdr[4] != want || len < 1 || len - 1 > cap)
		return DT_ERR_PROTO;
	if ((rc = read_full(fd, buf, len - 1, deadline)) != 0)
		return rc;
	return (int)(len - 1);
}

/* Splits "HOST:PORT" or "[V6]:PORT" into host and port. */
static int
split_addr(const char *addr, char *host, size_t hlen, const char **port)
{
	const char	*colon, *h = addr;
	size_t		 n;

	if (addr[0] == '[') {
		if ((colon = strstr(addr, "]:")) == NULL)
			return -1;
		h = addr + 1;
		n = colon - h;
		colon++;
	} else {
		if ((colon = strrchr(addr, ':')) == NULL)
			return -1;
		n = colon - h;
	}
	if (n == 0 || n >= hlen || colon[1] == '\0')
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

/* Connects to an address of addr before the deadline; the fd or a DT_ERR_*. */
static int
dial_tcp(const char *addr, double deadline, struct dt_err *e)
{
	struct addrinfo	 hints, *ai, *a;
	char		 host[256];
	const char	*port;
	int		 fd = -1, rc, soerr = 0, inprogress;

	if (split_addr(addr, host, sizeof(host), &port) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_INVAL, "--connect \"%s\": "
		    "want HOST:PORT", addr);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0)
		return dt_errf(e, NULL, 0, 0, DT_ERR_NOTFOUND, "cannot resolve "
		    "%s: %s", host, gai_strerror(rc));
	for (a = ai; a != NULL; a = a->ai_next) {
		if ((fd = sock_connect(a, &inprogress)) == -1) {
			soerr = errno;
			continue;
		}
		if (!inprogress)
			break;
		if ((rc = dt_poll_until(fd, POLLOUT, deadline)) != 0)
			soerr = rc == DT_ERR_TIMEOUT ? ETIMEDOUT : errno;
		else
			soerr = sock_connect_error(fd);
		if (soerr == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd == -1)
		return dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "cannot connect to "
		    "dtrun at %s: %s", addr, strerror(soerr));
	sock_nodelay(fd);
	return fd;
}

int
ac_dial(const char *addr, const uint8_t *secret, size_t slen,
    const char *node, int timeout_ms, struct dt_err *e)
{
	struct dt_wbuf		 b;
	struct ac_answer	 a;
	uint8_t			 snonce[AC_NONCE_LEN], mac[AC_MAC_LEN];
	uint8_t			 buf[AC_FRAME_MAX];
	double			 deadline;
	int			 fd, rc, n;

	deadline = dt_clock_s(CLOCK_MONOTONIC) + timeout_ms / 1e3;
	if ((fd = dial_tcp(addr, deadline, e)) < 0)
		return fd;
	dt_wbuf_init(&b);
	memset(&a, 0, sizeof(a));
	n = read_frame(fd, AC_CHALLENGE, buf, sizeof(buf), deadline);
	if (n < 0) {
		rc = n;
		goto fail;
	}
	if ((rc = ac_get_challenge(buf, n, snonce)) != 0)
		goto fail;
	if (dt_random(a.cnonce, sizeof(a.cnonce)) != 0) {
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_SYS, "getrandom: %s",
		    strerror(errno));
		goto out;
	}
	ac_mac(secret, slen, AC_ROLE_AGENT, snonce, a.cnonce, node, a.mac);
	a.node = (char *)node;
	if ((rc = ac_put_answer(&b, &a)) != 0 ||
	    (rc = write_full(fd, b.p, b.len, deadline)) != 0)
		goto fail;
	if ((n = read_frame(fd, AC_WELCOME, buf, sizeof(buf), deadline)) < 0) {
		rc = n;
		goto fail;
	}
	if ((rc = ac_get_welcome(buf, n, mac)) != 0)
		goto fail;
	if (!ac_mac_ok(secret, slen, AC_ROLE_LAUNCHER, snonce, a.cnonce, node,
	    mac)) {
		rc = dt_errf(e, NULL, 0, 0, DT_ERR_AUTH, "%s did not prove it "
		    "knows the job's agent secret: not dtrun's listener", addr);
		goto out;
	}
	dt_wbuf_free(&b);
	return fd;
fail:
	if (rc == DT_ERR_CLOSED)
		dt_errf(e, NULL, 0, 0, rc, "dtrun at %s closed the connection "
		    "during the handshake (wrong %s, unknown node %s, or dtrun "
		    "gave up)", addr, AC_TOKEN_ENV, node);
	else if (rc == DT_ERR_TIMEOUT)
		dt_errf(e, NULL, 0, 0, rc, "no answer from dtrun at %s within "
		    "%d ms", addr, timeout_ms);
	else if (rc == DT_ERR_UNSUPPORTED)
		dt_errf(e, NULL, 0, 0, rc, "dtrun at %s speaks another "
		    "handshake version: use the same dtrun build everywhere",
		    addr);
	else
		dt_errf(e, NULL, 0, 0, rc, "handshake with dtrun at %s failed: "
		    "%s", addr, rc == DT_ERR_IO ? strerror(errno) :
		    dt_strerror(rc));
out:
	dt_wbuf_free(&b);
	close(fd);
	return rc;
}
