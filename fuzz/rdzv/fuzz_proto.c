/*
 * fuzz_proto.c -- libFuzzer target for the rendezvous decoder: parses a
 * stream of frames as the server does, and every message that decodes
 * must encode again to the very same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dt_wbuf	b;
	struct rdzv_msg	m;
	size_t		off = 0, used;
	int		rc;

	dt_wbuf_init(&b);
	while (off < size) {
		rc = rdzv_msg_parse(data + off, size - off, &m, &used);
		if (rc != 0) {
			if (rc != DT_ERR_AGAIN && rc != DT_ERR_TOOBIG &&
			    rc != DT_ERR_PROTO)
				abort();
			break;
		}
		if (used > size - off || used > RDZV_MAX_FRAME)
			abort();
		dt_wbuf_reset(&b);
		if (rdzv_msg_encode(&b, &m) != 0 || b.len != used ||
		    memcmp(b.p, data + off, used) != 0)
			abort();
		off += used;
	}
	dt_wbuf_free(&b);
	return 0;
}
