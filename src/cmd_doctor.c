#include <errno.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/device_model.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/gpu.h"
#include "collectors/run_request.h"
#include "emitters/rewrite/python_rewrite.h"
#include "src/cli.h"

/*
 * `cacheadvise doctor`: whether `profile` can run on this machine, and what
 * to do where it cannot (issue 28). Each check prints one line: ok, warn or
 * FAIL, what was found, and what to do.
 */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise doctor\n"
		"\n"
		"Says, for this machine and this copy of cacheadvise, whether 'cacheadvise\n"
		"profile' can run, and what to do about each thing that stops it:\n"
		"  driver      the CUDA driver (libcuda.so.1) loads and sees a GPU\n"
		"  injection   the injection library beside this cacheadvise (lib/cacheadvise/)\n"
		"  cupti       the libraries the injection library needs (CUPTI) are found\n"
		"  permission  this user may read the GPU's performance counters\n"
		"              (NVreg_RestrictProfilingPermission)\n"
		"  device      the device model: a probe result for this GPU, or the defaults\n"
		"  python      a python3 for rewriting Triton kernels' source (optional)\n"
		"\n"
		"Exit status: 0 profile can run (warnings aside), 1 usage error, 2 this copy\n"
		"of cacheadvise is incomplete (the injection library or what it needs is\n"
		"missing), 4 no usable GPU (no driver, no device, or no permission to profile).\n");
}

enum verdict { OK, WARN, FAIL };

static void line(enum verdict v, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void line(enum verdict v, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("  %-4s  %-10s  ", v == OK ? "ok" : v == WARN ? "warn" : "FAIL", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* The libraries the injection library needs that the loader cannot find
 * (ldd: the loader's own answer, constructors not run), libcuda.so.1 aside:
 * the driver check says that. Returns 0 when ldd ran; *missing lists them. */
static int missing_libraries(const char *lib, struct strbuf *missing)
{
	struct strbuf cmd = STRBUF_INIT;
	char buf[1024];
	FILE *p;
	int st;

	strbuf_addstr(&cmd, "ldd ");
	strbuf_add_shell_word(&cmd, lib);
	strbuf_addstr(&cmd, " 2>/dev/null");
	p = popen(cmd.buf, "r");
	strbuf_release(&cmd);
	if (!p)
		return -1;
	while (fgets(buf, sizeof(buf), p)) {
		char name[256];

		if (!strstr(buf, "not found") || sscanf(buf, " %255s", name) != 1 ||
		    !strncmp(name, "libcuda.so", 10))
			continue;
		strbuf_addf(missing, "%s%s", missing->len ? ", " : "", name);
	}
	st = pclose(p);
	return st == -1 || !WIFEXITED(st) ? -1 : 0;
}

/* "RmProfilingAdminOnly: 1" in the driver's parameters: only admins profile. */
static int profiling_admin_only(void)
{
	FILE *f = fopen("/proc/driver/nvidia/params", "r");
	char buf[256];
	int v = -1;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "RmProfilingAdminOnly: %d", &v) == 1)
			break;
	fclose(f);
	return v;
}

int cmd_doctor(int argc, char **argv)
{
	struct device_model dm;
	struct strbuf missing = STRBUF_INIT;
	char *inject;
	int gpu_ok, lib_ok = 1, perm, cached;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1)
		return cli_usage_error("takes no arguments, not '%s'", argv[1]);

	printf("cacheadvise %s doctor\n", CACHEADVISE_VERSION);
	device_model_init(&dm);
	gpu_ok = !gpu_query(&dm);
	if (gpu_ok)
		line(OK, "driver", "%s (cc %s, %u SMs)", dm.name ? dm.name : "a GPU",
		     dm.cc ? dm.cc : "?", dm.sm_count);
	else
		line(FAIL, "driver", "%s: install NVIDIA's driver on a machine with a GPU "
		     "(profile, run and probe need one; inspect, report, apply and solve do not)",
		     error_message());
	error_clear();

	inject = run_request_injection_library(cli_exe_dir());
	if (inject) {
		line(OK, "injection", "%s", inject);
		if (missing_libraries(inject, &missing)) {
			line(WARN, "cupti", "cannot run ldd to check the libraries of %s", inject);
		} else if (missing.len) {
			lib_ok = 0;
			line(FAIL, "cupti", "not found: %s: install the CUDA toolkit's CUPTI (it "
			     "looks in /usr/local/cuda/lib64 and extras/CUPTI/lib64), or add its "
			     "folder to LD_LIBRARY_PATH", missing.buf);
		} else {
			line(OK, "cupti", "every library the injection library needs is found");
		}
	} else {
		lib_ok = 0;
		line(FAIL, "injection", "%s", error_message());
		error_clear();
	}

	perm = profiling_admin_only();
	if (perm == 1 && geteuid() != 0) {
		gpu_ok = 0;
		line(FAIL, "permission", "the driver lets only administrators read performance "
		     "counters (RmProfilingAdminOnly: 1): run as root, or set 'options nvidia "
		     "NVreg_RestrictProfilingPermission=0' in /etc/modprobe.d and reload the driver");
	} else if (perm == 1) {
		line(OK, "permission", "counters are for administrators only, and this is root");
	} else if (perm == 0) {
		line(OK, "permission", "any user may read the performance counters");
	} else {
		line(gpu_ok ? WARN : FAIL, "permission", "unknown: /proc/driver/nvidia/params "
		     "is not readable%s", gpu_ok ? "" : " (no NVIDIA driver loaded)");
	}

	cached = gpu_ok && dm.uuid ? device_model_load_cached(&dm, dm.uuid) : 0;
	if (cached == 1)
		line(OK, "device", "a probe result of this GPU (%s)", dm.created ? dm.created : "?");
	else if (gpu_ok)
		line(WARN, "device", "no probe result for this GPU: the documented defaults are "
		     "used; run 'cacheadvise probe' once for measured cache sizes");
	else
		line(WARN, "device", "no GPU: nothing to probe");
	error_clear();

	/* the Python that rewrites Triton sources: CACHEADVISE_PYTHON or python3 */
	if (!python_rewrite_check(python_rewrite_interpreter(NULL)))
		line(OK, "python", "%s with its ast module (Triton source rewrites)",
		     python_rewrite_interpreter(NULL));
	else
		line(WARN, "python", "%s: Triton kernels' tl.load calls cannot be rewritten in "
		     "source (run --plan still applies the advice; CACHEADVISE_PYTHON names "
		     "another Python)", error_message());
	error_clear();

	printf("%s\n", gpu_ok && lib_ok ? "profile can run here" :
	       !lib_ok ? "profile cannot run: this copy of cacheadvise is incomplete" :
	       "profile cannot run here: no usable GPU");
	strbuf_release(&missing);
	free(inject);
	device_model_release(&dm);
	return !lib_ok ? 2 : !gpu_ok ? 4 : 0;
}
