/*
 * Correctness of the software cache (device/softcache.cuh) on a GPU:
 *   1. records: samples/records.cu's kernel and its software-cache rewrite
 *      give bit-identical outputs (and print the sample's checksum line, so
 *      run_device.sh can compare with the sample itself);
 *   2. a read-write kernel with a block barrier, a neighbour read after it,
 *      and atomics on cached addresses: identical to the plain kernel and
 *      to the host's answer;
 *   3. stress: many threads of different blocks write different bytes (1,
 *      2, 4, 8-byte pieces) of the same 16-byte lines through their own
 *      caches, round after round; nothing may be lost;
 *   4. aliasing without restrict: y[j] = x[j-1] + w[j] with x == y;
 *   5. write-allocate then read: written bytes merge with memory's.
 * Prints PASS/FAIL lines; exits 0, 1 on a failure, 77 without a GPU.
 */
#include <cstring>
#include <vector>

#include "common.cuh"
#include "records_kernels.cuh"

/* ---------------------------------------------------------------- records */

static void test_records(const cudaDeviceProp &prop, uint32_t per_thread)
{
	uint64_t nthreads = (uint64_t)prop.multiProcessorCount * prop.maxThreadsPerMultiProcessor;
	uint64_t nrec = nthreads * per_thread, cwords = (nrec + 3) / 4;
	unsigned grid = (unsigned)((nthreads + RECORDS_THREADS - 1) / RECORDS_THREADS);
	char *cin;
	int *iin, *out_plain, *out_sc, *out_na;
	unsigned *selected;
	softcache::launch_plan lp, lp_na;
	char what[200];

	CHECK_CUDA(cudaMalloc(&cin, cwords * 4));
	CHECK_CUDA(cudaMalloc(&iin, nrec * 4));
	CHECK_CUDA(cudaMalloc(&out_plain, nrec * 4));
	CHECK_CUDA(cudaMalloc(&out_sc, nrec * 4));
	CHECK_CUDA(cudaMalloc(&out_na, nrec * 4));
	CHECK_CUDA(cudaMalloc(&selected, sizeof(unsigned)));
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>((uint32_t *)cin, cwords, 11, 0);
	fill_hash<<<prop.multiProcessorCount * 8, 256>>>((uint32_t *)iin, nrec, 12, 0);
	CHECK_CUDA(cudaMemset(out_sc, 0xee, nrec * 4));
	CHECK_CUDA(cudaMemset(out_na, 0xdd, nrec * 4));
	CHECK_CUDA(cudaMemset(selected, 0, sizeof(unsigned)));

	process_records<<<grid, RECORDS_THREADS>>>(cin, iin, out_plain, per_thread, nthreads);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(softcache::plan(process_records_sc<false>, RECORDS_THREADS, 0, DS_COUNT, &lp));
	CHECK_CUDA(softcache::plan(process_records_sc<true>, RECORDS_THREADS, 0, DS_COUNT, &lp_na));
	process_records_sc<false><<<grid, RECORDS_THREADS, lp.dynamic_smem>>>(
		cin, iin, out_sc, per_thread, nthreads, lp.lines_per_thread, selected);
	CHECK_CUDA(cudaGetLastError());
	process_records_sc<true><<<grid, RECORDS_THREADS, lp_na.dynamic_smem>>>(
		cin, iin, out_na, per_thread, nthreads, lp_na.lines_per_thread, NULL);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());

	std::vector<int> a(nrec), b(nrec), c(nrec);
	unsigned sel = 0;
	CHECK_CUDA(cudaMemcpy(a.data(), out_plain, nrec * 4, cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpy(b.data(), out_sc, nrec * 4, cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpy(c.data(), out_na, nrec * 4, cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpy(&sel, selected, sizeof(sel), cudaMemcpyDeviceToHost));
	printf("records: per_thread=%u, %llu threads, CLN=%d (free shared per SM %zu B, %d blocks/SM), "
	       "cached structures mask 0x%x\n", per_thread, (unsigned long long)nthreads,
	       lp.lines_per_thread, lp.shared_free_per_sm, lp.blocks_per_sm, sel);
	snprintf(what, sizeof(what), "records per_thread=%u: the cache was in use (CLN > 0, a structure selected)",
		 per_thread);
	expect(lp.lines_per_thread > 0 && sel != 0, what);
	snprintf(what, sizeof(what), "records per_thread=%u: software cache output == plain output, bit for bit",
		 per_thread);
	expect(!memcmp(a.data(), b.data(), nrec * 4), what);
	snprintf(what, sizeof(what), "records per_thread=%u: restrict (NoAlias) variant == plain output",
		 per_thread);
	expect(!memcmp(a.data(), c.data(), nrec * 4), what);

	printf("records per_thread=%u software-cache checksum: %016llx\n", per_thread,
	       sum_of(out_sc, nrec, 0));

	cudaFree(cin);
	cudaFree(iin);
	cudaFree(out_plain);
	cudaFree(out_sc);
	cudaFree(out_na);
	cudaFree(selected);
}

/* ------------------------------------------- read-write, barrier, atomics */

enum { RW_VAL, RW_SRC, RW_CNT };
#define RW_R 64
#define RW_THREADS 128

__global__ void rw_plain(int *val, const signed char *src, int *cnt, int *peek)
{
	unsigned t = threadIdx.x;
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + t, base = g * RW_R;

	for (int j = 0; j < RW_R; j++)
		val[base + j] = val[base + j] * 3 + src[base + j];
	for (int j = 0; j < RW_R; j++)
		val[base + j] = val[base + j] * 5 + src[base + j];
	cnt[64 + g] = (int)(g * 7);
	__syncthreads();
	peek[g] = val[((uint64_t)blockIdx.x * blockDim.x + (t + 1) % blockDim.x) * RW_R + 1];
	atomicAdd(&cnt[64 + g], 100);
	cnt[64 + g] = cnt[64 + g] + 1;
	atomicAdd(&cnt[g % 64], 1);
}

__global__ void rw_cached(int *val, const signed char *src, int *cnt, int *peek, int cln)
{
	extern __shared__ uint4 region[];
	softcache::cache<3> sc;
	unsigned t = threadIdx.x;
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + t, base = g * RW_R;

	sc.init(region, cln, (1u << RW_VAL) | (1u << RW_CNT));
	/* slice 1: monitoring (the whole first pass) */
	for (int j = 0; j < RW_R; j++) {
		int v = val[base + j];
		sc.simulate<RW_VAL>(&val[base + j]);
		int s = src[base + j];
		sc.simulate<RW_SRC>(&src[base + j]);
		val[base + j] = v * 3 + s;
		sc.simulate<RW_VAL>(&val[base + j], true);
	}
	sc.simulate<RW_CNT>(&cnt[64 + g]);
	sc.simulate<RW_CNT>(&cnt[64 + g], true);
	sc.select();
	/* slice 2: through the cache */
	for (int j = 0; j < RW_R; j++)
		sc.write<RW_VAL>(&val[base + j], sc.read<RW_VAL>(&val[base + j]) * 5 +
						 sc.read<RW_SRC>(&src[base + j]));
	sc.write<RW_CNT>(&cnt[64 + g], (int)(g * 7));
	sc.syncthreads();
	/* the neighbour's value, written through its cache before the barrier */
	peek[g] = sc.read<RW_VAL>(&val[((uint64_t)blockIdx.x * blockDim.x + (t + 1) % blockDim.x) * RW_R + 1]);
	/* an atomic on an address this thread has a dirty line for */
	sc.flush<RW_CNT>(&cnt[64 + g]);
	atomicAdd(&cnt[64 + g], 100);
	sc.write<RW_CNT>(&cnt[64 + g], sc.read<RW_CNT>(&cnt[64 + g]) + 1);
	atomicAdd(&cnt[g % 64], 1);
	sc.flush();
}

static void test_rw(const cudaDeviceProp &prop)
{
	unsigned blocks = prop.multiProcessorCount * 4;
	uint64_t nthreads = (uint64_t)blocks * RW_THREADS, n = nthreads * RW_R;
	std::vector<int> val0(n), expect_val(n), expect_cnt(64 + nthreads, 0), expect_peek(nthreads);
	std::vector<signed char> src(n);
	int *d_val[2], *d_cnt[2], *d_peek[2];
	signed char *d_src;
	softcache::launch_plan lp;

	for (uint64_t i = 0; i < n; i++) {
		val0[i] = (int)(hash32((uint32_t)i) & 0xffff);
		src[i] = (signed char)hash32((uint32_t)i + 77);
		expect_val[i] = (val0[i] * 3 + src[i]) * 5 + src[i];
	}
	for (uint64_t g = 0; g < nthreads; g++) {
		uint64_t blk = g / RW_THREADS, t = g % RW_THREADS;
		expect_peek[g] = expect_val[(blk * RW_THREADS + (t + 1) % RW_THREADS) * RW_R + 1];
		expect_cnt[64 + g] = (int)(g * 7) + 101;
		expect_cnt[g % 64]++;
	}
	CHECK_CUDA(cudaMalloc(&d_src, n));
	CHECK_CUDA(cudaMemcpy(d_src, src.data(), n, cudaMemcpyHostToDevice));
	for (int v = 0; v < 2; v++) {
		CHECK_CUDA(cudaMalloc(&d_val[v], n * 4));
		CHECK_CUDA(cudaMalloc(&d_cnt[v], (64 + nthreads) * 4));
		CHECK_CUDA(cudaMalloc(&d_peek[v], nthreads * 4));
		CHECK_CUDA(cudaMemcpy(d_val[v], val0.data(), n * 4, cudaMemcpyHostToDevice));
		CHECK_CUDA(cudaMemset(d_cnt[v], 0, (64 + nthreads) * 4));
	}
	CHECK_CUDA(softcache::plan(rw_cached, RW_THREADS, 0, 3, &lp));
	rw_plain<<<blocks, RW_THREADS>>>(d_val[0], d_src, d_cnt[0], d_peek[0]);
	rw_cached<<<blocks, RW_THREADS, lp.dynamic_smem>>>(d_val[1], d_src, d_cnt[1], d_peek[1],
							   lp.lines_per_thread);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaDeviceSynchronize());

	std::vector<int> v[2], c[2], p[2];
	for (int k = 0; k < 2; k++) {
		v[k].resize(n);
		c[k].resize(64 + nthreads);
		p[k].resize(nthreads);
		CHECK_CUDA(cudaMemcpy(v[k].data(), d_val[k], n * 4, cudaMemcpyDeviceToHost));
		CHECK_CUDA(cudaMemcpy(c[k].data(), d_cnt[k], (64 + nthreads) * 4, cudaMemcpyDeviceToHost));
		CHECK_CUDA(cudaMemcpy(p[k].data(), d_peek[k], nthreads * 4, cudaMemcpyDeviceToHost));
		cudaFree(d_val[k]);
		cudaFree(d_cnt[k]);
		cudaFree(d_peek[k]);
	}
	cudaFree(d_src);
	printf("read-write kernel: CLN=%d\n", lp.lines_per_thread);
	expect(lp.lines_per_thread >= 3, "read-write kernel: all three structures get a line");
	expect(v[0] == expect_val && p[0] == expect_peek && c[0] == expect_cnt,
	       "read-write kernel: plain version matches the host's answer");
	expect(v[1] == expect_val, "read-write kernel: cached read-modify-write of val is exact");
	expect(p[1] == expect_peek, "read-write kernel: after sc.syncthreads() the neighbour's writes are seen");
	expect(c[1] == expect_cnt, "read-write kernel: flush<ID>(p) before atomics loses neither the write nor the atomic");
	expect(v[0] == v[1] && p[0] == p[1] && c[0] == c[1], "read-write kernel: cached == plain, bit for bit");
}

/* ---------------------------------------------------------------- stress */

/* Writes of pieces of size 1, 1, 2, 4, 8 bytes at offsets 0, 1, 2, 4, 8 of
 * each 16-byte line, each piece by a different thread (lines and roles
 * spread over blocks by a multiplicative permutation of thread ids). */
__constant__ int piece_off[5] = { 0, 1, 2, 4, 8 };

static __host__ __device__ uint64_t piece_value(uint64_t line, int role, uint32_t round)
{
	uint64_t h = hash32((uint32_t)(line * 5 + role) ^ (round * 0x9e3779b9u));
	return h | ((uint64_t)hash32((uint32_t)h + 1) << 32);
}

template <int MODE> /* 1: software cache; 2: naive whole-line write-back */
__global__ void stress_kernel(unsigned char *buf, uint64_t nlines, uint32_t rounds, int cln,
			      uint64_t mult)
{
	extern __shared__ uint4 region[];
	softcache::cache<1> sc;
	uint64_t G = (uint64_t)gridDim.x * blockDim.x, g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t me = (g * mult) % G, slots = G / 5 * 5;

	sc.init(region, cln, 1u);
	sc.simulate<0>(buf, true);
	sc.simulate<0>(buf, true);
	sc.select();
	if (me >= slots)
		return;
	int role = (int)(me % 5);
	for (uint32_t r = 0; r < rounds; r++) {
		for (uint64_t line = me / 5; line < nlines; line += slots / 5) {
			unsigned char *p = buf + line * 16 + piece_off[role];
			uint64_t v = piece_value(line, role, r);

			if (MODE == 1) {
				switch (role) {
				case 0:
				case 1:
					sc.write<0>(p, (unsigned char)v);
					break;
				case 2:
					sc.write<0>((uint16_t *)p, (uint16_t)v);
					break;
				case 3:
					sc.write<0>((uint32_t *)p, (uint32_t)v);
					break;
				default:
					sc.write<0>((uint64_t *)p, v);
				}
			} else {
				/* what a cache without byte masks would do */
				uint4 l = __ldcv((const uint4 *)(buf + line * 16));
				unsigned char *lb = (unsigned char *)&l;
				int size = role < 2 ? 1 : role == 2 ? 2 : role == 3 ? 4 : 8;
				memcpy(lb + piece_off[role], &v, size);
				__stcg((uint4 *)(buf + line * 16), l);
			}
		}
	}
	sc.flush();
}

static void test_stress(const cudaDeviceProp &prop)
{
	unsigned blocks = prop.multiProcessorCount * 8, threads = 256;
	uint64_t G = (uint64_t)blocks * threads, nlines = G / 5 * 3;
	const uint32_t rounds = 20;
	unsigned char *d;
	softcache::launch_plan lp;
	std::vector<unsigned char> want(nlines * 16, 0x5a), got(nlines * 16);
	uint64_t mult = 1000003;          /* prime, so coprime with G */
	static const int off[5] = { 0, 1, 2, 4, 8 }, size[5] = { 1, 1, 2, 4, 8 };

	for (uint64_t line = 0; line < nlines; line++)
		for (int role = 0; role < 5; role++) {
			uint64_t v = piece_value(line, role, rounds - 1);
			memcpy(&want[line * 16 + off[role]], &v, size[role]);
		}
	/* byte 3 of every line is nobody's: it must keep its 0x5a */
	CHECK_CUDA(cudaMalloc(&d, nlines * 16));
	CHECK_CUDA(softcache::plan(stress_kernel<1>, threads, 0, 1, &lp));
	for (int rep = 0; rep < 3; rep++) {
		CHECK_CUDA(cudaMemset(d, 0x5a, nlines * 16));
		stress_kernel<1><<<blocks, threads, lp.dynamic_smem>>>(d, nlines, rounds, lp.lines_per_thread, mult);
		CHECK_CUDA(cudaGetLastError());
		CHECK_CUDA(cudaMemcpy(got.data(), d, nlines * 16, cudaMemcpyDeviceToHost));
		uint64_t lost = 0;
		for (uint64_t i = 0; i < nlines * 16; i++)
			lost += got[i] != want[i];
		char what[200];
		snprintf(what, sizeof(what),
			 "stress %d: %llu threads write 1/2/4/8-byte pieces of %llu shared 16-byte lines, "
			 "%u rounds: %llu bytes wrong", rep, (unsigned long long)G, (unsigned long long)nlines,
			 rounds, (unsigned long long)lost);
		expect(lost == 0 && lp.lines_per_thread >= 1, what);
	}
	/* The same with whole-line write-back: shows the test can see lost writes. */
	CHECK_CUDA(cudaMemset(d, 0x5a, nlines * 16));
	stress_kernel<2><<<blocks, threads, lp.dynamic_smem>>>(d, nlines, rounds, 0, mult);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(got.data(), d, nlines * 16, cudaMemcpyDeviceToHost));
	uint64_t naive_lost = 0;
	for (uint64_t i = 0; i < nlines * 16; i++)
		naive_lost += got[i] != want[i];
	printf("stress (reference): whole-line write-back without byte masks got %llu bytes wrong\n",
	       (unsigned long long)naive_lost);
	cudaFree(d);
}

/* ---------------------------------------------------------------- aliasing */

#define ALIAS_R 512

template <bool NoAlias>
__global__ void alias_kernel(const int *x, int *y, const int *w, int cln)
{
	extern __shared__ uint4 region[];
	softcache::cache<3, NoAlias> sc;
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, base = g * ALIAS_R;
	int j = 1;

	sc.init(region, cln, 1u << 2);
	for (; j < ALIAS_R && sc.monitoring(); j++) {
		int v = x[base + j - 1];
		sc.template simulate<0>(&x[base + j - 1]);
		int ww = w[base + j];
		sc.template simulate<1>(&w[base + j]);
		y[base + j] = v + ww;
		sc.template simulate<2>(&y[base + j], true);
	}
	sc.select();
	for (; j < ALIAS_R; j++)
		sc.template write<2>(&y[base + j], sc.template read<0>(&x[base + j - 1]) +
						      sc.template read<1>(&w[base + j]));
	sc.flush();
}

__global__ void alias_plain(const int *x, int *y, const int *w)
{
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, base = g * ALIAS_R;

	for (int j = 1; j < ALIAS_R; j++)
		y[base + j] = x[base + j - 1] + w[base + j];
}

static void test_alias(const cudaDeviceProp &prop)
{
	unsigned blocks = prop.multiProcessorCount * 2, threads = 256;
	uint64_t n = (uint64_t)blocks * threads * ALIAS_R;
	std::vector<int> w(n), init(n), want(n), got(n);
	int *d_a, *d_w;
	softcache::launch_plan lp, lp_na;

	for (uint64_t i = 0; i < n; i++) {
		w[i] = (int)(hash32((uint32_t)i) & 0xff);
		init[i] = (int)hash32((uint32_t)i + 5) & 0xffff;
	}
	want = init;
	for (uint64_t i = 0; i < n; i++)
		if (i % ALIAS_R)
			want[i] = want[i - 1] + w[i];
	CHECK_CUDA(cudaMalloc(&d_a, n * 4));
	CHECK_CUDA(cudaMalloc(&d_w, n * 4));
	CHECK_CUDA(cudaMemcpy(d_w, w.data(), n * 4, cudaMemcpyHostToDevice));
	CHECK_CUDA(softcache::plan(alias_kernel<false>, threads, 0, 3, &lp));
	CHECK_CUDA(softcache::plan(alias_kernel<true>, threads, 0, 3, &lp_na));

	CHECK_CUDA(cudaMemcpy(d_a, init.data(), n * 4, cudaMemcpyHostToDevice));
	alias_plain<<<blocks, threads>>>(d_a, d_a, d_w);
	CHECK_CUDA(cudaMemcpy(got.data(), d_a, n * 4, cudaMemcpyDeviceToHost));
	expect(got == want, "aliasing: plain kernel with x == y matches the host");

	CHECK_CUDA(cudaMemcpy(d_a, init.data(), n * 4, cudaMemcpyHostToDevice));
	alias_kernel<false><<<blocks, threads, lp.dynamic_smem>>>(d_a, d_a, d_w, lp.lines_per_thread);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(got.data(), d_a, n * 4, cudaMemcpyDeviceToHost));
	expect(got == want && lp.lines_per_thread > 0,
	       "aliasing: software cache without restrict, x == y: correct");

	CHECK_CUDA(cudaMemcpy(d_a, init.data(), n * 4, cudaMemcpyHostToDevice));
	alias_kernel<true><<<blocks, threads, lp_na.dynamic_smem>>>(d_a, d_a, d_w, lp_na.lines_per_thread);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(got.data(), d_a, n * 4, cudaMemcpyDeviceToHost));
	uint64_t wrong = 0;
	for (uint64_t i = 0; i < n; i++)
		wrong += got[i] != want[i];
	printf("aliasing (reference): the restrict fast path given aliased pointers got %llu of %llu wrong\n",
	       (unsigned long long)wrong, (unsigned long long)n);
	cudaFree(d_a);
	cudaFree(d_w);
}

/* ------------------------------------------------------ write, then read */

__global__ void merge_kernel(unsigned char *buf, int *out, int cln)
{
	extern __shared__ uint4 region[];
	softcache::cache<1> sc;
	uint64_t g = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned char *line = buf + 16 * g;

	sc.init(region, cln, 1u);
	sc.simulate<0>(line, true);
	sc.simulate<0>(line, true);
	sc.select();
	sc.write<0>(line + 3, (unsigned char)0xab);           /* allocates, no fetch */
	out[3 * g] = sc.read<0>((const int *)line);           /* bytes 0-2 memory, 3 written */
	out[3 * g + 1] = sc.read<0>((const int *)(line + 4)); /* memory */
	sc.write<0>((uint16_t *)(line + 8), (uint16_t)0x1234);
	sc.flush();
	out[3 * g + 2] = ((const int *)line)[2];
}

static void test_merge(void)
{
	const unsigned threads = 256, blocks = 64;
	uint64_t nlines = (uint64_t)threads * blocks;
	std::vector<unsigned char> init(nlines * 16), want, got(nlines * 16);
	std::vector<int> out(3 * nlines);
	unsigned char *d;
	int *d_out;
	softcache::launch_plan lp;
	bool reads_ok = true;

	for (uint64_t i = 0; i < init.size(); i++)
		init[i] = (unsigned char)hash32((uint32_t)i);
	want = init;
	for (uint64_t l = 0; l < nlines; l++) {
		want[l * 16 + 3] = 0xab;
		want[l * 16 + 8] = 0x34;
		want[l * 16 + 9] = 0x12;
	}
	CHECK_CUDA(cudaMalloc(&d, init.size()));
	CHECK_CUDA(cudaMalloc(&d_out, out.size() * 4));
	CHECK_CUDA(cudaMemcpy(d, init.data(), init.size(), cudaMemcpyHostToDevice));
	CHECK_CUDA(softcache::plan(merge_kernel, threads, 0, 1, &lp));
	merge_kernel<<<blocks, threads, lp.dynamic_smem>>>(d, d_out, lp.lines_per_thread);
	CHECK_CUDA(cudaGetLastError());
	CHECK_CUDA(cudaMemcpy(got.data(), d, got.size(), cudaMemcpyDeviceToHost));
	CHECK_CUDA(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
	for (uint64_t l = 0; l < nlines; l++) {
		int w0, w1, w2;
		memcpy(&w0, &want[l * 16], 4);
		memcpy(&w1, &want[l * 16 + 4], 4);
		memcpy(&w2, &want[l * 16 + 8], 4);
		if (out[3 * l] != w0 || out[3 * l + 1] != w1 || out[3 * l + 2] != w2)
			reads_ok = false;
	}
	expect(reads_ok && lp.lines_per_thread > 0,
	       "write-allocate: a read after a partial write merges the written bytes with memory's");
	expect(got == want, "write-allocate: only the written bytes reach memory");
	cudaFree(d);
	cudaFree(d_out);
}

int main(void)
{
	cudaDeviceProp prop = require_gpu();

	printf("GPU: %s (%d SMs)\n", prop.name, prop.multiProcessorCount);
	test_records(prop, 256);
	test_records(prop, 301);
	test_rw(prop);
	test_stress(prop);
	test_alias(prop);
	test_merge();
	return finish_tests();
}
