/*
 * carveout_bad: a program that sets a harmful L1/shared carve-out on its
 * own kernel (issue 18). Kernel `gather_table` has every thread gather
 * `iters` floats at pseudo-random places of a 160 KB table and add them up:
 * its speed is the L1 hit rate. The kernel uses no shared memory, so the
 * driver's default carve-out gives it nearly all of the 256 KB L1/shared
 * of an sm_90 SM and the table fits; but the program asks for the most
 * shared memory (cudaFuncAttributePreferredSharedMemoryCarveout = 100),
 * which leaves about 28 KB of L1 and sends most gathers to L2. Expected
 * advice: remove that call (the default is faster beyond the noise).
 * `--carveout 0` (the most L1) is the harmless setting: as good as the
 * default, so profile keeps it as it is. `--carveout -1` sets the default
 * explicitly; `--carveout none` makes no call at all.
 *
 * Every launch adds to the output (out[i] += sum), so the result is
 * deterministic: the checksum printed depends only on the options and the
 * GPU's number of SMs (the grid fills the GPU).
 *
 * Usage: carveout_bad [--carveout N|none] [--launches 120] [--iters 4096]
 *                     [--table-kb 160]
 */
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define SAMPLE_NAME "carveout_bad"
#include "sample_util.h"

/* out[i] += the sum of iters gathers from table[0..n), at places a
 * per-thread linear congruential generator picks (seeded by salt). */
__global__ void gather_table(const float *table, unsigned n, float *out, unsigned iters,
			     unsigned salt)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned h = (i * 2654435761u) ^ (salt * 40503u);
	float acc = 0.0f;

	for (unsigned j = 0; j < iters; j++) {
		h = h * 1664525u + 1013904223u;
		acc += table[(h >> 8) % n];
	}
	out[i] += acc;
}

static void usage(void)
{
	fprintf(stderr, "usage: carveout_bad [--carveout N|none] [--launches N] [--iters N] "
		"[--table-kb N]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	int carveout = 100, set = 1;
	unsigned launches = 120, iters = 4096, table_kb = 160;
	int dev, sms = 0;

	for (int a = 1; a < argc; a++) {
		if (a + 1 >= argc)
			usage();
		if (!strcmp(argv[a], "--carveout")) {
			a++;
			if (!strcmp(argv[a], "none"))
				set = 0;
			else
				carveout = atoi(argv[a]);
		} else if (!strcmp(argv[a], "--launches")) {
			launches = (unsigned)atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--iters")) {
			iters = (unsigned)atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--table-kb")) {
			table_kb = (unsigned)atoi(argv[++a]);
		} else {
			usage();
		}
	}
	if (!launches || !iters || !table_kb || carveout < -1 || carveout > 100)
		usage();

	CHECK(cudaGetDevice(&dev));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
	/* a full GPU: 2048 threads per SM */
	const unsigned threads = 256, blocks = (unsigned)sms * 8;
	const size_t n_out = (size_t)blocks * threads;
	const unsigned n = table_kb * 1024 / sizeof(float);

	std::vector<float> host(n);
	for (unsigned i = 0; i < n; i++)
		host[i] = (float)((i * 37u) % 1000u) / 1000.0f;
	float *table, *out;
	CHECK(cudaMalloc(&table, n * sizeof(float)));
	CHECK(cudaMalloc(&out, n_out * sizeof(float)));
	CHECK(cudaMemcpy(table, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(cudaMemset(out, 0, n_out * sizeof(float)));

	/* the program's own choice: the most shared memory, by default */
	if (set)
		CHECK(cudaFuncSetAttribute(gather_table,
					   cudaFuncAttributePreferredSharedMemoryCarveout, carveout));

	for (unsigned l = 0; l < launches; l++)
		gather_table<<<blocks, threads>>>(table, n, out, iters, l);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	std::vector<float> res(n_out);
	CHECK(cudaMemcpy(res.data(), out, n_out * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (size_t i = 0; i < n_out; i++)
		sum += res[i];
	if (set)
		printf("carveout %d, ", carveout);
	else
		printf("carveout not set, ");
	printf("%u launches of %u x %u threads, %u gathers each from %u KB\n", launches, blocks,
	       threads, iters, table_kb);
	printf("checksum %.10e\n", sum);
	CHECK(cudaFree(table));
	CHECK(cudaFree(out));
	return 0;
}
