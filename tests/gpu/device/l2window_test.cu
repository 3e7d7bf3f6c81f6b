/*
 * The persisting-L2 helpers (device/l2window.h) on a GPU: limits, clamping,
 * stream and graph-kernel-node windows as the driver reads them back, the
 * normal-window and full resets; then, for the record, one measurement of
 * a hot-table kernel alternating with a streaming kernel, with and without
 * a window scoped to the hot kernel (FACTS.md: the guide's recipe often
 * hurts; this prints what it did here, it asserts nothing about speed).
 * Exit 0, 1 on a failed check, 77 without a GPU.
 */
#include <cmath>
#include <cstring>

#include "common.cuh"
#include "device/l2window.h"

__global__ void gather(const float *table, size_t table_elems, float *out, size_t n, uint32_t seed)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint32_t h = hash32((uint32_t)i ^ seed);
		out[i] += table[h % table_elems];
	}
}

__global__ void stream_copy(const float4 *in, float4 *out, size_t n)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		out[i] = in[i];
}

static void test_api(void *buf, size_t buf_bytes)
{
	struct l2window_limits lim;
	size_t applied = 0, limit = 0;
	struct cudaAccessPolicyWindow w;
	cudaLaunchAttributeValue v;
	cudaStream_t s;
	char what[200];

	CHECK_CUDA(l2window_query(&lim));
	printf("L2 %zu B, persisting set-aside max %zu B, window max %zu B, set-aside now %zu B\n",
	       lim.l2_bytes, lim.persisting_max_bytes, lim.window_max_bytes, lim.set_aside_bytes);
	expect(lim.l2_bytes > 0 && lim.persisting_max_bytes > 0 && lim.window_max_bytes > 0,
	       "l2window_query: the device has persisting L2 and windows");

	CHECK_CUDA(l2window_set_aside((size_t)1 << 40, &applied));
	snprintf(what, sizeof(what), "l2window_set_aside(1 TB) is clamped to the maximum: %zu <= %zu",
		 applied, lim.persisting_max_bytes);
	expect(applied > 0 && applied <= lim.persisting_max_bytes, what);
	CHECK_CUDA(l2window_set_aside(l2window_default_set_aside(&lim), &applied));
	CHECK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
	snprintf(what, sizeof(what), "set-aside min(3/4 L2, max) = %zu applied as %zu",
		 l2window_default_set_aside(&lim), applied);
	expect(applied == limit && applied > 0, what);

	CHECK_CUDA(l2window_query(&lim));
	l2window_make(&lim, buf, lim.window_max_bytes * 2, -1.0f, &w);
	snprintf(what, sizeof(what), "l2window_make clamps the window to %zu B and picks hitRatio %.3f",
		 lim.window_max_bytes, w.hitRatio);
	expect(w.num_bytes == lim.window_max_bytes &&
	       fabsf(w.hitRatio - (float)((double)lim.set_aside_bytes / (double)lim.window_max_bytes)) < 1e-3f &&
	       w.hitProp == cudaAccessPropertyPersisting && w.missProp == cudaAccessPropertyStreaming, what);
	l2window_make(&lim, buf, 1 << 20, 3.0f, &w);
	expect(w.hitRatio == 1.0f && w.num_bytes == (1u << 20), "l2window_make clamps hitRatio to 1");

	CHECK_CUDA(cudaStreamCreate(&s));
	CHECK_CUDA(l2window_stream_set(s, buf, buf_bytes, 0.5f, &w));
	memset(&v, 0, sizeof(v));
	CHECK_CUDA(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
	expect(v.accessPolicyWindow.base_ptr == buf && v.accessPolicyWindow.num_bytes == w.num_bytes &&
	       v.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting &&
	       fabsf(v.accessPolicyWindow.hitRatio - 0.5f) < 1e-6f,
	       "l2window_stream_set: the stream reports the window");
	CHECK_CUDA(l2window_stream_reset(s, buf, buf_bytes));
	CHECK_CUDA(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
	expect(v.accessPolicyWindow.hitProp == cudaAccessPropertyNormal &&
	       v.accessPolicyWindow.missProp == cudaAccessPropertyNormal && v.accessPolicyWindow.num_bytes > 0,
	       "l2window_stream_reset(base): a normal window replaces it");
	CHECK_CUDA(l2window_stream_reset(s, NULL, 0));
	CHECK_CUDA(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
	expect(v.accessPolicyWindow.num_bytes == 0, "l2window_stream_reset(NULL): the window is gone");

	/* a graph with one kernel node */
	cudaGraph_t g;
	cudaGraphExec_t ge;
	cudaGraphNode_t nodes[4];
	size_t nnodes = 4;
	CHECK_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	gather<<<64, 256, 0, s>>>((const float *)buf, buf_bytes / 8 / sizeof(float),
				  (float *)buf + buf_bytes / 8, 4096, 1);
	CHECK_CUDA(cudaStreamEndCapture(s, &g));
	CHECK_CUDA(cudaGraphGetNodes(g, nodes, &nnodes));
	expect(nnodes == 1, "graph capture: one kernel node");
	CHECK_CUDA(l2window_node_set(nodes[0], buf, buf_bytes / 8, -1.0f, &w));
	memset(&v, 0, sizeof(v));
	CHECK_CUDA(cudaGraphKernelNodeGetAttribute(nodes[0], cudaKernelNodeAttributeAccessPolicyWindow, &v));
	expect(v.accessPolicyWindow.base_ptr == buf && v.accessPolicyWindow.num_bytes == buf_bytes / 8 &&
	       v.accessPolicyWindow.hitProp == cudaAccessPropertyPersisting,
	       "l2window_node_set: the kernel node reports the window");
	CHECK_CUDA(cudaGraphInstantiate(&ge, g, 0));
	CHECK_CUDA(cudaGraphLaunch(ge, s));
	CHECK_CUDA(cudaStreamSynchronize(s));
	expect(true, "graph with a windowed kernel node runs");
	CHECK_CUDA(l2window_node_reset(nodes[0], NULL, 0));
	CHECK_CUDA(cudaGraphKernelNodeGetAttribute(nodes[0], cudaKernelNodeAttributeAccessPolicyWindow, &v));
	expect(v.accessPolicyWindow.num_bytes == 0, "l2window_node_reset: the node's window is gone");
	CHECK_CUDA(cudaGraphExecDestroy(ge));
	CHECK_CUDA(cudaGraphDestroy(g));
	CHECK_CUDA(cudaStreamDestroy(s));

	CHECK_CUDA(l2window_reset_all(1));
	CHECK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
	expect(limit == 0, "l2window_reset_all(1): persisting lines reset, set-aside released");
}

/* Hot gather (A) alternating with a stream (B), without and with a window on A. */
static void measure(const cudaDeviceProp &prop)
{
	struct l2window_limits lim;
	size_t table_bytes, stream_bytes = 4 * (size_t)prop.l2CacheSize, n_gather = 1 << 24;
	float *table, *out;
	float4 *sin, *sout;
	cudaStream_t s;
	cudaEvent_t e0, e1;
	float ms[2][2] = { { 0, 0 }, { 0, 0 } };

	CHECK_CUDA(l2window_query(&lim));
	table_bytes = lim.persisting_max_bytes / 4 * 3;
	if (table_bytes > ((size_t)24 << 20))
		table_bytes = (size_t)24 << 20;
	CHECK_CUDA(cudaMalloc(&table, table_bytes));
	CHECK_CUDA(cudaMalloc(&out, n_gather * sizeof(float)));
	CHECK_CUDA(cudaMalloc(&sin, stream_bytes));
	CHECK_CUDA(cudaMalloc(&sout, stream_bytes));
	CHECK_CUDA(cudaMemset(table, 0, table_bytes));
	CHECK_CUDA(cudaMemset(out, 0, n_gather * sizeof(float)));
	CHECK_CUDA(cudaMemset(sin, 0, stream_bytes));
	CHECK_CUDA(cudaStreamCreate(&s));
	CHECK_CUDA(cudaEventCreate(&e0));
	CHECK_CUDA(cudaEventCreate(&e1));

	for (int with = 0; with < 2; with++) {
		std::vector<float> ta, tb;
		if (with)
			CHECK_CUDA(l2window_set_aside(l2window_default_set_aside(&lim), NULL));
		for (int it = 0; it < 11; it++) {
			float t;
			if (with)
				CHECK_CUDA(l2window_stream_set(s, table, table_bytes, -1.0f, NULL));
			CHECK_CUDA(cudaEventRecord(e0, s));
			gather<<<prop.multiProcessorCount * 8, 256, 0, s>>>(table, table_bytes / sizeof(float),
									     out, n_gather, it);
			CHECK_CUDA(cudaEventRecord(e1, s));
			CHECK_CUDA(cudaEventSynchronize(e1));
			CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
			if (it)
				ta.push_back(t);
			if (with)
				CHECK_CUDA(l2window_stream_reset(s, NULL, 0));
			CHECK_CUDA(cudaEventRecord(e0, s));
			stream_copy<<<prop.multiProcessorCount * 8, 256, 0, s>>>(sin, sout, stream_bytes / 16);
			CHECK_CUDA(cudaEventRecord(e1, s));
			CHECK_CUDA(cudaEventSynchronize(e1));
			CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
			if (it)
				tb.push_back(t);
		}
		std::sort(ta.begin(), ta.end());
		std::sort(tb.begin(), tb.end());
		ms[with][0] = ta[ta.size() / 2];
		ms[with][1] = tb[tb.size() / 2];
		if (with)
			CHECK_CUDA(l2window_reset_all(1));
	}
	CHECK_CUDA(cudaGetLastError());
	printf("window measurement: hot table %zu MB gathered by A, B streams %zu MB\n", table_bytes >> 20,
	       stream_bytes >> 20);
	printf("%-14s %10s %10s\n", "", "A_ms", "B_ms");
	printf("%-14s %10.3f %10.3f\n", "no window", ms[0][0], ms[0][1]);
	printf("%-14s %10.3f %10.3f\n", "window on A", ms[1][0], ms[1][1]);
	printf("window speedup of A: %.3fx, of B: %.3fx\n", ms[0][0] / ms[1][0], ms[0][1] / ms[1][1]);
	cudaFree(table);
	cudaFree(out);
	cudaFree(sin);
	cudaFree(sout);
	cudaStreamDestroy(s);
}

int main(void)
{
	cudaDeviceProp prop = require_gpu();
	void *buf;
	size_t buf_bytes = (size_t)64 << 20;

	printf("GPU: %s\n", prop.name);
	CHECK_CUDA(cudaMalloc(&buf, buf_bytes));
	CHECK_CUDA(cudaMemset(buf, 0, buf_bytes));
	test_api(buf, buf_bytes);
	cudaFree(buf);
	measure(prop);
	return finish_tests();
}
