#ifndef CACHEADVISE_DIGEST_H
#define CACHEADVISE_DIGEST_H

#include <stddef.h>

/* SHA-256 (OpenSSL libcrypto) as 64 lowercase hex digits; out holds 65 bytes. */
void digest_sha256_hex(const void *data, size_t len, char out[65]);
/* Of a file's contents. Returns 0 or CA_E_INPUT naming the file. */
int digest_file_sha256_hex(const char *path, char out[65]);

#endif
