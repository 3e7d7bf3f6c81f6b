#ifndef CACHEADVISE_TEST_DEVICE_COMMON_CUH
#define CACHEADVISE_TEST_DEVICE_COMMON_CUH

/*
 * Shared by the GPU test programs of device/ (tests/gpu/device/*.cu):
 * checked CUDA calls, "no GPU" as CTest's skip status 77, PASS/FAIL lines
 * and a median timer. Built by device/CMakeLists.txt and by
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
