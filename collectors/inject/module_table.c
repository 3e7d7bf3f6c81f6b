#include "collectors/inject/module_table.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/error.h"
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
		if (im->ptx_file)
			m->ptx_file = xstrdup(im->ptx_file);
		m->triton = im->triton.present;
		m->triton_num_warps = im->triton.num_warps;
		m->triton_shared = im->triton.shared;
		m->triton_global_scratch = im->triton.global_scratch_size;
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
	size_t bytes = 0;
	CUresult r;

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
	counters_emit(dptr, bytes, kernel, m->id, seq);
}

void counters_emit(CUdeviceptr dptr, size_t bytes, const char *kernel, const char *module_id,
		   uint64_t seq)
{
	size_t i, n = bytes / sizeof(uint64_t);
	uint64_t *host = xcalloc(n ? n : 1, sizeof(*host));
	json_t *vals;
	CUresult r;

	r = cuCtxSynchronize();
	if (r == CUDA_SUCCESS)
		r = cuMemcpyDtoH(host, dptr, n * sizeof(*host));
	if (r == CUDA_SUCCESS)
		r = cuMemsetD8(dptr, 0, n * sizeof(*host));
	if (r != CUDA_SUCCESS) {
		inject_error("kernel %s: cannot read the monitor counters after launch %llu: error %d",
			     kernel, (unsigned long long)seq, (int)r);
		free(host);
		return;
	}
	vals = json_array();
	for (i = 0; i < n; i++)
		json_array_append_new(vals, json_integer((json_int_t)host[i]));
	inject_event(json_pack("{s:s, s:I, s:s, s:s?, s:o}", "ev", "counters", "seq",
			       (json_int_t)seq, "kernel", kernel, "module", module_id, "values", vals));
	free(host);
}
