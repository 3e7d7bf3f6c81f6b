#ifndef CACHEADVISE_L2WINDOW_H
#define CACHEADVISE_L2WINDOW_H

/*
 * Persisting L2 access-policy windows (seeds/cuda-l2-persistence-guide.txt),
 * host code for programs that adopt cacheadvise's L2 advice. C and C++.
 *
 * Every size is clamped to what the current device allows
 * (cudaDevAttrMaxPersistingL2CacheSize for the set-aside,
 * cudaDevAttrMaxAccessPolicyWindowSize for a window), and the applied
 * values are returned, so a caller can report what really happened.
 *
 * FACTS.md: on an H200 the guide's recipe made kernels slower more often
 * than faster. Scope a window to the kernels that reuse the buffer (a graph
 * kernel node, or set it just before them and clear it right after), and
 * keep it only where measuring shows it wins.
 *
 * All functions return cudaSuccess or the first CUDA error;
 * cudaErrorNotSupported where the device has no persisting L2 (compute
 * capability below 8.0, or MIG).
 */

#include <stddef.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

struct l2window_limits {
	size_t l2_bytes;              /* cudaDevAttrL2CacheSize */
	size_t persisting_max_bytes;  /* largest set-aside allowed */
	size_t window_max_bytes;      /* largest window allowed */
	size_t set_aside_bytes;       /* current cudaLimitPersistingL2CacheSize */
};

/* The current device's limits and set-aside. */
cudaError_t l2window_query(struct l2window_limits *out);

/*
 * Sets the set-aside (cudaLimitPersistingL2CacheSize) to bytes, clamped to
 * persisting_max_bytes; 0 gives it back to normal use. *applied (may be
 * NULL) receives the size the driver reports afterwards.
 */
cudaError_t l2window_set_aside(size_t bytes, size_t *applied);

/* The guide's choice of set-aside: min(3/4 of L2, the maximum). */
size_t l2window_default_set_aside(const struct l2window_limits *lim);

/*
 * Fills *w for [base, base + bytes): num_bytes clamped to window_max_bytes;
 * hit_ratio clamped to [0, 1], or, when negative, the guide's
 * min(1, set-aside / window) (0 when there is no set-aside); hitProp
 * persisting, missProp streaming.
 */
void l2window_make(const struct l2window_limits *lim, const void *base, size_t bytes,
		   float hit_ratio, struct cudaAccessPolicyWindow *w);

/*
 * Sets the window on a stream (cudaStreamAttributeAccessPolicyWindow):
 * kernels launched into the stream afterwards get it. *applied (may be
 * NULL) receives the window as set.
 */
cudaError_t l2window_stream_set(cudaStream_t stream, const void *base, size_t bytes,
				float hit_ratio, struct cudaAccessPolicyWindow *applied);
/*
 * Ends the stream's window. With base and bytes: replaces it with a window
 * of hitProp and missProp normal over [base, base + bytes), so the kernels
 * launched afterwards turn the persisting lines they touch back to normal
 * (the guide's first way to reset). With base NULL: removes the window
 * (num_bytes 0); lines already persisting stay so until they are touched
 * by a normal access or l2window_reset_all().
 */
cudaError_t l2window_stream_reset(cudaStream_t stream, const void *base, size_t bytes);

/* The same for a kernel node of a CUDA graph (cudaKernelNodeAttributeAccessPolicyWindow):
 * the window then applies to that kernel alone, which is how FACTS.md says
 * to scope it. */
cudaError_t l2window_node_set(cudaGraphNode_t node, const void *base, size_t bytes,
			      float hit_ratio, struct cudaAccessPolicyWindow *applied);
cudaError_t l2window_node_reset(cudaGraphNode_t node, const void *base, size_t bytes);

/*
 * Resets every persisting line in L2 to normal (cudaCtxResetPersistingL2Cache)
 * and, when release_set_aside is non-zero, gives the set-aside back (0).
 */
cudaError_t l2window_reset_all(int release_set_aside);

#ifdef __cplusplus
}
#endif

#endif
