#include "collectors/gpu.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "base/error.h"
#include "base/xalloc.h"

/* The few driver entry points used, looked up with dlsym so that the CLI
 * needs no libcuda at link time; types and constants come from cuda.h. */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_name_fn)(char *, int, int);
typedef int (*cu_uuid_fn)(unsigned char *, int);
typedef int (*cu_attr_fn)(int *, int, int);
typedef int (*cu_errstr_fn)(int, const char **);


int gpu_query(struct device_model *dm)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	cu_init_fn init;
	cu_count_fn count;
	cu_get_fn get;
	cu_name_fn name;
	cu_uuid_fn uuid;
	cu_attr_fn attr;
	cu_errstr_fn errstr;
	int r, n = 0, dev = 0, v, major = 0, minor = 0;
	char buf[256];
	unsigned char u[16];

	if (!lib)
		return error_set(CA_E_NOGPU, "no usable GPU: the CUDA driver (libcuda.so.1) is not installed or not on the library path");
	init = (cu_init_fn)dlsym(lib, "cuInit");
	count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	get = (cu_get_fn)dlsym(lib, "cuDeviceGet");
	name = (cu_name_fn)dlsym(lib, "cuDeviceGetName");
	uuid = (cu_uuid_fn)dlsym(lib, "cuDeviceGetUuid_v2");
	attr = (cu_attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	errstr = (cu_errstr_fn)dlsym(lib, "cuGetErrorString");
	if (!init || !count || !get || !name || !attr) {
		dlclose(lib);
		return error_set(CA_E_NOGPU, "no usable GPU: libcuda.so.1 lacks the driver API (too old a driver?)");
	}
	r = init(0);
	if (r) {
		const char *s = NULL;
		if (errstr)
			errstr(r, &s);
		dlclose(lib);
		return error_set(CA_E_NOGPU, "no usable GPU: cuInit failed: %s (error %d)",
				 s ? s : "unknown", r);
	}
	if (count(&n) || n < 1) {
		dlclose(lib);
		return error_set(CA_E_NOGPU, "no usable GPU: the driver sees no CUDA device "
				 "(check CUDA_VISIBLE_DEVICES)");
	}
	get(&dev, 0);
	if (!name(buf, sizeof(buf), dev)) {
		free(dm->name);
		dm->name = xstrdup(buf);
	}
	if (uuid && !uuid(u, dev)) {
		free(dm->uuid);
		dm->uuid = xasprintf("GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
				     u[10], u[11], u[12], u[13], u[14], u[15]);
	}
	attr(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	attr(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	free(dm->cc);
	dm->cc = xasprintf("%d.%d", major, minor);
#define ATTR(field, id) do { if (!attr(&v, id, dev) && v > 0) dm->field = v; } while (0)
	ATTR(sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
	ATTR(clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
	ATTR(max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
	ATTR(l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
	ATTR(shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
	ATTR(shared_per_block_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
	ATTR(reserved_shared_per_block, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
	ATTR(persisting_l2_max_bytes, CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
	ATTR(access_policy_max_window_bytes, CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE);
#undef ATTR
	/* the library stays loaded: unloading a driver mid-process helps nobody */
	return 0;
}

int gpu_shared_partitioned(char *why, size_t len)
{
	const char *pipe_dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
	FILE *f;

	if (pipe_dir && *pipe_dir) {
		snprintf(why, len, "the program runs under MPS (CUDA_MPS_PIPE_DIRECTORY is set): "
			 "L2 set-aside is shared with other clients");
		return 1;
	}
	f = popen("nvidia-smi --query-gpu=mig.mode.current --format=csv,noheader 2>/dev/null", "r");
	if (f) {
		char buf[64] = "";
		if (fgets(buf, sizeof(buf), f) && !strncmp(buf, "Enabled", 7)) {
			pclose(f);
			snprintf(why, len, "MIG is enabled on this GPU: the L2 is partitioned between instances");
			return 1;
		}
		pclose(f);
	}
	return 0;
}
