#ifndef CACHEADVISE_TEST_DEVICE_COMMON_CUH
#define CACHEADVISE_TEST_DEVICE_COMMON_CUH

/*
 * Shared by the GPU test programs of device/ (tests/gpu/device/*.cu):
 * checked CUDA calls, "no GPU" as CTest's skip status 77, PASS/FAIL lines,
 * a median timer, and what the samples/ programs share (input generators
 * and the checksum they print), so a test can reproduce a sample's
 * inputs and its `checksum:` line. Built by device/CMakeLists.txt and by
 * tests/gpu/device/run_device.sh.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define SKIP_STATUS 77

#define CHECK_CUDA(call)                                                               \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,   \
				cudaGetErrorString(e_));                               \
			exit(2);                                                       \
		}                                                                      \
	} while (0)

static int test_failures;

static void expect(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "PASS" : "FAIL", what);
	if (!ok)
		test_failures++;
}

/* Exits 77 when there is no usable GPU, so CTest reports a skip. */
static cudaDeviceProp require_gpu(void)
{
	int n = 0;
	cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess || n == 0) {
		printf("SKIP: no usable GPU (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
		exit(SKIP_STATUS);
	}
	CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
	return prop;
}

/* Hash of an index: deterministic inputs without rand(). */
static __host__ __device__ __forceinline__ uint32_t hash32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

/* The 64-bit finaliser of the samples' checksum. */
static __host__ __device__ __forceinline__ uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/*
 * The samples' inputs (samples/records.cu fill_bytes, stream_table.cu
 * fill_hash): word i is a hash of i and seed, reduced modulo mod when mod
 * is not 0.
 */
__global__ void fill_hash(uint32_t *p, uint64_t n, uint32_t seed, uint32_t mod)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
		p[i] = mod ? h % mod : h;
	}
}

/* Values in [0, 1) from a hash of the index (samples/stencil1d.cu and
 * l2_reuse.cu fill_float). */
__global__ void fill_unit_float(float *p, uint64_t n, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
		p[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
	}
}

/* The samples' checksum kernel: adds mix64((i + salt) * golden ^ p[i]) over
 * i < n into *sum; the sum does not depend on the grid. */
__global__ void checksum(const uint32_t *p, uint64_t n, uint64_t salt, unsigned long long *sum)
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

/* The samples' sum_of(): the checksum of `words` 32-bit words at device
 * pointer p. */
static inline unsigned long long sum_of(const void *p, uint64_t words, uint64_t salt)
{
	unsigned long long *d, h;

	CHECK_CUDA(cudaMalloc(&d, sizeof(*d)));
	CHECK_CUDA(cudaMemset(d, 0, sizeof(*d)));
	checksum<<<1024, 256>>>((const uint32_t *)p, words, salt, d);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	return h;
}

__global__ void count_differences(const uint32_t *a, const uint32_t *b, uint64_t n,
				  unsigned long long *count)
{
	unsigned long long c = 0;
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		c += a[i] != b[i];
	if (c)
		atomicAdd(count, c);
}

/* How many of the `words` 32-bit words at device pointers a and b differ
 * (bit for bit: floats compare by their bits). */
static inline unsigned long long words_differing(const void *a, const void *b, uint64_t words)
{
	unsigned long long *d, h;

	CHECK_CUDA(cudaMalloc(&d, sizeof(*d)));
	CHECK_CUDA(cudaMemset(d, 0, sizeof(*d)));
	count_differences<<<1024, 256>>>((const uint32_t *)a, (const uint32_t *)b, words, d);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	return h;
}

/* Median of `reps` timed runs of launch() (after one untimed warm-up), ms. */
template <typename F>
static float median_ms(int reps, F launch)
{
	cudaEvent_t a, b;
	std::vector<float> ms;

	CHECK_CUDA(cudaEventCreate(&a));
	CHECK_CUDA(cudaEventCreate(&b));
	launch();
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());
	for (int i = 0; i < reps; i++) {
		float t;
		CHECK_CUDA(cudaEventRecord(a));
		launch();
		CHECK_CUDA(cudaEventRecord(b));
		CHECK_CUDA(cudaEventSynchronize(b));
		CHECK_CUDA(cudaGetLastError());
		CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
		ms.push_back(t);
	}
	CHECK_CUDA(cudaEventDestroy(a));
	CHECK_CUDA(cudaEventDestroy(b));
	std::sort(ms.begin(), ms.end());
	return ms[ms.size() / 2];
}

static int finish_tests(void)
{
	printf("%d failed\n", test_failures);
	return test_failures ? 1 : 0;
}

#endif
