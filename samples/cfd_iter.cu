/*
 * cfd_iter: the shape of an iterative finite-volume solver (Rodinia's cfd,
 * the CFD case of issue 15): thousands of launches of a few short kernels,
 * about a second of wall time, timings printed on stdout, the input read
 * from a file and the result written to a file named on the command line.
 * The result is deterministic: each cell's update reads fixed neighbours
 * and sums nothing across threads, so the output file is the same byte for
 * byte on any grid and with any cache operators.
 *
 * A 1D Euler solver on a periodic ring of `mcells` x 2^20 cells (4 Mi by
 * default: 64 MB a float4 array, beyond L2), four kernels an iteration,
 * `iters=2000` iterations (8,000 launches):
 *
 *   copy_state     U_old = U                            (float4 stream)
 *   step_factor    dt = cfl * vol / (|u| + c)           (local time step)
 *   compute_flux   F[i] = Rusanov flux across face i+1/2, its dissipation
 *                  scaled by a limiter class found through a table chain
 *   time_step      U = U_old - dt / vol * (F[i] - F[i-1]), kept positive
 *
 * compute_flux is where per-load advice can be found: it streams U (each
 * element read once; the right state comes from the next lane by a
 * shuffle), and each face walks `steps=2` dependent lookups in a 44 KB
 * limiter table in global memory, through a 180 KB class map in dynamic
 * shared memory (which leaves 60 KB of L1 on sm_90, as in decode_iter).
 * Expected advice: bypass the U loads (L1::no_allocate), keep the table
 * load cached. The other three kernels only stream.
 *
 * Usage:
 *   cfd_iter --make-input FILE [mcells=4]     write a deterministic input
 *   cfd_iter INPUT OUTPUT [iters=2000] [steps=2] [threads=256]
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define SAMPLE_NAME "cfd_iter"
#include "sample_util.h"

#define NCLASS 64u       /* classes per table row: one row is 256 bytes */
#define NMAP 46080u      /* class map entries: 180 KB of shared memory */
#define NSTATES 176u     /* 176 x 256 B = 44 KB of table: 3/4 of the L1 left */
#define GAMMA 1.4f
#define CFL 0.3f

struct input_header {
	char magic[8];       /* "CACFDIN1" */
	uint32_t nmap, nstates, nclass, reserved;
	uint64_t ncells;
};

/* U = (rho, rho u, E, passive scalar); p = (gamma - 1) (E - rho u^2 / 2). */
static __device__ __forceinline__ float pressure(float4 u)
{
	return (GAMMA - 1.0f) * (u.z - 0.5f * u.y * u.y / u.x);
}

__global__ void copy_state(const float4 *u, float4 *u_old, uint64_t n)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		u_old[i] = u[i];
}

__global__ void step_factor(const float4 *u, const float *vol,
			    float *dt, uint64_t n)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float4 s = u[i];
		float c = sqrtf(GAMMA * pressure(s) / s.x);
		dt[i] = CFL * vol[i] / (fabsf(s.y / s.x) + c);
	}
}

/* Physical flux of the 1D Euler equations plus a passive scalar. */
static __device__ __forceinline__ float4 euler_flux(float4 s, float p)
{
	float v = s.y / s.x;
	return make_float4(s.y, s.y * v + p, (s.z + p) * v, s.w * v);
}

__global__ void __launch_bounds__(1024)
compute_flux(const float4 *u, const uint32_t *limiter, const uint32_t *classmap_g, uint32_t nmap,
	     uint32_t steps, float4 *flux, uint64_t n)
{
	extern __shared__ uint32_t classmap[];

	for (uint32_t i = threadIdx.x; i < nmap; i += blockDim.x)
		classmap[i] = classmap_g[i];
	__syncthreads();

	/* n is a multiple of 32 and the stride too: whole warps iterate */
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float4 l = u[i];
		float4 r;
		r.x = __shfl_down_sync(0xffffffffu, l.x, 1);
		r.y = __shfl_down_sync(0xffffffffu, l.y, 1);
		r.z = __shfl_down_sync(0xffffffffu, l.z, 1);
		r.w = __shfl_down_sync(0xffffffffu, l.w, 1);
		if ((threadIdx.x & 31) == 31)
			r = u[i + 1 == n ? 0 : i + 1];
		float pl = pressure(l), pr = pressure(r);
		float a = fmaxf(fabsf(l.y / l.x) + sqrtf(GAMMA * pl / l.x),
				fabsf(r.y / r.x) + sqrtf(GAMMA * pr / r.x));

		/* the limiter class: a dependent chain through the table */
		uint32_t key = sample_hash32(__float_as_uint(l.x) ^ sample_hash32(__float_as_uint(r.x)));
		uint32_t st = (uint32_t)(i % NSTATES);
#pragma unroll 1
		for (uint32_t j = 0; j < steps; j++) {
			uint32_t sym = (key >> (4 * j)) & 0xffffu;
			uint32_t c = classmap[(sym * nmap) >> 16];
			st = limiter[st * NCLASS + (c & (NCLASS - 1))];
		}
		float alpha = 0.5f * (1.0f + (float)(st & 15u) / 32.0f);

		float4 fl = euler_flux(l, pl), fr = euler_flux(r, pr);
		flux[i] = make_float4(0.5f * (fl.x + fr.x) - alpha * a * (r.x - l.x),
				      0.5f * (fl.y + fr.y) - alpha * a * (r.y - l.y),
				      0.5f * (fl.z + fr.z) - alpha * a * (r.z - l.z),
				      0.5f * (fl.w + fr.w) - alpha * a * (r.w - l.w));
	}
}

__global__ void time_step(const float4 *u_old, const float4 *flux,
			  const float *dt, const float *vol,
			  float4 *u, uint64_t n)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x) {
		float4 s = u_old[i], fr = flux[i], fl = flux[i == 0 ? n - 1 : i - 1];
		float k = dt[i] / vol[i];
		s.x = fmaxf(s.x - k * (fr.x - fl.x), 1e-3f);
		s.y = s.y - k * (fr.y - fl.y);
		s.z = s.z - k * (fr.z - fl.z);
		s.w = s.w - k * (fr.w - fl.w);
		/* keep the pressure positive: E at least the kinetic energy + p_min */
		s.z = fmaxf(s.z, 0.5f * s.y * s.y / s.x + 1e-3f / (GAMMA - 1.0f));
		u[i] = s;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cfd_iter --make-input FILE [mcells=4]\n"
		"       cfd_iter INPUT OUTPUT [key=value ...]\n"
		"  iters=N     iterations, 4 launches each (default 2000)\n"
		"  steps=N     limiter table lookups per face, 1..4 (default 2)\n"
		"  threads=N   threads per block (default 256)\n");
}

/* The input: integer hashes of the index, so every run of --make-input
 * writes the same bytes. Cell volumes in [0.5, 1), densities in [1, 1.5),
 * velocities in [-0.2, 0.2), pressures in [1, 1.5). */
static int make_input(const char *path, long mcells)
{
	input_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, "CACFDIN1", 8);
	h.nmap = NMAP;
	h.nstates = NSTATES;
	h.nclass = NCLASS;
	h.ncells = (uint64_t)mcells << 20;
	FILE *f = open_or_die(path, "wb");
	write_or_die(f, &h, sizeof(h), 1, path);
	std::vector<uint32_t> buf(NMAP);
	for (uint32_t i = 0; i < NMAP; i++)
		buf[i] = sample_hash32(i ^ 0x5000000u);
	write_or_die(f, buf.data(), 4, NMAP, path);
	buf.resize(NSTATES * NCLASS);
	for (uint32_t i = 0; i < NSTATES * NCLASS; i++)
		buf[i] = sample_hash32(i ^ 0x4000000u) % NSTATES;
	write_or_die(f, buf.data(), 4, buf.size(), path);
	const size_t chunk = 1 << 18;
	std::vector<float> vol(chunk), st(4 * chunk);
	for (uint64_t w = 0; w < h.ncells; w += chunk) {
		size_t n = (size_t)std::min<uint64_t>(chunk, h.ncells - w);
		for (size_t i = 0; i < n; i++)
			vol[i] = 0.5f + (float)(sample_hash32((uint32_t)(w + i) ^ 0x1000000u) >> 8) / 33554432.0f;
		write_or_die(f, vol.data(), 4, n, path);
	}
	for (uint64_t w = 0; w < h.ncells; w += chunk) {
		size_t n = (size_t)std::min<uint64_t>(chunk, h.ncells - w);
		for (size_t i = 0; i < n; i++) {
			uint32_t c = (uint32_t)(w + i);
			float rho = 1.0f + (float)(sample_hash32(c ^ 0x100u) >> 8) / 33554432.0f;
			float v = -0.2f + (float)(sample_hash32(c ^ 0x200u) >> 8) / 41943040.0f;
			float p = 1.0f + (float)(sample_hash32(c ^ 0x300u) >> 8) / 33554432.0f;
			st[4 * i + 0] = rho;
			st[4 * i + 1] = rho * v;
			st[4 * i + 2] = p / (GAMMA - 1.0f) + 0.5f * rho * v * v;
			st[4 * i + 3] = rho * (float)(c & 1);
		}
		write_or_die(f, st.data(), 4, 4 * n, path);
	}
	close_or_die(f, path);
	printf("wrote %s: %llu cells\n", path, (unsigned long long)h.ncells);
	return 0;
}

static float median(std::vector<float> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "--make-input")) {
		long mcells = 4;
		for (int i = 3; i < argc; i++) {
			bool hit = false;
			mcells = parse_kv(argv[i], "mcells", mcells, &hit);
			if (!hit) {
				usage(stderr);
				return 1;
			}
		}
		return make_input(argv[2], mcells);
	}
	if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-') {
		usage(stderr);
		return 1;
	}
	const char *in_path = argv[1], *out_path = argv[2];
	long iters = 2000, steps = 2, threads = 256;
	for (int i = 3; i < argc; i++) {
		bool hit = false;
		iters = parse_kv(argv[i], "iters", iters, &hit);
		steps = parse_kv(argv[i], "steps", steps, &hit);
		threads = parse_kv(argv[i], "threads", threads, &hit);
		if (!hit) {
			fprintf(stderr, "cfd_iter: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}
	if (steps > 4 || threads > 1024 || threads % 32) {
		fprintf(stderr, "cfd_iter: option out of range\n");
		usage(stderr);
		return 1;
	}

	FILE *f = open_or_die(in_path, "rb");
	input_header h;
	read_or_die(f, &h, sizeof(h), 1, in_path);
	if (memcmp(h.magic, "CACFDIN1", 8) || h.nmap != NMAP || h.nstates != NSTATES ||
	    h.nclass != NCLASS || h.ncells < 1024 || h.ncells % 1024) {
		fprintf(stderr, "cfd_iter: '%s' is not a cfd_iter input (make one with --make-input)\n",
			in_path);
		return 1;
	}
	uint64_t n = h.ncells;
	std::vector<uint32_t> classmap(NMAP), limiter(NSTATES * NCLASS);
	std::vector<float> vol(n), state(4 * n);
	read_or_die(f, classmap.data(), 4, classmap.size(), in_path);
	read_or_die(f, limiter.data(), 4, limiter.size(), in_path);
	read_or_die(f, vol.data(), 4, n, in_path);
	read_or_die(f, state.data(), 4, 4 * n, in_path);
	fclose(f);

	int dev;
	cudaDeviceProp prop;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	size_t shared_bytes = NMAP * 4;
	CHECK(cudaFuncSetAttribute(compute_flux, cudaFuncAttributeMaxDynamicSharedMemorySize,
				   (int)shared_bytes));
	int per_sm = 0;
	CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_flux, (int)threads,
							     shared_bytes));
	if (per_sm < 1) {
		fprintf(stderr, "cfd_iter: a block of %ld threads and 180 KB of shared memory does not fit\n",
			threads);
		return 1;
	}
	/* whole warps in every grid-stride step of compute_flux (its shuffle) */
	int flux_grid = prop.multiProcessorCount * per_sm;
	int grid = prop.multiProcessorCount * 8;

	float4 *d_u, *d_old, *d_flux;
	float *d_vol, *d_dt;
	uint32_t *d_limiter, *d_classmap;
	CHECK(cudaMalloc(&d_u, n * 16));
	CHECK(cudaMalloc(&d_old, n * 16));
	CHECK(cudaMalloc(&d_flux, n * 16));
	CHECK(cudaMalloc(&d_vol, n * 4));
	CHECK(cudaMalloc(&d_dt, n * 4));
	CHECK(cudaMalloc(&d_limiter, limiter.size() * 4));
	CHECK(cudaMalloc(&d_classmap, classmap.size() * 4));
	CHECK(cudaMemcpy(d_u, state.data(), n * 16, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(d_vol, vol.data(), n * 4, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(d_limiter, limiter.data(), limiter.size() * 4, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(d_classmap, classmap.data(), classmap.size() * 4, cudaMemcpyHostToDevice));

	printf("cfd_iter: %s, %d SMs; %llu cells, %ld iterations of 4 kernels\n", prop.name,
	       prop.multiProcessorCount, (unsigned long long)n, iters);

	/* five events an iteration: the time of each kernel, one wait an iteration */
	cudaEvent_t ev[5];
	for (int e = 0; e < 5; e++)
		CHECK(cudaEventCreate(&ev[e]));
	std::vector<float> per_kernel[4], per_iter;
	for (long it = 0; it < iters; it++) {
		CHECK(cudaEventRecord(ev[0]));
		copy_state<<<grid, (unsigned)threads>>>(d_u, d_old, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(ev[1]));
		step_factor<<<grid, (unsigned)threads>>>(d_u, d_vol, d_dt, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(ev[2]));
		compute_flux<<<flux_grid, (unsigned)threads, shared_bytes>>>(
			d_u, d_limiter, d_classmap, NMAP, (uint32_t)steps, d_flux, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(ev[3]));
		time_step<<<grid, (unsigned)threads>>>(d_old, d_flux, d_dt, d_vol, d_u, n);
		CHECK(cudaGetLastError());
		CHECK(cudaEventRecord(ev[4]));
		CHECK(cudaEventSynchronize(ev[4]));
		for (int k = 0; k < 4; k++) {
			float t;
			CHECK(cudaEventElapsedTime(&t, ev[k], ev[k + 1]));
			per_kernel[k].push_back(t);
		}
		float t;
		CHECK(cudaEventElapsedTime(&t, ev[0], ev[4]));
		per_iter.push_back(t);
	}
	CHECK(cudaMemcpy(state.data(), d_u, n * 16, cudaMemcpyDeviceToHost));
	double total = 0;
	for (float t : per_iter)
		total += t;
	static const char *const names[4] = { "copy_state", "step_factor", "compute_flux",
					      "time_step" };
	for (int k = 0; k < 4; k++)
		printf("  %-13s %.3f ms per launch (median)\n", names[k], median(per_kernel[k]));
	std::vector<float> sorted = per_iter;
	std::sort(sorted.begin(), sorted.end());
	printf("Kernel time: %.3f ms per iteration (median), min %.3f, max %.3f\n",
	       sorted[sorted.size() / 2], sorted.front(), sorted.back());
	printf("Total kernel time: %.3f ms\n", total);

	/* The result: sums in cell order (double) and an FNV-1a hash of every
	 * float's bits, independent of the grid. */
	double mass = 0, mom = 0, energy = 0, scalar = 0;
	uint64_t fnv = 0xcbf29ce484222325ULL;
	bool finite = true;
	for (uint64_t i = 0; i < 4 * n; i++) {
		uint32_t b;
		memcpy(&b, &state[i], 4);
		fnv = (fnv ^ b) * 0x100000001b3ULL;
		finite = finite && std::isfinite(state[i]);
	}
	for (uint64_t i = 0; i < n; i++) {
		mass += (double)state[4 * i] * vol[i];
		mom += (double)state[4 * i + 1] * vol[i];
		energy += (double)state[4 * i + 2] * vol[i];
		scalar += (double)state[4 * i + 3] * vol[i];
	}
	FILE *out = open_or_die(out_path, "w");
	fprintf(out, "cfd_iter result\ncells %llu\niterations %ld\nsteps %ld\nfinite %s\n"
		"state_fnv1a %016llx\nmass %.9e\nmomentum %.9e\nenergy %.9e\nscalar %.9e\n",
		(unsigned long long)n, iters, steps, finite ? "yes" : "no", (unsigned long long)fnv,
		mass, mom, energy, scalar);
	close_or_die(out, out_path);
	printf("Result stored in %s\n", out_path);

	for (int e = 0; e < 5; e++)
		CHECK(cudaEventDestroy(ev[e]));
	CHECK(cudaFree(d_u));
	CHECK(cudaFree(d_old));
	CHECK(cudaFree(d_flux));
	CHECK(cudaFree(d_vol));
	CHECK(cudaFree(d_dt));
	CHECK(cudaFree(d_limiter));
	CHECK(cudaFree(d_classmap));
	return 0;
}
