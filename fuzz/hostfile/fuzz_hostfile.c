/*
 * fuzz_hostfile.c -- libFuzzer target: the input as a hostfile, then the
 * same bytes as an inline -H list; what parses is placed with options
 * taken from its first bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile/hostfile.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Places hs with options from the first input bytes. */
static void
fuzz_place(const struct hf_hosts *hs, const uint8_t *d, size_t n)
{
	struct hf_place_opts	o;
	struct hf_plan		plan;
	struct dt_err		e;
	char			line[512];
	size_t			i;

	memset(&o, 0, sizeof(o));
	o.np = n > 0 ? d[0] % 40 : 0;
	o.nservers = n > 1 ? d[1] % 4 : 0;
	o.oversubscribe = n > 2 ? d[2] & 1 : 0;
	o.nproc_per_node = n > 2 ? (d[2] >> 1) % 3 : 0;
	if (hf_place(hs, &o, &plan, &e) == 0)
		for (i = 0; i < plan.nranks; i++)
			hf_plan_line(&plan, i, line, sizeof(line));
	hf_plan_free(&plan);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hf_hosts	 hs;
	struct dt_err	 e;
	char		*s;

	hf_hosts_init(&hs);
	if (hf_parse_buf(&hs, "fuzz", (const char *)data, size, &e) == 0 &&
	    hs.n < 4096)
		fuzz_place(&hs, data, size);
	hf_hosts_free(&hs);

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	hf_hosts_init(&hs);
	if (hf_parse_list(&hs, s, &e) == 0 && hs.n < 4096)
		fuzz_place(&hs, data, size);
	hf_hosts_free(&hs);
	free(s);
	return 0;
}
