/* mkcorpus.c -- writes one seed per message type into fuzz/rdzv/corpus. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/wire.h"
#include "rendezvous/proto.h"

int
main(int argc, char **argv)
{
	static const uint8_t	types[] = { RDZV_AUTH, RDZV_JOIN, RDZV_SET,
		RDZV_GET, RDZV_ADD, RDZV_BARRIER, RDZV_PING, RDZV_CHALLENGE,
		RDZV_AUTH_OK, RDZV_JOIN_OK, RDZV_VALUE, RDZV_OK, RDZV_INT,
		RDZV_PONG, RDZV_ERROR, RDZV_ABORT };
	struct rdzv_msg		m;
	struct dt_wbuf		b;
	char			path[512];
	uint8_t			val[128];
	size_t			i;
	FILE			*f;

	if (argc != 2)
		return 1;
	memset(val, 0xab, sizeof(val));
	for (i = 0; i < sizeof(types); i++) {
		memset(&m, 0, sizeof(m));
		m.type = types[i];
		m.magic = RDZV_MAGIC;
		m.version = RDZV_VERSION;
		m.rank = (int32_t)i;
		m.local_rank = -1;
		m.world = 8;
		m.local_world = 4;
		m.nnodes = 2;
		m.flags = RDZV_GET_WAIT;
		m.code = DT_ERR_AUTH;
		m.num = 42;
		m.host = (const uint8_t *)"node1";
		m.hostlen = 5;
		m.key = (const uint8_t *)"dtrun/nccl-id/0";
		m.keylen = 15;
		m.val = val;
		m.vallen = sizeof(val);
		m.text = (const uint8_t *)"why";
		m.textlen = 3;
		dt_wbuf_init(&b);
		rdzv_msg_encode(&b, &m);
		snprintf(path, sizeof(path), "%s/%s", argv[1],
		    rdzv_msg_name(types[i]));
		if ((f = fopen(path, "wb")) == NULL)
			return 1;
		fwrite(b.p, 1, b.len, f);
		fclose(f);
		dt_wbuf_free(&b);
	}
	return 0;
}
