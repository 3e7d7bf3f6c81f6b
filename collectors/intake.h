#ifndef CACHEADVISE_INTAKE_H
#define CACHEADVISE_INTAKE_H

#include <stddef.h>

#include "base/module_id.h"

struct fatbin;
struct ptx_module;

/*
 * Intake: from a program file (or an in-memory module image) to the list of
 * CUDA modules it loads, each with its parsed PTX (DESIGN.md "Modules,
 * baselines, variants").
 *
 * A module is one fatbin (one translation unit or linked library) or one
 * .ptx/.cubin file. Where a fatbin holds PTX for several archs, the module
 * uses the PTX of the highest arch not above the device's, as the driver
 * and the injection library do; its id is module_id_compute() of that
 * decompressed PTX text. A module without usable PTX (cubin only, PTX only
 * for newer archs, or device code linked with -rdc=true) has has_ptx 0, the
 * reason in no_ptx_reason, and the kernels named in its cubin; its id is then
 * the hash of its first cubin, as the injection library computes it.
 */

struct intake_module {
	char id[MODULE_ID_LEN + 1];
	char *origin;               /* "app#fatbin2", or the file's basename */
	unsigned fatbin_index;
	unsigned arch;              /* arch of the PTX used (90), else of the first cubin */
	int has_ptx;
	char *no_ptx_reason;        /* why there is nothing to patch; NULL when has_ptx */
	char *source_name;          /* source file the fatbin names ("kernels.cu") or NULL */
	unsigned *ptx_archs;        /* archs of every PTX entry of the fatbin, in order */
	size_t nr_ptx_archs;
	unsigned *cubin_archs;      /* archs of every cubin entry */
	size_t nr_cubin_archs;
	/* The parsed PTX (it owns the text: ptx->text, ptx->len); NULL without PTX. */
	struct ptx_module *ptx;
	/* Without PTX: the kernels named in the first cubin (may be none). */
	char **cubin_kernels;
	size_t nr_cubin_kernels;
	/*
	 * A cubin compiled at run time whose PTX lies beside it (Triton's cache:
	 * <hash>/<kernel>.cubin with <kernel>.ptx and <kernel>.json): the PTX file
	 * the module's PTX was read from, NULL otherwise; and what Triton's
	 * metadata says of the kernel (-1 / NULL where it has no such member).
	 */
	char *ptx_file;
	struct intake_triton {
		int present;            /* <kernel>.json was read */
		char *name;
		long num_warps, num_stages, shared; /* shared: bytes of shared memory */
		long global_scratch_size, profile_scratch_size; /* bytes per launch */
		char *triton_version;
	} triton;
};

struct intake {
	struct intake_module *modules;
	size_t nr_modules, alloc_modules;
	/* The file was built with -rdc=true (fatbin.h: has_relocatable_device_code). */
	int relocatable_device_code;
};

void intake_init(struct intake *in);
/* Frees every module; in is left initialised and empty. */
void intake_release(struct intake *in);

/*
 * Reads path (see fatbin_read_file for the kinds of file) and appends its
 * modules. device_arch (e.g. 90) picks among PTX for several archs; 0 takes
 * the highest available. Returns 0, or CA_E_INPUT with the message set for
 * an unreadable or invalid file, fatbin or PTX (the message names the file
 * and, for PTX, the module's origin and line).
 *
 * A .cubin file with a .ptx of the same name beside it whose kernels are
 * the cubin's (Triton's cache, issue 27) is a module with that PTX: its id
 * is the PTX's, so the injection library substitutes it like any other,
 * and ptx_file and triton (from the .json beside it) say where it came
 * from. A .ptx beside that does not parse or names other kernels is left
 * out, and no_ptx_reason says so.
 */
int intake_read_file(struct intake *in, const char *path, unsigned device_arch);

/*
 * The same for an image in memory as the CUDA driver receives it (see
 * fatbin_parse_image); name is used for origins and messages. A bare cubin
 * image without PTX is looked up in Triton's cache (intake_triton_cache_dir):
 * a .cubin file there with the same bytes brings its PTX as above.
 */
int intake_read_image(struct intake *in, const void *image, const char *name,
		      unsigned device_arch);

/*
 * Appends the modules of already parsed fatbin entries (one module per
 * fatbin index). Returns 0 or CA_E_INPUT for PTX that ptx_parse rejects.
 */
int intake_add_fatbin(struct intake *in, const struct fatbin *fb, unsigned device_arch);

/*
 * The folder of Triton's cache: $TRITON_CACHE_DIR, else $HOME/.triton/cache
 * (caller frees), or NULL without either.
 */
char *intake_triton_cache_dir(void);

/*
 * Every compile of a Triton kernel in that cache: for each folder holding
 * a <kernel>.ptx, its <kernel>.cubin (or, without one, the <kernel>.ptx),
 * newest PTX first (of equal times, by path). A NULL-terminated array,
 * empty when the cache has none; *nr (unless NULL) gets the count. Free it
 * with intake_triton_compiles_free. What `check` chooses from for a rerun
 * Python program (issue 27, issue 35).
 */
char **intake_triton_compiles(const char *kernel, size_t *nr);
void intake_triton_compiles_free(char **paths);

/*
 * The modules of Triton's cache whose ids (base/module_id.h: of the PTX
 * beside each cubin) are among ids and not yet in the intake, read as
 * intake_read_file reads their cubin (the PTX adopted). What `run --plan`
 * patches of a Python program, whose kernels the executable does not hold
 * (issue 38 item 4). Returns 0, or the first read's error.
 */
int intake_read_triton_modules(struct intake *in, const char *const *ids, size_t nr_ids,
			       unsigned device_arch);

/*
 * Why a module that cuModuleLoad read from the file path has no PTX, in
 * words that are true of it: a cubin compiled at run time (Triton's cache,
 * or any cubin with <name>.ptx beside it) is named as such, never told to
 * "rebuild with -gencode". A new string (caller frees).
 */
char *intake_cubin_file_reason(const char *path);

#endif
