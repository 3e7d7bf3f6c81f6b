/*
 * libFuzzer target for collectors/fatbin: the input is the raw contents of
 * a .nv_fatbin section (one or more fatbins back to back). Every decoded
 * cubin entry also goes through fatbin_cubin_kernels, as intake does.
 * Seeds: tests/fuzz/corpus/fatbin (see tests/fixtures/intake/Makefile).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "collectors/fatbin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fatbin fb;
	size_t i, j;

	fatbin_init(&fb);
	fatbin_parse(&fb, data, size, "fuzz", ".nv_fatbin");
	for (i = 0; i < fb.nr_entries; i++) {
		const struct fatbin_entry *e = &fb.entries[i];
		char **names;
		size_t nr;

		if (e->kind != FATBIN_KIND_CUBIN)
			continue;
		(void)fatbin_cubin_arch(e->data, e->size);
		if (fatbin_cubin_kernels(e->data, e->size, e->origin, &names, &nr))
			continue;
		for (j = 0; j < nr; j++)
			free(names[j]);
		free(names);
	}
	fatbin_release(&fb);
	return 0;
}
