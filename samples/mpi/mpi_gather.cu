/*
 * mpi_gather: an MPI job (issue 29), one GPU a rank, no CUDA-aware MPI.
 *
 * Each rank runs the same kernel (SPMD) on its own data: every thread
 * streams 16-byte records (each read once) and, per record, gathers from a
 * small reused table at a data-dependent index; the chain of table
 * lookups is the kernel's latency. A large dynamic shared-memory request
 * leaves L1 small, so the streaming lines push table lines out: the
 * expected advice is to bypass the record loads (L1::no_allocate) and keep
 * the table load cached, as in samples/stream_table.cu.
 *
 * Rank r uses GPU r % (GPUs visible). The ranks' checksums are combined on
 * the host (MPI_Reduce) and rank 0 prints one line, identical run to run.
 *
 * skew=1 gives rank 1 a table four times larger (it no longer fits L1), so
 * its loads behave differently from the other ranks': the report names it.
 *
 * Usage: mpirun -np 2 mpi_gather [records=N] [iters=N] [skew=0|1]
 */
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                            \
	do {                                                                   \
		cudaError_t err_ = (call);                                     \
		if (err_ != cudaSuccess) {                                     \
			fprintf(stderr, "mpi_gather: %s:%d: %s: %s\n",         \
				__FILE__, __LINE__, #call,                     \
				cudaGetErrorString(err_));                     \
			MPI_Abort(MPI_COMM_WORLD, 1);                          \
		}                                                              \
	} while (0)

/* Dynamic shared memory requested per block: leaves L1 small on sm_90. */
#define SHARED_BYTES (180u * 1024u)

__global__ void __launch_bounds__(256)
gather(const uint4 *records, uint64_t n, const uint32_t *table, uint32_t table_mask,
       uint32_t *out)
{
	extern __shared__ uint32_t scratch[];
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	uint32_t state = threadIdx.x, acc = 0;

	if (threadIdx.x == 0)
		scratch[0] = 0;
	for (; i < n; i += stride) {
		uint4 r = records[i];                       /* streamed: read once */
		uint32_t keys[4] = { r.x, r.y, r.z, r.w };

		for (int k = 0; k < 4; k++) {
			state = table[(state ^ keys[k]) & table_mask]; /* reused, dependent */
			acc += state;
		}
	}
	atomicAdd(out, acc);
}

__global__ void fill(uint32_t *p, uint64_t n, uint32_t seed)
{
	uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;

	for (; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
		uint32_t x = (uint32_t)i * 2654435761u ^ seed;
		x ^= x >> 15;
		x *= 2246822519u;
		x ^= x >> 13;
		p[i] = x;
	}
}

static unsigned long long arg(int argc, char **argv, const char *key, unsigned long long def)
{
	size_t len = strlen(key);

	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], key, len) && argv[i][len] == '=')
			return strtoull(argv[i] + len + 1, NULL, 0);
	return def;
}

int main(int argc, char **argv)
{
	int rank, size, devices, sms;
	unsigned long long records, iters, skew, sum = 0, total = 0;
	uint32_t table_words, *table, *out, result;
	uint4 *rec;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	records = arg(argc, argv, "records", 1ull << 24);   /* 256 MiB of records */
	iters = arg(argc, argv, "iters", 20);
	skew = arg(argc, argv, "skew", 0);
	CHECK(cudaGetDeviceCount(&devices));
	CHECK(cudaSetDevice(rank % devices));
	CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, rank % devices));
	/* 32 KiB of table: fits the L1 the shared request leaves; 128 KiB does not */
	table_words = (skew && rank == 1) ? 32768u : 8192u;
	CHECK(cudaMalloc(&rec, records * sizeof(uint4)));
	CHECK(cudaMalloc(&table, table_words * sizeof(uint32_t)));
	CHECK(cudaMalloc(&out, sizeof(uint32_t)));
	fill<<<1024, 256>>>((uint32_t *)rec, records * 4, 17u + (uint32_t)rank);
	fill<<<64, 256>>>(table, table_words, 99u);
	CHECK(cudaFuncSetAttribute(gather, cudaFuncAttributeMaxDynamicSharedMemorySize,
				   SHARED_BYTES));
	for (unsigned long long it = 0; it < iters; it++) {
		CHECK(cudaMemset(out, 0, sizeof(uint32_t)));
		gather<<<sms, 256, SHARED_BYTES>>>(rec, records, table, table_words - 1, out);
		CHECK(cudaGetLastError());
		CHECK(cudaMemcpy(&result, out, sizeof(result), cudaMemcpyDeviceToHost));
		sum += result;
	}
	MPI_Reduce(&sum, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("mpi_gather: %d ranks, %llu records, %llu iterations, checksum %llu\n", size,
		       records, iters, total);
	CHECK(cudaFree(rec));
	CHECK(cudaFree(table));
	CHECK(cudaFree(out));
	MPI_Finalize();
	return 0;
}
