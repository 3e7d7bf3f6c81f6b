#ifndef CACHEADVISE_FATBIN_H
#define CACHEADVISE_FATBIN_H

#include <stddef.h>

/*
 * CUDA fatbins: the containers in which nvcc stores a program's device code
 * (one fatbin per translation unit, in the ELF section .nv_fatbin). A fatbin
 * holds entries, each a PTX text or an ELF cubin for one architecture;
 * entries may be compressed (zstd or LZ4). This module reads them from a
 * buffer, from the in-memory image the CUDA driver receives, or from a file,
 * and returns every entry decompressed.
 *
 * The layout, as measured on fatbins made by nvcc 13.0 (FACTS.md and
 * docs/inspect-json.md):
 *
 *   fatbin header (16 bytes, little endian):
 *     +0 u32 magic 0xBA55ED50   +4 u16 version   +6 u16 header size
 *     +8 u64 size of the entries that follow the header
 *   entry header (at least 64 bytes):
 *     +0x00 u16 kind (1 PTX, 2 ELF cubin)   +0x04 u32 entry header size
 *     +0x08 u64 payload size (padded)       +0x10 u32 compressed size (0: none)
 *     +0x18 u32 PTX ISA version (major << 16 | minor)
 *     +0x1c u32 arch (90 for sm_90 / compute_90)
 *     +0x20 u32 offset of the source name within the entry header (0: none)
 *     +0x24 u32 its length
 *     +0x28 u64 flags: 0x2000 LZ4-compressed payload, 0x8000 zstd-compressed
 *     +0x38 u64 uncompressed size (0 when not compressed)
 *   the payload follows the entry header; entries follow each other.
 *
 * Several fatbins may sit back to back, each starting 8-byte aligned, as in
 * an executable's .nv_fatbin section.
 *
 * This code is shared with the injection library, which runs it inside CUDA
 * driver callbacks: it keeps no global state, never prints and never exits
 * (apart from xmalloc's abort when memory runs out).
 *
 * Errors: every function returns 0 or a negative CA_E_* code with the
 * message set (base/error.h). Invalid, truncated or corrupt input is
 * CA_E_INPUT with a message naming the file, the section, the fatbin and
 * entry index (both 0-based) and what is wrong, e.g.
 * "cannot read fatbin in 'app' (section .nv_fatbin, fatbin 2): entry 3
 * payload runs past the end". On error, entries appended before the failure
 * stay in the struct fatbin (fatbin_release frees them).
 */

#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_WRAPPER_MAGIC 0x466243b1u

enum fatbin_kind {
	FATBIN_KIND_PTX = 1,
	FATBIN_KIND_CUBIN = 2,
};

/* Entry flags seen on nvcc 13 fatbins. */
#define FATBIN_FLAG_64BIT 0x1u
#define FATBIN_FLAG_DEBUG 0x2u          /* built with -G */
#define FATBIN_FLAG_LZ4 0x2000u         /* payload is one LZ4 block */
#define FATBIN_FLAG_ZSTD 0x8000u        /* payload is one zstd frame */

/*
 * The largest decompressed entry accepted, and the largest ratio of
 * decompressed to compressed size: a frame claiming more is corrupt or
 * hostile and is refused with CA_E_INPUT before anything is allocated.
 */
#define FATBIN_MAX_ENTRY_BYTES ((size_t)512 << 20)
#define FATBIN_MAX_RATIO 1024
/*
 * What the compressed entries of one input (every fatbin appended to one
 * struct fatbin: a file, an image) may decompress to, all entries
 * together: FATBIN_MAX_TOTAL_RATIO times their compressed bytes, at least
 * FATBIN_TOTAL_FLOOR_BYTES, and never more than FATBIN_MAX_TOTAL_BYTES.
 * The claimed sizes are read from the entries' headers and added up before
 * anything is decompressed; more is CA_E_INPUT naming the file and the
 * limit. Issue 36: a 2.7 MB fatbin of many entries, each within the
 * per-entry limits, took 2.1 GB. The CUDA 13 libraries decompress to 9 to
 * 14 times their compressed entries, libcudnn_engines_precompiled.so.9 to
 * 2.0 GB in all (bench/results/inspect.md). Uncompressed entries are copies
 * of the input and do not count.
 */
#define FATBIN_MAX_TOTAL_RATIO 64
#define FATBIN_TOTAL_FLOOR_BYTES ((unsigned long long)256 << 20)
#define FATBIN_MAX_TOTAL_BYTES ((unsigned long long)4 << 30)

struct fatbin_entry {
	enum fatbin_kind kind;
	unsigned arch;          /* 90 for sm_90 / compute_90 */
	unsigned ptx_version;   /* PTX ISA as major * 10 + minor (90); 0 for cubins */
	unsigned flags;         /* the raw flags word */
	unsigned fatbin_index;  /* index of its fatbin within the file (0-based) */
	unsigned entry_index;   /* index within its fatbin (0-based) */
	char *origin;           /* "app#fatbin3"; the basename alone for .ptx/.cubin files */
	char *source_name;      /* source file named in the entry header ("kernels.cu"), or NULL */
	/*
	 * The decompressed payload, always followed by a NUL byte that size
	 * does not count. For PTX, size stops at the first NUL: the entry's
	 * PTX text is data[0..size), the bytes a module id is computed on.
	 */
	unsigned char *data;
	size_t size;
};

struct fatbin {
	struct fatbin_entry *entries;
	size_t nr_entries, alloc_entries;
	unsigned nr_fatbins;    /* fatbins parsed so far: the next fatbin index */
	/* what the compressed entries parsed so far decompress to, and their
	 * compressed bytes (the limits above) */
	unsigned long long decompressed_bytes, compressed_bytes;
	/*
	 * Set by fatbin_read_file when an ELF file also has an __nv_relfatbin
	 * section: the program was built with -rdc=true and links its device
	 * code at build time, so the PTX in that section is not what it loads.
	 */
	int has_relocatable_device_code;
};

void fatbin_init(struct fatbin *fb);
/* Frees every entry; fb is left initialised and empty. */
void fatbin_release(struct fatbin *fb);

/*
 * Parses len bytes holding one or more fatbins back to back (each 8-byte
 * aligned; zero padding between them is skipped) and appends their entries.
 * Their compressed entries must not take fb past the limits of
 * FATBIN_MAX_TOTAL_BYTES; that is checked before any is decompressed.
 * name names the containing file in messages and origins (its basename is
 * used for origins); section (may be NULL) is named in messages. Entries of
 * kinds other than PTX and cubin are skipped. An empty buffer is CA_E_INPUT.
 */
int fatbin_parse(struct fatbin *fb, const void *buf, size_t len, const char *name,
		 const char *section);

/*
 * Parses an image as the CUDA driver receives it from cuLibraryLoadData,
 * cuModuleLoadData/Ex or cuModuleLoadFatBinary: a fatbin wrapper (magic
 * 0x466243b1; the 64-bit pointer at offset 8 points to a fatbin whose size
 * comes from its header), a bare fatbin, an ELF cubin (its size from the ELF
 * header) or NUL-terminated PTX text. The image is trusted to be as large as
 * its headers say: there is no buffer length to check against, as in the
 * driver itself. name is used for origins and messages.
 */
int fatbin_parse_image(struct fatbin *fb, const void *image, const char *name);

/*
 * Reads path: an ELF executable, shared library or relocatable object (the
 * fatbins of every .nv_fatbin section; an object without one, built with
 * -rdc=true, is read from __nv_relfatbin), a .fatbin file, an ELF cubin
 * (e_machine EM_CUDA: one cubin entry) or PTX text (one PTX entry whose
 * origin is the basename). Anything else is CA_E_INPUT, as is an ELF with
 * no CUDA code ("'x' has no .nv_fatbin section: it contains no CUDA device
 * code"). A missing or unreadable file is CA_E_INPUT naming the file and
 * the system's reason.
 */
int fatbin_read_file(struct fatbin *fb, const char *path);

/*
 * The architecture of an ELF cubin from its header (90 for sm_90), or 0
 * when data is not a CUDA ELF.
 */
unsigned fatbin_cubin_arch(const void *data, size_t size);

/*
 * Lists the kernels (entry functions) of an ELF cubin: sets *names to a new
 * array of *nr new strings (caller frees each and the array). Returns 0, or
 * CA_E_INPUT when data is not a readable CUDA ELF (origin names it).
 */
int fatbin_cubin_kernels(const void *data, size_t size, const char *origin, char ***names,
			 size_t *nr);

#endif
