#include "base/module_id.h"

#include <string.h>

#include "base/digest.h"

void module_id_compute(const void *ptx, size_t len, char out[MODULE_ID_LEN + 1])
{
	char hex[65];

	digest_sha256_hex(ptx, len, hex);
	memcpy(out, hex, MODULE_ID_LEN);
	out[MODULE_ID_LEN] = '\0';
}
