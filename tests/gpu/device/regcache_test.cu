/*
 * The warp register cache (device/regcache.cuh) on a GPU.
 *
 *   regcache_test           correctness: for k = 1..8, plain, shared-memory
 *                           and register-cache stencils equal the host's
 *                           answer (n not a multiple of 32 or of the block)
 *   regcache_test --once K  launches the three versions once for k = K (ncu)
 *   regcache_test --bench [n] [reps]
 *                           the seed's table: kernel time of the three
 *                           versions for k = 1..8 (median of reps)
 *
 * Exit 0, 1 on a wrong result, 77 without a GPU.
 */
#include <cstring>
#include <vector>

#include "common.cuh"
#include "stencil_kernels.cuh"

#define THREADS 1024

struct versions {
	void (*plain)(const int *, int *, long long);
	void (*shared)(const int *, int *, long long);
	void (*rc)(const int *, int *, long long);
};

template <int K>
static versions make_versions()
{
	versions v = { stencil_plain<K>, stencil_shared<K>, stencil_rc<K> };
	return v;
}

static const versions table[8] = { make_versions<1>(), make_versions<2>(), make_versions<3>(),
				   make_versions<4>(), make_versions<5>(), make_versions<6>(),
				   make_versions<7>(), make_versions<8>() };

static void launch(int which, int k, const int *A, int *B, long long n)
{
	unsigned grid = (unsigned)((n + THREADS - 1) / THREADS);
	const versions &v = table[k - 1];

	if (which == 0)
		v.plain<<<grid, THREADS>>>(A, B, n);
	else if (which == 1)
		v.shared<<<grid, THREADS, (THREADS + 2 * k) * sizeof(int)>>>(A, B, n);
	else
		v.rc<<<grid, THREADS>>>(A, B, n);
}

static void fill(std::vector<int> &a)
{
	for (size_t i = 0; i < a.size(); i++)
		a[i] = (int)(hash32((uint32_t)i) % 1000);
}

static int correctness(void)
{
	const long long n = 1000003;            /* not a multiple of 32 or 1024 */
	std::vector<int> a(n), want(n), got(n);
	int *d_a, *d_b;
	static const char *const names[3] = { "plain", "shared memory", "register cache" };

	fill(a);
	CHECK_CUDA(cudaMalloc(&d_a, n * sizeof(int)));
	CHECK_CUDA(cudaMalloc(&d_b, n * sizeof(int)));
	CHECK_CUDA(cudaMemcpy(d_a, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
	for (int k = 1; k <= 8; k++) {
		for (long long i = 0; i < n; i++) {
			int acc = 0;
			if (i < n - 2 * k) {
				for (int j = 0; j <= 2 * k; j++)
					acc += a[i + j];
				want[i] = acc / (2 * k + 1);
			} else {
				want[i] = -7;
			}
		}
		for (int which = 0; which < 3; which++) {
			char what[160];

			CHECK_CUDA(cudaMemset(d_b, 0xff, n * sizeof(int)));
			launch(which, k, d_a, d_b, n);
			CHECK_CUDA(cudaGetLastError());
			CHECK_CUDA(cudaMemcpy(got.data(), d_b, n * sizeof(int), cudaMemcpyDeviceToHost));
			long long bad = 0;
			for (long long i = 0; i < n - 2 * k; i++)
				bad += got[i] != want[i];
			/* the margin is not written */
			for (long long i = n - 2 * k; i < n; i++)
				bad += got[i] != -1;
			snprintf(what, sizeof(what), "k=%d %s stencil: %lld wrong of %lld", k, names[which],
				 bad, n);
			expect(bad == 0, what);
		}
	}
	cudaFree(d_a);
	cudaFree(d_b);
	return finish_tests();
}

static int bench(long long n, int reps)
{
	int *d_a, *d_b;
	std::vector<int> a(n);

	fill(a);
	CHECK_CUDA(cudaMalloc(&d_a, n * sizeof(int)));
	CHECK_CUDA(cudaMalloc(&d_b, n * sizeof(int)));
	CHECK_CUDA(cudaMemcpy(d_a, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
	printf("%lld-element stencils, blocks of %d, median of %d launches\n", n, THREADS, reps);
	printf("%-3s %10s %10s %10s %12s %12s\n", "k", "plain_ms", "shared_ms", "regcache_ms",
	       "rc_vs_shared", "rc_vs_plain");
	for (int k = 1; k <= 8; k++) {
		float t[3];
		for (int which = 0; which < 3; which++)
			t[which] = median_ms(reps, [&] { launch(which, k, d_a, d_b, n); });
		printf("%-3d %10.3f %10.3f %10.3f %11.2fx %11.2fx\n", k, t[0], t[1], t[2], t[1] / t[2],
		       t[0] / t[2]);
	}
	cudaFree(d_a);
	cudaFree(d_b);
	return 0;
}

int main(int argc, char **argv)
{
	cudaDeviceProp prop = require_gpu();

	printf("GPU: %s\n", prop.name);
	if (argc > 2 && !strcmp(argv[1], "--once")) {
		int k = atoi(argv[2]);
		long long n = 134217728LL;
		int *d_a, *d_b;

		if (k < 1 || k > 8)
			return 1;
		CHECK_CUDA(cudaMalloc(&d_a, n * sizeof(int)));
		CHECK_CUDA(cudaMalloc(&d_b, n * sizeof(int)));
		CHECK_CUDA(cudaMemset(d_a, 1, n * sizeof(int)));
		for (int which = 0; which < 3; which++)
			launch(which, k, d_a, d_b, n);
		CHECK_CUDA(cudaGetLastError());
		CHECK_CUDA(cudaDeviceSynchronize());
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--bench"))
		return bench(argc > 2 ? atoll(argv[2]) : 134217728LL, argc > 3 ? atoi(argv[3]) : 20);
	return correctness();
}
