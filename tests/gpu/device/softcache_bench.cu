/*
 * Benchmark: the record-streaming kernel of samples/records.cu, plain
 * against the software cache (device/softcache.cuh), kernel time by CUDA
 * events (median of `reps` launches after a warm-up). Prints one table
 * row per records-per-thread setting:
 *
 *   per_thread  CLN  cached  plain_ms  softcache_ms  restrict_ms  speedup  restrict_speedup
 *
 * Usage: softcache_bench [reps]        (exit 77 without a GPU)
 *        softcache_bench --once N      launch plain and software-cache
 *                                      kernels once each with per_thread N
 *                                      (for ncu)
 */
#include <cstring>

#include "common.cuh"
#include "records_kernels.cuh"

int main(int argc, char **argv)
{
	cudaDeviceProp prop = require_gpu();
	int once = argc > 2 && !strcmp(argv[1], "--once") ? atoi(argv[2]) : 0;
	int reps = argc > 1 && !once ? atoi(argv[1]) : 15;
	static const uint32_t settings[] = { 256, 1024, 4096 };
	uint64_t nthreads = (uint64_t)prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor;
	uint64_t max_rec = nthreads * (once > 0 ? (uint64_t)once : 4096);
	unsigned grid = (unsigned)((nthreads + RECORDS_THREADS - 1) / RECORDS_THREADS);
	char *cin;
	int *iin, *out;
	unsigned *selected;

	if (reps < 1)
		reps = 1;
	CHECK_CUDA(cudaMalloc(&cin, max_rec));
	CHECK_CUDA(cudaMalloc(&iin, max_rec * 4));
	CHECK_CUDA(cudaMalloc(&out, max_rec * 4));
	CHECK_CUDA(cudaMalloc(&selected, sizeof(unsigned)));
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>((uint32_t *)cin, max_rec / 4, 11, 0);
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>((uint32_t *)iin, max_rec, 12, 0);
	CHECK_CUDA(cudaDeviceSynchronize());

	softcache::launch_plan lp, lp_na;
	CHECK_CUDA(softcache::plan(process_records_sc<false>, RECORDS_THREADS, 0, DS_COUNT, &lp));
	CHECK_CUDA(softcache::plan(process_records_sc<true>, RECORDS_THREADS, 0, DS_COUNT, &lp_na));

	if (once > 0) {
		process_records<<<grid, RECORDS_THREADS>>>(cin, iin, out, (uint32_t)once, nthreads);
		process_records_sc<false><<<grid, RECORDS_THREADS, lp.dynamic_smem>>>(
			cin, iin, out, (uint32_t)once, nthreads, lp.lines_per_thread, selected);
		CHECK_CUDA(cudaGetLastError());
		CHECK_CUDA(cudaDeviceSynchronize());
		printf("launched process_records and process_records_sc once, per_thread=%d, CLN=%d\n", once,
		       lp.lines_per_thread);
		return 0;
	}
	printf("GPU: %s, %d SMs, %llu threads (%d per SM), %d-thread blocks, median of %d\n", prop.name,
	       prop.multiProcessorCount, (unsigned long long)nthreads, prop.maxThreadsPerMultiProcessor,
	       RECORDS_THREADS, reps);
	printf("softcache plan: CLN=%d, dynamic shared %zu B/block, %d blocks/SM (the kernel's own occupancy)\n",
	       lp.lines_per_thread, lp.dynamic_smem, lp.blocks_per_sm);
	printf("%-10s %4s %6s %10s %13s %12s %8s %16s\n", "per_thread", "CLN", "cached", "plain_ms",
	       "softcache_ms", "restrict_ms", "speedup", "restrict_speedup");
	for (size_t k = 0; k < sizeof(settings) / sizeof(settings[0]); k++) {
		uint32_t pt = settings[k];
		unsigned sel = 0;

		float plain = median_ms(reps, [&] {
			process_records<<<grid, RECORDS_THREADS>>>(cin, iin, out, pt, nthreads);
		});
		CHECK_CUDA(cudaMemset(selected, 0, sizeof(unsigned)));
		float sc = median_ms(reps, [&] {
			process_records_sc<false><<<grid, RECORDS_THREADS, lp.dynamic_smem>>>(
				cin, iin, out, pt, nthreads, lp.lines_per_thread, selected);
		});
		float na = median_ms(reps, [&] {
			process_records_sc<true><<<grid, RECORDS_THREADS, lp_na.dynamic_smem>>>(
				cin, iin, out, pt, nthreads, lp_na.lines_per_thread, NULL);
		});
		CHECK_CUDA(cudaMemcpy(&sel, selected, sizeof(sel), cudaMemcpyDeviceToHost));
		printf("%-10u %4d %6s %10.3f %13.3f %12.3f %7.2fx %15.2fx\n", pt, lp.lines_per_thread,
		       sel == 7 ? "c,i,o" : sel == 3 ? "c,i" : sel == 1 ? "c" : "other", plain, sc, na,
		       plain / sc, plain / na);
	}
	cudaFree(cin);
	cudaFree(iin);
	cudaFree(out);
	cudaFree(selected);
	return 0;
}
