/* t_resolve.c -- name lookups answered through the event loop. */
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>

#include "launcher/backend/resolve.h"
#include "test.h"

struct answer {
	int		 calls, rc;
	char		 addr[64];
};

static void
got(int rc, struct addrinfo *ai, void *arg)
{
	struct answer		*a = arg;
	struct sockaddr_in	*sin;

	a->calls++;
	a->rc = rc;
	if (rc == 0) {
		sin = (struct sockaddr_in *)ai->ai_addr;
		if (ai->ai_family == AF_INET)
			inet_ntop(AF_INET, &sin->sin_addr, a->addr,
			    sizeof(a->addr));
		freeaddrinfo(ai);
	}
}

TEST(resolve_numeric_later_not_now)
{
	struct event_base	*base = event_base_new();
	struct answer		 a = { 0 };

	resolve_start(base, "127.0.0.2", "22", got, &a);
	CHECK_INT(a.calls, 0);		/* never from inside resolve_start */
	event_base_loop(base, EVLOOP_ONCE);
	CHECK_INT(a.calls, 1);
	CHECK_INT(a.rc, 0);
	CHECK_STR(a.addr, "127.0.0.2");
	event_base_free(base);
}

TEST(resolve_name_in_a_thread)
{
	struct event_base	*base = event_base_new();
	struct answer		 a = { 0 }, b = { 0 };

	resolve_start(base, "localhost", "22", got, &a);
	resolve_start(base, "no-such-host.invalid", "22", got, &b);
	while (a.calls == 0 || b.calls == 0)
		event_base_loop(base, EVLOOP_ONCE);
	CHECK_INT(a.calls, 1);
	CHECK_INT(a.rc, 0);
	CHECK_INT(b.calls, 1);
	CHECK(b.rc != 0);
	event_base_free(base);
}

TEST(resolve_cancelled_is_never_answered)
{
	struct event_base	*base = event_base_new();
	struct answer		 a = { 0 }, b = { 0 };
	struct resolve		*r;

	r = resolve_start(base, "localhost", "22", got, &a);
	resolve_cancel(r);
	resolve_start(base, "localhost", "22", got, &b);
	/*
	 * Each lookup has its own thread, so either may come back first: run
	 * until both are back and freed (no event left), then the cancelled
	 * one must not have been answered. Freeing the base earlier would
	 * leak the lookup still under way.
	 */
	while (event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED) > 0)
		event_base_loop(base, EVLOOP_ONCE);
	CHECK_INT(a.calls, 0);
	CHECK_INT(b.calls, 1);
	event_base_free(base);
}
