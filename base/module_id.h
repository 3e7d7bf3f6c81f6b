#ifndef CACHEADVISE_MODULE_ID_H
#define CACHEADVISE_MODULE_ID_H

#include <stddef.h>

/*
 * A module's id: the first 16 hex digits of the SHA-256 of its decompressed
 * PTX text (DESIGN.md). intake, the CLI and the injection library all call
 * this one function, so ids always agree. out must hold 17 bytes.
 */
#define MODULE_ID_LEN 16
void module_id_compute(const void *ptx, size_t len, char out[MODULE_ID_LEN + 1]);

#endif
