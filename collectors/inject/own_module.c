#include "collectors/inject/own_module.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/inject/cost_clock.h"
#include "collectors/inject/inject.h"

/*
 * A function the library loaded itself gets the attributes the program set
 * on its own (cudaFuncSetAttribute): without the dynamic shared memory
 * limit a launch asking for more than 48 KB fails, and the carve-out
 * decides how much L1 the kernel gets.
 */
static void copy_attributes(CUfunction from, CUfunction to, unsigned shared)
{
	static const CUfunction_attribute attrs[] = {
		CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
	};
	CUdevice dev;
	size_t i;

	if (cuCtxGetDevice(&dev) != CUDA_SUCCESS)
		return;
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		int v = -1;

		/* the program's handle is a CUfunction, or a CUkernel cast to one */
		if (cuFuncGetAttribute(&v, attrs[i], from) != CUDA_SUCCESS &&
		    cuKernelGetAttribute(&v, attrs[i], (CUkernel)from, dev) != CUDA_SUCCESS)
			v = -1;
		if (attrs[i] == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES && v < (int)shared)
			v = (int)shared;
		if (v >= 0)
			cuFuncSetAttribute(to, attrs[i], v);
	}
}

/* The program's variable `name` in the module (or library) of program_fn. */
static CUresult program_global(CUfunction program_fn, const char *name, CUdeviceptr *dptr,
			       size_t *bytes)
{
	CUmodule mod;
	CUlibrary lib;

	/* a CUfunction has a name; a CUkernel cast to one does not */
	if (cuFuncGetName(&(const char *){ NULL }, program_fn) == CUDA_SUCCESS) {
		CUresult r = cuFuncGetModule(&mod, program_fn);
		return r == CUDA_SUCCESS ? cuModuleGetGlobal(dptr, bytes, mod, name) : r;
	}
	if (cuKernelGetLibrary(&lib, (CUkernel)program_fn) != CUDA_SUCCESS)
		return CUDA_ERROR_NOT_FOUND;
	return cuLibraryGetGlobal(dptr, bytes, lib, name);
}

/*
 * (Re)pairs each module-scope variable the PTX defines with the program's of
 * the same name and size; emits a `module_globals` event with what was
 * paired and what was not (a variable of our own, such as the monitor's
 * counters, has no partner and needs none).
 */
static void find_globals(struct own_module *om, const char *what, const char *kernel,
			 const char *ptx, size_t len)
{
	struct ptx_module *m = NULL;
	json_t *unpaired;
	size_t i;

	free(om->globals);
	om->globals = NULL;
	om->nr_globals = 0;
	om->global_bytes = 0;
	if (ptx_parse(what, ptx, len, &m)) {
		error_clear();
		return;
	}
	unpaired = json_array();
	for (i = 0; i < m->nr_variables; i++) {
		const struct ptx_variable *v = &m->variables[i];
		struct own_global g = { 0, 0, 0, v->is_const };
		size_t theirs = 0;

		if (v->is_extern || !strncmp(v->name, "__cacheadvise", 13))
			continue;
		if (cuModuleGetGlobal(&g.ours, &g.bytes, om->module, v->name) != CUDA_SUCCESS ||
		    program_global(om->program_fn, v->name, &g.program, &theirs) != CUDA_SUCCESS ||
		    theirs != g.bytes || !g.bytes) {
			json_array_append_new(unpaired, json_string(v->name));
			continue;
		}
		om->globals = xrealloc(om->globals, (om->nr_globals + 1) * sizeof(*om->globals));
		om->globals[om->nr_globals++] = g;
		om->global_bytes += g.bytes;
	}
	if (om->nr_globals || json_array_size(unpaired))
		inject_event(json_pack("{s:s, s:s, s:s, s:I, s:I, s:o}", "ev", "module_globals",
				       "kernel", kernel, "module", what,
				       "shared", (json_int_t)om->nr_globals,
				       "bytes", (json_int_t)om->global_bytes, "unpaired", unpaired));
	else
		json_decref(unpaired);
	ptx_module_free(m);
}

CUfunction own_module_function(struct own_module *om, const char *what, const char *ptx_path,
			       const char *kernel, CUfunction program_fn, unsigned shared)
{
	struct strbuf sb = STRBUF_INIT;
	struct cost_clock_token t;
	CUresult r;

	if (om->fn && om->program_fn != program_fn) {
		/* the program reloaded its module: find its variables again */
		om->program_fn = program_fn;
		if (!strbuf_read_file(&sb, ptx_path, 0))
			find_globals(om, what, kernel, sb.buf, sb.len);
		error_clear();
		strbuf_release(&sb);
	}
	if (om->fn || om->failed)
		return om->fn;
	om->failed = 1;
	if (!ptx_path || strbuf_read_file(&sb, ptx_path, 0)) {
		error_clear();
		inject_error("launch plan: kernel %s: cannot read %s's PTX", kernel, what);
		strbuf_release(&sb);
		return NULL;
	}
	t = cost_clock_enter(RUN_COST_MODULE_JIT);
	r = cuModuleLoadData(&om->module, sb.buf);
	cost_clock_leave(t);
	if (r == CUDA_SUCCESS)
		r = cuModuleGetFunction(&om->fn, om->module, kernel);
	if (r != CUDA_SUCCESS) {
		inject_error("launch plan: kernel %s: cannot load %s: %s", kernel, what,
			     inject_cu_error(r));
		om->fn = NULL;
		strbuf_release(&sb);
		return NULL;
	}
	copy_attributes(program_fn, om->fn, shared);
	om->program_fn = program_fn;
	find_globals(om, what, kernel, sb.buf, sb.len);
	strbuf_release(&sb);
	om->failed = 0;
	return om->fn;
}

void own_module_sync_in(const struct own_module *om, CUstream stream)
{
	size_t i;

	for (i = 0; i < om->nr_globals; i++)
		cuMemcpyDtoDAsync(om->globals[i].ours, om->globals[i].program, om->globals[i].bytes,
				  stream);
}

void own_module_sync_out(const struct own_module *om, CUstream stream)
{
	size_t i;

	for (i = 0; i < om->nr_globals; i++)
		if (!om->globals[i].is_const)
			cuMemcpyDtoDAsync(om->globals[i].program, om->globals[i].ours,
					  om->globals[i].bytes, stream);
}

void own_module_release(struct own_module *om)
{
	free(om->globals);
	memset(om, 0, sizeof(*om));
}
