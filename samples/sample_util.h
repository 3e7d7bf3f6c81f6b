#ifndef CACHEADVISE_SAMPLE_UTIL_H
#define CACHEADVISE_SAMPLE_UTIL_H

/*
 * Host helpers the realistic samples share (decode_iter, deposit, cfd_iter,
 * carveout_bad): define SAMPLE_NAME ("decode_iter") before including. Each
 * prints "<sample>: <what>" and exits 1 on failure, as a program a user
 * wrote would. Host code only: the kernels and their PTX do not change.
 * (The older samples keep their own copies: committed fixtures name their
 * source lines.)
 */

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#ifndef SAMPLE_NAME
#error "define SAMPLE_NAME before including sample_util.h"
#endif

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess) {                                     \
			fprintf(stderr, SAMPLE_NAME ": %s:%d: %s: %s\n",       \
				__FILE__, __LINE__, #call,                     \
				cudaGetErrorString(err_));                     \
			exit(1);                                               \
		}                                                              \
	} while (0)

/* "key=N" with N >= 1: N and *hit set; another key: cur. A bad N exits. */
static inline long parse_kv(const char *arg, const char *key, long cur, bool *hit)
{
	size_t n = strlen(key);
	if (strncmp(arg, key, n) || arg[n] != '=')
		return cur;
	char *end;
	long v = strtol(arg + n + 1, &end, 0);
	if (*end || end == arg + n + 1 || v < 1) {
		fprintf(stderr, SAMPLE_NAME ": bad value in '%s'\n", arg);
		exit(1);
	}
	*hit = true;
	return v;
}

static inline void write_or_die(FILE *f, const void *p, size_t size, size_t n, const char *path)
{
	if (fwrite(p, size, n, f) != n) {
		fprintf(stderr, SAMPLE_NAME ": cannot write '%s'\n", path);
		exit(1);
	}
}

/* An integer hash for deterministic inputs. stream_table, deposit and
 * stencil1d keep a copy of their own: tests/fixtures hold real captures of
 * them whose line numbers would move; records, spmv, l2_reuse and
 * thrash_pair do not include this header. */
static __host__ __device__ __forceinline__ uint32_t sample_hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static inline FILE *open_or_die(const char *path, const char *mode)
{
	FILE *f = fopen(path, mode);

	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

static inline void close_or_die(FILE *f, const char *path)
{
	if (fclose(f)) {
		perror(path);
		exit(1);
	}
}

static inline void read_or_die(FILE *f, void *p, size_t size, size_t n, const char *path)
{
	if (fread(p, size, n, f) != n) {
		fprintf(stderr, SAMPLE_NAME ": '%s' is truncated\n", path);
		exit(1);
	}
}

#endif
