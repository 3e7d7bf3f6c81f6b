#include "collectors/inject/module_table.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
#include "base/json_file.h"
#include "analysis/ptx.h"
#include "analysis/ptx_instrument.h"
#include "base/xalloc.h"
#include "collectors/intake.h"
#include "collectors/inject/inject.h"

static __thread char last_error[1024];

const char *module_table_error(void)
{
	return last_error;
}

void module_table_init(struct module_table *t)
{
	int major = 0, minor = 0;
	CUdevice dev;

	memset(t, 0, sizeof(*t));
	t->device_arch = 0;
	if (cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
	    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS)
		t->device_arch = (unsigned)(major * 10 + minor);
}

/* The device's arch, read lazily: at InitializeInjection there is no context. */
static unsigned device_arch(struct module_table *t)
{
	int major = 0, minor = 0;

	if (!t->device_arch &&
	    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0) == CUDA_SUCCESS &&
	    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0) == CUDA_SUCCESS)
		t->device_arch = (unsigned)(major * 10 + minor);
	return t->device_arch;
}

struct seen_module *module_table_identify(struct module_table *t, const void *image,
					  const char *file_name, const char *api)
{
	struct intake in;
	struct intake_module *im;
	struct seen_module *m;
	char *origin = xasprintf("%s#%zu", api, t->nr);
	int ret;
	size_t i;

	intake_init(&in);
	if (image)
		ret = intake_read_image(&in, image, origin, device_arch(t));
	else
		ret = intake_read_file(&in, file_name, device_arch(t));
	if (!ret && !in.nr_modules)
		ret = error_set(CA_E_INPUT, "%s holds no CUDA module", origin);
	if (ret) {
		snprintf(last_error, sizeof(last_error), "%s", error_message());
		intake_release(&in);
		free(origin);
		return NULL;
	}
	/* A load call loads one module: one fatbin, one PTX or one cubin. */
	im = &in.modules[0];
	m = xcalloc(1, sizeof(*m));
	m->origin = origin;
	memcpy(m->id, im->id, sizeof(m->id));
	if (im->has_ptx && im->ptx) {
		m->ptx = xmalloc(im->ptx->len + 1);
		memcpy(m->ptx, im->ptx->text, im->ptx->len);
		m->ptx[im->ptx->len] = '\0';
		m->ptx_len = im->ptx->len;
		for (i = 0; i < im->ptx->nr_functions; i++) {
			if (!im->ptx->functions[i].is_entry)
				continue;
			m->functions = xrealloc(m->functions, (m->nr_functions + 1) * sizeof(*m->functions));
			m->functions[m->nr_functions++] = xstrdup(im->ptx->functions[i].name);
		}
	} else {
		for (i = 0; i < im->nr_cubin_kernels; i++) {
			m->functions = xrealloc(m->functions, (m->nr_functions + 1) * sizeof(*m->functions));
			m->functions[m->nr_functions++] = xstrdup(im->cubin_kernels[i]);
		}
	}
	intake_release(&in);
	ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	t->items[t->nr++] = m;
	return m;
}

void module_table_bind(struct module_table *t, struct seen_module *m, void *handle, int is_library)
{
	(void)t;
	m->handle = handle;
	m->is_library = is_library;
}

struct seen_module *module_table_find_function(struct module_table *t, const char *name)
{
	size_t i, j;

	for (i = t->nr; i-- > 0;)
		for (j = 0; j < t->items[i]->nr_functions; j++)
			if (!strcmp(t->items[i]->functions[j], name))
				return t->items[i];
	return NULL;
}

void module_table_read_counters(struct module_table *t, struct seen_module *m,
				const char *kernel, uint64_t seq)
{
	CUdeviceptr dptr = 0;
	size_t bytes = 0, i, n;
	uint64_t *host;
	CUresult r;
	json_t *vals;

	(void)t;
	if (!m->has_counters)
		return;
	if (m->is_library)
		r = cuLibraryGetGlobal(&dptr, &bytes, (CUlibrary)m->handle, PTX_INSTRUMENT_SYMBOL);
	else
		r = cuModuleGetGlobal(&dptr, &bytes, (CUmodule)m->handle, PTX_INSTRUMENT_SYMBOL);
	if (r != CUDA_SUCCESS) {
		inject_error("module %s: cannot find %s: error %d", m->id, PTX_INSTRUMENT_SYMBOL, (int)r);
		m->has_counters = 0;
		return;
	}
	n = bytes / sizeof(uint64_t);
	host = xcalloc(n ? n : 1, sizeof(*host));
	r = cuCtxSynchronize();
	if (r == CUDA_SUCCESS)
		r = cuMemcpyDtoH(host, dptr, n * sizeof(*host));
	if (r == CUDA_SUCCESS)
		r = cuMemsetD8(dptr, 0, n * sizeof(*host));
	if (r != CUDA_SUCCESS) {
		inject_error("module %s: cannot read the monitor counters after launch %llu: error %d",
			     m->id, (unsigned long long)seq, (int)r);
		free(host);
		return;
	}
	vals = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(vals, json_integer((json_int_t)host[i]));
	inject_event(json_pack("{s:s, s:I, s:s, s:s, s:o}", "ev", "counters", "seq",
			       (json_int_t)seq, "kernel", kernel, "module", m->id, "values", vals));
	free(host);
}

/* ---- allocations ---- */

void alloc_table_init(struct alloc_table *t)
{
	memset(t, 0, sizeof(*t));
}

const struct alloc_entry *alloc_table_add(struct alloc_table *t, CUdeviceptr ptr, size_t size)
{
	struct alloc_entry *a;

	ALLOC_GROW(t->items, t->nr + 1, t->alloc);
	a = &t->items[t->nr++];
	a->seq = t->next_seq++;
	a->ptr = ptr;
	a->size = size;
	a->live = 1;
	return a;
}

void alloc_table_remove(struct alloc_table *t, CUdeviceptr ptr)
{
	size_t i;

	for (i = t->nr; i-- > 0;)
		if (t->items[i].live && t->items[i].ptr == ptr) {
			t->items[i].live = 0;
			return;
		}
}

const struct alloc_entry *alloc_table_find(const struct alloc_table *t, CUdeviceptr ptr)
{
	size_t i;

	for (i = t->nr; i-- > 0;) {
		const struct alloc_entry *a = &t->items[i];
		if (a->live && ptr >= a->ptr && ptr < a->ptr + a->size)
			return a;
	}
	return NULL;
}

const struct alloc_entry *alloc_table_by_seq(const struct alloc_table *t, uint64_t seq)
{
	return seq < t->nr ? &t->items[seq] : NULL;
}

/* ---- persisting L2 windows ---- */

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
