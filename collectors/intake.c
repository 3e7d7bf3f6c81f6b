#include "collectors/intake.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "analysis/ptx.h"
#include "base/xalloc.h"
#include "collectors/fatbin.h"

void intake_init(struct intake *in)
{
	memset(in, 0, sizeof(*in));
}

static void module_release(struct intake_module *m)
{
	size_t i;

	free(m->origin);
	free(m->no_ptx_reason);
	free(m->source_name);
	free(m->ptx_archs);
	free(m->cubin_archs);
	ptx_module_free(m->ptx);
	for (i = 0; i < m->nr_cubin_kernels; i++)
		free(m->cubin_kernels[i]);
	free(m->cubin_kernels);
}

void intake_release(struct intake *in)
{
	size_t i;

	for (i = 0; i < in->nr_modules; i++)
		module_release(&in->modules[i]);
	free(in->modules);
	intake_init(in);
}

static void push_arch(unsigned **v, size_t *nr, unsigned arch)
{
	*v = xrealloc(*v, (*nr + 1) * sizeof(**v));
	(*v)[(*nr)++] = arch;
}

/* The PTX entry of fatbin index fi to use: the highest arch not above
 * device_arch (0: the highest), the first of equals. */
static const struct fatbin_entry *choose_ptx(const struct fatbin *fb, size_t first, size_t end,
					     unsigned device_arch)
{
	const struct fatbin_entry *best = NULL;
	size_t i;

	for (i = first; i < end; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind != FATBIN_KIND_PTX || (device_arch && e->arch > device_arch))
			continue;
		if (!best || e->arch > best->arch)
			best = e;
	}
	return best;
}

static char *no_ptx_reason(const struct fatbin *fb, const struct intake_module *m,
			   unsigned device_arch)
{
	unsigned arch = m->nr_cubin_archs ? m->cubin_archs[0] : (device_arch ? device_arch : 90);
	unsigned lowest = 0;
	size_t i;

	if (m->nr_ptx_archs) {
		for (i = 0; i < m->nr_ptx_archs; i++)
			if (!lowest || m->ptx_archs[i] < lowest)
				lowest = m->ptx_archs[i];
		return xasprintf("no PTX for sm_%u or older: the module's PTX needs compute_%u "
				 "or newer", device_arch, lowest);
	}
	if (fb->has_relocatable_device_code)
		return xstrdup("no PTX: the program links its device code at build time "
			       "(-rdc=true), which cacheadvise cannot patch; build without "
			       "-rdc=true to profile it");
	if (!m->nr_cubin_kernels)
		return xstrdup("no PTX and no kernels: nothing to patch");
	return xasprintf("no PTX: cannot patch; rebuild with -gencode arch=compute_%u,"
			 "code=[sm_%u,compute_%u] (or nvcc -arch=sm_%u, which embeds PTX)",
			 arch, arch, arch, arch);
}

/* Builds the module of entries [first, end) of fb (one fatbin). */
static int add_module(struct intake *in, const struct fatbin *fb, size_t first, size_t end,
		      unsigned device_arch)
{
	struct intake_module m;
	const struct fatbin_entry *ptx, *cubin = NULL;
	size_t i;
	int ret;

	memset(&m, 0, sizeof(m));
	m.origin = xstrdup(fb->entries[first].origin);
	m.fatbin_index = fb->entries[first].fatbin_index;
	for (i = first; i < end; i++) {
		const struct fatbin_entry *e = &fb->entries[i];
		if (e->kind == FATBIN_KIND_PTX) {
			push_arch(&m.ptx_archs, &m.nr_ptx_archs, e->arch);
		} else {
			push_arch(&m.cubin_archs, &m.nr_cubin_archs, e->arch);
			if (!cubin)
				cubin = e;
		}
		if (!m.source_name && e->source_name)
			m.source_name = xstrdup(e->source_name);
	}

	ptx = choose_ptx(fb, first, end, device_arch);
	if (ptx) {
		m.has_ptx = 1;
		m.arch = ptx->arch;
		module_id_compute(ptx->data, ptx->size, m.id);
		ret = ptx_parse(m.origin, (const char *)ptx->data, ptx->size, &m.ptx);
		if (ret) {
			module_release(&m);
			return ret;
		}
	} else {
		if (cubin) {
			m.arch = cubin->arch;
			module_id_compute(cubin->data, cubin->size, m.id);
			ret = fatbin_cubin_kernels(cubin->data, cubin->size, m.origin,
						   &m.cubin_kernels, &m.nr_cubin_kernels);
			if (ret) {
				module_release(&m);
				return ret;
			}
		}
		m.no_ptx_reason = no_ptx_reason(fb, &m, device_arch);
	}
	ALLOC_GROW(in->modules, in->nr_modules + 1, in->alloc_modules);
	in->modules[in->nr_modules++] = m;
	return 0;
}

int intake_add_fatbin(struct intake *in, const struct fatbin *fb, unsigned device_arch)
{
	size_t first = 0, end;
	int ret;

	if (fb->has_relocatable_device_code)
		in->relocatable_device_code = 1;
	while (first < fb->nr_entries) {
		/* Entries of one fatbin are contiguous and share its index. */
		for (end = first + 1; end < fb->nr_entries; end++)
			if (fb->entries[end].fatbin_index != fb->entries[first].fatbin_index)
				break;
		ret = add_module(in, fb, first, end, device_arch);
		if (ret)
			return ret;
		first = end;
	}
	return 0;
}

int intake_read_file(struct intake *in, const char *path, unsigned device_arch)
{
	struct fatbin fb;
	int ret;

	fatbin_init(&fb);
	ret = fatbin_read_file(&fb, path);
	if (!ret)
		ret = intake_add_fatbin(in, &fb, device_arch);
	fatbin_release(&fb);
	return ret;
}

int intake_read_image(struct intake *in, const void *image, const char *name,
		      unsigned device_arch)
{
	struct fatbin fb;
	int ret;

	fatbin_init(&fb);
	ret = fatbin_parse_image(&fb, image, name);
	if (!ret)
		ret = intake_add_fatbin(in, &fb, device_arch);
	fatbin_release(&fb);
	return ret;
}

/*
 * Why a module cuModuleLoad read from a file has no PTX: a cubin compiled
 * at run time (Triton's cache holds <name>.cubin with <name>.ptx beside
 * it), which cacheadvise does not substitute yet; never "rebuild with
 * -gencode", which is no advice for a JIT compiler's output (issue 25).
 */
char *intake_cubin_file_reason(const char *path)
{
	const char *dot = strrchr(path, '.');
	int triton = strstr(path, "/triton/") || strstr(path, ".triton/") || strstr(path, "triton_");
	char *ptx = NULL;
	int beside = 0;

	if (dot && !strcmp(dot, ".cubin")) {
		ptx = xasprintf("%.*s.ptx", (int)(dot - path), path);
		beside = !access(ptx, R_OK);
	}
	if (triton || beside) {
		char *s = xasprintf("a cubin loaded at run time from '%s'%s%s%s: cacheadvise does not "
				    "substitute modules loaded from cubin files yet, so its kernels "
				    "are not measured (L2 windows and carve-out checks still apply)",
				    path, triton ? ", compiled by Triton (or torch.compile)" : "",
				    beside ? "; its PTX is beside it in " : "", beside ? ptx : "");
		free(ptx);
		return s;
	}
	free(ptx);
	return xasprintf("loaded at run time from '%s', which holds no PTX: not patchable; if it is "
			 "the program's own code, build that file with PTX (-gencode "
			 "arch=compute_XX,code=compute_XX) or load it from a fatbin that has PTX",
			 path);
}
