/* mkcorpus.c -- writes one valid frame of each agent message type as fuzzing seeds. */
#include <stdio.h>

#include "agentproto.h"
#include "wire.h"

/* Writes b's bytes to DIR/name and empties b. */
static void
emit(const char *dir, const char *name, struct dt_wbuf *b)
{
	char	 path[512];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) != NULL) {
		fwrite(b->p, 1, b->len, f);
		fclose(f);
	}
	dt_wbuf_reset(b);
}

int
main(int argc, char **argv)
{
	struct dt_wbuf	 b;
	char		*env[] = { "A=1", "WORLD_SIZE=4" };
	char		*av[] = { "python", "-u", "train.py" };
	struct ap_hello	 h = { AP_VERSION, "node1", 42, 29500 };
	struct ap_job	 j = { AP_VERSION, "job", "/w", 5000, 2, env, 2 };
	struct ap_rank	 r = { 1, 1, av, 3, env, 1 };
	struct ap_stop	 s = { 15, 5000 };
	struct ap_exit	 x = { 1, AP_SIGNALED, 9 };
	struct ap_error	 e = { AP_NORANK, 2, "x: command not found" };
	uint32_t	 ports[3] = { 29500, 29501, 40000 };
	const char	*dir = argc > 1 ? argv[1] : ".";

	dt_wbuf_init(&b);
	ap_put_hello(&b, &h);		emit(dir, "hello", &b);
	ap_put_job(&b, &j);		emit(dir, "job", &b);
	ap_put_rank(&b, &r);		emit(dir, "rank", &b);
	ap_put_empty(&b, AP_PREPARE);	emit(dir, "prepare", &b);
	ap_put_signal(&b, 10);		emit(dir, "signal", &b);
	ap_put_stop(&b, &s);		emit(dir, "stop", &b);
	ap_put_started(&b, 1, 99);	emit(dir, "started", &b);
	ap_put_output(&b, 1, AP_STDOUT, "hi\n", 3); emit(dir, "output", &b);
	ap_put_exit(&b, &x);		emit(dir, "exit", &b);
	ap_put_error(&b, &e);		emit(dir, "error", &b);
	ap_put_ports(&b, 3);		emit(dir, "ports", &b);
	ap_put_portlist(&b, ports, 3);	emit(dir, "portlist", &b);
	ap_put_job(&b, &j);
	ap_put_rank(&b, &r);
	ap_put_rank(&b, &r);
	ap_put_empty(&b, AP_PREPARE);	emit(dir, "conversation", &b);
	dt_wbuf_free(&b);
	return 0;
}
