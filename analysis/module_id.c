#include "analysis/module_id.h"

#include <openssl/sha.h>

void module_id_compute(const void *ptx, size_t len, char out[MODULE_ID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char digest[SHA256_DIGEST_LENGTH];
	int i;

	SHA256(ptx, len, digest);
	for (i = 0; i < MODULE_ID_LEN / 2; i++) {
		out[2 * i] = hex[digest[i] >> 4];
		out[2 * i + 1] = hex[digest[i] & 15];
	}
	out[MODULE_ID_LEN] = '\0';
}
