/*
 * fuzz_store.c -- libFuzzer target for the TCPStore decoder and store:
 * the first byte is a plan, the rest a client's byte stream. Two conns
 * are each fed the stream, in turns of chunks the plan sizes, so their
 * WAITs, SETs and ADDs meet; the plan may pause the first conn after each
 * reply (resumed after each chunk) and drop the second halfway. Whatever
 * the bytes, nothing crashes or leaks and the counts stay sane.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/tcpstore.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct out {
	size_t	len;
	int	pause;
	int	failed;
};

static int
on_reply(void *cookie, const void *buf, size_t len)
{
	struct out	*o = cookie;

	o->len += len;
	return o->pause;
}

static void
on_fail(void *cookie, int code, const char *msg)
{
	struct out	*o = cookie;

	if (code >= 0 || msg == NULL)
		abort();
	o->failed = 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dts_cfg		 cfg;
	struct dts_store	*st;
	struct dts_conn		*c[2];
	struct dts_stats	 s;
	struct out		 o[2];
	struct dt_err		 e;
	size_t			 off[2] = { 0, 0 }, step, i, n;
	int			 dead[2] = { 0, 0 };

	if (size < 1)
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.max_value = 4096;
	cfg.max_nkeys = 64;
	cfg.max_bytes = 65536;
	cfg.max_keys = 256;
	cfg.reply = on_reply;
	cfg.fail = on_fail;
	if ((st = dts_store_new(&cfg, &e)) == NULL)
		abort();
	memset(o, 0, sizeof(o));
	o[0].pause = (data[0] & 0x40) != 0;
	step = (data[0] & 31) + 1;
	data++;
	size--;
	for (i = 0; i < 2; i++)
		c[i] = dts_conn_new(st, &o[i]);
	while (off[0] < size || off[1] < size) {
		for (i = 0; i < 2; i++) {
			if (dead[i] || o[i].failed) {
				off[i] = size;	/* cut off: it sends no more */
				continue;
			}
			if (off[i] >= size)
				continue;
			n = size - off[i] < step ? size - off[i] : step;
			if (dts_conn_feed(c[i], data + off[i], n, &e) != 0)
				dead[i] = 1;
			off[i] += n;
		}
		if (!dead[0] && !o[0].failed && dts_conn_paused(c[0]) &&
		    dts_conn_resume(c[0], &e) != 0)
			dead[0] = 1;
		if ((data[-1] & 0x80) && off[1] >= size / 2 && c[1] != NULL) {
			dts_conn_free(c[1]);
			c[1] = NULL;
			dead[1] = 1;
		}
	}
	dts_store_stats(st, &s);
	if (s.waiting > s.conns || s.conns != 1 + (c[1] != NULL))
		abort();
	dts_conn_free(c[0]);
	dts_conn_free(c[1]);
	dts_store_stats(st, &s);
	if (s.conns != 0 || s.waiting != 0)
		abort();
	dts_store_free(st);
	return 0;
}
