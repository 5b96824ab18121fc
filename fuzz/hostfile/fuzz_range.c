/*
 * fuzz_range.c -- libFuzzer target: the input as a range spec for
 * hf_expand, as SLURM_JOB_NODELIST|SLURM_TASKS_PER_NODE, and as an
 * --include and an --exclude over a fixed host list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile/hostfile.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* hf_expand's callback: checks the name is what it claims. */
static int
fuzz_name(const char *name, size_t len, void *arg)
{
	if (strlen(name) != len || len == 0 || len > HF_NAME_MAX)
		abort();
	++*(long *)arg;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hf_hosts	 hs;
	struct dt_err	 e;
	char		*s, *bar;
	long		 n = 0, r;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	/* Inputs that expand to a million names are fine, just slow. */
	if (size < 64 || strchr(s, '[') == NULL) {
		r = hf_expand(s, fuzz_name, &n, &e);
		if (r >= 0 && r != n)
			abort();
	}

	hf_hosts_init(&hs);
	if (hf_parse_list(&hs, "a[1-4]:4,b:2,c", &e) != 0)
		abort();
	hf_filter(&hs, s, NULL, &e);
	hf_hosts_free(&hs);
	hf_hosts_init(&hs);
	hf_parse_list(&hs, "a[1-4]:4,b:2,c", &e);
	hf_filter(&hs, NULL, s, &e);
	hf_hosts_free(&hs);

	hf_hosts_init(&hs);
	if ((bar = strchr(s, '|')) != NULL) {
		*bar = '\0';
		if (size < 64 || strchr(s, '[') == NULL)
			hf_from_slurm(&hs, s, bar + 1, &e);
	}
	hf_hosts_free(&hs);
	free(s);
	return 0;
}
