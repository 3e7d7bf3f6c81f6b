/*
 * collectors/fatbin: reading fatbins made by nvcc 13 (tests/fixtures/intake,
 * see its README), in every container and compression, and refusing
 * truncated or corrupt copies made here with a message that says where.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/fatbin.h"
#include "tests/unit/check.h"

#define FIX "tests/fixtures/intake/"

static char tmpdir[] = "/tmp/test_fatbin.XXXXXX";

static void load(const char *rel, struct strbuf *sb)
{
	strbuf_reset(sb);
	if (strbuf_read_file(sb, check_source_path(rel), 0)) {
		fprintf(stderr, "cannot load fixture %s: %s\n", rel, error_message());
		exit(1);
	}
}

static int has(const char *haystack, const char *needle)
{
	if (haystack && strstr(haystack, needle))
		return 1;
	fprintf(stderr, "  expected \"%s\" in \"%s\"\n", needle, haystack ? haystack : "(null)");
	return 0;
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = v & 255;
	p[1] = v >> 8 & 255;
	p[2] = v >> 16 & 255;
	p[3] = v >> 24;
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Offset of entry i of the first fatbin in buf. */
static size_t entry_offset(const unsigned char *buf, unsigned i)
{
	size_t off = 16;

	while (i--)
		off += get32(buf + off + 4) + get32(buf + off + 8);
	return off;
}

/* Parses buf as section .nv_fatbin of 'app'; returns the code. */
static int parse_as_app(const void *buf, size_t len)
{
	struct fatbin fb;
	int ret;

	fatbin_init(&fb);
	error_clear();
	ret = fatbin_parse(&fb, buf, len, "app", ".nv_fatbin");
	fatbin_release(&fb);
	return ret;
}

static const struct fatbin_entry *find(const struct fatbin *fb, enum fatbin_kind kind,
				       unsigned arch)
{
	size_t i;

	for (i = 0; i < fb->nr_entries; i++)
		if (fb->entries[i].kind == kind && fb->entries[i].arch == arch)
			return &fb->entries[i];
	return NULL;
}

static void test_uncompressed(void)
{
	struct fatbin fb;
	const struct fatbin_entry *ptx, *cubin;

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "uncompressed.fatbin")), 0);
	CHECK_INT(fb.nr_entries, 2);
	CHECK_INT(fb.nr_fatbins, 1);
	ptx = find(&fb, FATBIN_KIND_PTX, 90);
	cubin = find(&fb, FATBIN_KIND_CUBIN, 90);
	CHECK(ptx && cubin);
	if (ptx && cubin) {
		CHECK_STR(ptx->origin, "uncompressed.fatbin#fatbin0");
		CHECK_INT(ptx->ptx_version, 90);
		CHECK_INT(ptx->flags & (FATBIN_FLAG_ZSTD | FATBIN_FLAG_LZ4), 0);
		CHECK_INT(ptx->size, strlen((char *)ptx->data));
		CHECK(has((char *)ptx->data, ".version 9.0"));
		CHECK(has((char *)ptx->data, ".target sm_90"));
		CHECK(has((char *)ptx->data, ".entry _Z3mixPKfS0_PKiPfii("));
		CHECK(!memcmp(cubin->data, "\177ELF", 4));
		CHECK_INT(fatbin_cubin_arch(cubin->data, cubin->size), 90);
		CHECK_INT(cubin->entry_index, 0);
		CHECK_INT(ptx->entry_index, 1);
	}
	fatbin_release(&fb);
	CHECK_INT(fb.nr_entries, 0);
	fatbin_release(&fb);  /* releasing twice is harmless */
}

/* The PTX (and cubin) must be byte-identical whatever the compression. */
static void test_compressions_agree(void)
{
	struct fatbin plain, zstd, lz4;
	const struct fatbin_entry *p, *z, *l, *pc, *zc;

	fatbin_init(&plain);
	fatbin_init(&zstd);
	fatbin_init(&lz4);
	CHECK_INT(fatbin_read_file(&plain, check_source_path(FIX "uncompressed.fatbin")), 0);
	CHECK_INT(fatbin_read_file(&zstd, check_source_path(FIX "compressed_cubin.fatbin")), 0);
	CHECK_INT(fatbin_read_file(&lz4, check_source_path(FIX "lz4.fatbin")), 0);
	p = find(&plain, FATBIN_KIND_PTX, 90);
	z = find(&zstd, FATBIN_KIND_PTX, 90);
	l = find(&lz4, FATBIN_KIND_PTX, 90);
	pc = find(&plain, FATBIN_KIND_CUBIN, 90);
	zc = find(&zstd, FATBIN_KIND_CUBIN, 90);
	CHECK(p && z && l && pc && zc);
	if (p && z && l && pc && zc) {
		CHECK(z->flags & FATBIN_FLAG_ZSTD);
		CHECK(l->flags & FATBIN_FLAG_LZ4);
		CHECK(zc->flags & FATBIN_FLAG_ZSTD);
		CHECK_INT(z->size, p->size);
		CHECK_INT(l->size, p->size);
		CHECK(z->size == p->size && !memcmp(z->data, p->data, p->size));
		CHECK(l->size == p->size && !memcmp(l->data, p->data, p->size));
		/* The decompressed cubin is the cubin, modulo the plain entry's padding. */
		CHECK(zc->size <= pc->size && !memcmp(zc->data, pc->data, zc->size));
		CHECK_INT(fatbin_cubin_arch(zc->data, zc->size), 90);
	}
	fatbin_release(&plain);
	fatbin_release(&zstd);
	fatbin_release(&lz4);
}

static void test_multi_arch(void)
{
	struct fatbin fb;
	const struct fatbin_entry *p80, *p90;

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "multi.fatbin")), 0);
	CHECK_INT(fb.nr_entries, 3);
	p80 = find(&fb, FATBIN_KIND_PTX, 80);
	p90 = find(&fb, FATBIN_KIND_PTX, 90);
	CHECK(p80 && p90 && find(&fb, FATBIN_KIND_CUBIN, 90));
	if (p80 && p90) {
		CHECK(has((char *)p80->data, ".target sm_80"));
		CHECK(has((char *)p90->data, ".target sm_90"));
		CHECK_STR(p90->source_name, "kernels.cu");
		/* -lineinfo keeps .file/.loc in the embedded PTX. */
		CHECK(has((char *)p90->data, ".loc"));
	}
	fatbin_release(&fb);
}

static void test_cubin_only_and_kernels(void)
{
	struct fatbin fb;
	char **names = NULL;
	size_t nr = 0, i;
	int seen = 0;

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "cubin_only.fatbin")), 0);
	CHECK_INT(fb.nr_entries, 1);
	CHECK(fb.nr_entries == 1 && fb.entries[0].kind == FATBIN_KIND_CUBIN);
	if (fb.nr_entries == 1) {
		CHECK_INT(fatbin_cubin_kernels(fb.entries[0].data, fb.entries[0].size,
					       fb.entries[0].origin, &names, &nr), 0);
		CHECK_INT(nr, 3);
		for (i = 0; i < nr; i++) {
			if (!strcmp(names[i], "_Z3mixPKfS0_PKiPfii"))
				seen |= 1;
			if (!strcmp(names[i], "_Z5scalePffi"))
				seen |= 2;
			if (!strcmp(names[i], "_Z6strongPVfPKfS2_Pf"))
				seen |= 4;
			free(names[i]);
		}
		free(names);
		CHECK_INT(seen, 7);
	}
	fatbin_release(&fb);

	error_clear();
	CHECK_INT(fatbin_cubin_kernels("not an elf at all", 17, "x#fatbin0", &names, &nr),
		  CA_E_INPUT);
	CHECK(has(error_message(), "x#fatbin0"));
}

static void test_elf_containers(void)
{
	struct fatbin fb;
	size_t i;
	int saw_mix = 0, saw_add = 0;

	/* Three fatbins: the runtime's own (an empty cubin), main.cu, kernels.cu
	 * and other.cu: four in all. */
	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "app")), 0);
	CHECK_INT(fb.nr_fatbins, 4);
	CHECK_INT(fb.has_relocatable_device_code, 0);
	for (i = 0; i < fb.nr_entries; i++) {
		const struct fatbin_entry *e = &fb.entries[i];
		char want[32];
		snprintf(want, sizeof(want), "app#fatbin%u", e->fatbin_index);
		CHECK_STR(e->origin, want);
		if (e->kind == FATBIN_KIND_PTX && strstr((char *)e->data, "_Z3mixPKfS0_PKiPfii")) {
			saw_mix++;
			CHECK_INT(e->fatbin_index, 2);
		}
		if (e->kind == FATBIN_KIND_PTX && strstr((char *)e->data, ".entry _Z3addPKdPdi")) {
			saw_add++;
			CHECK_INT(e->fatbin_index, 3);
		}
	}
	CHECK_INT(saw_mix, 1);
	CHECK_INT(saw_add, 1);
	fatbin_release(&fb);

	/* -rdc=true: the loaded fatbin has the linked cubin only. */
	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "app_rdc")), 0);
	CHECK_INT(fb.has_relocatable_device_code, 1);
	CHECK(fb.nr_entries >= 1);
	for (i = 0; i < fb.nr_entries; i++)
		CHECK_INT(fb.entries[i].kind, FATBIN_KIND_CUBIN);
	fatbin_release(&fb);

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "libother.so")), 0);
	CHECK(find(&fb, FATBIN_KIND_PTX, 90) &&
	      has((char *)find(&fb, FATBIN_KIND_PTX, 90)->data, "_Z3addPKdPdi"));
	fatbin_release(&fb);

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "kernels.obj")), 0);
	CHECK_INT(fb.nr_fatbins, 1);
	CHECK(find(&fb, FATBIN_KIND_PTX, 90) != NULL);
	if (fb.nr_entries)
		CHECK_STR(fb.entries[0].origin, "kernels.obj#fatbin0");
	fatbin_release(&fb);
}

static void test_plain_files(void)
{
	struct fatbin fb;
	struct strbuf sb = STRBUF_INIT;

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "kernels.cubin")), 0);
	CHECK_INT(fb.nr_entries, 1);
	if (fb.nr_entries == 1) {
		load(FIX "kernels.cubin", &sb);
		CHECK_INT(fb.entries[0].kind, FATBIN_KIND_CUBIN);
		CHECK_INT(fb.entries[0].arch, 90);
		CHECK_STR(fb.entries[0].origin, "kernels.cubin");
		CHECK(fb.entries[0].size == sb.len && !memcmp(fb.entries[0].data, sb.buf, sb.len));
	}
	fatbin_release(&fb);

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "kernels.ptx")), 0);
	CHECK_INT(fb.nr_entries, 1);
	if (fb.nr_entries == 1) {
		load(FIX "kernels.ptx", &sb);
		CHECK_INT(fb.entries[0].kind, FATBIN_KIND_PTX);
		CHECK_INT(fb.entries[0].arch, 90);
		CHECK_STR(fb.entries[0].origin, "kernels.ptx");
		CHECK(fb.entries[0].size == sb.len && !memcmp(fb.entries[0].data, sb.buf, sb.len));
	}
	fatbin_release(&fb);
	strbuf_release(&sb);
}

/* What the injection library sees: a wrapper pointing at a fatbin, a bare
 * fatbin, a cubin or PTX text in memory. */
static void test_images(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct fatbin from_file, fb;
	struct { uint32_t magic, version; const void *fatbin; const void *unused; } wrapper;
	const struct fatbin_entry *a, *b;

	fatbin_init(&from_file);
	CHECK_INT(fatbin_read_file(&from_file, check_source_path(FIX "multi.fatbin")), 0);
	load(FIX "multi.fatbin", &sb);
	/* A buffer bigger than the fatbin: the size must come from the header. */
	strbuf_addstr(&sb, "trailing bytes that are not part of the fatbin");
	wrapper.magic = FATBIN_WRAPPER_MAGIC;
	wrapper.version = 1;
	wrapper.fatbin = sb.buf;
	wrapper.unused = NULL;

	fatbin_init(&fb);
	CHECK_INT(fatbin_parse_image(&fb, &wrapper, "app"), 0);
	CHECK_INT(fb.nr_entries, from_file.nr_entries);
	a = find(&fb, FATBIN_KIND_PTX, 90);
	b = find(&from_file, FATBIN_KIND_PTX, 90);
	CHECK(a && b && a->size == b->size && !memcmp(a->data, b->data, a->size));
	if (a)
		CHECK_STR(a->origin, "app#fatbin0");
	/* A second image appends with the next index. */
	CHECK_INT(fatbin_parse_image(&fb, sb.buf, "app"), 0);
	CHECK_INT(fb.nr_entries, 2 * from_file.nr_entries);
	CHECK_STR(fb.entries[fb.nr_entries - 1].origin, "app#fatbin1");
	fatbin_release(&fb);

	wrapper.fatbin = NULL;
	CHECK_INT(fatbin_parse_image(&fb, &wrapper, "app"), CA_E_INPUT);
	CHECK(has(error_message(), "null fatbin pointer"));
	fatbin_release(&fb);

	load(FIX "kernels.cubin", &sb);
	CHECK_INT(fatbin_parse_image(&fb, sb.buf, "cubin-image"), 0);
	CHECK(fb.nr_entries == 1 && fb.entries[0].kind == FATBIN_KIND_CUBIN &&
	      fb.entries[0].size == sb.len && fb.entries[0].arch == 90);
	fatbin_release(&fb);

	load(FIX "kernels.ptx", &sb);
	CHECK_INT(fatbin_parse_image(&fb, sb.buf, "ptx-image"), 0);
	CHECK(fb.nr_entries == 1 && fb.entries[0].kind == FATBIN_KIND_PTX &&
	      fb.entries[0].size == sb.len);
	fatbin_release(&fb);
	fatbin_release(&from_file);
	strbuf_release(&sb);
}

/* Two fatbins back to back, 8-byte aligned, as in .nv_fatbin. */
static void test_back_to_back(void)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, all = STRBUF_INIT;
	struct fatbin fb;
	size_t second;

	load(FIX "uncompressed.fatbin", &a);
	load(FIX "lz4.fatbin", &b);
	strbuf_add(&all, a.buf, a.len);
	while (all.len % 8)
		strbuf_addch(&all, 0);
	second = all.len;
	strbuf_add(&all, b.buf, b.len);
	strbuf_add(&all, "\0\0\0\0\0\0\0\0", 8);  /* trailing padding */

	fatbin_init(&fb);
	CHECK_INT(fatbin_parse(&fb, all.buf, all.len, "dir/app", ".nv_fatbin"), 0);
	CHECK_INT(fb.nr_fatbins, 2);
	CHECK_INT(fb.nr_entries, 4);
	if (fb.nr_entries == 4) {
		CHECK_STR(fb.entries[3].origin, "app#fatbin1");
		CHECK_INT(fb.entries[3].fatbin_index, 1);
	}
	fatbin_release(&fb);

	/* A broken second fatbin is named as fatbin 1. */
	all.buf[second] ^= 0xff;
	CHECK_INT(parse_as_app(all.buf, all.len), CA_E_INPUT);
	CHECK(has(error_message(), "cannot read fatbin in 'app' (section .nv_fatbin, fatbin 1): "
		  "bad magic"));
	strbuf_release(&a);
	strbuf_release(&b);
	strbuf_release(&all);
}

static void test_corrupt(void)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char *p;
	size_t e1;

	load(FIX "uncompressed.fatbin", &sb);
	p = (unsigned char *)sb.buf;

	CHECK_INT(parse_as_app(p, 0), CA_E_INPUT);
	CHECK_INT(parse_as_app(p, 10), CA_E_INPUT);
	CHECK(has(error_message(), "(section .nv_fatbin, fatbin 0): header is truncated"));
	CHECK_INT(parse_as_app(p, sb.len - 100), CA_E_INPUT);
	CHECK(has(error_message(), "runs past the end"));
	CHECK_INT(parse_as_app(p, 16 + 40), CA_E_INPUT);
	CHECK(has(error_message(), "runs past the end"));

	p[0] ^= 1;
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "bad magic 0xba55ed51"));
	p[0] ^= 1;
	CHECK_INT(parse_as_app(p, sb.len), 0);

	/* Entry 1's payload size pushed past the end of the fatbin. */
	e1 = entry_offset(p, 1);
	put64(p + e1 + 8, 1000000);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "cannot read fatbin in 'app' (section .nv_fatbin, fatbin 0): "
		  "entry 1 payload runs past the end"));
	load(FIX "uncompressed.fatbin", &sb);
	p = (unsigned char *)sb.buf;

	put32(p + 16 + 4, 8);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "entry 0 header size 8 is too small"));
	put32(p + 16 + 4, 0x7fffffff);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "entry 0 header runs past the end"));
	strbuf_release(&sb);
}

/* The zstd PTX entry of compressed_cubin.fatbin, rewritten. */
static void test_zstd_corrupt(void)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char *p, *e, *payload;
	uint32_t csize;
	/* A valid zstd frame header claiming 2^40 bytes (8-byte content size,
	 * single segment) followed by an empty last raw block. */
	static const unsigned char bomb[16] = { 0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 1, 0,
						0, 0x01, 0, 0 };
	unsigned char small_bomb[16];

	load(FIX "compressed_cubin.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	payload = e + get32(e + 4);
	CHECK_INT(get32(payload), 0xfd2fb528);
	csize = get32(e + 0x10);

	/* Corrupt compressed bytes in the middle of the frame. */
	payload[csize / 2] ^= 0x5a;
	payload[csize / 2 + 1] ^= 0xa5;
	payload[csize / 2 + 2] ^= 0xff;
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "fatbin 0): entry 1"));
	load(FIX "compressed_cubin.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	payload = e + get32(e + 4);

	/* A frame that claims a terabyte is refused before allocating. */
	memcpy(payload, bomb, sizeof(bomb));
	put32(e + 0x10, sizeof(bomb));
	put64(e + 0x38, 0);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "entry 1: zstd data claims 1099511627776 bytes"));
	CHECK(has(error_message(), "the fatbin is corrupt"));

	/* 1 MiB from 16 bytes is under 512 MiB but far over the ratio cap. */
	memcpy(small_bomb, bomb, sizeof(bomb));
	memset(small_bomb + 5, 0, 8);
	small_bomb[5 + 2] = 0x10;  /* 0x100000 */
	memcpy(payload, small_bomb, sizeof(small_bomb));
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "zstd data claims 1048576 bytes decompressed from 16 bytes"));

	/* Compressed size larger than the payload. */
	load(FIX "compressed_cubin.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	put32(e + 0x10, 0x7fffffff);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "entry 1 compressed size"));

	/* Header and frame disagree on the size. */
	load(FIX "compressed_cubin.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	put64(e + 0x38, 12345);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "but the entry header says 12345"));
	strbuf_release(&sb);
}

static void test_lz4_corrupt(void)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned char *p, *e;

	load(FIX "lz4.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	/* Declared size larger than what the block produces. */
	put64(e + 0x38, get32(e + 0x38) + 100);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "entry 1: cannot decompress LZ4 data"));
	/* Declared size absurd for the block. */
	put64(e + 0x38, (uint64_t)1 << 33);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "LZ4 data claims 8589934592 bytes"));
	/* A block truncated in the middle. */
	load(FIX "lz4.fatbin", &sb);
	p = (unsigned char *)sb.buf;
	e = p + entry_offset(p, 1);
	put32(e + 0x10, get32(e + 0x10) / 2);
	CHECK_INT(parse_as_app(p, sb.len), CA_E_INPUT);
	CHECK(has(error_message(), "cannot decompress LZ4 data"));
	strbuf_release(&sb);
}

static char *write_tmp(const char *name, const void *data, size_t len)
{
	char *path = xasprintf("%s/%s", tmpdir, name);
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		exit(1);
	}
	return path;
}

static void test_bad_files(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct fatbin fb;
	char *path;

	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, "/nonexistent/app"), CA_E_INPUT);
	CHECK(has(error_message(), "cannot open '/nonexistent/app': No such file"));
	CHECK_INT(fatbin_read_file(&fb, tmpdir), CA_E_INPUT);
	CHECK(has(error_message(), "directory"));

	/* An ELF without CUDA code: this test program itself. */
	CHECK_INT(fatbin_read_file(&fb, "/proc/self/exe"), CA_E_INPUT);
	CHECK(has(error_message(), "has no .nv_fatbin section: it contains no CUDA device code"));

	path = write_tmp("random.bin", "\x01\x02\x03\x00garbage\xff", 12);
	CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
	CHECK(has(error_message(), "is not an ELF file, a fatbin or PTX text"));
	free(path);
	path = write_tmp("empty", "", 0);
	CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
	CHECK(has(error_message(), "is empty"));
	free(path);
	path = write_tmp("notes.txt", "just some text\n", 15);
	CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
	CHECK(has(error_message(), "is not an ELF file, a fatbin or PTX text"));
	free(path);

	/* A truncated executable: every prefix is refused, never crashes. */
	load(FIX "app", &sb);
	{
		size_t cuts[] = { 8, 63, 200, sb.len / 4, sb.len / 2, sb.len - 3000, sb.len - 1 };
		size_t i;
		for (i = 0; i < ARRAY_SIZE(cuts); i++) {
			path = write_tmp("app", sb.buf, cuts[i]);
			error_clear();
			CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
			CHECK(has(error_message(), path));
			fatbin_release(&fb);
			free(path);
		}
	}

	/* A corrupt fatbin inside an executable names the section and the fatbin. */
	load(FIX "app", &sb);
	{
		unsigned char *q = (unsigned char *)sb.buf, *f = NULL;
		size_t off;
		int seen = 0;
		char *want;

		for (off = 0; off + 4 <= sb.len; off += 8)  /* fatbins are 8-byte aligned */
			if (get32(q + off) == FATBIN_MAGIC && seen++ == 2) {
				f = q + off;
				break;
			}
		CHECK(f != NULL);
		if (f) {
			f += entry_offset(f, 1);
			put64(f + 8, 1u << 30);
			path = write_tmp("app", sb.buf, sb.len);
			CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
			want = xasprintf("cannot read fatbin in '%s' (section .nv_fatbin, fatbin 2): "
					 "entry 1 payload runs past the end", path);
			CHECK_STR(error_message(), want);
			free(want);
			free(path);
			fatbin_release(&fb);
		}
	}

	/* A fatbin file cut short names the file. */
	load(FIX "uncompressed.fatbin", &sb);
	path = write_tmp("short.fatbin", sb.buf, sb.len / 2);
	CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
	CHECK(has(error_message(), "cannot read fatbin in '"));
	CHECK(has(error_message(), "short.fatbin' (fatbin 0): its size"));
	free(path);
	fatbin_release(&fb);
	strbuf_release(&sb);
}

/*
 * Issue 36: a truncated .cubin passed as one with no PTX and no kernels.
 * Every prefix is refused with "it is truncated", as is a cubin whose
 * header tables are whole but whose section runs past the end, whether
 * read from a file or listed from memory (a cubin inside a fatbin).
 */
static void test_truncated_cubin(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct fatbin fb;
	char **names = NULL;
	size_t nr = 0, i;
	char *path;

	load(FIX "kernels.cubin", &sb);
	{
		size_t cuts[] = { 64, 200, sb.len / 2, sb.len - 100, sb.len - 1 };

		for (i = 0; i < ARRAY_SIZE(cuts); i++) {
			fatbin_init(&fb);
			path = write_tmp("short.cubin", sb.buf, cuts[i]);
			CHECK_INT(fatbin_read_file(&fb, path), CA_E_INPUT);
			CHECK(has(error_message(), "short.cubin': it is truncated ("));
			CHECK_INT(fb.nr_entries, 0);
			fatbin_release(&fb);
			free(path);
			CHECK_INT(fatbin_cubin_kernels(sb.buf, cuts[i], "k.cubin", &names, &nr),
				  CA_E_INPUT);
			CHECK(has(error_message(), "cannot read cubin 'k.cubin': it is truncated"));
			CHECK(names == NULL && nr == 0);
		}
	}
	/* the whole cubin still lists its kernels */
	CHECK_INT(fatbin_cubin_kernels(sb.buf, sb.len, "k.cubin", &names, &nr), 0);
	CHECK_INT(nr, 3);
	for (i = 0; i < nr; i++)
		free(names[i]);
	free(names);
	/* the header tables whole, a section's contents past the end */
	{
		unsigned char *p = (unsigned char *)sb.buf;
		uint64_t shoff = (uint64_t)get32(p + 40) | (uint64_t)get32(p + 44) << 32;
		unsigned char *sh1 = p + shoff + 64;

		put64(sh1 + 32, sb.len);            /* section 1's size */
		CHECK_INT(fatbin_cubin_kernels(sb.buf, sb.len, "k.cubin", &names, &nr),
			  CA_E_INPUT);
		CHECK(has(error_message(), "it is truncated (a section ends at byte"));
		/* the section header table cut: no program headers to cut first */
		load(FIX "kernels.cubin", &sb);
		p = (unsigned char *)sb.buf;
		p[56] = p[57] = 0;                  /* e_phnum */
		CHECK_INT(fatbin_cubin_kernels(sb.buf, shoff + 64 * 3, "k.cubin", &names, &nr),
			  CA_E_INPUT);
		CHECK(has(error_message(), "(section header table ends at byte"));
	}
	strbuf_release(&sb);
}

/*
 * One zstd frame that really decompresses to size bytes: raw blocks of
 * raw bytes of PTX text (a comment pads it, so that the frame is at least
 * size / FATBIN_MAX_RATIO bytes), then RLE blocks of NULs.
 */
static void zstd_frame_of(struct strbuf *out, uint64_t size, size_t raw)
{
	static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
				  ".visible .entry k()\n{\n\tret;\n}\n// ";
	const size_t block = 128 * 1024;
	unsigned char h[16];
	size_t pos = 0;
	uint64_t left = size;
	char *text = xmalloc(raw);

	memset(text, 'x', raw);
	memcpy(text, ptx, strlen(ptx));
	text[raw - 1] = '\n';
	put32(h, 0xFD2FB528u);
	h[4] = 0xE0;                        /* single segment, 8-byte content size */
	put64(h + 5, size);
	strbuf_add(out, h, 13);
	while (left) {
		size_t n = pos < raw ? (raw - pos < block ? raw - pos : block) :
				       (left < block ? (size_t)left : block);
		uint32_t bh = (uint32_t)(n << 3) | (pos < raw ? 0u : 1u << 1) | (left == n);

		h[0] = bh & 255;
		h[1] = bh >> 8 & 255;
		h[2] = bh >> 16 & 255;
		strbuf_add(out, h, 3);
		if (pos < raw) {
			strbuf_add(out, text + pos, n);
			pos += n;
		} else {
			strbuf_addch(out, 0);
		}
		left -= n;
	}
	free(text);
}

/* A fatbin of nr zstd PTX entries, each decompressing to size bytes. */
static void zstd_fatbin_of(struct strbuf *out, unsigned nr, uint64_t size, size_t raw)
{
	struct strbuf ents = STRBUF_INIT, z = STRBUF_INIT;
	unsigned char h[64];
	unsigned i;

	for (i = 0; i < nr; i++) {
		size_t padded;

		strbuf_reset(&z);
		zstd_frame_of(&z, size, raw);
		padded = (z.len + 7) & ~(size_t)7;
		memset(h, 0, sizeof(h));
		h[0] = FATBIN_KIND_PTX;
		put32(h + 4, 64);
		put64(h + 8, padded);
		put32(h + 0x10, (uint32_t)z.len);
		put32(h + 0x18, 0x80000);
		put32(h + 0x1c, 90);
		put64(h + 0x28, 0x8011);
		put64(h + 0x38, size);
		strbuf_add(&ents, h, sizeof(h));
		strbuf_add(&ents, z.buf, z.len);
		while (ents.len % 8)
			strbuf_addch(&ents, 0);
	}
	memset(h, 0, 16);
	put32(h, FATBIN_MAGIC);
	h[4] = 1;
	h[6] = 16;
	put64(h + 8, ents.len);
	strbuf_add(out, h, 16);
	strbuf_add(out, ents.buf, ents.len);
	strbuf_release(&ents);
	strbuf_release(&z);
}

/*
 * Issue 36: each entry within its own limits, a 1.3 MB fatbin of three
 * 400 MiB entries made inspect take 1.2 GB. The entries' claimed sizes
 * are added up before anything is decompressed: one input decompresses to
 * at most 64 times its compressed entries (at least 256 MiB) and 4 GiB;
 * more is refused, naming the file and the limit, with nothing
 * decompressed.
 */
static void test_total_cap(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct fatbin fb;
	unsigned long long before;

	zstd_fatbin_of(&sb, 3, 400ull << 20, 420 << 10);
	fatbin_init(&fb);
	CHECK_INT(fatbin_parse(&fb, sb.buf, sb.len, "bomb.fatbin", NULL), CA_E_INPUT);
	CHECK(has(error_message(), "cannot read fatbin in 'bomb.fatbin': its compressed entries "
		  "decompress to 1258291200 bytes from 1"));
	CHECK(has(error_message(), ", more than the 268435456 bytes one input may (64 times its "
		  "compressed bytes, at least 256 MiB): it is corrupt or hostile"));
	CHECK_INT(fb.nr_entries, 0);
	CHECK_INT(fb.decompressed_bytes, 0);
	fatbin_release(&fb);

	/* small entries of the same making decompress, and count */
	strbuf_reset(&sb);
	zstd_fatbin_of(&sb, 2, 1 << 20, 2048);
	fatbin_init(&fb);
	CHECK_INT(fatbin_parse(&fb, sb.buf, sb.len, "small.fatbin", NULL), 0);
	CHECK_INT(fb.nr_entries, 2);
	CHECK_INT(fb.decompressed_bytes, 2 << 20);
	CHECK(fb.compressed_bytes > 2 * 2048 && fb.compressed_bytes < 2 * 4096);
	if (fb.nr_entries == 2)
		CHECK_INT(fb.entries[1].size, 2048);     /* the PTX text, up to the NULs */
	/* the limits are per input: what came before counts, up to 4 GiB */
	before = FATBIN_MAX_TOTAL_BYTES - (1 << 20);
	fb.decompressed_bytes = before;
	fb.compressed_bytes = 1ull << 30;
	CHECK_INT(fatbin_parse(&fb, sb.buf, sb.len, "app", ".nv_fatbin"), CA_E_INPUT);
	CHECK(has(error_message(), "cannot read fatbin in 'app', section .nv_fatbin: its "
		  "compressed entries decompress to 4296015872 bytes with those before them, more "
		  "than the 4294967296 bytes (4 GiB) one input may decompress to"));
	CHECK_INT(fb.nr_entries, 2);
	CHECK_INT(fb.decompressed_bytes, before);
	/* ... and 64 times the compressed bytes, once past 256 MiB */
	fb.decompressed_bytes = 300ull << 20;
	fb.compressed_bytes = (300ull << 20) / 64;
	CHECK_INT(fatbin_parse(&fb, sb.buf, sb.len, "app", ".nv_fatbin"), CA_E_INPUT);
	CHECK(has(error_message(), "decompress to 316669952 bytes from "));
	CHECK(has(error_message(), " with those before them, more than the "));
	CHECK(has(error_message(), " bytes one input may (64 times its compressed bytes"));
	fb.compressed_bytes = (400ull << 20) / 64;
	CHECK_INT(fatbin_parse(&fb, sb.buf, sb.len, "app", ".nv_fatbin"), 0);
	CHECK_INT(fb.nr_entries, 4);
	fatbin_release(&fb);

	/* uncompressed entries are copies of the input: they do not count */
	fatbin_init(&fb);
	CHECK_INT(fatbin_read_file(&fb, check_source_path(FIX "uncompressed.fatbin")), 0);
	CHECK_INT(fb.decompressed_bytes, 0);
	fatbin_release(&fb);
	strbuf_release(&sb);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_uncompressed();
	test_compressions_agree();
	test_multi_arch();
	test_cubin_only_and_kernels();
	test_elf_containers();
	test_plain_files();
	test_images();
	test_back_to_back();
	test_corrupt();
	test_zstd_corrupt();
	test_lz4_corrupt();
	test_bad_files();
	test_truncated_cubin();
	test_total_cap();
	{
		char *cmd = xasprintf("rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", tmpdir);
		free(cmd);
	}
	return check_done();
}
