/*
 * Every sample of samples/ rewritten with the software cache
 * (device/softcache.cuh) gives the plain version's results bit for bit
 * (issue 9; samples/records.cu is in softcache_test.cu). For each sample:
 * its inputs generated as the sample generates them, with the sample's
 * default sizes, launch shapes and iteration counts, the plain kernels and
 * their rewrites (tests/gpu/device/<sample>_kernels.cuh; with and without
 * the restrict promise) run, outputs compared word for word, the cache
 * shown to be in use (CLN > 0 and a structure selected by the monitoring
 * phase), and the line
 *
 *     <sample> software-cache checksum: <16 hex digits>
 *
 * printed, computed from the rewrite's outputs as the sample computes its
 * own `checksum:` line, so tests/gpu/t_device_softcache_samples.sh can
 * compare it with the sample binary run without arguments.
 *
 * Usage: softcache_samples_test [sample...]   (default: all five)
 * Prints PASS/FAIL lines; exits 0, 1 on a failure, 77 without a GPU.
 */
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "common.cuh"
#include "l2_reuse_kernels.cuh"
#include "spmv_kernels.cuh"
#include "stencil1d_kernels.cuh"
#include "stream_table_kernels.cuh"
#include "thrash_pair_kernels.cuh"

/* ---------------------------------------------------------------- helpers */

/* Shared-memory capacities (KB) an sm_90 SM can be configured with. */
static const int carveouts_sm90[] = { 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 };

/* The L1 left beside `blocks` blocks of shared_bytes each: stream_table.cu's
 * and thrash_pair.cu's l1_left_kb(), which size their tables from it. */
static long l1_left_kb(const cudaDeviceProp &prop, long shared_bytes, int blocks)
{
	long unified = (long)prop.sharedMemPerMultiprocessor / 1024 + 28;
	long need = (blocks * (shared_bytes + (long)prop.reservedSharedMemPerBlock) + 1023) / 1024;
	long carve = need;

	if (prop.major == 9) {
		for (int c : carveouts_sm90)
			if (c >= need) {
				carve = c;
				break;
			}
	}
	return std::max(unified - carve, 8L);
}

/* Device counters for slice::count_selected(), zeroed. */
static unsigned *counts_new(int n)
{
	unsigned *d;

	CHECK_CUDA(cudaMalloc(&d, n * sizeof(unsigned)));
	CHECK_CUDA(cudaMemset(d, 0, n * sizeof(unsigned)));
	return d;
}

/* Copies the counters back and frees them. */
static std::vector<unsigned> counts_take(unsigned *d, int n)
{
	std::vector<unsigned> c(n);

	CHECK_CUDA(cudaMemcpy(c.data(), d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaFree(d));
	return c;
}

/*
 * Prints what the cache of one rewritten kernel did: CLN and, per
 * structure, how many of its `threads` threads the monitoring phase gave
 * it a line. Returns whether the cache was in use (CLN > 0 and some
 * structure selected).
 */
static bool report_cache(const char *sample, const char *kernel, const softcache::launch_plan &lp,
			 const std::vector<unsigned> &counts, const char *const *names, uint64_t threads)
{
	bool any = false;

	printf("%s %s: CLN=%d (free shared per SM %zu B, %d blocks/SM, %zu B dynamic shared/block); "
	       "selected in threads:", sample, kernel, lp.lines_per_thread, lp.shared_free_per_sm,
	       lp.blocks_per_sm, lp.dynamic_smem);
	for (size_t k = 0; k < counts.size(); k++) {
		printf(" %s %u%s", names[k], counts[k], k + 1 < counts.size() ? "," : "");
		any |= counts[k] > 0;
	}
	printf(" (of %llu)\n", (unsigned long long)threads);
	return lp.lines_per_thread > 0 && any;
}

static void expect_in_use(const char *sample, const char *kernel, bool in_use)
{
	char what[200];

	snprintf(what, sizeof(what), "%s: %s used the cache (CLN > 0, a structure selected)", sample, kernel);
	expect(in_use, what);
}

/* PASS when the `words` 32-bit words of a and b (device) are equal. */
static void expect_same(const char *sample, const char *what, const void *a, const void *b, uint64_t words)
{
	unsigned long long d = words_differing(a, b, words);
	char line[240];

	snprintf(line, sizeof(line), "%s: %s, bit for bit (%llu of %llu words differ)", sample, what, d,
		 (unsigned long long)words);
	expect(d == 0, line);
}

static void print_checksums(const char *sample, unsigned long long plain, unsigned long long sc)
{
	printf("%s plain checksum: %016llx\n", sample, plain);
	printf("%s software-cache checksum: %016llx\n", sample, sc);
}

/* Sets a kernel's dynamic shared memory limit (before plan() asks the
 * occupancy of a launch with that much). */
template <typename K>
static void allow_smem(K kernel, size_t bytes)
{
	CHECK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
}

/* ----------------------------------------------------------- stream_table */

static const char *const st_names[] = { "keys", "trans" };

template <bool NoAlias>
static softcache::launch_plan stream_table_sc(const uint4 *keys, uint32_t stride, uint64_t nkeys,
					      const uint32_t *trans, uint32_t nstates, const uint32_t *classmap,
					      uint32_t nmap, uint32_t steps, uint32_t *out, int grid,
					      int threads, size_t shared_bytes, unsigned *counts)
{
	softcache::launch_plan lp;

	allow_smem(decode_keys_sc<NoAlias>, shared_bytes);
	CHECK_CUDA(softcache::plan(decode_keys_sc<NoAlias>, threads, shared_bytes, ST_COUNT, &lp));
	decode_keys_sc<NoAlias><<<grid, threads, lp.dynamic_smem>>>(keys, stride, nkeys, 1, trans, nstates,
								   classmap, nmap, steps, out, lp.cache_offset,
								   lp.lines_per_thread, counts);
	CHECK_CUDA(cudaGetLastError());
	return lp;
}

/* samples/stream_table.cu with its defaults (mb=1024 rec=16 steps=2
 * shared_kb=180 threads=256 passes=1, table_kb from the L1 left). */
static void test_stream_table(const cudaDeviceProp &prop)
{
	const char *S = "stream_table";
	const long mb = 1024, rec = 16, steps = 2, shared_kb = 180, threads = 256;
	size_t shared_bytes = (size_t)shared_kb * 1024;
	int per_sm = 0;

	allow_smem(decode_keys, shared_bytes);
	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_keys, (int)threads,
								 shared_bytes));
	long table_kb = std::max(l1_left_kb(prop, (long)shared_bytes, per_sm) * 3 / 4, 4L);
	uint32_t nmap = (uint32_t)std::min<size_t>(shared_bytes / 4, 65536);
	uint32_t nstates = (uint32_t)std::max<long>(table_kb * 1024 / (ST_NCLASS * 4), 1);
	uint64_t ntrans = (uint64_t)nstates * ST_NCLASS;
	uint32_t stride = (uint32_t)(rec / 16);
	uint64_t nkeys = ((uint64_t)mb << 20) / (uint64_t)rec;
	int grid = prop.multiProcessorCount * per_sm;
	uint64_t nthreads = (uint64_t)grid * threads;
	size_t key_words = (size_t)nkeys * (size_t)(rec / 4);
	uint4 *keys;
	uint32_t *trans, *classmap, *out[3];
	unsigned *counts = counts_new(ST_COUNT);

	printf("%s: %llu keys, %ld lookups per key, table %u states (%ld KB), %d blocks x %ld threads\n", S,
	       (unsigned long long)nkeys, steps, nstates, table_kb, grid, threads);
	CHECK_CUDA(cudaMalloc(&keys, key_words * 4));
	CHECK_CUDA(cudaMalloc(&trans, ntrans * 4));
	CHECK_CUDA(cudaMalloc(&classmap, (size_t)nmap * 4));
	for (int v = 0; v < 3; v++)
		CHECK_CUDA(cudaMalloc(&out[v], nthreads * 4));
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>((uint32_t *)keys, key_words, 1, 0);
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>(trans, ntrans, 2, nstates);
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>(classmap, nmap, 3, 0);
	CHECK_CUDA(cudaGetLastError());

	decode_keys<<<grid, (unsigned)threads, shared_bytes>>>(keys, stride, nkeys, 1, trans, nstates, classmap,
							       nmap, (uint32_t)steps, out[0]);
	CHECK_CUDA(cudaGetLastError());
	softcache::launch_plan lp = stream_table_sc<false>(keys, stride, nkeys, trans, nstates, classmap, nmap,
							   (uint32_t)steps, out[1], grid, (int)threads,
							   shared_bytes, counts);
	stream_table_sc<true>(keys, stride, nkeys, trans, nstates, classmap, nmap, (uint32_t)steps, out[2],
			      grid, (int)threads, shared_bytes, NULL);
	CHECK_CUDA(cudaDeviceSynchronize());

	expect_in_use(S, "decode_keys_sc",
		      report_cache(S, "decode_keys_sc", lp, counts_take(counts, ST_COUNT), st_names, nthreads));
	expect_same(S, "software cache output == plain output", out[1], out[0], nthreads);
	expect_same(S, "restrict (NoAlias) variant == plain output", out[2], out[0], nthreads);
	print_checksums(S, sum_of(out[0], nthreads, 0), sum_of(out[1], nthreads, 0));

	CHECK_CUDA(cudaFree(keys));
	CHECK_CUDA(cudaFree(trans));
	CHECK_CUDA(cudaFree(classmap));
	for (int v = 0; v < 3; v++)
		CHECK_CUDA(cudaFree(out[v]));
}

/* ------------------------------------------------------------ thrash_pair */

static const char *const tp_names[] = { "A", "B", "c", "out" };

template <bool NoAlias>
static softcache::launch_plan thrash_pair_sc(const float4 *a, uint32_t na, const float2 *b, uint32_t nb,
					     const float *c, uint64_t nrows, uint32_t steps, uint32_t nbins,
					     float *out, uint32_t *hist, int grid, int threads,
					     size_t shared_bytes, unsigned *counts)
{
	softcache::launch_plan lp;

	allow_smem(correlate_sc<NoAlias>, shared_bytes);
	CHECK_CUDA(softcache::plan(correlate_sc<NoAlias>, threads, shared_bytes, TP_COUNT, &lp));
	CHECK_CUDA(cudaMemset(hist, 0, (size_t)nbins * 4));
	correlate_sc<NoAlias><<<grid, threads, lp.dynamic_smem>>>(a, na, b, nb, c, nrows, steps, nbins, out, hist,
								 lp.cache_offset, lp.lines_per_thread, counts);
	CHECK_CUDA(cudaGetLastError());
	return lp;
}

/* samples/thrash_pair.cu with its defaults (a_pct=85 b_pct=60 steps=256
 * rpt=16 shared_kb=180 threads=1024). */
static void test_thrash_pair(const cudaDeviceProp &prop)
{
	const char *S = "thrash_pair";
	const long a_pct = 85, b_pct = 60, steps = 256, rpt = 16, shared_kb = 180, threads = 1024;
	size_t shared_bytes = (size_t)shared_kb * 1024;
	int per_sm = 0;

	allow_smem(correlate, shared_bytes);
	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, correlate, (int)threads, shared_bytes));
	long l1_kb = l1_left_kb(prop, (long)shared_bytes, per_sm);
	long a_bytes = l1_kb * 1024 * a_pct / 100, b_bytes = l1_kb * 1024 * b_pct / 100;
	uint32_t na = (uint32_t)std::max<long>(a_bytes / 16 / threads, 1) * (uint32_t)threads;
	uint32_t nb = (uint32_t)std::max<long>(b_bytes / 8 / threads, 1) * (uint32_t)threads;
	uint32_t nbins = (uint32_t)(shared_bytes / 4);
	int grid = prop.multiProcessorCount * per_sm;
	uint64_t nthreads = (uint64_t)grid * threads, nrows = nthreads * (uint64_t)rpt;
	float4 *a;
	float2 *b;
	float *c, *out[3];
	uint32_t *hist[3];
	unsigned *counts = counts_new(TP_COUNT);

	printf("%s: A %u x 16 B, B %u x 8 B, %llu rows x %ld steps, %d blocks x %ld threads\n", S, na, nb,
	       (unsigned long long)nrows, steps, grid, threads);
	CHECK_CUDA(cudaMalloc(&a, (size_t)na * 16));
	CHECK_CUDA(cudaMalloc(&b, (size_t)nb * 8));
	CHECK_CUDA(cudaMalloc(&c, nrows * 4));
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaMalloc(&out[v], nrows * 4));
		CHECK_CUDA(cudaMalloc(&hist[v], (size_t)nbins * 4));
	}
	fill_signed_float<<<prop.multiProcessorCount * 8, 256>>>((float *)a, (uint64_t)na * 4, 1);
	fill_signed_float<<<prop.multiProcessorCount * 8, 256>>>((float *)b, (uint64_t)nb * 2, 2);
	fill_signed_float<<<prop.multiProcessorCount * 8, 256>>>(c, nrows, 3);
	CHECK_CUDA(cudaGetLastError());

	CHECK_CUDA(cudaMemset(hist[0], 0, (size_t)nbins * 4));
	correlate<<<grid, (unsigned)threads, shared_bytes>>>(a, na, b, nb, c, nrows, (uint32_t)steps, nbins,
							     out[0], hist[0]);
	CHECK_CUDA(cudaGetLastError());
	softcache::launch_plan lp = thrash_pair_sc<false>(a, na, b, nb, c, nrows, (uint32_t)steps, nbins, out[1],
							  hist[1], grid, (int)threads, shared_bytes, counts);
	thrash_pair_sc<true>(a, na, b, nb, c, nrows, (uint32_t)steps, nbins, out[2], hist[2], grid,
			     (int)threads, shared_bytes, NULL);
	CHECK_CUDA(cudaDeviceSynchronize());

	expect_in_use(S, "correlate_sc",
		      report_cache(S, "correlate_sc", lp, counts_take(counts, TP_COUNT), tp_names, nthreads));
	expect_same(S, "software cache out == plain out", out[1], out[0], nrows);
	expect_same(S, "software cache histogram == plain histogram", hist[1], hist[0], nbins);
	expect_same(S, "restrict (NoAlias) variant out == plain out", out[2], out[0], nrows);
	expect_same(S, "restrict (NoAlias) variant histogram == plain histogram", hist[2], hist[0], nbins);
	print_checksums(S, sum_of(out[0], nrows, 0) + sum_of(hist[0], nbins, 1ULL << 40),
			sum_of(out[1], nrows, 0) + sum_of(hist[1], nbins, 1ULL << 40));

	CHECK_CUDA(cudaFree(a));
	CHECK_CUDA(cudaFree(b));
	CHECK_CUDA(cudaFree(c));
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaFree(out[v]));
		CHECK_CUDA(cudaFree(hist[v]));
	}
}

/* -------------------------------------------------------------- stencil1d */

static const char *const sd_names[] = { "in", "out" };

template <bool NoAlias>
static softcache::launch_plan stencil1d_sc(const cudaDeviceProp &prop, const float *in, float *out,
					   uint64_t nout, int k, unsigned *counts)
{
	softcache::launch_plan lp;

	CHECK_CUDA(softcache::plan(stencil_global_sc<NoAlias>, STENCIL1D_THREADS, 0, SD_COUNT, &lp));
	stencil_global_sc<NoAlias><<<prop.multiProcessorCount * lp.blocks_per_sm, STENCIL1D_THREADS,
				     lp.dynamic_smem>>>(in, out, nout, k, lp.lines_per_thread, counts);
	CHECK_CUDA(cudaGetLastError());
	return lp;
}

/* samples/stencil1d.cu with its defaults (n=384 k=4). The sample prints the
 * sum of stencil_global's and stencil_shared's checksums; here the
 * rewrite's output stands for stencil_global's. */
static void test_stencil1d(const cudaDeviceProp &prop)
{
	const char *S = "stencil1d";
	const long n_m = 384, k = 4;
	uint64_t nout = (uint64_t)n_m << 20, nin = nout + 2 * (uint64_t)k;
	size_t shared_bytes = (STENCIL1D_THREADS + 2 * (size_t)k) * sizeof(float);
	int per_sm_g = 0, per_sm_s = 0;
	float *in, *out_g, *out_s, *out_sc, *out_na;
	unsigned *counts = counts_new(SD_COUNT);

	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_g, stencil_global, STENCIL1D_THREADS, 0));
	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_s, stencil_shared, STENCIL1D_THREADS,
								 shared_bytes));
	printf("%s: %llu outputs, radius %ld\n", S, (unsigned long long)nout, k);
	CHECK_CUDA(cudaMalloc(&in, nin * 4));
	CHECK_CUDA(cudaMalloc(&out_g, nout * 4));
	CHECK_CUDA(cudaMalloc(&out_s, nout * 4));
	CHECK_CUDA(cudaMalloc(&out_sc, nout * 4));
	CHECK_CUDA(cudaMalloc(&out_na, nout * 4));
	fill_unit_float<<<prop.multiProcessorCount * 8, 256>>>(in, nin, 7);
	CHECK_CUDA(cudaGetLastError());

	stencil_global<<<prop.multiProcessorCount * per_sm_g, STENCIL1D_THREADS>>>(in, out_g, nout, (int)k);
	stencil_shared<<<prop.multiProcessorCount * per_sm_s, STENCIL1D_THREADS, shared_bytes>>>(in, out_s, nout,
												  (int)k);
	CHECK_CUDA(cudaGetLastError());
	softcache::launch_plan lp = stencil1d_sc<false>(prop, in, out_sc, nout, (int)k, counts);
	stencil1d_sc<true>(prop, in, out_na, nout, (int)k, NULL);
	CHECK_CUDA(cudaDeviceSynchronize());

	expect_in_use(S, "stencil_global_sc",
		      report_cache(S, "stencil_global_sc", lp, counts_take(counts, SD_COUNT), sd_names,
				   (uint64_t)prop.multiProcessorCount * lp.blocks_per_sm * STENCIL1D_THREADS));
	expect_same(S, "stencil_shared == stencil_global (the sample's own check)", out_s, out_g, nout);
	expect_same(S, "software cache stencil_global == plain stencil_global", out_sc, out_g, nout);
	expect_same(S, "restrict (NoAlias) variant == plain stencil_global", out_na, out_g, nout);
	unsigned long long hs = sum_of(out_s, nout, 0);
	print_checksums(S, sum_of(out_g, nout, 0) + hs, sum_of(out_sc, nout, 0) + hs);

	CHECK_CUDA(cudaFree(in));
	CHECK_CUDA(cudaFree(out_g));
	CHECK_CUDA(cudaFree(out_s));
	CHECK_CUDA(cudaFree(out_sc));
	CHECK_CUDA(cudaFree(out_na));
}

/* ------------------------------------------------------------------- spmv */

static const char *const sp_names[] = { "rowptr", "col", "val", "x", "y" };

/*
 * The sample's iterations on x (filled as the sample fills it), y = A x
 * then x = A y, with the rewritten kernels; the first iteration's
 * selections go to counts_s and counts_w.
 */
template <bool NoAlias>
static void spmv_sc(const cudaDeviceProp &prop, const uint64_t *rowptr, const uint32_t *col,
		    const float *val, float *x, float *y, uint32_t n, long iters,
		    softcache::launch_plan *lp_s, softcache::launch_plan *lp_w, unsigned *counts_s,
		    unsigned *counts_w)
{
	CHECK_CUDA(softcache::plan(spmv_scalar_sc<NoAlias>, SPMV_THREADS, 0, SP_COUNT, lp_s));
	CHECK_CUDA(softcache::plan(spmv_warp_sc<NoAlias>, SPMV_THREADS, 0, SP_COUNT, lp_w));
	for (long it = 0; it <= iters; it++) {
		spmv_scalar_sc<NoAlias><<<prop.multiProcessorCount * lp_s->blocks_per_sm, SPMV_THREADS,
					  lp_s->dynamic_smem>>>(rowptr, col, val, x, y, n, lp_s->lines_per_thread,
								it ? NULL : counts_s);
		spmv_warp_sc<NoAlias><<<prop.multiProcessorCount * lp_w->blocks_per_sm, SPMV_THREADS,
					lp_w->dynamic_smem>>>(rowptr, col, val, y, x, n, lp_w->lines_per_thread,
							      it ? NULL : counts_w);
		CHECK_CUDA(cudaGetLastError());
	}
}

/* samples/spmv.cu with its defaults (rows=8 iters=10: 11 iterations, the
 * warm-up included, before the checksum). */
static void test_spmv(const cudaDeviceProp &prop)
{
	const char *S = "spmv";
	const long rows_m = 8, iters = 10;
	uint32_t n = (uint32_t)(rows_m << 20);
	std::vector<uint64_t> rowptr(n + 1);
	uint64_t *d_rowptr;
	uint32_t *col;
	float *val, *x[3], *y[3];
	int per_sm_s = 0, per_sm_w = 0, fill_grid = prop.multiProcessorCount * 8;
	softcache::launch_plan lp_s, lp_w, lp_ns, lp_nw;
	unsigned *counts_s = counts_new(SP_COUNT), *counts_w = counts_new(SP_COUNT);

	rowptr[0] = 0;
	for (uint32_t r = 0; r < n; r++)
		rowptr[r + 1] = rowptr[r] + spmv_row_length(r);
	uint64_t nnz = rowptr[n];
	printf("%s: %u rows, %llu entries, %ld iterations\n", S, n, (unsigned long long)nnz, iters + 1);
	CHECK_CUDA(cudaMalloc(&d_rowptr, (n + 1) * sizeof(uint64_t)));
	CHECK_CUDA(cudaMalloc(&col, nnz * 4));
	CHECK_CUDA(cudaMalloc(&val, nnz * 4));
	CHECK_CUDA(cudaMemcpy(d_rowptr, rowptr.data(), (n + 1) * sizeof(uint64_t), cudaMemcpyHostToDevice));
	fill_matrix<<<fill_grid, 256>>>(d_rowptr, n, col, val);
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaMalloc(&x[v], (size_t)n * 4));
		CHECK_CUDA(cudaMalloc(&y[v], (size_t)n * 4));
		fill_x<<<fill_grid, 256>>>(x[v], n, 31);
	}
	CHECK_CUDA(cudaGetLastError());

	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_s, spmv_scalar, SPMV_THREADS, 0));
	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_w, spmv_warp, SPMV_THREADS, 0));
	for (long it = 0; it <= iters; it++) {
		spmv_scalar<<<prop.multiProcessorCount * per_sm_s, SPMV_THREADS>>>(d_rowptr, col, val, x[0], y[0], n);
		spmv_warp<<<prop.multiProcessorCount * per_sm_w, SPMV_THREADS>>>(d_rowptr, col, val, y[0], x[0], n);
		CHECK_CUDA(cudaGetLastError());
	}
	spmv_sc<false>(prop, d_rowptr, col, val, x[1], y[1], n, iters, &lp_s, &lp_w, counts_s, counts_w);
	spmv_sc<true>(prop, d_rowptr, col, val, x[2], y[2], n, iters, &lp_ns, &lp_nw, NULL, NULL);
	CHECK_CUDA(cudaDeviceSynchronize());

	expect_in_use(S, "spmv_scalar_sc",
		      report_cache(S, "spmv_scalar_sc", lp_s, counts_take(counts_s, SP_COUNT), sp_names,
				   (uint64_t)prop.multiProcessorCount * lp_s.blocks_per_sm * SPMV_THREADS));
	report_cache(S, "spmv_warp_sc", lp_w, counts_take(counts_w, SP_COUNT), sp_names,
		     (uint64_t)prop.multiProcessorCount * lp_w.blocks_per_sm * SPMV_THREADS);
	expect_same(S, "software cache x == plain x", x[1], x[0], n);
	expect_same(S, "software cache y == plain y", y[1], y[0], n);
	expect_same(S, "restrict (NoAlias) variant x == plain x", x[2], x[0], n);
	expect_same(S, "restrict (NoAlias) variant y == plain y", y[2], y[0], n);
	print_checksums(S, sum_of(x[0], n, 0) + sum_of(y[0], n, 1ULL << 40),
			sum_of(x[1], n, 0) + sum_of(y[1], n, 1ULL << 40));

	CHECK_CUDA(cudaFree(d_rowptr));
	CHECK_CUDA(cudaFree(col));
	CHECK_CUDA(cudaFree(val));
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaFree(x[v]));
		CHECK_CUDA(cudaFree(y[v]));
	}
}

/* --------------------------------------------------------------- l2_reuse */

static const char *const lr_names[] = { "cold", "hot" };

/* The sample's iterations (window=0), gather_mix then stream_scale, with
 * the rewritten kernels; the first iteration's selections go to counts_g
 * and counts_s. gather_mix_sc keeps the sample's grid (grid_g). */
template <bool NoAlias>
static void l2_reuse_sc(const cudaDeviceProp &prop, const float *hot, uint32_t nhot, float *cold,
			uint64_t ncold, uint32_t gathers, float *partial, int grid_g, long iters,
			softcache::launch_plan *lp_g, softcache::launch_plan *lp_s, unsigned *counts_g,
			unsigned *counts_s)
{
	CHECK_CUDA(softcache::plan(gather_mix_sc<NoAlias>, L2_REUSE_THREADS, 0, LR_COUNT, lp_g));
	CHECK_CUDA(softcache::plan(stream_scale_sc<NoAlias>, L2_REUSE_THREADS, 0, 1, lp_s));
	for (long it = 0; it <= iters; it++) {
		gather_mix_sc<NoAlias><<<grid_g, L2_REUSE_THREADS, lp_g->dynamic_smem>>>(
			hot, nhot, cold, ncold, gathers, partial, lp_g->lines_per_thread, it ? NULL : counts_g);
		stream_scale_sc<NoAlias><<<prop.multiProcessorCount * lp_s->blocks_per_sm, L2_REUSE_THREADS,
					   lp_s->dynamic_smem>>>(cold, ncold, 0.75f, 0.25f, lp_s->lines_per_thread,
								 it ? NULL : counts_s);
		CHECK_CUDA(cudaGetLastError());
	}
}

/* samples/l2_reuse.cu with its defaults (hot and cold sizes from the
 * device, gathers=1 iters=10 window=0: 11 iterations before the checksum). */
static void test_l2_reuse(const cudaDeviceProp &prop)
{
	const char *S = "l2_reuse";
	const long gathers = 1, iters = 10;
	size_t l2 = (size_t)prop.l2CacheSize, persist_max = (size_t)prop.persistingL2CacheMaxSize;
	size_t hot_bytes = std::min(persist_max ? persist_max * 3 / 4 : l2 / 2, (size_t)24 << 20);
	size_t cold_bytes = std::max(4 * l2, (size_t)1536 << 20);
	uint32_t nhot = (uint32_t)(hot_bytes / 4);
	uint64_t ncold = cold_bytes / 4;
	int per_sm_s = 0, fill_grid = prop.multiProcessorCount * 8;
	int grid_g = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / L2_REUSE_THREADS);
	uint64_t nthreads_g = (uint64_t)grid_g * L2_REUSE_THREADS;
	float *hot, *cold[3], *partial[3];
	softcache::launch_plan lp_g, lp_s, lp_ng, lp_ns;
	unsigned *counts_g = counts_new(LR_COUNT), *counts_s = counts_new(1);
	static const char *const scale_names[] = { "cold" };

	CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_s, stream_scale, L2_REUSE_THREADS, 0));
	printf("%s: hot %.1f MB, cold %.1f MB, %ld gather(s), %ld iterations\n", S, hot_bytes / 1048576.0,
	       cold_bytes / 1048576.0, gathers, iters + 1);
	CHECK_CUDA(cudaMalloc(&hot, (size_t)nhot * 4));
	fill_unit_float<<<fill_grid, 256>>>(hot, nhot, 21);
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaMalloc(&cold[v], ncold * 4));
		CHECK_CUDA(cudaMalloc(&partial[v], nthreads_g * 4));
		fill_unit_float<<<fill_grid, 256>>>(cold[v], ncold, 22);
	}
	CHECK_CUDA(cudaGetLastError());

	for (long it = 0; it <= iters; it++) {
		gather_mix<<<grid_g, L2_REUSE_THREADS>>>(hot, nhot, cold[0], ncold, (uint32_t)gathers, partial[0]);
		stream_scale<<<prop.multiProcessorCount * per_sm_s, L2_REUSE_THREADS>>>(cold[0], ncold, 0.75f, 0.25f);
		CHECK_CUDA(cudaGetLastError());
	}
	l2_reuse_sc<false>(prop, hot, nhot, cold[1], ncold, (uint32_t)gathers, partial[1], grid_g, iters, &lp_g,
			   &lp_s, counts_g, counts_s);
	l2_reuse_sc<true>(prop, hot, nhot, cold[2], ncold, (uint32_t)gathers, partial[2], grid_g, iters, &lp_ng,
			  &lp_ns, NULL, NULL);
	CHECK_CUDA(cudaDeviceSynchronize());

	report_cache(S, "gather_mix_sc", lp_g, counts_take(counts_g, LR_COUNT), lr_names, nthreads_g);
	expect_in_use(S, "stream_scale_sc",
		      report_cache(S, "stream_scale_sc", lp_s, counts_take(counts_s, 1), scale_names,
				   (uint64_t)prop.multiProcessorCount * lp_s.blocks_per_sm * L2_REUSE_THREADS));
	expect_same(S, "software cache partial sums == plain partial sums", partial[1], partial[0], nthreads_g);
	expect_same(S, "software cache cold buffer == plain cold buffer", cold[1], cold[0], ncold);
	expect_same(S, "restrict (NoAlias) variant partial sums == plain", partial[2], partial[0], nthreads_g);
	expect_same(S, "restrict (NoAlias) variant cold buffer == plain", cold[2], cold[0], ncold);
	print_checksums(S, sum_of(partial[0], nthreads_g, 0) + sum_of(cold[0], ncold, 1ULL << 40),
			sum_of(partial[1], nthreads_g, 0) + sum_of(cold[1], ncold, 1ULL << 40));

	CHECK_CUDA(cudaFree(hot));
	for (int v = 0; v < 3; v++) {
		CHECK_CUDA(cudaFree(cold[v]));
		CHECK_CUDA(cudaFree(partial[v]));
	}
}

/* ------------------------------------------------------------------- main */

static const struct {
	const char *name;
	void (*run)(const cudaDeviceProp &prop);
} samples[] = {
	{ "stream_table", test_stream_table },
	{ "thrash_pair", test_thrash_pair },
	{ "stencil1d", test_stencil1d },
	{ "spmv", test_spmv },
	{ "l2_reuse", test_l2_reuse },
};

int main(int argc, char **argv)
{
	cudaDeviceProp prop = require_gpu();

	for (int i = 1; i < argc; i++) {
		bool known = false;
		for (const auto &s : samples)
			known |= !strcmp(argv[i], s.name);
		if (!known) {
			fprintf(stderr, "softcache_samples_test: unknown sample '%s'\n", argv[i]);
			return 2;
		}
	}
	printf("GPU: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
	for (const auto &s : samples) {
		bool run = argc == 1;
		for (int i = 1; i < argc; i++)
			run |= !strcmp(argv[i], s.name);
		if (!run)
			continue;
		auto t0 = std::chrono::steady_clock::now();
		s.run(prop);
		CHECK_CUDA(cudaDeviceSynchronize());
		printf("%s: %.2f s\n", s.name,
		       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
	}
	return finish_tests();
}
