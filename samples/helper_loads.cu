/*
 * helper_loads: two kernels that read every element through one templated
 * __device__ helper and a macro in a header (helper_loads.cuh), each
 * advised a different form of the helper's load.
 *
 * Each iteration runs:
 *
 *   produce  streams `src` (far larger than L2, each element read once,
 *            through load_at) and writes a table of per-row sums (24 MB
 *            by default, fits in L2);
 *   consume  streams `rows` (as large again, through LOAD_ROW) and, for
 *            each element, re-reads the table through load_at.
 *
 * The table is written by produce and read many times by consume: it stays
 * in L2 only when the two streams do not push it out. The streams' reads
 * are the ones to mark L2::evict_first (FACTS.md: streams evict_first 1.08x
 * on an H200 for this shape, 1.16x on an H100), the table's read stays as
 * it is. So load_at is advised evict_first where produce calls it and left
 * as it is where consume calls it: one helper, two forms.
 *
 * Usage: helper_loads [key=value ...]; see --help and samples/README.md.
 */
#define SAMPLE_NAME "helper_loads"
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "helper_loads.cuh"
#include "sample_util.h"

#define THREADS 256
#define COLS 64   /* elements per table row: produce sums COLS of src per entry */

__global__ void __launch_bounds__(THREADS)
produce(const float *src, uint64_t ntable, float *table)
{
	for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < ntable;
	     t += (uint64_t)gridDim.x * blockDim.x) {
		float s = 0.0f;
#pragma unroll 4
		for (uint32_t c = 0; c < COLS; c++)
			s += load_at(src, c * ntable + t);
		table[t] = s;
	}
}

__global__ void __launch_bounds__(THREADS)
consume(const float *rows, uint64_t nrows, const float *table, uint64_t ntable,
	float *out)
{
	for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < nrows;
	     r += (uint64_t)gridDim.x * blockDim.x) {
		float acc = 0.0f;
		uint32_t h = sample_hash32((uint32_t)r);
		for (uint32_t c = 0; c < 8; c++) {
			float v = LOAD_ROW(rows, nrows, c, r);
			h = sample_hash32(h + c);
			acc = fmaf(v, load_at(table, h % ntable), acc);
		}
		out[r] = acc;
	}
}

/* Values in [0, 1) from a hash of the index. */
__global__ void fill_float(float *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = sample_hash32((uint32_t)i ^ sample_hash32((uint32_t)(i >> 32) + seed));
		p[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
	}
}

__global__ void checksum(const uint32_t *p, uint64_t n, uint64_t salt,
			 unsigned long long *sum)
{
	uint64_t s = 0;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint64_t x = (i + salt) * 0x9e3779b97f4a7c15ULL ^ p[i];
		x ^= x >> 33;
		x *= 0xff51afd7ed558ccdULL;
		s += x ^ (x >> 33);
	}
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(sum, (unsigned long long)s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: helper_loads [key=value ...]\n"
		"  table_mb=N  the table in MB (default 24)\n"
		"  iters=N     timed iterations (default 10)\n");
}

static unsigned long long sum_of(const float *p, uint64_t n, uint64_t salt,
				 unsigned long long *sum, int grid)
{
	CHECK(cudaMemset(sum, 0, sizeof(*sum)));
	checksum<<<grid, 256>>>((const uint32_t *)p, n, salt, sum);
	CHECK(cudaGetLastError());
	unsigned long long h;
	CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
	return h;
}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	long table_mb = 24, iters = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		bool hit = false;
		table_mb = parse_kv(argv[i], "table_mb", table_mb, &hit);
		iters = parse_kv(argv[i], "iters", iters, &hit);
		if (!hit) {
			fprintf(stderr, "helper_loads: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (table_mb > 256 || iters > 1000) {
		fprintf(stderr, "helper_loads: option out of range\n");
		usage(stderr);
		return 1;
	}

	cudaDeviceProp prop;
	int dev;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	uint64_t ntable = ((uint64_t)table_mb << 20) / 4;
	uint64_t nsrc = ntable * COLS;          /* 1.5 GB with the default table */
	uint64_t nrows = nsrc / 8;              /* consume reads 8 rows of nrows */
	int grid = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / THREADS);

	float *src, *table, *rows, *out;
	unsigned long long *sum;
	CHECK(cudaMalloc(&src, nsrc * 4));
	CHECK(cudaMalloc(&table, ntable * 4));
	CHECK(cudaMalloc(&rows, nrows * 8 * 4));
	CHECK(cudaMalloc(&out, nrows * 4));
	CHECK(cudaMalloc(&sum, sizeof(*sum)));
	fill_float<<<grid, THREADS>>>(src, nsrc, 31);
	fill_float<<<grid, THREADS>>>(rows, nrows * 8, 32);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	printf("device: %s, L2 %d KB; table %.1f MB, streams %.1f MB + %.1f MB\n", prop.name,
	       prop.l2CacheSize / 1024, ntable * 4 / 1048576.0, nsrc * 4 / 1048576.0,
	       nrows * 32 / 1048576.0);

	cudaEvent_t e0, e1, e2;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventCreate(&e2));
	std::vector<float> ms_p, ms_c;
	/* Iteration 0 is a warm-up and is not timed. */
	for (long it = 0; it <= iters; it++) {
		CHECK(cudaEventRecord(e0));
		produce<<<grid, THREADS>>>(src, ntable, table);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(e1));
		consume<<<grid, THREADS>>>(rows, nrows, table, ntable, out);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(e2));
		CHECK(cudaEventSynchronize(e2));
		float t1, t2;
		CHECK(cudaEventElapsedTime(&t1, e0, e1));
		CHECK(cudaEventElapsedTime(&t2, e1, e2));
		if (it) {
			ms_p.push_back(t1);
			ms_c.push_back(t2);
		}
	}
	fprintf(stderr, "kernel produce: %.4f ms\n", median(ms_p));
	fprintf(stderr, "kernel consume: %.4f ms\n", median(ms_c));
	printf("checksum: %016llx\n",
	       sum_of(table, ntable, 0, sum, grid) + sum_of(out, nrows, 1ULL << 40, sum, grid));

	CHECK(cudaFree(src));
	CHECK(cudaFree(table));
	CHECK(cudaFree(rows));
	CHECK(cudaFree(out));
	CHECK(cudaFree(sum));
	return 0;
}
