/*
 * The injection library's entry point and CUDA driver callbacks.
 *
 * The driver calls InitializeInjection() at cuInit. We subscribe to CUPTI
 * driver-API callbacks and:
 *   - at the exit of every module load, identify the module (its PTX, id and
 *     functions, through the same intake code as the CLI), record it, and,
 *     when CACHEADVISE_SUBST holds <id>.ptx, load that text instead and hand
 *     the program the new handle (FACTS.md "Substituting a module works");
 *   - at every kernel launch, record the kernel, its configuration and the
 *     allocations its pointer arguments point into; read counters (range
 *     profiler) or monitor counters when asked;
 *   - track device allocations, and the carve-out and shared memory limit
 *     the program sets on its kernels (cuFuncSetAttribute, cuKernelSetAttribute);
 *   - collect kernel times from CUPTI activity records when asked.
 * Everything goes to OUT/events.jsonl, one JSON object a line; a second
 * process of the same run writes OUT/events.<pid>.jsonl (InitializeInjection).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#include "base/atomic_file.h"
#include "base/xalloc.h"
#include "analysis/ptx_instrument.h"
#include "base/strbuf.h"
#include "collectors/inject/alloc_table.h"
#include "collectors/inject/cost_clock.h"
#include "collectors/inject/inject.h"
#include "collectors/inject/l2_windows.h"
#include "collectors/inject/launch_plan.h"
#include "collectors/inject/module_table.h"
#include "collectors/launcher.h"

static struct {
	int initialized;
	int events_fd;
	char *out_dir;
	char *subst_dir;
	int save_modules;
	int metrics;
	int timing;
	int monitor;
	const char *metric_list;
	CUpti_SubscriberHandle subscriber;
	pthread_mutex_t lock;
	uint64_t launch_seq;
	struct range_metrics *rm;
	CUcontext rm_ctx;
	int l2_reset_done;
	struct module_table modules;
	struct alloc_table allocs;
	struct l2_windows *windows;
	struct launch_plan *plan;
	int rank;                   /* in an MPI or Slurm job, else -1 */
} g = { .events_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .rank = -1 };

/* Set while this library itself calls the driver, so that its own calls do
 * not re-enter the callbacks. */
static __thread int in_own_call;

void inject_event(json_t *ev)
{
	struct cost_clock_token t;
	char *s, *line;
	size_t len;

	if (!ev)
		return;
	if (g.events_fd < 0) {
		json_decref(ev);
		return;
	}
	t = cost_clock_enter(RUN_COST_EVENT_WRITING);
	s = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(ev);
	len = s ? strlen(s) : 0;
	if (s && (line = realloc(s, len + 2))) {
		line[len] = '\n';
		/* One write() of an O_APPEND descriptor: lines never interleave. */
		if (write(g.events_fd, line, len + 1) < 0) {
			/* nothing sensible to do inside the program: drop the event */
		}
		s = line;
	}
	free(s);
	cost_clock_leave(t);
}

void inject_error(const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	inject_event(json_pack("{s:s, s:s}", "ev", "error", "what", buf));
}

const char *inject_cu_error(CUresult r)
{
	const char *s = NULL;

	cuGetErrorString(r, &s);
	return s ? s : "unknown driver error";
}

/* ---- modules ---------------------------------------------------------- */

static char *read_subst(const char *id, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	char *path;

	if (!g.subst_dir)
		return NULL;
	path = xasprintf("%s/%s.ptx", g.subst_dir, id);
	if (access(path, R_OK) || strbuf_read_file(&sb, path, 0)) {
		free(path);
		strbuf_release(&sb);
		return NULL;
	}
	free(path);
	return strbuf_detach(&sb, len);
}

static void save_module_ptx(const struct seen_module *m)
{
	char *dir, *path;

	if (!g.save_modules || !m->ptx)
		return;
	dir = xasprintf("%s/seen", g.out_dir);
	mkdir(dir, 0777);
	path = xasprintf("%s/%s.ptx", dir, m->id);
	/* best effort: a module not saved is one the capture does not show */
	if (access(path, F_OK))
		(void)write_file_atomic(path, m->ptx, m->ptx_len);
	free(path);
	free(dir);
}

/*
 * Identifies a module that was just loaded, records it and substitutes it
 * if asked. handle_out is the program's CUlibrary* or CUmodule*; the
 * substitute is loaded with the same kind of call.
 */
static void on_module_loaded(const char *api, const void *image, const char *file_name,
			     void *handle_out, int is_library)
{
	struct seen_module *m;
	struct cost_clock_token t;
	char *subst;
	size_t subst_len = 0;
	json_t *ev, *fns;
	size_t i;

	t = cost_clock_enter(RUN_COST_MODULE_READING);
	m = module_table_identify(&g.modules, image, file_name, api);
	if (m)
		save_module_ptx(m);
	cost_clock_leave(t);
	if (!m) {
		inject_error("%s: cannot identify the module: %s", api, module_table_error());
		return;
	}
	ev = json_pack("{s:s, s:s, s:s, s:b, s:s?, s:s?}", "ev", "module", "api", api, "id",
		       m->id, "has_ptx", m->ptx != NULL, "origin", m->origin, "path", file_name);
	if (m->ptx_file)
		json_object_set_new(ev, "ptx_file", json_string(m->ptx_file));
	if (m->triton)
		json_object_set_new(ev, "triton", json_pack("{s:I, s:I, s:I}", "num_warps",
			(json_int_t)m->triton_num_warps, "shared", (json_int_t)m->triton_shared,
			"global_scratch_size", (json_int_t)m->triton_global_scratch));
	fns = json_array();
	for (i = 0; i < m->nr_functions; i++)
		json_array_append_new(fns, json_string(m->functions[i]));
	json_object_set_new(ev, "functions", fns);

	subst = m->ptx ? read_subst(m->id, &subst_len) : NULL;
	if (subst) {
		CUresult r;
		void *old = *(void **)handle_out, *fresh = NULL;

		in_own_call++;
		t = cost_clock_enter(RUN_COST_MODULE_JIT);
		if (is_library)
			r = cuLibraryLoadData((CUlibrary *)&fresh, subst, NULL, NULL, 0, NULL, NULL, 0);
		else
			r = cuModuleLoadData((CUmodule *)&fresh, subst);
		cost_clock_leave(t);
		if (r == CUDA_SUCCESS) {
			*(void **)handle_out = fresh;
			if (is_library)
				cuLibraryUnload((CUlibrary)old);
			else
				cuModuleUnload((CUmodule)old);
		}
		in_own_call--;
		if (r != CUDA_SUCCESS) {
			inject_error("module %s: the driver rejected the substituted PTX: %s",
				     m->id, inject_cu_error(r));
			json_object_set_new(ev, "substituted", json_false());
			json_object_set_new(ev, "substitute_error", json_string(inject_cu_error(r)));
		} else {
			json_object_set_new(ev, "substituted", json_true());
			m->has_counters = strstr(subst, PTX_INSTRUMENT_SYMBOL) != NULL;
			module_table_bind(&g.modules, m, fresh, is_library);
		}
		free(subst);
	} else {
		json_object_set_new(ev, "substituted", json_false());
		module_table_bind(&g.modules, m, *(void **)handle_out, is_library);
	}
	inject_event(ev);
}

/* ---- launches --------------------------------------------------------- */

static void reset_persisting_l2(void)
{
	CUresult r;

	if (g.l2_reset_done)
		return;
	g.l2_reset_done = 1;
	in_own_call++;
	/* So that one run cannot leak persisting lines into the next. */
	r = cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
	if (r == CUDA_SUCCESS)
		r = cuCtxResetPersistingL2Cache();
	in_own_call--;
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_SUPPORTED)
		inject_error("cannot reset the persisting L2 cache: %s", inject_cu_error(r));
}

/*
 * The launch's pointer arguments that point into a device allocation. A
 * parameter larger than a pointer is a struct passed by value (PyTorch's
 * pointer arrays and functors, cuBLAS's parameter blocks): every aligned
 * word of it that points into an allocation is recorded, with "at", its
 * byte within the parameter. Such a word may be a scalar that happens to
 * look like a device address; the L2 advice that reads these only counts
 * launches, so a rare false match costs little. Only a parameter's first
 * ARG_SCAN_BYTES are read, since this runs at every launch of every run.
 */
#define ARG_SCAN_BYTES 512

static json_t *launch_args_json(CUfunction f, void **params)
{
	json_t *arr = json_array();
	size_t i, at;

	if (!params)
		return arr;
	for (i = 0; i < 64; i++) {
		size_t offset = 0, size = 0;
		CUresult r;
		CUdeviceptr value;
		const struct alloc_entry *a;

		in_own_call++;
		r = cuFuncGetParamInfo(f, i, &offset, &size);
		if (r != CUDA_SUCCESS)
			r = cuKernelGetParamInfo((CUkernel)f, i, &offset, &size);
		in_own_call--;
		if (r != CUDA_SUCCESS)
			break;
		if (size < sizeof(CUdeviceptr) || !params[i])
			continue;
		for (at = 0; at + sizeof(value) <= size && at < ARG_SCAN_BYTES; at += sizeof(value)) {
			json_t *arg;

			memcpy(&value, (const char *)params[i] + at, sizeof(value));
			a = alloc_table_find(&g.allocs, value);
			if (!a)
				continue;
			arg = json_pack("{s:I, s:I, s:I, s:I}", "param", (json_int_t)i, "alloc",
					(json_int_t)a->seq, "offset", (json_int_t)(value - a->ptr),
					"alloc_bytes", (json_int_t)a->size);
			if (size != sizeof(value))
				json_object_set_new(arg, "at", json_integer((json_int_t)at));
			json_array_append_new(arr, arg);
		}
	}
	return arr;
}

static void ensure_range_metrics(CUcontext ctx, int per_launch)
{
	struct cost_clock_token t;

	if (g.rm || g.rm_ctx)
		return;
	g.rm_ctx = ctx;
	in_own_call++;
	t = cost_clock_enter(RUN_COST_COUNTER_SETUP);
	g.rm = range_metrics_new(ctx, g.metric_list, per_launch);
	cost_clock_leave(t);
	in_own_call--;
}

/*
 * The `device` event, once a process: the GPU its first launch runs on
 * (ordinal in this process and PCI bus id, which names the GPU across the
 * processes of a job whatever CUDA_VISIBLE_DEVICES each has). Called under
 * g.lock.
 */
static void device_event_once(void)
{
	static int done;
	char bus[32] = "";
	CUdevice dev;

	if (done)
		return;
	done = 1;
	in_own_call++;
	if (cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
	    cuDeviceGetPCIBusId(bus, (int)sizeof(bus), dev) == CUDA_SUCCESS)
		inject_event(json_pack("{s:s, s:i, s:s}", "ev", "device", "ordinal", (int)dev,
				       "pci_bus_id", bus));
	in_own_call--;
}

static void on_launch_enter(const CUpti_CallbackData *cb, struct launch_info *li)
{
	const char *kernel = li->kernel;
	const struct seen_module *m = module_table_find_function(&g.modules, kernel);
	json_t *ev;

	pthread_mutex_lock(&g.lock);
	device_event_once();
	li->seq = g.launch_seq++;
	reset_persisting_l2();
	ev = json_pack("{s:s, s:I, s:s, s:s?, s:[i,i,i], s:[i,i,i], s:i, s:I, s:I}",
		       "ev", "launch", "seq", (json_int_t)li->seq, "kernel", kernel,
		       "module", m ? m->id : NULL, "grid", li->grid[0], li->grid[1], li->grid[2],
		       "block", li->block[0], li->block[1], li->block[2], "dynamic_shared", li->shared,
		       "stream", (json_int_t)(uintptr_t)li->stream,
		       "correlation", (json_int_t)cb->correlationId);
	json_object_set_new(ev, "args", launch_args_json(*li->f, li->params));
	inject_event(ev);
	if (g.windows)
		l2_windows_apply(g.windows, kernel, li->stream, &g.allocs, li->params ? 1 : 0);
	if (g.plan) {
		if (launch_plan_wants_counters(g.plan, kernel))
			ensure_range_metrics(cb->context, 1);
		in_own_call++;
		launch_plan_before(g.plan, &g.modules, &g.allocs, g.rm, li);
		in_own_call--;
	} else if (g.metrics) {
		ensure_range_metrics(cb->context, 0);
		in_own_call++;
		range_metrics_before_launch(g.rm, li->seq, kernel);
		in_own_call--;
	}
	pthread_mutex_unlock(&g.lock);
}

static void on_launch_exit(const CUpti_CallbackData *cb, const struct launch_info *li)
{
	const char *kernel = li->kernel;
	struct seen_module *m;

	(void)cb;
	if (g.windows)
		l2_windows_after_launch(g.windows, kernel, li->stream);
	if (g.plan) {
		pthread_mutex_lock(&g.lock);
		in_own_call++;
		launch_plan_after(g.plan, g.rm, li);
		in_own_call--;
		pthread_mutex_unlock(&g.lock);
	}
	if (!g.monitor)
		return;
	m = module_table_find_function(&g.modules, kernel);
	if (!m || !m->handle)
		return;
	pthread_mutex_lock(&g.lock);
	in_own_call++;
	module_table_read_counters(&g.modules, m, kernel, g.launch_seq - 1);
	in_own_call--;
	pthread_mutex_unlock(&g.lock);
}

/* ---- attributes the program sets (issue 18) ---------------------------- */

/*
 * The name of a function handle: a CUfunction, or a CUkernel cast to one
 * (cuFuncGetName fails on a CUkernel, cuKernelGetName works: FACTS.md
 * "Choosing the function per launch"). NULL when neither knows it.
 */
static const char *handle_name(CUfunction f)
{
	const char *name = NULL;

	in_own_call++;
	if (cuFuncGetName(&name, f) != CUDA_SUCCESS &&
	    cuKernelGetName(&name, (CUkernel)f) != CUDA_SUCCESS)
		name = NULL;
	in_own_call--;
	return name;
}

static const char *cache_config_name(CUfunc_cache c)
{
	switch (c) {
	case CU_FUNC_CACHE_PREFER_NONE: return "prefer_none";
	case CU_FUNC_CACHE_PREFER_SHARED: return "prefer_shared";
	case CU_FUNC_CACHE_PREFER_L1: return "prefer_l1";
	case CU_FUNC_CACHE_PREFER_EQUAL: return "prefer_equal";
	default: return "unknown";
	}
}

/*
 * An attribute the program set on a kernel (cuFuncSetAttribute,
 * cuKernelSetAttribute) that decides its L1/shared split: the carve-out
 * and the dynamic shared memory limit, as an `attribute` event. Other
 * attributes are not recorded.
 */
static void on_set_attribute(CUfunction f, CUfunction_attribute attrib, int value, const char *api)
{
	const char *which, *name;

	if (attrib == CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT)
		which = "preferred_shared_memory_carveout";
	else if (attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		which = "max_dynamic_shared_size_bytes";
	else
		return;
	pthread_mutex_lock(&g.lock);
	name = handle_name(f);
	inject_event(json_pack("{s:s, s:s?, s:s, s:i, s:s}", "ev", "attribute", "kernel", name,
			       "attribute", which, "value", value, "api", api));
	pthread_mutex_unlock(&g.lock);
}

/* A cache configuration (cuFuncSetCacheConfig, cuKernelSetCacheConfig; the
 * context's with no kernel, cuCtxSetCacheConfig) as an `attribute` event
 * whose value is a name. */
static void on_set_cache_config(CUfunction f, CUfunc_cache config, const char *api)
{
	const char *name;

	pthread_mutex_lock(&g.lock);
	name = f ? handle_name(f) : NULL;
	inject_event(json_pack("{s:s, s:s?, s:s, s:s, s:s}", "ev", "attribute", "kernel", name,
			       "attribute", "cache_config", "value", cache_config_name(config),
			       "api", api));
	pthread_mutex_unlock(&g.lock);
}

/* ---- allocations ------------------------------------------------------ */

static void on_alloc(CUdeviceptr *dptr, size_t size)
{
	const struct alloc_entry *a;

	if (!dptr || !*dptr)
		return;
	pthread_mutex_lock(&g.lock);
	a = alloc_table_add(&g.allocs, *dptr, size);
	inject_event(json_pack("{s:s, s:I, s:I, s:I}", "ev", "alloc", "seq", (json_int_t)a->seq,
			       "bytes", (json_int_t)size, "ptr", (json_int_t)*dptr));
	pthread_mutex_unlock(&g.lock);
}

static void on_free(CUdeviceptr ptr)
{
	pthread_mutex_lock(&g.lock);
	alloc_table_remove(&g.allocs, ptr);
	pthread_mutex_unlock(&g.lock);
}

/* ---- activity (kernel times) ------------------------------------------ */

#define ACTIVITY_BUFFER_SIZE (4u << 20)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, ACTIVITY_BUFFER_SIZE);
	*size = ACTIVITY_BUFFER_SIZE;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	(void)ctx;
	(void)stream_id;
	(void)size;
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
			const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
			inject_event(json_pack("{s:s, s:s, s:I, s:I, s:I, s:i, s:i, s:i}",
				"ev", "kernel_time", "kernel", k->name ? k->name : "?",
				"start", (json_int_t)k->start, "end", (json_int_t)k->end,
				"correlation", (json_int_t)k->correlationId,
				"static_shared", k->staticSharedMemory,
				"dynamic_shared", k->dynamicSharedMemory,
				"registers", k->registersPerThread));
		}
	}
	{
		size_t dropped = 0;
		cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped);
		if (dropped)
			inject_error("CUPTI dropped %zu activity records", dropped);
	}
	free(buffer);
}

/* ---- callback dispatch ------------------------------------------------ */

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain,
				 CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;

	(void)userdata;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			pthread_mutex_lock(&g.lock);
			if (g.rm) {
				in_own_call++;
				range_metrics_free(g.rm);
				in_own_call--;
				g.rm = NULL;
			}
			pthread_mutex_unlock(&g.lock);
			if (g.timing)
				cuptiActivityFlushAll(0);
		}
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || in_own_call)
		return;

	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuLibraryLoadData_params *p = cb->functionParams;
			on_module_loaded("cuLibraryLoadData", p->code, NULL, p->library, 1);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuLibraryLoadFromFile_params *p = cb->functionParams;
			on_module_loaded("cuLibraryLoadFromFile", NULL, p->fileName, p->library, 1);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuModuleLoad_params *p = cb->functionParams;
			on_module_loaded("cuModuleLoad", NULL, p->fname, p->module, 0);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuModuleLoadData_params *p = cb->functionParams;
			on_module_loaded("cuModuleLoadData", p->image, NULL, p->module, 0);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuModuleLoadDataEx_params *p = cb->functionParams;
			on_module_loaded("cuModuleLoadDataEx", p->image, NULL, p->module, 0);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuModuleLoadFatBinary_params *p = cb->functionParams;
			on_module_loaded("cuModuleLoadFatBinary", p->fatCubin, NULL, p->module, 0);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		/* not const: a launch plan may choose another function (FACTS.md) */
		cuLaunchKernel_params *p = (cuLaunchKernel_params *)cb->functionParams;
		struct launch_info li = {
			.kernel = cb->symbolName ? cb->symbolName : "?", .f = &p->f,
			.grid = { p->gridDimX, p->gridDimY, p->gridDimZ },
			.block = { p->blockDimX, p->blockDimY, p->blockDimZ },
			.shared = p->sharedMemBytes, .stream = p->hStream, .params = p->kernelParams,
		};
		if (cb->callbackSite == CUPTI_API_ENTER)
			on_launch_enter(cb, &li);
		else
			on_launch_exit(cb, &li);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		cuLaunchKernelEx_params *p = (cuLaunchKernelEx_params *)cb->functionParams;
		const CUlaunchConfig *c = p->config;
		struct launch_info li = {
			.kernel = cb->symbolName ? cb->symbolName : "?", .f = &p->f,
			.grid = { c->gridDimX, c->gridDimY, c->gridDimZ },
			.block = { c->blockDimX, c->blockDimY, c->blockDimZ },
			.shared = c->sharedMemBytes, .stream = c->hStream, .params = p->kernelParams,
			.config = c,
		};
		if (cb->callbackSite == CUPTI_API_ENTER)
			on_launch_enter(cb, &li);
		else
			on_launch_exit(cb, &li);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuFuncSetAttribute:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuFuncSetAttribute_params *p = cb->functionParams;
			on_set_attribute(p->hfunc, p->attrib, p->value, "cuFuncSetAttribute");
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuKernelSetAttribute:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuKernelSetAttribute_params *p = cb->functionParams;
			on_set_attribute((CUfunction)p->kernel, p->attrib, p->val, "cuKernelSetAttribute");
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuFuncSetCacheConfig:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuFuncSetCacheConfig_params *p = cb->functionParams;
			on_set_cache_config(p->hfunc, p->config, "cuFuncSetCacheConfig");
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuKernelSetCacheConfig:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuKernelSetCacheConfig_params *p = cb->functionParams;
			on_set_cache_config((CUfunction)p->kernel, p->config, "cuKernelSetCacheConfig");
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuCtxSetCacheConfig:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuCtxSetCacheConfig_params *p = cb->functionParams;
			on_set_cache_config(NULL, p->config, "cuCtxSetCacheConfig");
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuMemAlloc_v2_params *p = cb->functionParams;
			on_alloc(p->dptr, p->bytesize);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
		if (cb->callbackSite == CUPTI_API_EXIT && *(CUresult *)cb->functionReturnValue == CUDA_SUCCESS) {
			const cuMemAllocAsync_params *p = cb->functionParams;
			on_alloc(p->dptr, p->bytesize);
		}
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
		if (cb->callbackSite == CUPTI_API_ENTER) {
			const cuMemFree_v2_params *p = cb->functionParams;
			on_free(p->dptr);
		}
		break;
	default:
		break;
	}
}

static void at_exit(void)
{
	pthread_mutex_lock(&g.lock);
	if (g.rm) {
		struct cost_clock_token t = cost_clock_enter(RUN_COST_COUNTER_READING);

		in_own_call++;
		range_metrics_free(g.rm);
		in_own_call--;
		cost_clock_leave(t);
		g.rm = NULL;
	}
	pthread_mutex_unlock(&g.lock);
	if (g.timing)
		cuptiActivityFlushAll(1);
	/* where this process's time went (issue 39), before its exit event */
	inject_event(cost_clock_json());
	inject_event(json_pack("{s:s, s:I}", "ev", "exit", "launches", (json_int_t)g.launch_seq));
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0");
}

#define SETUP_CHECK(call)                                                         \
	do {                                                                      \
		CUptiResult setup_r_ = (call);                                    \
		if (setup_r_ != CUPTI_SUCCESS) {                                  \
			const char *setup_s_ = NULL;                              \
			cuptiGetResultString(setup_r_, &setup_s_);                \
			inject_error("%s failed: %s", #call, setup_s_ ? setup_s_ : "?"); \
			return 1;                                                 \
		}                                                                 \
	} while (0)

static int initialize(void)
{
	static const CUpti_CallbackId driver_cbids[] = {
		CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData,
		CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile,
		CUPTI_DRIVER_TRACE_CBID_cuModuleLoad,
		CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData,
		CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx,
		CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
		CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
		CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
		CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
		CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
		CUPTI_DRIVER_TRACE_CBID_cuFuncSetAttribute,
		CUPTI_DRIVER_TRACE_CBID_cuKernelSetAttribute,
		CUPTI_DRIVER_TRACE_CBID_cuFuncSetCacheConfig,
		CUPTI_DRIVER_TRACE_CBID_cuKernelSetCacheConfig,
		CUPTI_DRIVER_TRACE_CBID_cuCtxSetCacheConfig,
	};
	const char *out = getenv("CACHEADVISE_OUT");
	char *path;
	size_t i;

	if (g.initialized)
		return 1;
	g.initialized = 1;
	if (!out || !*out)
		return 1;
	g.out_dir = xstrdup(out);
	g.rank = launcher_rank();
	if (!launcher_rank_measured()) {
		/*
		 * A rank --ranks leaves out (collectors/launcher.h): it runs the
		 * advice's modules, so the job stays one program, but nothing is
		 * measured and no event is written.
		 */
		if (getenv("CACHEADVISE_SUBST") && *getenv("CACHEADVISE_SUBST"))
			g.subst_dir = xstrdup(getenv("CACHEADVISE_SUBST"));
		module_table_init(&g.modules);
		alloc_table_init(&g.allocs);
		if (getenv("CACHEADVISE_L2_WINDOWS") && *getenv("CACHEADVISE_L2_WINDOWS"))
			g.windows = l2_windows_load(getenv("CACHEADVISE_L2_WINDOWS"));
		SETUP_CHECK(cuptiSubscribe(&g.subscriber, (CUpti_CallbackFunc)on_callback, NULL));
		for (i = 0; i < sizeof(driver_cbids) / sizeof(driver_cbids[0]); i++)
			SETUP_CHECK(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
							driver_cbids[i]));
		return 1;
	}
	mkdir(g.out_dir, 0777);
	/*
	 * One file per process: the first process of a run takes events.jsonl,
	 * any other (the CUDA children of a wrapper script, worker processes)
	 * finds it taken and writes events.<pid>.jsonl, so each file's seq
	 * numbers are one process's own. events.c reads them all.
	 */
	path = xasprintf("%s/events.jsonl", g.out_dir);
	g.events_fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
	if (g.events_fd < 0 && errno == EEXIST) {
		free(path);
		path = xasprintf("%s/events.%d.jsonl", g.out_dir, (int)getpid());
		g.events_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
	}
	free(path);
	if (g.events_fd < 0)
		return 1;
	if (getenv("CACHEADVISE_SUBST") && *getenv("CACHEADVISE_SUBST"))
		g.subst_dir = xstrdup(getenv("CACHEADVISE_SUBST"));
	g.save_modules = env_flag("CACHEADVISE_SAVE_MODULES");
	g.metrics = env_flag("CACHEADVISE_METRICS");
	g.timing = env_flag("CACHEADVISE_TIMING");
	g.monitor = env_flag("CACHEADVISE_MONITOR");
	g.metric_list = getenv("CACHEADVISE_METRIC_LIST");
	module_table_init(&g.modules);
	alloc_table_init(&g.allocs);
	if (getenv("CACHEADVISE_L2_WINDOWS") && *getenv("CACHEADVISE_L2_WINDOWS"))
		g.windows = l2_windows_load(getenv("CACHEADVISE_L2_WINDOWS"));
	if (getenv("CACHEADVISE_LAUNCH_PLAN") && *getenv("CACHEADVISE_LAUNCH_PLAN"))
		g.plan = launch_plan_load(getenv("CACHEADVISE_LAUNCH_PLAN"));

	inject_event(json_pack("{s:s, s:i, s:b, s:b, s:b, s:b}", "ev", "start", "pid",
			       (int)getpid(), "substitute", g.subst_dir != NULL, "metrics",
			       g.metrics, "timing", g.timing, "monitor", g.monitor));
	if (g.rank >= 0)
		inject_event(json_pack("{s:s, s:i}", "ev", "rank", "rank", g.rank));

	SETUP_CHECK(cuptiSubscribe(&g.subscriber, (CUpti_CallbackFunc)on_callback, NULL));
	for (i = 0; i < sizeof(driver_cbids) / sizeof(driver_cbids[0]); i++)
		SETUP_CHECK(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
						driver_cbids[i]));
	SETUP_CHECK(cuptiEnableCallback(1, g.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
					CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
	if (g.timing) {
		SETUP_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
		SETUP_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	}
	atexit(at_exit);
	return 1;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	struct cost_clock_token t;
	int ret;

	cost_clock_start();
	t = cost_clock_enter(RUN_COST_INJECTION_SETUP);
	ret = initialize();
	cost_clock_leave(t);
	return ret;
}
