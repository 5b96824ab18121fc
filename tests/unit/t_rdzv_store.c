/* t_rdzv_store.c -- the rendezvous key-value store. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "rendezvous/store.h"
#include "test.h"

#define K(s)	(const uint8_t *)(s), strlen(s)

TEST(rdzv_store_set_get_replace)
{
	struct rdzv_store	*st = rdzv_store_new(100000, 1 << 24);
	struct rdzv_item	*it, *w;
	char			 key[32];
	int			 i;

	CHECK(rdzv_store_find(st, K("a")) == NULL);
	CHECK_INT(rdzv_store_reserve(st, K("a"), &w), 0);
	CHECK(!w->isset);
	CHECK_INT(rdzv_store_set(st, K("a"), "xyz", 3, &it), 0);
	CHECK(it == w && it->isset && it->vallen == 3);
	CHECK(memcmp(it->val, "xyz", 3) == 0);
	CHECK_INT(rdzv_store_set(st, K("a"), "", 0, &it), 0);
	CHECK_INT(rdzv_store_find(st, K("a"))->vallen, 0);
	/* Enough keys to grow the table several times. */
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "rank/%d", i);
		CHECK_INT(rdzv_store_set(st, K(key), &i, sizeof(i), &it), 0);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "rank/%d", i);
		it = rdzv_store_find(st, K(key));
		CHECK(it != NULL && it->vallen == sizeof(i) &&
		    memcmp(it->val, &i, sizeof(i)) == 0);
	}
	CHECK_INT(rdzv_store_count(st), 5001);
	rdzv_store_del(st, K("rank/7"));
	CHECK(rdzv_store_find(st, K("rank/7")) == NULL);
	CHECK_INT(rdzv_store_count(st), 5000);
	rdzv_store_free(st);
}

TEST(rdzv_store_add_counts_like_tcpstore)
{
	struct rdzv_store	*st = rdzv_store_new(10, 1000);
	struct rdzv_item	*it;
	int64_t			 v;

	CHECK_INT(rdzv_store_add(st, K("n"), 5, &v, &it), 0);
	CHECK_INT(v, 5);
	CHECK_INT(rdzv_store_add(st, K("n"), -7, &v, &it), 0);
	CHECK_INT(v, -2);
	CHECK(it->vallen == 2 && memcmp(it->val, "-2", 2) == 0);
	rdzv_store_set(st, K("s"), "abc", 3, &it);
	CHECK_INT(rdzv_store_add(st, K("s"), 1, &v, &it), DT_ERR_PARSE);
	rdzv_store_set(st, K("m"), "9223372036854775807", 19, &it);
	CHECK_INT(rdzv_store_add(st, K("m"), 1, &v, &it), DT_ERR_RANGE);
	rdzv_store_free(st);
}

TEST(rdzv_store_limits)
{
	struct rdzv_store	*st = rdzv_store_new(2, 11);
	struct rdzv_item	*it;

	CHECK_INT(rdzv_store_set(st, K("a"), "12345", 5, &it), 0);
	CHECK_INT(rdzv_store_set(st, K("b"), "1234", 4, &it), 0);	/* 11 bytes with keys */
	CHECK_INT(rdzv_store_set(st, K("c"), "", 0, &it), DT_ERR_RANGE);	/* keys */
	CHECK_INT(rdzv_store_set(st, K("b"), "12345", 5, &it), DT_ERR_RANGE);	/* bytes */
	CHECK(memcmp(rdzv_store_find(st, K("b"))->val, "1234", 4) == 0);
	CHECK_INT(rdzv_store_bytes(st), 11);
	rdzv_store_free(st);
}
