/*
 * fuzz_yaml.c -- libFuzzer target: the input as engine.yaml; bytes after
 * a NUL are a template merged under it.
 */
#include <stdint.h>
#include <string.h>

#include "hostfile/config.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hf_config	 c;
	struct dt_err		 e;
	const char		*p = (const char *)data, *nul;
	size_t			 n = size;

	if ((nul = memchr(p, '\0', size)) != NULL)
		n = nul - p;
	hf_config_load_buf(&c, "fuzz.yaml", p, n, "tmpl.yaml",
	    nul != NULL ? nul + 1 : NULL, nul != NULL ? size - n - 1 : 0, &e);
	hf_config_free(&c);
	return 0;
}
