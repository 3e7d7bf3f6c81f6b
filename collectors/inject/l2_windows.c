#include "collectors/inject/l2_windows.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "collectors/inject/alloc_table.h"
#include "collectors/inject/inject.h"

struct l2_window {
	char **kernels;
	size_t nr_kernels;
	uint64_t alloc_seq;
	uint64_t offset;
	uint64_t num_bytes;
	float hit_ratio;
	CUaccessProperty hit_prop, miss_prop;
};

struct l2_windows {
	size_t set_aside_bytes;
	int set_aside_done;
	struct l2_window *items;
	size_t nr;
	CUstream active_stream;
	int active;
};

static CUaccessProperty parse_prop(const char *s, CUaccessProperty dflt)
{
	if (!s)
		return dflt;
	if (!strcmp(s, "persisting"))
		return CU_ACCESS_PROPERTY_PERSISTING;
	if (!strcmp(s, "streaming"))
		return CU_ACCESS_PROPERTY_STREAMING;
	if (!strcmp(s, "normal"))
		return CU_ACCESS_PROPERTY_NORMAL;
	return dflt;
}

struct l2_windows *l2_windows_load(const char *path)
{
	json_t *doc = json_file_load(path), *arr, *w;
	struct l2_windows *ws;
	size_t i, k;

	if (!doc) {
		inject_error("%s", error_message());
		return NULL;
	}
	ws = xcalloc(1, sizeof(*ws));
	ws->set_aside_bytes = (size_t)json_integer_value(json_object_get(doc, "set_aside_bytes"));
	arr = json_object_get(doc, "windows");
	json_array_foreach(arr, i, w) {
		struct l2_window *x;
		json_t *ks = json_object_get(w, "kernels"), *kv;

		ws->items = xrealloc(ws->items, (ws->nr + 1) * sizeof(*ws->items));
		x = &ws->items[ws->nr++];
		memset(x, 0, sizeof(*x));
		json_array_foreach(ks, k, kv) {
			x->kernels = xrealloc(x->kernels, (x->nr_kernels + 1) * sizeof(*x->kernels));
			x->kernels[x->nr_kernels++] = xstrdup(json_string_value(kv) ? json_string_value(kv) : "");
		}
		x->alloc_seq = (uint64_t)json_integer_value(json_object_get(w, "alloc"));
		x->offset = (uint64_t)json_integer_value(json_object_get(w, "offset"));
		x->num_bytes = (uint64_t)json_integer_value(json_object_get(w, "num_bytes"));
		x->hit_ratio = (float)json_number_value(json_object_get(w, "hit_ratio"));
		x->hit_prop = parse_prop(json_string_value(json_object_get(w, "hit_prop")),
					 CU_ACCESS_PROPERTY_PERSISTING);
		x->miss_prop = parse_prop(json_string_value(json_object_get(w, "miss_prop")),
					  CU_ACCESS_PROPERTY_STREAMING);
	}
	json_decref(doc);
	return ws;
}

static struct l2_window *window_for(struct l2_windows *ws, const char *kernel)
{
	size_t i, k;

	for (i = 0; i < ws->nr; i++)
		for (k = 0; k < ws->items[i].nr_kernels; k++)
			if (!strcmp(ws->items[i].kernels[k], kernel))
				return &ws->items[i];
	return NULL;
}

static CUresult set_stream_window(CUstream stream, CUdeviceptr base, size_t bytes, float ratio,
				  CUaccessProperty hit, CUaccessProperty miss)
{
	CUstreamAttrValue v;

	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = (void *)base;
	v.accessPolicyWindow.num_bytes = bytes;
	v.accessPolicyWindow.hitRatio = ratio;
	v.accessPolicyWindow.hitProp = hit;
	v.accessPolicyWindow.missProp = miss;
	return cuStreamSetAttribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v);
}

void l2_windows_apply(struct l2_windows *ws, const char *kernel, CUstream stream,
		      const struct alloc_table *allocs, int have_params)
{
	struct l2_window *w;
	const struct alloc_entry *a;
	CUresult r;

	(void)have_params;
	if (!ws || !(w = window_for(ws, kernel)))
		return;
	if (!ws->set_aside_done) {
		ws->set_aside_done = 1;
		r = cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, ws->set_aside_bytes);
		if (r != CUDA_SUCCESS)
			inject_error("cannot set aside %zu bytes of L2 for persisting accesses: error %d",
				     ws->set_aside_bytes, (int)r);
	}
	a = alloc_table_by_seq(allocs, w->alloc_seq);
	if (!a || !a->live) {
		inject_error("L2 window for %s: allocation #%llu is not live at the launch", kernel,
			     (unsigned long long)w->alloc_seq);
		return;
	}
	r = set_stream_window(stream, a->ptr + w->offset, w->num_bytes, w->hit_ratio, w->hit_prop,
			      w->miss_prop);
	if (r != CUDA_SUCCESS) {
		inject_error("L2 window for %s: cuStreamSetAttribute failed: error %d", kernel, (int)r);
		return;
	}
	ws->active = 1;
	ws->active_stream = stream;
	inject_event(json_pack("{s:s, s:s, s:I, s:I, s:f}", "ev", "l2_window", "kernel", kernel,
			       "alloc", (json_int_t)w->alloc_seq, "num_bytes",
			       (json_int_t)w->num_bytes, "hit_ratio", (double)w->hit_ratio));
}

void l2_windows_after_launch(struct l2_windows *ws, const char *kernel, CUstream stream)
{
	(void)kernel;
	if (!ws || !ws->active || stream != ws->active_stream)
		return;
	/* A zero-sized window: later launches on this stream get the whole L2. */
	set_stream_window(stream, 0, 0, 0.0f, CU_ACCESS_PROPERTY_NORMAL, CU_ACCESS_PROPERTY_NORMAL);
	ws->active = 0;
}
