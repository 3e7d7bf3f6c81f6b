/*
 * cacheadvise-probe: P-chase microbenchmarks of the GPU's caches
 * (seeds/pchase-gpu-cache-microbenchmarks.txt), written as the device
 * model (docs/device-json.md, schema "cacheadvise.device/1").
 *
 *     cacheadvise-probe [--out FILE] [--device N] [--verbose]
 *
 * One thread walks a chain array (arr[j] holds the index of the next
 * element, `stride` bytes further, wrapping at the footprint) and times
 * every dependent load with the SM clock, as in the seed's kernel: the
 * loaded index is stored to shared memory before the second clock read, so
 * the read waits for the load. A load is a miss when it takes longer than
 * the midpoint between the measured hit latencies of the two levels.
 *
 * Measured, each with the seed's method where the hardware allows it:
 *   - L1 (ld.global.ca): hit latency; capacity (largest footprint that
 *     never misses, step 1); fill (sector) size from the cold-miss pattern
 *     of a 4-byte stride; line size from how capacity grows with the
 *     stride (a line is the unit of allocation: below it the capacity in
 *     bytes stays put, above it grows with the stride); sets and ways with
 *     step 3 (footprint C + m*b) where misses grow as m*(ways+1), i.e. LRU
 *     with a plain set index, else reported as not measurable.
 *   - L1 with the largest shared-memory carve-out.
 *   - the read-only path (ld.global.nc): hit latency and capacity.
 *   - L2 (ld.global.cg, which does not allocate in L1): hit latency,
 *     the footprint that still hits, and DRAM latency beyond it.
 *
 * The CUDA runtime is linked statically (nvcc's default) and loads the
 * driver when first called, so this program starts without a GPU and says
 * why it cannot measure. Exit status: 0 measured, 4 no usable GPU (the
 * reason is the last line on stderr), 2 another failure.
 *
 * Host and device code are one file because they share the kernel
 * templates; nothing here is included by the C code.
 */
#include <cuda_runtime.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <string>
#include <vector>

enum load_op { OP_CA, OP_NC, OP_CG };

static const char *const op_ptx[] = { "ld.global.ca.u32", "ld.global.nc.u32", "ld.global.cg.u32" };

template <int OP>
__device__ __forceinline__ unsigned chase_load(const unsigned *p)
{
	unsigned v;

	if (OP == OP_CA)
		asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	else if (OP == OP_NC)
		asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	else
		asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ unsigned clock32(void)
{
	unsigned t;

	asm volatile("mov.u32 %0, %%clock;" : "=r"(t) : : "memory");
	return t;
}

/* The fixed-width record the chase kernel writes back. */
struct chase_out {
	unsigned long long cycles;   /* sum of the timed loads' latencies */
	unsigned long long misses;   /* timed loads slower than thr */
	unsigned long long sink;     /* keeps the chain alive */
};

/*
 * warm untimed loads, then iters timed ones, from element start. CARVE is
 * only there to make a distinct kernel whose shared-memory carve-out can
 * be set without touching the others'.
 */
template <int OP, int CARVE>
__global__ void chase(const unsigned *arr, unsigned start, unsigned warm, unsigned iters,
		      unsigned thr, chase_out *out)
{
	__shared__ unsigned s_index[32];
	unsigned j = start, misses = 0, i;
	unsigned long long sum = 0;

	for (i = 0; i < warm; i++)
		j = chase_load<OP>(arr + j);
	for (i = 0; i < iters; i++) {
		unsigned t0 = clock32();
		j = chase_load<OP>(arr + j);
		s_index[i & 31] = j;
		unsigned t1 = clock32();
		unsigned dt = t1 - t0;
		sum += dt;
		misses += dt > thr;
	}
	out->cycles = sum;
	out->misses = misses;
	out->sink = j + s_index[j & 31];
}

/* arr[i] = index of the element stride_elems further, wrapping at n. */
__global__ void chain_init(unsigned *arr, unsigned long long n, unsigned stride_elems)
{
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;

	for (; i < n; i += step)
		arr[i] = (unsigned)((i + stride_elems) % n);
}

/* Writes over a buffer so that L2 forgets what was there before. */
__global__ void scrub(unsigned *buf, unsigned long long n)
{
	unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
	unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;

	for (; i < n; i += step)
		buf[i] = (unsigned)i;
}

/* ---------------------------------------------------------------- host */

static int verbose;

static void note(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Every failure ends here: the last stderr line is the reason. */
static void die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));
static void die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

#define CHECK(call)                                                                    \
	do {                                                                           \
		cudaError_t check_err_ = (call);                                       \
		if (check_err_ != cudaSuccess)                                         \
			die(2, "%s failed at %s:%d: %s (%s)", #call, __FILE__, __LINE__, \
			    cudaGetErrorString(check_err_), cudaGetErrorName(check_err_)); \
	} while (0)

struct point {
	unsigned long long footprint;
	unsigned stride;
	double mean;          /* cycles per timed load */
	double miss_frac;
	unsigned long long misses, loads;
};

struct probe {
	unsigned *arr;                 /* chain buffer, arr_bytes */
	unsigned long long arr_bytes;
	chase_out *d_out;
	unsigned thr_l1;               /* miss threshold for L1 / read-only chases */
	std::vector<std::string> notes;
};

static void chain(struct probe *p, unsigned long long footprint, unsigned stride)
{
	unsigned long long n = footprint / 4;

	if (footprint > p->arr_bytes)
		die(2, "internal error: footprint %llu exceeds the buffer", footprint);
	chain_init<<<1024, 256>>>(p->arr, n, stride / 4);
	CHECK(cudaGetLastError());
}

template <int OP, int CARVE>
static point run_chase(struct probe *p, unsigned long long footprint, unsigned stride,
		       unsigned warm_rounds, unsigned timed_rounds, unsigned thr)
{
	unsigned long long per_round = footprint / stride;
	unsigned long long warm = per_round * warm_rounds, iters = per_round * timed_rounds;
	chase_out out;
	point pt;

	if (warm > 0xffffffffULL || iters > 0xffffffffULL)
		die(2, "internal error: chase of %llu loads is too long", warm + iters);
	chain(p, footprint, stride);
	chase<OP, CARVE><<<1, 1>>>(p->arr, 0, (unsigned)warm, (unsigned)iters, thr, p->d_out);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(&out, p->d_out, sizeof(out), cudaMemcpyDeviceToHost));
	pt.footprint = footprint;
	pt.stride = stride;
	pt.loads = iters;
	pt.misses = out.misses;
	pt.mean = iters ? (double)out.cycles / (double)iters : 0;
	pt.miss_frac = iters ? (double)out.misses / (double)iters : 0;
	return pt;
}

/* Nothing missed, give or take the odd interrupt-length outlier. */
static int all_hits(const point &pt)
{
	return pt.misses <= 2 + pt.loads / 500;
}

/*
 * Step 1 of the seed: the largest footprint (from lo, a multiple of
 * stride) with no misses, found with a coarse step, then `fine`, then the
 * stride itself when exact. Returns 0 when even lo misses; sets *capped
 * when hi was reached without a miss.
 */
template <int OP, int CARVE>
static unsigned long long capacity(struct probe *p, unsigned stride, unsigned long long lo,
				   unsigned long long hi, unsigned long long coarse,
				   unsigned long long fine, int exact, std::vector<point> *curve,
				   int *capped)
{
	unsigned long long ok = 0, fail = 0, n, step;
	unsigned long long steps[3] = { coarse, fine, exact ? stride : 0 };
	int level;

	*capped = 0;
	for (n = lo; n <= hi; n += coarse) {
		point pt = run_chase<OP, CARVE>(p, n, stride, 2, 2, p->thr_l1);
		if (curve)
			curve->push_back(pt);
		if (!all_hits(pt)) {
			fail = n;
			break;
		}
		ok = n;
	}
	if (!fail) {
		*capped = 1;
		return ok;
	}
	for (level = 1; level < 3; level++) {
		step = steps[level];
		if (!step || step >= steps[level - 1])
			continue;
		for (n = ok + step; n < fail; n += step) {
			point pt = run_chase<OP, CARVE>(p, n, stride, 2, 2, p->thr_l1);
			if (curve)
				curve->push_back(pt);
			if (!all_hits(pt)) {
				fail = n;
				break;
			}
			ok = n;
		}
	}
	return ok;
}

static unsigned long long round_down(unsigned long long v, unsigned long long m)
{
	return v / m * m;
}

static std::string json_str(const char *s)
{
	std::string o = "\"";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			o += '\\';
			o += (char)c;
		} else if (c < 0x20) {
			char b[8];
			snprintf(b, sizeof(b), "\\u%04x", c);
			o += b;
		} else {
			o += (char)c;
		}
	}
	return o + "\"";
}

static std::string num_or_null(double v, const char *fmt)
{
	char b[64];

	if (!(v > 0) || !isfinite(v))
		return "null";
	snprintf(b, sizeof(b), fmt, v);
	return b;
}

static std::string ull_or_null(unsigned long long v)
{
	return v ? std::to_string(v) : std::string("null");
}

static std::string curve_json(const std::vector<point> &c)
{
	std::string o = "[";
	char b[160];
	size_t i;

	for (i = 0; i < c.size(); i++) {
		snprintf(b, sizeof(b), "%s[%llu, %u, %.2f, %.5f]", i ? ", " : "",
			 c[i].footprint, c[i].stride, c[i].mean, c[i].miss_frac);
		o += b;
	}
	return o + "]";
}

static const char *nogpu_reason(cudaError_t e)
{
	switch (e) {
	case cudaErrorInsufficientDriver:
		return "the NVIDIA driver (libcuda.so.1) is not installed or is older than the CUDA 13 runtime this probe was built with";
	case cudaErrorNoDevice:
		return "no CUDA-capable GPU was found (check nvidia-smi and CUDA_VISIBLE_DEVICES)";
	case cudaErrorDevicesUnavailable:
		return "every GPU is busy or in exclusive-process mode";
	default:
		return cudaGetErrorString(e);
	}
}

int main(int argc, char **argv)
{
	const char *out_path = NULL;
	int dev = 0, i, count = 0, clock_khz = 0, driver = 0;
	struct timespec t_start, t_end;
	cudaDeviceProp prop;
	cudaError_t err;
	struct probe p;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "--device") && i + 1 < argc)
			dev = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else if (!strcmp(argv[i], "--help")) {
			printf("usage: cacheadvise-probe [--out FILE] [--device N] [--verbose]\n"
			       "Measures the GPU's caches with P-chase and prints the device model\n"
			       "(docs/device-json.md). Normally run by 'cacheadvise probe'.\n");
			return 0;
		} else
			die(2, "unknown argument '%s' (try --help)", argv[i]);
	}
	clock_gettime(CLOCK_MONOTONIC, &t_start);

	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess)
		die(4, "%s", nogpu_reason(err));
	if (count == 0)
		die(4, "%s", nogpu_reason(cudaErrorNoDevice));
	if (dev < 0 || dev >= count)
		die(4, "GPU %d does not exist (%d found)", dev, count);
	err = cudaSetDevice(dev);
	if (err == cudaSuccess)
		err = cudaFree(0);
	if (err != cudaSuccess)
		die(4, "cannot use GPU %d: %s", dev, nogpu_reason(err));
	CHECK(cudaGetDeviceProperties(&prop, dev));
	CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
	CHECK(cudaDriverGetVersion(&driver));
	p.arr = NULL;
	p.d_out = NULL;
	p.thr_l1 = 0;
	if (prop.major < 7)
		p.notes.push_back("compute capability below 7.0: global loads may not use L1 by default");
	p.arr_bytes = 4ULL * (unsigned long long)prop.l2CacheSize + (1ULL << 20);
	if (p.arr_bytes < (64ULL << 20))
		p.arr_bytes = 64ULL << 20;
	CHECK(cudaMalloc(&p.arr, p.arr_bytes));
	CHECK(cudaMalloc(&p.d_out, sizeof(chase_out)));
	/* chase<., 0> keeps the default carve-out; chase<., 1> asks for the most shared memory. */
	CHECK(cudaFuncSetAttribute(chase<OP_CA, 1>, cudaFuncAttributePreferredSharedMemoryCarveout,
				   cudaSharedmemCarveoutMaxShared));
	note("probing %s (cc %d.%d, %d SMs, L2 %d bytes)", prop.name, prop.major, prop.minor,
	     prop.multiProcessorCount, prop.l2CacheSize);

	/* Latency calibration: all hits in each level. */
	p.thr_l1 = 0xffffffffu;
	point l1_hit = run_chase<OP_CA, 0>(&p, 4096, 32, 4, 16, p.thr_l1);
	point ro_hit = run_chase<OP_NC, 0>(&p, 4096, 32, 4, 16, p.thr_l1);
	point l2_hit = run_chase<OP_CG, 0>(&p, 1 << 20, 128, 2, 2, p.thr_l1);
	p.thr_l1 = (unsigned)((l1_hit.mean + l2_hit.mean) / 2);
	note("latency: L1 %.1f, read-only %.1f, L2 %.1f cycles; miss threshold %u",
	     l1_hit.mean, ro_hit.mean, l2_hit.mean, p.thr_l1);
	if (!(l2_hit.mean > 1.5 * l1_hit.mean))
		p.notes.push_back("L1 hits and L2 hits took about as long: the L1 figures are unreliable");

	/* L1 capacity with the 32-byte stride (every sector touched). */
	std::vector<point> l1_curve;
	int capped = 0;
	unsigned long long c32 = capacity<OP_CA, 0>(&p, 32, 8 << 10, 1 << 20, 8 << 10, 1 << 10, 0,
						    &l1_curve, &capped);
	if (capped)
		p.notes.push_back("L1 capacity is at least the largest footprint tried (1 MiB)");
	note("L1 capacity (stride 32): %llu bytes", c32);

	/* Sector size: a cold walk with a 4-byte stride misses once per fill. */
	unsigned sector = 0;
	{
		/* A fresh chain: the kernel boundary leaves nothing of it in L1. */
		point cold = run_chase<OP_CA, 0>(&p, 64 << 10, 4, 0, 1, p.thr_l1);
		if (cold.misses) {
			double bytes = 4.0 * (double)cold.loads / (double)cold.misses;
			unsigned s = 4;
			while (s < 1024 && s * 1.41 < bytes)
				s *= 2;
			sector = s;
		}
		note("cold walk: %llu misses in %llu loads -> fill size %u", cold.misses, cold.loads,
		     sector);
	}

	/* Line size: capacity in bytes vs stride. */
	std::string stride_json = "[";
	unsigned line = 0;
	unsigned long long cap_at_line = 0;
	{
		static const unsigned strides[] = { 32, 64, 128, 256, 512 };
		unsigned long long caps[5];
		size_t k;

		for (k = 0; k < 5; k++) {
			unsigned s = strides[k];
			unsigned long long scale = s <= 128 ? 1 : s / 128;
			unsigned long long coarse = (8 << 10) * scale;
			int cap2 = 0;

			caps[k] = k == 0 ? c32
					 : capacity<OP_CA, 0>(&p, s, coarse, round_down(4ULL * c32 * scale + coarse, coarse),
							      coarse, round_down(1024 * scale, s), 0, NULL, &cap2);
			if (cap2)
				caps[k] = 0;
			stride_json += (k ? ", " : "") + std::string("{\"stride\": ") + std::to_string(s) +
				       ", \"capacity\": " + ull_or_null(caps[k]) + "}";
			note("L1 capacity (stride %u): %llu", s, caps[k]);
		}
		/* The line is the largest stride whose capacity is still about c32,
		 * confirmed by the next stride's capacity having grown. */
		for (k = 0; k + 1 < 5; k++) {
			if (!caps[k] || !caps[k + 1] || !c32)
				break;
			if (caps[k] < c32 * 5 / 4 && caps[k + 1] >= c32 * 3 / 2) {
				line = strides[k];
				cap_at_line = caps[k];
				break;
			}
		}
		stride_json += "]";
		if (!line)
			p.notes.push_back("L1 line size not measurable: capacity did not grow with the stride "
					  "(set indexing hides it); the model keeps 128 bytes");
	}

	if (sector && (sector > 128 || (line && line % sector))) {
		p.notes.push_back("the cold-walk fill size " + std::to_string(sector) +
				  " does not divide the line size: the model keeps 32-byte sectors");
		sector = 0;
	}

	/*
	 * Sets and ways (seed step 3): footprint C + m*b at stride b.
	 * NEEDSWORK: run the two passes on two placements of the chain: on
	 * three H200s one line past capacity cost 5, 4.5 and 9 misses per round,
	 * so the set index seems to hash physical address bits and one
	 * placement can mislead (bench/results/device.md).
	 */
	unsigned sets = 0, ways = 0;
	std::string replacement = "null", step3_json = "[]";
	if (line) {
		int cap3;
		unsigned long long c = capacity<OP_CA, 0>(&p, line, cap_at_line > (64 << 10) ? cap_at_line - (32 << 10) : line,
							 cap_at_line + (64 << 10), 4 << 10, 1 << 10, 1, NULL, &cap3);
		unsigned long long lines = c / line;
		std::vector<double> per_round[2];
		unsigned m, pass;

		/* Two passes of 4 warm and 8 timed rounds each: the answer counts
		 * only where both passes agree. */
		step3_json = "[";
		for (pass = 0; pass < 2; pass++) {
			step3_json += pass ? ", [" : "[";
			for (m = 1; m <= 12; m++) {
				point pt = run_chase<OP_CA, 0>(&p, c + (unsigned long long)m * line, line, 4, 8, p.thr_l1);
				per_round[pass].push_back((double)pt.misses / 8.0);
				char b[32];
				snprintf(b, sizeof(b), "%s%.2f", m > 1 ? ", " : "", (double)pt.misses / 8.0);
				step3_json += b;
			}
			step3_json += "]";
		}
		step3_json += "]";
		if (lines && per_round[0][0] >= 2) {
			/* one set overflowing by one line: its ways + 1 lines all miss */
			double a = per_round[0][0] - 1;
			long long ai = llround(a);
			unsigned prefix = 0;

			for (m = 1; m <= 12; m++) {
				double want = m * (a + 1);
				if (fabs(per_round[0][m - 1] - want) > 0.1 * want ||
				    fabs(per_round[1][m - 1] - want) > 0.1 * want)
					break;
				prefix = m;
			}
			if (ai >= 1 && fabs(a - (double)ai) <= 0.1 * a && prefix >= 3 &&
			    per_round[0][0] < 0.5 * (double)(lines + 1)) {
				ways = (unsigned)ai;
				sets = (unsigned)llround((double)lines / (double)ai);
				if (prefix == 12) {
					replacement = "\"lru\"";
				} else {
					replacement = "\"lru-in-set, hashed index\"";
					p.notes.push_back(
						"L1 ways from the seed's step 3: one line past capacity makes " +
						std::to_string(ai + 1) + " lines miss per round in both passes (" +
						std::to_string(ai) + " ways, LRU within a set); misses grow as m*(ways+1) only up to m = " +
						std::to_string(prefix) + ", so the set index is hashed and the set count (" +
						std::to_string(sets) + ") is capacity / (ways * line)");
				}
			}
		}
		if (!ways) {
			replacement = "\"not-lru-or-hashed\"";
			p.notes.push_back("L1 sets and ways not measurable: at footprint C + m*line the misses per "
					  "round do not grow as m*(ways+1) in two passes alike (see "
					  "probe.l1.step3_misses_per_round), so replacement is not LRU or the set "
					  "index is hashed");
		}
		note("L1 step 3: capacity %llu at stride %u, misses per round %s", c, line, step3_json.c_str());
	}

	/* L1 with the largest shared-memory carve-out. */
	int capped_min = 0;
	unsigned long long l1_min = capacity<OP_CA, 1>(&p, 32, 2 << 10, c32 + (16 << 10), 2 << 10, 1 << 10, 0,
						       NULL, &capped_min);
	note("L1 capacity with the largest carve-out: %llu", l1_min);

	/* Read-only path. */
	std::vector<point> ro_curve;
	int capped_ro = 0;
	unsigned long long ro_cap = capacity<OP_NC, 0>(&p, 32, 8 << 10, 1 << 20, 8 << 10, 1 << 10, 0,
						       &ro_curve, &capped_ro);
	note("read-only capacity: %llu", ro_cap);

	/* L2: fractions of the reported size, then 4x for DRAM. */
	std::vector<point> l2_curve;
	unsigned long long l2_measured = 0, l2_near = 0;
	double dram = 0;
	{
		static const double fractions[] = { 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0,
						    1.125, 1.25, 1.5, 2.0, 4.0 };
		unsigned long long l2 = (unsigned long long)prop.l2CacheSize;
		size_t k;

		for (k = 0; k < sizeof(fractions) / sizeof(fractions[0]); k++) {
			unsigned long long n = round_down((unsigned long long)(fractions[k] * (double)l2), 1 << 20);
			if (n < (1 << 20) || n > p.arr_bytes)
				continue;
			point pt = run_chase<OP_CG, 0>(&p, n, 128, 1, 1, 0xffffffffu);
			l2_curve.push_back(pt);
			note("L2 chase %llu bytes: %.1f cycles", n, pt.mean);
		}
		if (!l2_curve.empty())
			dram = l2_curve.back().mean;
		/* near: as fast as the calibration's hits; reach: still clearly faster than DRAM */
		int near_open = 1;
		double beyond_mean = 0;
		unsigned long long beyond = 0;
		for (k = 0; k < l2_curve.size() && dram > l2_hit.mean * 1.2; k++) {
			double frac = (l2_curve[k].mean - l2_hit.mean) / (dram - l2_hit.mean);

			if (frac > 0.9)
				break;
			l2_measured = l2_curve[k].footprint;
			if (near_open && frac <= 0.1) {
				l2_near = l2_curve[k].footprint;
			} else if (near_open) {
				near_open = 0;
				beyond = l2_curve[k].footprint;
				beyond_mean = l2_curve[k].mean;
			}
		}
		if (l2_near && l2_measured > 2 * l2_near) {
			char b[300];
			snprintf(b, sizeof(b),
				 "L2 hits take longer beyond %llu MB (%.0f cycles at %llu MB, %.0f below): one SM "
				 "reaches part of L2 faster (the near partition); data up to %llu MB still hits",
				 l2_near >> 20, beyond_mean, beyond >> 20, l2_hit.mean, l2_measured >> 20);
			p.notes.push_back(b);
		}
		if (!(dram > l2_hit.mean * 1.2)) {
			dram = 0;
			p.notes.push_back("DRAM latency not measurable: a walk over 4x the L2 size was as fast as L2 hits");
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t_end);
	double seconds = (double)(t_end.tv_sec - t_start.tv_sec) +
			 (double)(t_end.tv_nsec - t_start.tv_nsec) * 1e-9;
	CHECK(cudaFree(p.arr));
	CHECK(cudaFree(p.d_out));

	/* The document. */
	char uuid[64], cc[16];
	const unsigned char *u = (const unsigned char *)prop.uuid.bytes;
	snprintf(uuid, sizeof(uuid),
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
		 u[13], u[14], u[15]);
	snprintf(cc, sizeof(cc), "%d.%d", prop.major, prop.minor);

	std::string notes = "[";
	for (size_t k = 0; k < p.notes.size(); k++)
		notes += (k ? ", " : "") + json_str(p.notes[k].c_str());
	notes += "]";

	FILE *f = stdout;
	if (out_path && strcmp(out_path, "-")) {
		f = fopen(out_path, "w");
		if (!f)
			die(2, "cannot write '%s': %s", out_path, strerror(errno));
	}
	fprintf(f,
		"{\n"
		"  \"schema\": \"cacheadvise.device/1\",\n"
		"  \"source\": \"probe\",\n"
		"  \"name\": %s,\n"
		"  \"uuid\": \"%s\",\n"
		"  \"cc\": \"%s\",\n"
		"  \"sm_count\": %d,\n"
		"  \"clock_khz\": %s,\n"
		"  \"max_threads_per_sm\": %d,\n"
		"  \"l1_line_bytes\": %u,\n"
		"  \"sector_bytes\": %u,\n"
		"  \"l1_bytes\": %s,\n"
		"  \"l1_bytes_min\": %s,\n"
		"  \"l1_sets\": %s,\n"
		"  \"l1_ways\": %s,\n"
		"  \"readonly_bytes\": %s,\n"
		"  \"shared_per_sm\": %zu,\n"
		"  \"shared_per_block_optin\": %zu,\n"
		"  \"reserved_shared_per_block\": %zu,\n"
		"  \"l2_bytes\": %d,\n"
		"  \"l2_bytes_measured\": %s,\n"
		"  \"persisting_l2_max_bytes\": %d,\n"
		"  \"access_policy_max_window_bytes\": %d,\n"
		"  \"latency_cycles\": {\"l1_hit\": %s, \"readonly_hit\": %s, \"l2_hit\": %s, \"dram\": %s},\n"
		"  \"probe\": {\n"
		"    \"seconds\": %.2f,\n"
		"    \"cuda_driver_version\": %d,\n"
		"    \"method\": \"P-chase, one thread, clock per dependent load (seeds/pchase-gpu-cache-microbenchmarks.txt)\",\n"
		"    \"loads\": {\"l1\": \"%s\", \"readonly\": \"%s\", \"l2\": \"%s\"},\n"
		"    \"miss_threshold_cycles\": %u,\n"
		"    \"l1\": {\"capacity_bytes\": %s, \"fill_bytes\": %s, \"line_bytes\": %s, \"sets\": %s,"
		" \"ways\": %s, \"replacement\": %s,\n"
		"           \"capacity_by_stride\": %s,\n"
		"           \"step3_misses_per_round\": %s,\n"
		"           \"curve\": %s},\n"
		"    \"l1_max_shared_carveout_bytes\": %s,\n"
		"    \"readonly\": {\"capacity_bytes\": %s, \"curve\": %s},\n"
		"    \"l2\": {\"reported_bytes\": %d, \"measured_bytes\": %s, \"near_bytes\": %s, \"curve\": %s},\n"
		"    \"curve_columns\": [\"footprint_bytes\", \"stride_bytes\", \"cycles_per_load\", \"miss_fraction\"],\n"
		"    \"notes\": %s\n"
		"  }\n"
		"}\n",
		json_str(prop.name).c_str(), uuid, cc, prop.multiProcessorCount,
		ull_or_null((unsigned long long)clock_khz).c_str(), prop.maxThreadsPerMultiProcessor,
		line ? line : 128, sector ? sector : 32, ull_or_null(capped ? 0 : c32).c_str(),
		ull_or_null(capped_min ? 0 : l1_min).c_str(), ull_or_null(sets).c_str(),
		ull_or_null(ways).c_str(), ull_or_null(capped_ro ? 0 : ro_cap).c_str(),
		prop.sharedMemPerMultiprocessor, prop.sharedMemPerBlockOptin,
		prop.reservedSharedMemPerBlock, prop.l2CacheSize, ull_or_null(l2_measured).c_str(),
		prop.persistingL2CacheMaxSize, prop.accessPolicyMaxWindowSize,
		num_or_null(l1_hit.mean, "%.1f").c_str(), num_or_null(ro_hit.mean, "%.1f").c_str(),
		num_or_null(l2_hit.mean, "%.1f").c_str(), num_or_null(dram, "%.1f").c_str(), seconds, driver,
		op_ptx[OP_CA], op_ptx[OP_NC], op_ptx[OP_CG], p.thr_l1,
		ull_or_null(capped ? 0 : c32).c_str(), ull_or_null(sector).c_str(),
		ull_or_null(line).c_str(), ull_or_null(sets).c_str(), ull_or_null(ways).c_str(),
		replacement.c_str(), stride_json.c_str(), step3_json.c_str(), curve_json(l1_curve).c_str(),
		ull_or_null(capped_min ? 0 : l1_min).c_str(), ull_or_null(capped_ro ? 0 : ro_cap).c_str(),
		curve_json(ro_curve).c_str(), prop.l2CacheSize, ull_or_null(l2_measured).c_str(),
		ull_or_null(l2_near).c_str(),
		curve_json(l2_curve).c_str(), notes.c_str());
	if (f != stdout ? fclose(f) != 0 : (fflush(f) != 0 || ferror(f)))
		die(2, "cannot write '%s': %s", out_path ? out_path : "standard output", strerror(errno));
	return 0;
}
