#include "collectors/fatbin.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "base/error.h"
#include "base/input_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

#define FATBIN_HEADER_SIZE 16
#define ENTRY_HEADER_MIN 0x40
#define EM_CUDA_ 190
/* STO_CUDA_ENTRY: st_other bit of a cubin symbol that is a kernel. */
#define STO_CUDA_ENTRY_ 0x10
/* A fatbin image in memory has no length to check against; refuse sizes
 * no real program has. */
#define FATBIN_IMAGE_MAX ((uint64_t)4 << 30)
/* .fatbin and .ptx files are read whole. */
#define FATBIN_FILE_MAX INPUT_MAX_BINARY  /* a fatbin or PTX file, read whole */

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

void fatbin_init(struct fatbin *fb)
{
	memset(fb, 0, sizeof(*fb));
}

void fatbin_release(struct fatbin *fb)
{
	size_t i;

	for (i = 0; i < fb->nr_entries; i++) {
		free(fb->entries[i].origin);
		free(fb->entries[i].source_name);
		free(fb->entries[i].data);
	}
	free(fb->entries);
	fatbin_init(fb);
}

/* Where a fatbin sits, for messages. */
struct fatbin_where {
	const char *name;
	const char *section;
	unsigned index;
	int quiet;              /* the size pass: errors set no message */
};

static int bad(const struct fatbin_where *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(const struct fatbin_where *w, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (w->quiet)
		return CA_E_INPUT;
	strbuf_addf(&sb, "cannot read fatbin in '%s' (", w->name);
	if (w->section)
		strbuf_addf(&sb, "section %s, ", w->section);
	strbuf_addf(&sb, "fatbin %u): ", w->index);
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	error_set(CA_E_INPUT, "%s", sb.buf);
	strbuf_release(&sb);
	return CA_E_INPUT;
}

/*
 * Decodes one LZ4 block (the format of entries flagged 0x2000) of n bytes
 * into exactly out_len bytes. Returns 0, or -1 with *why set when the block
 * is malformed or does not produce exactly out_len bytes.
 */
static int lz4_block_decode(const unsigned char *src, size_t n, unsigned char *dst,
			    size_t out_len, const char **why)
{
	const unsigned char *ip = src, *iend = src + n;
	unsigned char *op = dst, *oend = dst + out_len;

	while (ip < iend) {
		unsigned token = *ip++;
		size_t lit = token >> 4, mlen, offset;

		if (lit == 15) {
			unsigned b;
			do {
				if (ip >= iend)
					return *why = "literal length runs past the end", -1;
				b = *ip++;
				lit += b;
			} while (b == 255);
		}
		if (lit > (size_t)(iend - ip))
			return *why = "literals run past the end of the block", -1;
		if (lit > (size_t)(oend - op))
			return *why = "literals overflow the declared size", -1;
		memcpy(op, ip, lit);
		ip += lit;
		op += lit;
		if (ip == iend)
			break;  /* the last sequence carries literals only */
		if (iend - ip < 2)
			return *why = "match offset runs past the end", -1;
		offset = (size_t)ip[0] | (size_t)ip[1] << 8;
		ip += 2;
		if (offset == 0 || offset > (size_t)(op - dst))
			return *why = "match offset points before the start", -1;
		mlen = (token & 15) + 4;
		if ((token & 15) == 15) {
			unsigned b;
			do {
				if (ip >= iend)
					return *why = "match length runs past the end", -1;
				b = *ip++;
				mlen += b;
			} while (b == 255);
		}
		if (mlen > (size_t)(oend - op))
			return *why = "match overflows the declared size", -1;
		/* Byte by byte: a match may overlap what it produces. */
		while (mlen--) {
			*op = *(op - offset);
			op++;
		}
	}
	if (op != oend)
		return *why = "block is shorter than the declared size", -1;
	return 0;
}

static int check_claimed_size(const struct fatbin_where *w, unsigned idx, const char *codec,
			      uint64_t claimed, size_t compressed)
{
	uint64_t ratio_cap = (uint64_t)compressed * FATBIN_MAX_RATIO;

	if (claimed > FATBIN_MAX_ENTRY_BYTES || claimed > ratio_cap)
		return bad(w, "entry %u: %s data claims %llu bytes decompressed from %zu bytes, "
			   "more than the limit of %llu bytes (at most %zu MiB, %dx the compressed "
			   "size): the fatbin is corrupt",
			   idx, codec, (unsigned long long)claimed, compressed,
			   (unsigned long long)(ratio_cap < FATBIN_MAX_ENTRY_BYTES ?
						ratio_cap : FATBIN_MAX_ENTRY_BYTES),
			   FATBIN_MAX_ENTRY_BYTES >> 20, FATBIN_MAX_RATIO);
	return 0;
}

/*
 * What one entry's payload decompresses to, from its headers alone: sets
 * *claimed (0 for an entry stored uncompressed) and *n, the bytes of the
 * payload its data takes (the zstd frame, the LZ4 block or the whole
 * payload). Every size is checked here, before anything is allocated.
 */
static int entry_claim(const struct fatbin_where *w, unsigned idx, const unsigned char *hdr,
		       const unsigned char *payload, uint64_t psize, uint64_t *claimed,
		       size_t *n)
{
	uint64_t flags = get64(hdr + 0x28);
	uint32_t csize = get32(hdr + 0x10);
	uint64_t usize = get64(hdr + 0x38);
	int ret;

	*claimed = 0;
	*n = psize;
	if (csize) {
		if (csize > psize)
			return bad(w, "entry %u compressed size %u exceeds its payload of %llu bytes",
				   idx, csize, (unsigned long long)psize);
		*n = csize;
	}
	if ((flags & FATBIN_FLAG_ZSTD) && (flags & FATBIN_FLAG_LZ4))
		return bad(w, "entry %u has both compression flags set (flags 0x%llx)", idx,
			   (unsigned long long)flags);

	if (flags & FATBIN_FLAG_ZSTD) {
		size_t frame = ZSTD_findFrameCompressedSize(payload, *n);
		unsigned long long content;

		if (ZSTD_isError(frame))
			return bad(w, "entry %u: zstd frame is corrupt: %s", idx,
				   ZSTD_getErrorName(frame));
		content = ZSTD_getFrameContentSize(payload, frame);
		if (content == ZSTD_CONTENTSIZE_ERROR)
			return bad(w, "entry %u: zstd frame header is corrupt", idx);
		if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
			if (!usize)
				return bad(w, "entry %u: zstd frame does not say its size", idx);
			content = usize;
		}
		ret = check_claimed_size(w, idx, "zstd", content, frame);
		if (ret)
			return ret;
		if (usize && usize != content)
			return bad(w, "entry %u: zstd frame holds %llu bytes but the entry header "
				   "says %llu", idx, content, (unsigned long long)usize);
		*claimed = content;
		*n = frame;
	} else if (flags & FATBIN_FLAG_LZ4) {
		if (!usize)
			return bad(w, "entry %u: LZ4 entry does not say its decompressed size", idx);
		ret = check_claimed_size(w, idx, "LZ4", usize, *n);
		if (ret)
			return ret;
		*claimed = usize;
	}
	return 0;
}

/* Decompresses (or copies) one entry's payload into e->data / e->size. */
static int entry_decode(const struct fatbin_where *w, unsigned idx, const unsigned char *hdr,
			const unsigned char *payload, uint64_t psize, struct fatbin_entry *e)
{
	uint64_t flags = get64(hdr + 0x28), claimed;
	size_t n;
	int ret = entry_claim(w, idx, hdr, payload, psize, &claimed, &n);

	if (ret)
		return ret;
	if (flags & FATBIN_FLAG_ZSTD) {
		size_t got;

		e->data = xmalloc(claimed + 1);
		got = ZSTD_decompress(e->data, claimed, payload, n);
		if (ZSTD_isError(got))
			return bad(w, "entry %u: cannot decompress zstd data: %s", idx,
				   ZSTD_getErrorName(got));
		if (got != claimed)
			return bad(w, "entry %u: zstd data decompressed to %zu bytes, expected %llu",
				   idx, got, (unsigned long long)claimed);
		e->size = got;
	} else if (flags & FATBIN_FLAG_LZ4) {
		const char *why = "";

		e->data = xmalloc(claimed + 1);
		if (lz4_block_decode(payload, n, e->data, claimed, &why))
			return bad(w, "entry %u: cannot decompress LZ4 data: %s", idx, why);
		e->size = claimed;
	} else {
		e->data = xmalloc(n + 1);
		memcpy(e->data, payload, n);
		e->size = n;
	}
	e->data[e->size] = '\0';
	if (e->kind == FATBIN_KIND_PTX)
		e->size = strlen((char *)e->data);
	return 0;
}

static void entry_clear(struct fatbin_entry *e)
{
	free(e->origin);
	free(e->source_name);
	free(e->data);
	memset(e, 0, sizeof(*e));
}

/* What compressed entries claim: their decompressed and compressed bytes. */
struct claims {
	unsigned long long decompressed, compressed;
};

/*
 * Parses the entries of one fatbin, whose header starts at p (len bytes).
 * With claims set, decodes nothing and adds up what each compressed
 * entry's headers claim instead (the size pass).
 */
static int parse_one(struct fatbin *fb, const unsigned char *p, uint64_t hsize, uint64_t psize,
		     const struct fatbin_where *w, struct claims *claims)
{
	const unsigned char *e = p + hsize, *end = p + hsize + psize;
	unsigned idx;
	int ret;

	for (idx = 0; e < end; idx++) {
		struct fatbin_entry ent;
		uint32_t ehsize, name_off, name_len;
		uint64_t epsize;
		uint16_t kind;

		if ((size_t)(end - e) < ENTRY_HEADER_MIN)
			return bad(w, "entry %u header is truncated (%zu bytes left, need %d)", idx,
				   (size_t)(end - e), ENTRY_HEADER_MIN);
		kind = get16(e);
		ehsize = get32(e + 4);
		epsize = get64(e + 8);
		if (ehsize < ENTRY_HEADER_MIN)
			return bad(w, "entry %u header size %u is too small (at least %d)", idx,
				   ehsize, ENTRY_HEADER_MIN);
		if (ehsize > (size_t)(end - e))
			return bad(w, "entry %u header runs past the end", idx);
		if (epsize > (uint64_t)(end - e - ehsize))
			return bad(w, "entry %u payload runs past the end", idx);
		if (kind != FATBIN_KIND_PTX && kind != FATBIN_KIND_CUBIN) {
			e += ehsize + epsize;
			continue;
		}
		if (claims) {
			uint64_t claimed;
			size_t n;

			ret = entry_claim(w, idx, e, e + ehsize, epsize, &claimed, &n);
			if (ret)
				return ret;
			if (claimed) {
				claims->decompressed += claimed;
				claims->compressed += n;
			}
			e += ehsize + epsize;
			continue;
		}

		memset(&ent, 0, sizeof(ent));
		ent.kind = kind;
		ent.arch = get32(e + 0x1c);
		ent.flags = (unsigned)get64(e + 0x28);
		if (kind == FATBIN_KIND_PTX) {
			uint32_t v = get32(e + 0x18);
			ent.ptx_version = (v >> 16) * 10 + (v & 0xffff);
		}
		ent.fatbin_index = w->index;
		ent.entry_index = idx;
		name_off = get32(e + 0x20);
		name_len = get32(e + 0x24);
		if (name_off && name_len && (uint64_t)name_off + name_len <= ehsize) {
			size_t n = strnlen((const char *)e + name_off, name_len);
			while (n && (e[name_off + n - 1] == ' ' || e[name_off + n - 1] == '\t'))
				n--;
			if (n)
				ent.source_name = xstrndup((const char *)e + name_off, n);
		}
		ret = entry_decode(w, idx, e, e + ehsize, epsize, &ent);
		if (ret) {
			entry_clear(&ent);
			return ret;
		}
		ent.origin = xasprintf("%s#fatbin%u", base_name(w->name), w->index);
		ALLOC_GROW(fb->entries, fb->nr_entries + 1, fb->alloc_entries);
		fb->entries[fb->nr_entries++] = ent;
		e += ehsize + epsize;
	}
	return 0;
}

static int all_zero(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/*
 * The fatbins back to back in p[0, len): appends their entries, or with
 * claims set only adds up what their compressed entries decompress to,
 * quietly, stopping at the first thing wrong (the parse that follows says
 * what).
 */
static int parse_all(struct fatbin *fb, const unsigned char *p, size_t len, const char *name,
		     const char *section, struct claims *claims)
{
	unsigned index = fb->nr_fatbins;
	size_t off = 0;
	int ret;

	if (!len) {
		struct fatbin_where w = { name, section, index, claims != NULL };
		return bad(&w, "no data");
	}
	while (off < len) {
		struct fatbin_where w = { name, section, index, claims != NULL };
		uint64_t hsize, psize;
		uint32_t magic;

		if (all_zero(p + off, len - off) && off)
			break;  /* padding after the last fatbin */
		if (len - off < FATBIN_HEADER_SIZE)
			return bad(&w, "header is truncated (%zu bytes left, need %d)", len - off,
				   FATBIN_HEADER_SIZE);
		magic = get32(p + off);
		if (magic != FATBIN_MAGIC)
			return bad(&w, "bad magic 0x%08x at offset %zu (expected 0x%08x)", magic, off,
				   FATBIN_MAGIC);
		hsize = get16(p + off + 6);
		psize = get64(p + off + 8);
		if (hsize < FATBIN_HEADER_SIZE)
			return bad(&w, "header size %llu is too small", (unsigned long long)hsize);
		if (hsize > len - off)
			return bad(&w, "header runs past the end");
		if (psize > len - off - hsize)
			return bad(&w, "its size (%llu bytes) runs past the end (%zu bytes left)",
				   (unsigned long long)psize, len - off - hsize);
		ret = parse_one(fb, p + off, hsize, psize, &w, claims);
		if (ret)
			return ret;
		index++;
		if (!claims)
			fb->nr_fatbins = index;
		off += hsize + psize;
		off = (off + 7) & ~(size_t)7;
	}
	return 0;
}

int fatbin_parse(struct fatbin *fb, const void *buf, size_t len, const char *name,
		 const char *section)
{
	struct claims c = { 0, 0 };
	unsigned long long total, compressed, limit;
	const char *before;

	parse_all(fb, buf, len, name, section, &c);
	total = fb->decompressed_bytes + c.decompressed;
	compressed = fb->compressed_bytes + c.compressed;
	limit = compressed > FATBIN_MAX_TOTAL_BYTES / FATBIN_MAX_TOTAL_RATIO ?
		FATBIN_MAX_TOTAL_BYTES : compressed * FATBIN_MAX_TOTAL_RATIO;
	if (limit < FATBIN_TOTAL_FLOOR_BYTES)
		limit = FATBIN_TOTAL_FLOOR_BYTES;
	before = fb->decompressed_bytes ? " with those before them" : "";
	if (total > FATBIN_MAX_TOTAL_BYTES)
		return error_set(CA_E_INPUT, "cannot read fatbin in '%s'%s%s: its compressed "
				 "entries decompress to %llu bytes%s, more than the %llu bytes "
				 "(4 GiB) one input may decompress to", name,
				 section ? ", section " : "", section ? section : "", total, before,
				 FATBIN_MAX_TOTAL_BYTES);
	if (total > limit)
		return error_set(CA_E_INPUT, "cannot read fatbin in '%s'%s%s: its compressed "
				 "entries decompress to %llu bytes from %llu%s, more than the "
				 "%llu bytes one input may (%d times its compressed bytes, at least "
				 "256 MiB): it is corrupt or hostile", name,
				 section ? ", section " : "", section ? section : "", total,
				 compressed, before, limit, FATBIN_MAX_TOTAL_RATIO);
	fb->decompressed_bytes = total;
	fb->compressed_bytes = compressed;
	return parse_all(fb, buf, len, name, section, NULL);
}

unsigned fatbin_cubin_arch(const void *data, size_t size)
{
	const unsigned char *p = data;
	uint32_t flags;

	if (size < 52 || memcmp(p, ELFMAG, SELFMAG) || get16(p + 18) != EM_CUDA_)
		return 0;
	if (p[EI_CLASS] == ELFCLASS64) {
		if (size < 64)
			return 0;
		flags = get32(p + 48);
	} else {
		flags = get32(p + 36);
	}
	/* Measured: ABI version 8 (CUDA 12.x/13) keeps the SM in bits 8-15
	 * (0x5a04 for sm_90); older cubins keep it in bits 0-7. */
	return p[EI_ABIVERSION] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

/*
 * Whether an ELF cubin of size bytes holds everything its headers name: the
 * ELF header, the program and section header tables, each segment's and
 * each section's contents (SHT_NOBITS has none). libelf reads a truncated
 * cubin as one with fewer sections, or none, which would pass for "no
 * kernels" (issue 36). Returns 0, or CA_E_INPUT naming what runs past the
 * end; what names the cubin ("cubin 'kernels.cubin'").
 */
static int cubin_check_extent(const unsigned char *p, size_t size, const char *what)
{
	int is64 = size > EI_CLASS && p[EI_CLASS] == ELFCLASS64;
	size_t ehsize = is64 ? 64 : 52, i;
	uint64_t phoff, shoff, phentsize, phnum, shentsize, shnum, off, len;
	const char *part;

	if (size < ehsize)
		return error_set(CA_E_INPUT, "cannot read %s: it is truncated (%zu bytes, shorter "
				 "than its %zu-byte ELF header)", what, size, ehsize);
	phoff = is64 ? get64(p + 32) : get32(p + 28);
	shoff = is64 ? get64(p + 40) : get32(p + 32);
	phentsize = get16(p + (is64 ? 54 : 42));
	phnum = get16(p + (is64 ? 56 : 44));
	shentsize = get16(p + (is64 ? 58 : 46));
	shnum = get16(p + (is64 ? 60 : 48));
	if (phnum && (phoff > size || phnum * phentsize > size - phoff)) {
		off = phoff + phnum * phentsize;
		part = "program header table";
		goto truncated;
	}
	if (shnum && (shoff > size || shnum * shentsize > size - shoff)) {
		off = shoff + shnum * shentsize;
		part = "section header table";
		goto truncated;
	}
	for (i = 0; phentsize >= (is64 ? 56u : 32u) && i < phnum; i++) {
		const unsigned char *ph = p + phoff + i * phentsize;

		off = is64 ? get64(ph + 8) : get32(ph + 4);
		len = is64 ? get64(ph + 32) : get32(ph + 16);
		if (off > size || len > size - off) {
			off += len;
			part = "a segment";
			goto truncated;
		}
	}
	for (i = 0; shentsize >= (is64 ? 64u : 40u) && i < shnum; i++) {
		const unsigned char *sh = p + shoff + i * shentsize;

		if (get32(sh + 4) == SHT_NOBITS)
			continue;
		off = is64 ? get64(sh + 24) : get32(sh + 16);
		len = is64 ? get64(sh + 32) : get32(sh + 20);
		if (off > size || len > size - off) {
			off += len;
			part = "a section";
			goto truncated;
		}
	}
	return 0;
truncated:
	return error_set(CA_E_INPUT, "cannot read %s: it is truncated (%s ends at byte %llu, "
			 "the cubin has %zu bytes)", what, part, (unsigned long long)off, size);
}

/* Appends an entry that is a whole file or image; takes ownership of data,
 * a heap buffer of size bytes followed by a NUL. */
static void add_owned_entry(struct fatbin *fb, enum fatbin_kind kind, unsigned char *data,
			    size_t size, const char *name)
{
	struct fatbin_entry ent;

	memset(&ent, 0, sizeof(ent));
	ent.kind = kind;
	ent.origin = xstrdup(base_name(name));
	ent.fatbin_index = fb->nr_fatbins++;
	ent.data = data;
	ent.size = kind == FATBIN_KIND_PTX ? strlen((char *)data) : size;
	ent.arch = kind == FATBIN_KIND_CUBIN ? fatbin_cubin_arch(data, size) : 0;
	if (kind == FATBIN_KIND_PTX) {
		/* ".target sm_90" names the arch of a PTX file. */
		const char *t = strstr((char *)data, ".target");
		if (t) {
			t += strlen(".target");
			while (*t == ' ' || *t == '\t')
				t++;
			if (!strncmp(t, "sm_", 3) || !strncmp(t, "compute_", 8))
				ent.arch = (unsigned)strtoul(strchr(t, '_') + 1, NULL, 10);
		}
	}
	ALLOC_GROW(fb->entries, fb->nr_entries + 1, fb->alloc_entries);
	fb->entries[fb->nr_entries++] = ent;
}

static int add_whole_entry(struct fatbin *fb, enum fatbin_kind kind, const void *data,
			   size_t size, const char *name)
{
	unsigned char *copy = xmalloc(size + 1);

	memcpy(copy, data, size);
	copy[size] = '\0';
	add_owned_entry(fb, kind, copy, size, name);
	return 0;
}

/* Size of an in-memory 64-bit ELF: the furthest end of its headers, its
 * header tables and its sections' contents. 0 when not a 64-bit ELF. */
static size_t elf_image_size(const unsigned char *p)
{
	uint64_t end, shoff, t;
	unsigned i, shnum, shentsize;

	if (p[EI_CLASS] != ELFCLASS64)
		return 0;
	end = 64;
	t = get64(p + 32) + (uint64_t)get16(p + 54) * get16(p + 56);
	end = t > end ? t : end;
	shoff = get64(p + 40);
	shentsize = get16(p + 58);
	shnum = get16(p + 60);
	t = shoff + (uint64_t)shentsize * shnum;
	end = t > end ? t : end;
	if (end > FATBIN_IMAGE_MAX || shentsize < 64)
		return end > FATBIN_IMAGE_MAX ? 0 : (size_t)end;
	for (i = 0; i < shnum; i++) {
		const unsigned char *sh = p + shoff + (uint64_t)i * shentsize;
		if (get32(sh + 4) == SHT_NOBITS)
			continue;
		t = get64(sh + 24) + get64(sh + 32);
		end = t > end ? t : end;
	}
	return end > FATBIN_IMAGE_MAX ? 0 : (size_t)end;
}

int fatbin_parse_image(struct fatbin *fb, const void *image, const char *name)
{
	const unsigned char *p = image;
	struct fatbin_where w = { name, NULL, fb->nr_fatbins, 0 };
	uint32_t magic;
	uint64_t size;

	if (!p)
		return error_set(CA_E_INPUT, "cannot read module image '%s': null pointer", name);
	magic = get32(p);
	if (magic == FATBIN_WRAPPER_MAGIC) {
		const void *inner;
		memcpy(&inner, p + 8, sizeof(inner));
		if (!inner)
			return bad(&w, "fatbin wrapper holds a null fatbin pointer");
		p = inner;
		magic = get32(p);
		if (magic != FATBIN_MAGIC)
			return bad(&w, "fatbin wrapper points to bad magic 0x%08x", magic);
	}
	if (magic == FATBIN_MAGIC) {
		size = get16(p + 6) + get64(p + 8);
		if (size > FATBIN_IMAGE_MAX)
			return bad(&w, "header claims %llu bytes", (unsigned long long)size);
		return fatbin_parse(fb, p, (size_t)size, name, NULL);
	}
	if (!memcmp(p, ELFMAG, SELFMAG)) {
		size_t n = elf_image_size(p);
		if (get16(p + 18) != EM_CUDA_ || !n)
			return error_set(CA_E_INPUT, "cannot read module image '%s': ELF image is "
					 "not a 64-bit CUDA cubin", name);
		return add_whole_entry(fb, FATBIN_KIND_CUBIN, p, n, name);
	}
	return add_whole_entry(fb, FATBIN_KIND_PTX, p, strnlen((const char *)p,
							       FATBIN_MAX_ENTRY_BYTES), name);
}

static int elf_fail(const char *path, const char *what)
{
	int err = elf_errno();

	return error_set(CA_E_INPUT, "cannot read ELF file '%s': %s%s%s", path, what,
			 *what ? ": " : "",
			 err ? elf_errmsg(err) : "not a valid ELF file (truncated?)");
}

/* Parses every section called want; returns the number found or an error. */
static int read_sections(struct fatbin *fb, Elf *elf, size_t shstrndx, const char *path,
			 uint64_t file_size, const char *want)
{
	Elf_Scn *scn = NULL;
	int found = 0, ret;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		const char *sname;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &shdr))
			return elf_fail(path, "bad section header");
		sname = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!sname || strcmp(sname, want))
			continue;
		found++;
		if (shdr.sh_type == SHT_NOBITS)
			return error_set(CA_E_INPUT, "cannot read fatbin in '%s': section %s has "
					 "no contents", path, want);
		if (shdr.sh_offset + shdr.sh_size > file_size)
			return error_set(CA_E_INPUT, "cannot read fatbin in '%s': section %s runs "
					 "past the end of the file (it is truncated)", path, want);
		d = elf_rawdata(scn, NULL);
		if (!d) {
			struct strbuf sb = STRBUF_INIT;
			strbuf_addf(&sb, "section %s", want);
			ret = elf_fail(path, sb.buf);
			strbuf_release(&sb);
			return ret;
		}
		if (!d->d_buf || !d->d_size)
			return error_set(CA_E_INPUT, "cannot read fatbin in '%s': section %s is "
					 "empty", path, want);
		ret = fatbin_parse(fb, d->d_buf, d->d_size, path, want);
		if (ret)
			return ret;
	}
	return found;
}

static int read_elf(struct fatbin *fb, int fd, const char *path, uint64_t file_size)
{
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shstrndx;
	int ret, nfat, nrel = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return error_set(CA_E_INTERNAL, "libelf is out of date: %s", elf_errmsg(-1));
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return elf_fail(path, "");
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		ret = elf_fail(path, "bad ELF header");
		goto out;
	}
	if (gelf_getclass(elf) == ELFCLASS32 && ehdr.e_machine != EM_CUDA_) {
		ret = error_set(CA_E_INPUT, "'%s' is a 32-bit ELF file: CUDA programs and "
				"libraries are 64-bit (the CUDA toolkit builds no 32-bit host code); "
				"give the 64-bit build", path);
		goto out;
	}
	if (ehdr.e_machine == EM_CUDA_) {
		size_t size;
		char *image = elf_rawfile(elf, &size);
		struct strbuf what = STRBUF_INIT;

		if (!image || !size) {
			ret = elf_fail(path, "cubin");
			goto out;
		}
		strbuf_addf(&what, "cubin '%s'", path);
		ret = cubin_check_extent((const unsigned char *)image, size, what.buf);
		strbuf_release(&what);
		if (!ret)
			ret = add_whole_entry(fb, FATBIN_KIND_CUBIN, image, size, path);
		goto out;
	}
	/* libelf sees no sections at all when the table lies past the end of
	 * a truncated file: say what is wrong instead of "no CUDA code". */
	if (ehdr.e_shoff + (uint64_t)ehdr.e_shnum * ehdr.e_shentsize > file_size) {
		ret = error_set(CA_E_INPUT, "cannot read ELF file '%s': it is truncated (its "
				"section table ends at byte %llu, the file has %llu bytes)", path,
				(unsigned long long)(ehdr.e_shoff +
						     (uint64_t)ehdr.e_shnum * ehdr.e_shentsize),
				(unsigned long long)file_size);
		goto out;
	}
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		ret = elf_fail(path, "section names");
		goto out;
	}
	nfat = read_sections(fb, elf, shstrndx, path, file_size, ".nv_fatbin");
	if (nfat < 0) {
		ret = nfat;
		goto out;
	}
	if (!nfat && ehdr.e_type == ET_REL) {
		/* An object compiled with -rdc=true keeps its fatbin here. */
		nrel = read_sections(fb, elf, shstrndx, path, file_size,
				     "__nv_relfatbin");
		if (nrel < 0) {
			ret = nrel;
			goto out;
		}
	}
	if (!nfat && !nrel) {
		ret = error_set(CA_E_INPUT, "'%s' has no .nv_fatbin section: it contains no CUDA "
				"device code", path);
		goto out;
	}
	if (nfat) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr shdr;
			const char *sname;
			if (!gelf_getshdr(scn, &shdr))
				continue;
			sname = elf_strptr(elf, shstrndx, shdr.sh_name);
			if (sname && !strcmp(sname, "__nv_relfatbin"))
				fb->has_relocatable_device_code = 1;
		}
	}
	ret = 0;
out:
	elf_end(elf);
	return ret;
}

/*
 * PTX text: a .version directive, and text up to the first NUL byte if any
 * (so that PTX damaged by a NUL gets input_text_check()'s message, shared
 * with `patch`, while a binary is still called a binary).
 */
static int looks_like_ptx(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nul = memchr(buf, '\0', len);
	int found = 0;

	while (p < end && (p = memchr(p, '.', (size_t)(end - p)))) {
		if ((size_t)(end - p) >= 8 && !memcmp(p, ".version", 8)) {
			found = 1;
			break;
		}
		p++;
	}
	if (!found || nul == buf)
		return 0;
	for (p = buf; nul && p < nul; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			return 0;
	}
	return 1;
}

int fatbin_read_file(struct fatbin *fb, const char *path)
{
	unsigned char head[16];
	struct strbuf sb = STRBUF_INIT;
	uint64_t size;
	ssize_t n;
	int fd, ret;

	/* Refuses directories, FIFOs, devices and huge files before reading. */
	fd = input_file_open(path, INPUT_MAX_EXECUTABLE, &size);
	if (fd < 0)
		return fd;
	n = pread(fd, head, sizeof(head), 0);
	if (n < 0) {
		ret = error_set(CA_E_INPUT, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		return ret;
	}
	if (n >= SELFMAG && !memcmp(head, ELFMAG, SELFMAG)) {
		ret = read_elf(fb, fd, path, size);
		close(fd);
		return ret;
	}
	close(fd);
	if (!n)
		return error_set(CA_E_INPUT, "'%s' is empty: expected an executable, a shared "
				 "library, a .fatbin, a .cubin or a .ptx file", path);

	/* Not ELF: read whole into memory, so the smaller limit applies. */
	ret = input_file_read(&sb, path, FATBIN_FILE_MAX);
	if (ret)
		goto out;
	if (sb.len >= 4 && get32((unsigned char *)sb.buf) == FATBIN_MAGIC) {
		ret = fatbin_parse(fb, sb.buf, sb.len, path, NULL);
	} else if (looks_like_ptx(sb.buf, sb.len)) {
		size_t len;
		unsigned char *text;

		ret = input_text_check(path, sb.buf, sb.len);
		if (ret < 0)
			goto out;
		if (ret) {
			memmove(sb.buf, sb.buf + ret, sb.len - (size_t)ret);
			strbuf_setlen(&sb, sb.len - (size_t)ret);
		}
		ret = 0;
		text = (unsigned char *)strbuf_detach(&sb, &len);
		add_owned_entry(fb, FATBIN_KIND_PTX, text, len, path);
	} else {
		ret = error_set(CA_E_INPUT, "'%s' is not an ELF file, a fatbin or PTX text: "
				"expected an executable, a shared library, a .fatbin, a .cubin "
				"or a .ptx file", path);
	}
out:
	strbuf_release(&sb);
	return ret;
}

int fatbin_cubin_kernels(const void *data, size_t size, const char *origin, char ***names,
			 size_t *nr)
{
	char *copy;
	Elf *elf;
	Elf_Scn *scn = NULL;
	char **v = NULL;
	size_t n = 0, alloc = 0;
	int ret = 0;

	*names = NULL;
	*nr = 0;
	if (!fatbin_cubin_arch(data, size) && (size < SELFMAG || memcmp(data, ELFMAG, SELFMAG)))
		return error_set(CA_E_INPUT, "cannot read cubin '%s': not a CUDA ELF", origin);
	{
		struct strbuf what = STRBUF_INIT;

		strbuf_addf(&what, "cubin '%s'", origin);
		ret = cubin_check_extent(data, size, what.buf);
		strbuf_release(&what);
		if (ret)
			return ret;
	}
	if (elf_version(EV_CURRENT) == EV_NONE)
		return error_set(CA_E_INTERNAL, "libelf is out of date: %s", elf_errmsg(-1));
	/* libelf wants a writable image; the entry's bytes stay untouched. */
	copy = xmalloc(size);
	memcpy(copy, data, size);
	elf = elf_memory(copy, size);
	if (!elf) {
		free(copy);
		return error_set(CA_E_INPUT, "cannot read cubin '%s': %s", origin, elf_errmsg(-1));
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *d;
		size_t i, count;

		if (!gelf_getshdr(scn, &shdr)) {
			ret = error_set(CA_E_INPUT, "cannot read cubin '%s': %s", origin,
					elf_errmsg(-1));
			goto out;
		}
		if (shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d) {
			ret = error_set(CA_E_INPUT, "cannot read cubin '%s': symbol table: %s", origin,
					elf_errmsg(-1));
			goto out;
		}
		count = shdr.sh_size / shdr.sh_entsize;
		for (i = 0; i < count; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(sym.st_other & STO_CUDA_ENTRY_))
				continue;
			s = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!s || !*s)
				continue;
			ALLOC_GROW(v, n + 1, alloc);
			v[n++] = xstrdup(s);
		}
	}
out:
	elf_end(elf);
	free(copy);
	if (ret) {
		while (n)
			free(v[--n]);
		free(v);
		return ret;
	}
	*names = v;
	*nr = n;
	return 0;
}
