#include <string.h>

#include "device/l2window.h"

static cudaError_t attr(enum cudaDeviceAttr a, size_t *out)
{
	int dev, v = 0;
	cudaError_t err = cudaGetDevice(&dev);

	if (!err)
		err = cudaDeviceGetAttribute(&v, a, dev);
	*out = v > 0 ? (size_t)v : 0;
	return err;
}

cudaError_t l2window_query(struct l2window_limits *out)
{
	cudaError_t err;

	memset(out, 0, sizeof(*out));
	if ((err = attr(cudaDevAttrL2CacheSize, &out->l2_bytes)) ||
	    (err = attr(cudaDevAttrMaxPersistingL2CacheSize, &out->persisting_max_bytes)) ||
	    (err = attr(cudaDevAttrMaxAccessPolicyWindowSize, &out->window_max_bytes)))
		return err;
	if (!out->persisting_max_bytes || !out->window_max_bytes)
		return cudaSuccess;
	return cudaDeviceGetLimit(&out->set_aside_bytes, cudaLimitPersistingL2CacheSize);
}

size_t l2window_default_set_aside(const struct l2window_limits *lim)
{
	size_t want = lim->l2_bytes / 4 * 3;

	return want < lim->persisting_max_bytes ? want : lim->persisting_max_bytes;
}

cudaError_t l2window_set_aside(size_t bytes, size_t *applied)
{
	struct l2window_limits lim;
	cudaError_t err = l2window_query(&lim);

	if (applied)
		*applied = 0;
	if (err)
		return err;
	if (!lim.persisting_max_bytes)
		return cudaErrorNotSupported;
	if (bytes > lim.persisting_max_bytes)
		bytes = lim.persisting_max_bytes;
	if ((err = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes)))
		return err;
	return applied ? cudaDeviceGetLimit(applied, cudaLimitPersistingL2CacheSize) : cudaSuccess;
}

void l2window_make(const struct l2window_limits *lim, const void *base, size_t bytes,
		   float hit_ratio, struct cudaAccessPolicyWindow *w)
{
	memset(w, 0, sizeof(*w));
	if (bytes > lim->window_max_bytes)
		bytes = lim->window_max_bytes;
	if (hit_ratio < 0) {
		hit_ratio = !bytes || !lim->set_aside_bytes ? 0.0f
			    : lim->set_aside_bytes >= bytes ? 1.0f
			    : (float)((double)lim->set_aside_bytes / (double)bytes);
	} else if (hit_ratio > 1) {
		hit_ratio = 1;
	}
	w->base_ptr = (void *)base;
	w->num_bytes = bytes;
	w->hitRatio = hit_ratio;
	w->hitProp = cudaAccessPropertyPersisting;
	w->missProp = cudaAccessPropertyStreaming;
}

/* Makes the window for [base, base + bytes), or the normalising window. */
static cudaError_t prepare(const void *base, size_t bytes, float hit_ratio, int normal,
			   cudaLaunchAttributeValue *v)
{
	struct l2window_limits lim;
	cudaError_t err = l2window_query(&lim);

	memset(v, 0, sizeof(*v));
	if (err)
		return err;
	if (!lim.window_max_bytes)
		return cudaErrorNotSupported;
	l2window_make(&lim, base, bytes, hit_ratio, &v->accessPolicyWindow);
	if (normal) {
		v->accessPolicyWindow.hitRatio = 1.0f;
		v->accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
		v->accessPolicyWindow.missProp = cudaAccessPropertyNormal;
	}
	return cudaSuccess;
}

cudaError_t l2window_stream_set(cudaStream_t stream, const void *base, size_t bytes,
				float hit_ratio, struct cudaAccessPolicyWindow *applied)
{
	cudaLaunchAttributeValue v;
	cudaError_t err = prepare(base, bytes, hit_ratio, 0, &v);

	if (!err)
		err = cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &v);
	if (!err && applied)
		*applied = v.accessPolicyWindow;
	return err;
}

cudaError_t l2window_stream_reset(cudaStream_t stream, const void *base, size_t bytes)
{
	cudaLaunchAttributeValue v;
	cudaError_t err;

	memset(&v, 0, sizeof(v));
	if (base && bytes && (err = prepare(base, bytes, 1.0f, 1, &v)))
		return err;
	return cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &v);
}

cudaError_t l2window_node_set(cudaGraphNode_t node, const void *base, size_t bytes,
			      float hit_ratio, struct cudaAccessPolicyWindow *applied)
{
	cudaLaunchAttributeValue v;
	cudaError_t err = prepare(base, bytes, hit_ratio, 0, &v);

	if (!err)
		err = cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeAccessPolicyWindow, &v);
	if (!err && applied)
		*applied = v.accessPolicyWindow;
	return err;
}

cudaError_t l2window_node_reset(cudaGraphNode_t node, const void *base, size_t bytes)
{
	cudaLaunchAttributeValue v;
	cudaError_t err;

	memset(&v, 0, sizeof(v));
	if (base && bytes && (err = prepare(base, bytes, 1.0f, 1, &v)))
		return err;
	return cudaGraphKernelNodeSetAttribute(node, cudaKernelNodeAttributeAccessPolicyWindow, &v);
}

cudaError_t l2window_reset_all(int release_set_aside)
{
	cudaError_t err = cudaCtxResetPersistingL2Cache();

	if (!err && release_set_aside)
		err = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
	return err;
}
