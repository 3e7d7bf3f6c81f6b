#include "base/digest.h"

#include <openssl/sha.h>

#include "base/strbuf.h"

static void to_hex(const unsigned char *d, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * n] = '\0';
}

void digest_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char d[SHA256_DIGEST_LENGTH];

	SHA256(data, len, d);
	to_hex(d, sizeof(d), out);
}

int digest_file_sha256_hex(const char *path, char out[65])
{
	struct strbuf sb = STRBUF_INIT;
	int ret = strbuf_read_file(&sb, path, 0);

	if (!ret)
		digest_sha256_hex(sb.buf, sb.len, out);
	strbuf_release(&sb);
	return ret;
}
