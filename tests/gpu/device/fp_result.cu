/*
 * A deterministic floating-point program whose result is a float32 file,
 * as a CFD solver's is (issue 25, item 2): relax (launched `iters` times)
 * smooths a 2-D field with a 5-point stencil of mul and add that ptxas may
 * contract into FMAs differently in each JIT form (the program's cubin,
 * the unpatched PTX JIT-compiled, the instrumented monitor module), so its
 * last bits may differ between those forms while every run of one form is
 * bit for bit the same. It writes field.f32 (the field, raw little-endian
 * float32) and residual.txt (the L2 norm per 50 iterations, %.9g), and
 * prints a summary with a time that varies (a timing line).
 *
 * tests/gpu/t_output_check.sh profiles it: its outputs must be checked
 * (identical or equal within the tolerance), never "unchecked", and the
 * monitor run must not be one of the output's reference runs.
 *
 * Usage: fp_result [iters] (default 400)
 */
#include "common.cuh"

#include <chrono>

#define NX 2048
#define NY 2048
#define THREADS 256

__global__ void init(float *u, int nx, int ny)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < nx * ny)
		u[i] = (float)(hash32((uint32_t)i) & 0xffff) * (1.0f / 65536.0f);
}

__global__ void relax(const float *__restrict__ u, float *__restrict__ v, int nx, int ny,
		      float w)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int x = i % nx, y = i / nx;

	if (i >= nx * ny)
		return;
	if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
		v[i] = u[i];
		return;
	}
	/* mul then add: contracted to FMA or not, as the compiler chooses */
	float lap = u[i - 1] * 0.25f + u[i + 1] * 0.25f + u[i - nx] * 0.25f + u[i + nx] * 0.25f;
	v[i] = u[i] * (1.0f - w) + lap * w;
}

__global__ void norm2(const float *u, int n, double *out)
{
	__shared__ double part[THREADS];
	double s = 0;

	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		s += (double)u[i] * u[i];
	part[threadIdx.x] = s;
	__syncthreads();
	for (int k = THREADS / 2; k > 0; k >>= 1) {
		if ((int)threadIdx.x < k)
			part[threadIdx.x] += part[threadIdx.x + k];
		__syncthreads();
	}
	if (!threadIdx.x)
		out[blockIdx.x] = part[0];
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 400, n = NX * NY, blocks = (n + THREADS - 1) / THREADS;
	float *u, *v;
	double *parts;
	std::vector<double> hparts(120);
	std::vector<float> field(n);
	auto t0 = std::chrono::steady_clock::now();
	FILE *res;

	require_gpu();
	CHECK_CUDA(cudaMalloc(&u, n * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&v, n * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&parts, 120 * sizeof(double)));
	init<<<blocks, THREADS>>>(u, NX, NY);
	res = fopen("residual.txt", "w");
	if (!res)
		return 2;
	for (int it = 0; it < iters; it++) {
		relax<<<blocks, THREADS>>>(u, v, NX, NY, 0.8f);
		std::swap(u, v);
		if (it % 50 == 49) {
			double s = 0;

			norm2<<<120, THREADS>>>(u, n, parts);
			CHECK_CUDA(cudaMemcpy(hparts.data(), parts, 120 * sizeof(double),
					      cudaMemcpyDeviceToHost));
			for (double p : hparts)
				s += p;
			fprintf(res, "iteration %d residual %.9g\n", it + 1, sqrt(s));
		}
	}
	CHECK_CUDA(cudaMemcpy(field.data(), u, n * sizeof(float), cudaMemcpyDeviceToHost));
	fclose(res);
	res = fopen("field.f32", "wb");
	if (!res || fwrite(field.data(), sizeof(float), n, res) != (size_t)n || fclose(res))
		return 2;
	printf("fp_result: %d iterations on %dx%d, field.f32 and residual.txt written\n", iters,
	       NX, NY);
	printf("elapsed %.3f ms\n", std::chrono::duration<double, std::milli>(
		std::chrono::steady_clock::now() - t0).count());
	return 0;
}
