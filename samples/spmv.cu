/*
 * spmv: an irregular gather. A CSR matrix-vector product y = A x with a
 * generated matrix: row r has 16..48 entries (32 on average), half of them
 * in a band around the diagonal and half at hashed random columns, so the
 * x gathers through the column indices are partly local (the band: lanes
 * and neighbouring rows share x lines) and partly scattered over all of x.
 * Values are positive and each row sums to between 0.5 and 1, so repeated
 * products stay finite.
 *
 * Each iteration runs two kernels:
 *
 *   spmv_scalar  one thread per row: each thread walks its row's val/col
 *                sequentially (per-thread spatial reuse, as in records);
 *   spmv_warp    one warp per row: lanes read val/col coalesced and reduce
 *                with shuffles in a fixed order.
 *
 * y = A x (scalar), then x = A y (warp). The val/col loads are streams (each
 * element read once per product), the x gathers are the only loads with
 * reuse across rows.
 *
 * Usage: spmv [key=value ...]; see --help and samples/README.md.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess) {                                     \
			fprintf(stderr, "spmv: %s:%d: %s: %s\n", __FILE__,     \
				__LINE__, #call, cudaGetErrorString(err_));    \
			exit(1);                                               \
		}                                                              \
	} while (0)

#define CHECK_LAUNCH(name) CHECK(cudaGetLastError())

#define THREADS 256

static __host__ __device__ __forceinline__ uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static __device__ __forceinline__ uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint32_t row_length(uint32_t r)
{
	return 16 + hash32(r * 2u + 1u) % 33;
}

/* One thread per row: columns and values of the generated matrix. */
__global__ void fill_matrix(const uint64_t *rowptr, uint32_t n, uint32_t *col, float *val)
{
	for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < n;
	     r += gridDim.x * blockDim.x) {
		uint64_t b = rowptr[r], e = rowptr[r + 1];
		uint32_t len = (uint32_t)(e - b), band = len / 2;
		for (uint32_t j = 0; j < len; j++) {
			uint32_t c;
			if (j < band) {
				int64_t cc = (int64_t)r - band / 2 + j;
				c = cc < 0 ? 0 : cc >= n ? n - 1 : (uint32_t)cc;
			} else {
				c = hash32(r * 64u + j) % n;
			}
			float u = (float)(hash32(r ^ (j << 24) ^ 0x5bd1e995u) >> 8) *
				  (1.0f / 16777216.0f);
			col[b + j] = c;
			val[b + j] = (0.5f + 0.5f * u) / (float)len;
		}
	}
}

__global__ void __launch_bounds__(THREADS)
spmv_scalar(const uint64_t *rowptr, const uint32_t *col, const float *val,
	    const float *x, float *y, uint32_t n)
{
	for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < n;
	     r += gridDim.x * blockDim.x) {
		float s = 0.0f;
		for (uint64_t k = rowptr[r]; k < rowptr[r + 1]; k++)
			s = fmaf(val[k], x[col[k]], s);
		y[r] = s;
	}
}

__global__ void __launch_bounds__(THREADS)
spmv_warp(const uint64_t *rowptr, const uint32_t *col, const float *val,
	  const float *x, float *y, uint32_t n)
{
	uint32_t lane = threadIdx.x & 31;
	uint32_t warps = gridDim.x * (blockDim.x / 32);
	for (uint32_t r = (blockIdx.x * blockDim.x + threadIdx.x) / 32; r < n; r += warps) {
		float s = 0.0f;
		uint64_t b = rowptr[r], e = rowptr[r + 1];
		for (uint64_t k = b + lane; k < e; k += 32)
			s = fmaf(val[k], x[col[k]], s);
		for (int o = 16; o > 0; o >>= 1)
			s += __shfl_down_sync(0xffffffffu, s, o);
		if (!lane)
			y[r] = s;
	}
}

/* Values in [0.5, 1.5) from a hash of the index. */
__global__ void fill_x(float *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += gridDim.x * blockDim.x)
		p[i] = 0.5f + (float)(hash32(i ^ seed) >> 8) * (1.0f / 16777216.0f);
}

__global__ void checksum(const uint32_t *p, uint64_t n, uint64_t salt,
			 unsigned long long *sum)
{
	uint64_t s = 0;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		s += mix64((i + salt) * 0x9e3779b97f4a7c15ULL ^ p[i]);
	for (int o = 16; o > 0; o >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(sum, (unsigned long long)s);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: spmv [key=value ...]\n"
		"  rows=N   rows in units of 2^20 (default 8: about 256 M entries, 2 GB)\n"
		"  iters=N  timed iterations, each one product per kernel (default 10)\n");
}

static long parse_kv(const char *arg, const char *key, long cur, bool *hit)
{
	size_t n = strlen(key);
	if (strncmp(arg, key, n) || arg[n] != '=')
		return cur;
	char *end;
	long v = strtol(arg + n + 1, &end, 0);
	if (*end || end == arg + n + 1 || v < 0) {
		fprintf(stderr, "spmv: bad value in '%s'\n", arg);
		exit(1);
	}
	*hit = true;
	return v;
}

static unsigned long long sum_of(const void *p, uint64_t words, uint64_t salt,
				 unsigned long long *sum, int grid)
{
	CHECK(cudaMemset(sum, 0, sizeof(*sum)));
	checksum<<<grid, 256>>>((const uint32_t *)p, words, salt, sum);
	CHECK_LAUNCH("checksum");
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
	long rows_m = 8, iters = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		bool hit = false;
		rows_m = parse_kv(argv[i], "rows", rows_m, &hit);
		iters = parse_kv(argv[i], "iters", iters, &hit);
		if (!hit) {
			fprintf(stderr, "spmv: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (rows_m < 1 || rows_m > 24 || iters < 1) {
		fprintf(stderr, "spmv: option out of range (rows: 1..24)\n");
		usage(stderr);
		return 1;
	}

	int dev;
	cudaDeviceProp prop;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));

	uint32_t n = (uint32_t)(rows_m << 20);
	std::vector<uint64_t> rowptr(n + 1);
	rowptr[0] = 0;
	for (uint32_t r = 0; r < n; r++)
		rowptr[r + 1] = rowptr[r] + row_length(r);
	uint64_t nnz = rowptr[n];
	printf("device: %s, %d SMs, L2 %d KB\n", prop.name, prop.multiProcessorCount,
	       prop.l2CacheSize / 1024);
	printf("matrix: %u rows, %llu entries (%.1f per row), %.0f MB of val + col, x %.0f MB\n",
	       n, (unsigned long long)nnz, (double)nnz / n, nnz * 8 / 1e6, n * 4 / 1e6);

	uint64_t *d_rowptr;
	uint32_t *col;
	float *val, *x, *y;
	unsigned long long *sum;
	CHECK(cudaMalloc(&d_rowptr, (n + 1) * sizeof(uint64_t)));
	CHECK(cudaMalloc(&col, nnz * 4));
	CHECK(cudaMalloc(&val, nnz * 4));
	CHECK(cudaMalloc(&x, (size_t)n * 4));
	CHECK(cudaMalloc(&y, (size_t)n * 4));
	CHECK(cudaMalloc(&sum, sizeof(*sum)));
	CHECK(cudaMemcpy(d_rowptr, rowptr.data(), (n + 1) * sizeof(uint64_t),
			 cudaMemcpyHostToDevice));
	int fill_grid = prop.multiProcessorCount * 8;
	fill_matrix<<<fill_grid, 256>>>(d_rowptr, n, col, val);
	CHECK_LAUNCH("fill_matrix");
	fill_x<<<fill_grid, 256>>>(x, n, 31);
	CHECK_LAUNCH("fill_x");
	CHECK(cudaDeviceSynchronize());

	int per_sm_s = 0, per_sm_w = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_s, spmv_scalar, THREADS, 0));
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_w, spmv_warp, THREADS, 0));
	int grid_s = prop.multiProcessorCount * per_sm_s;
	int grid_w = prop.multiProcessorCount * per_sm_w;

	cudaEvent_t e0, e1, e2;
	CHECK(cudaEventCreate(&e0));
	CHECK(cudaEventCreate(&e1));
	CHECK(cudaEventCreate(&e2));
	std::vector<float> ms_s, ms_w;
	/* Iteration 0 is a warm-up and is not timed. */
	for (long it = 0; it <= iters; it++) {
		CHECK(cudaEventRecord(e0));
		spmv_scalar<<<grid_s, THREADS>>>(d_rowptr, col, val, x, y, n);
		CHECK_LAUNCH("spmv_scalar");
		CHECK(cudaEventRecord(e1));
		spmv_warp<<<grid_w, THREADS>>>(d_rowptr, col, val, y, x, n);
		CHECK_LAUNCH("spmv_warp");
		CHECK(cudaEventRecord(e2));
		CHECK(cudaEventSynchronize(e2));
		float t1, t2;
		CHECK(cudaEventElapsedTime(&t1, e0, e1));
		CHECK(cudaEventElapsedTime(&t2, e1, e2));
		if (it) {
			ms_s.push_back(t1);
			ms_w.push_back(t2);
		}
	}
	double bytes = (double)nnz * 8 + (double)n * 16;
	fprintf(stderr, "kernel spmv_scalar: %.4f ms\n", median(ms_s));
	fprintf(stderr, "kernel spmv_warp: %.4f ms\n", median(ms_w));
	fprintf(stderr, "  spmv_scalar %.1f GB/s, spmv_warp %.1f GB/s (matrix + rowptr + x + y once)\n",
	       bytes / median(ms_s) / 1e6, bytes / median(ms_w) / 1e6);

	unsigned long long h = sum_of(x, n, 0, sum, fill_grid) +
			       sum_of(y, n, 1ULL << 40, sum, fill_grid);
	printf("checksum: %016llx\n", h);

	CHECK(cudaFree(d_rowptr));
	CHECK(cudaFree(col));
	CHECK(cudaFree(val));
	CHECK(cudaFree(x));
	CHECK(cudaFree(y));
	CHECK(cudaFree(sum));
	return 0;
}
