/*
 * records: record streaming in the style of the software-cache seed
 * ("Resurrecting L1"): every thread walks its own run of records
 * sequentially,
 *
 *     for (i = start; i < end; i++) {
 *         char a = charInput[i];
 *         int b = intInput[i];
 *         intOutput[i] = doComputation(a, b);
 *     }
 *
 * so each thread's accesses are byte- (charInput) or word-granular
 * (intInput, intOutput) and sequential, and neighbouring lanes are a whole
 * run apart. One 16-byte line per thread and data structure would hit 15 of
 * 16 charInput reads and 3 of 4 intInput reads; the hardware L1, shared by
 * 2048 threads per SM with 128-byte lines, loses most of that reuse (2048 x
 * 128 B x 2 inputs = 512 KB per SM against 256 KB of L1).
 * Expected advice: a software cache (thread-private 16-byte lines in shared
 * memory) for charInput first, then intInput; no L1 bypass gain.
 *
 * Usage: records [key=value ...]; see --help and samples/README.md.
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
			fprintf(stderr, "records: %s:%d: %s: %s\n", __FILE__,  \
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

static __device__ __forceinline__ int do_computation(char a, int b)
{
	int x = (int)a * 40503 + (b ^ (b >> 7));
	return x ^ (x << 5) ^ (int)((unsigned)b >> 13);
}

__global__ void __launch_bounds__(THREADS)
process_records(const char *charInput, const int *intInput, int *intOutput,
		uint32_t per_thread, uint64_t nthreads)
{
	uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= nthreads)
		return;
	uint64_t start = t * per_thread, end = start + per_thread;
	for (uint64_t i = start; i < end; i++) {
		char a = charInput[i];
		int b = intInput[i];
		intOutput[i] = do_computation(a, b);
	}
}

__global__ void fill_bytes(uint32_t *p, uint64_t nwords, uint32_t seed)
{
	for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nwords;
	     i += (uint64_t)gridDim.x * blockDim.x)
		p[i] = hash32((uint32_t)i ^ hash32((uint32_t)(i >> 32) + seed));
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
		"usage: records [key=value ...]\n"
		"  per_thread=N  records each thread walks (default 256)\n"
		"  tps=N         threads per SM (default: the device's maximum)\n"
		"  iters=N       timed launches (default 10)\n");
}

static long parse_kv(const char *arg, const char *key, long cur, bool *hit)
{
	size_t n = strlen(key);
	if (strncmp(arg, key, n) || arg[n] != '=')
		return cur;
	char *end;
	long v = strtol(arg + n + 1, &end, 0);
	if (*end || end == arg + n + 1 || v < 0) {
		fprintf(stderr, "records: bad value in '%s'\n", arg);
		exit(1);
	}
	*hit = true;
	return v;
}

int main(int argc, char **argv)
{
	long per_thread = 256, tps = 0, iters = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		}
		bool hit = false;
		per_thread = parse_kv(argv[i], "per_thread", per_thread, &hit);
		tps = parse_kv(argv[i], "tps", tps, &hit);
		iters = parse_kv(argv[i], "iters", iters, &hit);
		if (!hit) {
			fprintf(stderr, "records: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 1;
		}
	}

	int dev;
	cudaDeviceProp prop;
	CHECK(cudaGetDevice(&dev));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	if (!tps)
		tps = prop.maxThreadsPerMultiProcessor;
	if (per_thread < 1 || per_thread > (1L << 20) || tps < THREADS ||
	    tps > prop.maxThreadsPerMultiProcessor || tps % THREADS || iters < 1) {
		fprintf(stderr, "records: option out of range (tps: a multiple of %d up to %d)\n",
			THREADS, prop.maxThreadsPerMultiProcessor);
		usage(stderr);
		return 1;
	}

	uint64_t nthreads = (uint64_t)prop.multiProcessorCount * (uint64_t)tps;
	uint64_t nrec = nthreads * (uint64_t)per_thread;
	unsigned grid = (unsigned)(nthreads / THREADS);
	printf("device: %s, %d SMs, L2 %d KB\n", prop.name, prop.multiProcessorCount,
	       prop.l2CacheSize / 1024);
	printf("records: %llu threads x %ld records (%.0f MB of charInput, %.0f MB each of intInput, intOutput)\n",
	       (unsigned long long)nthreads, per_thread, nrec / 1e6, nrec * 4 / 1e6);

	char *cin;
	int *iin, *iout;
	unsigned long long *sum;
	uint64_t cwords = (nrec + 3) / 4;
	CHECK(cudaMalloc(&cin, cwords * 4));
	CHECK(cudaMalloc(&iin, nrec * 4));
	CHECK(cudaMalloc(&iout, nrec * 4));
	CHECK(cudaMalloc(&sum, sizeof(*sum)));
	int fill_grid = prop.multiProcessorCount * 8;
	fill_bytes<<<fill_grid, 256>>>((uint32_t *)cin, cwords, 11);
	CHECK_LAUNCH("fill_bytes");
	fill_bytes<<<fill_grid, 256>>>((uint32_t *)iin, nrec, 12);
	CHECK_LAUNCH("fill_bytes");
	CHECK(cudaDeviceSynchronize());

	cudaEvent_t start, stop;
	CHECK(cudaEventCreate(&start));
	CHECK(cudaEventCreate(&stop));
	std::vector<float> ms;
	/* Launch 0 is a warm-up and is not timed. */
	for (long it = 0; it <= iters; it++) {
		CHECK(cudaEventRecord(start));
		process_records<<<grid, THREADS>>>(cin, iin, iout, (uint32_t)per_thread, nthreads);
		CHECK_LAUNCH("process_records");
		CHECK(cudaEventRecord(stop));
		CHECK(cudaEventSynchronize(stop));
		float t;
		CHECK(cudaEventElapsedTime(&t, start, stop));
		if (it)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	float med = ms[ms.size() / 2];
	fprintf(stderr, "kernel process_records: %.4f ms\n", med);
	fprintf(stderr, "  min %.4f ms, max %.4f ms; %.2f G records/s\n", ms.front(), ms.back(),
	       nrec / med / 1e6);

	CHECK(cudaMemset(sum, 0, sizeof(*sum)));
	checksum<<<fill_grid, 256>>>((const uint32_t *)iout, nrec, 0, sum);
	CHECK_LAUNCH("checksum");
	unsigned long long h;
	CHECK(cudaMemcpy(&h, sum, sizeof(h), cudaMemcpyDeviceToHost));
	printf("checksum: %016llx\n", h);

	CHECK(cudaFree(cin));
	CHECK(cudaFree(iin));
	CHECK(cudaFree(iout));
	CHECK(cudaFree(sum));
	return 0;
}
