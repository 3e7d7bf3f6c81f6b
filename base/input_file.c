#include "base/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"

static int refuse_size(const char *path, uint64_t size, uint64_t max_bytes)
{
	return error_set(CA_E_INPUT, "'%s' has %llu bytes, more than the %llu cacheadvise reads "
			 "for this kind of file: is it the right file?", path,
			 (unsigned long long)size, (unsigned long long)max_bytes);
}

int input_file_open(const char *path, uint64_t max_bytes, uint64_t *size)
{
	struct stat st;
	int fd, flags, ret;

	if (!max_bytes)
		max_bytes = INPUT_MAX_BINARY;
	if (size)
		*size = UINT64_MAX;
	if (!strcmp(path, "-")) {
		/* The user piped it in: a pipe is what standard input is. */
		fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
		if (fd < 0)
			return error_set(CA_E_INPUT, "cannot read standard input: %s",
					 strerror(errno));
		if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
			if ((uint64_t)st.st_size > max_bytes) {
				close(fd);
				return refuse_size("<stdin>", (uint64_t)st.st_size, max_bytes);
			}
			if (size)
				*size = (uint64_t)st.st_size;
		}
		return fd;
	}
	/* O_NONBLOCK: opening a FIFO with no writer must not wait for one. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == EISDIR)
			return error_set(CA_E_INPUT, "cannot read '%s': it is a directory", path);
		return error_set(CA_E_INPUT, "cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st)) {
		ret = error_set(CA_E_INPUT, "cannot read '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = error_set(CA_E_INPUT, "cannot read '%s': it is a directory", path);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = error_set(CA_E_INPUT, "cannot read '%s': it is not a regular file (a %s)",
				path, S_ISFIFO(st.st_mode) ? "FIFO" : S_ISSOCK(st.st_mode) ?
				"socket" : "device");
		goto fail;
	}
	if ((uint64_t)st.st_size > max_bytes) {
		ret = refuse_size(path, (uint64_t)st.st_size, max_bytes);
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	if (size)
		*size = (uint64_t)st.st_size;
	return fd;
fail:
	close(fd);
	return ret;
}

int input_file_same(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int input_file_read(struct strbuf *sb, const char *path, size_t max_bytes)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	size_t start = sb->len;
	uint64_t size;
	int fd, ret = 0;

	if (!max_bytes)
		max_bytes = INPUT_MAX_BINARY;
	fd = input_file_open(path, max_bytes, &size);
	if (fd < 0)
		return fd;
	if (size != UINT64_MAX)
		strbuf_grow(sb, (size_t)size + 4096);  /* one allocation, no regrowth */
	for (;;) {
		ssize_t n;

		/* sb->alloc is 0 for a fresh strbuf read from a pipe: no subtraction
		 * that could wrap */
		if (sb->alloc < sb->len + 1 + 4096)
			strbuf_grow(sb, 65536);
		n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = error_set(CA_E_INPUT, "cannot read '%s': %s", name, strerror(errno));
			break;
		}
		if (!n)
			break;
		if (sb->len - start + (size_t)n > max_bytes) {
			/* A file that grew, or a pipe: the limit holds either way. */
			ret = error_set(CA_E_INPUT, "'%s' is larger than %zu bytes, the most "
					"cacheadvise reads for this kind of file", name, max_bytes);
			break;
		}
		strbuf_setlen(sb, sb->len + (size_t)n);
	}
	close(fd);
	if (ret)
		strbuf_setlen(sb, start);
	return ret;
}

int input_text_check(const char *name, const char *buf, size_t len)
{
	const char *nul = memchr(buf, '\0', len);

	if (nul)
		return error_set(CA_E_INPUT, "'%s' has a NUL byte at offset %zu: it is not text "
				 "(a binary, or a damaged file?)", name, (size_t)(nul - buf));
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		return 3;
	return 0;
}

int input_file_read_text(struct strbuf *sb, const char *path, size_t max_bytes)
{
	size_t start = sb->len;
	int ret = input_file_read(sb, path, max_bytes);

	if (ret)
		return ret;
	ret = input_text_check(strcmp(path, "-") ? path : "<stdin>", sb->buf + start,
			       sb->len - start);
	if (ret < 0) {
		strbuf_setlen(sb, start);
		return ret;
	}
	if (ret) {
		memmove(sb->buf + start, sb->buf + start + ret, sb->len - start - (size_t)ret);
		strbuf_setlen(sb, sb->len - (size_t)ret);
	}
	return 0;
}
