/*
 * The automatic software cache: a kernel's read-only structures read
 * through thread-private 16-byte lines (analysis/ptx_softcache.h).
 */
#define _GNU_SOURCE  /* memmem */
#include "analysis/ptx_softcache.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* device/softcache_calls.cu as PTX (generated at build time; "" without nvcc) */
extern const char ca_softcache_calls_ptx[];
extern const int ca_softcache_calls_ptx_built;

#define P PTX_SOFTCACHE_PREFIX
/* registers; a printf format: every use is in strbuf_addf */
#define R "%%" PTX_SOFTCACHE_PREFIX
#define LINE 16
/* the read functions' "cache off" line address (device/softcache_calls.cu) */
#define LINE_OFF "0xffffffff"

int ptx_softcache_available(void)
{
	return ca_softcache_calls_ptx_built && ca_softcache_calls_ptx[0];
}

const char *ptx_softcache_functions(void)
{
	return ca_softcache_calls_ptx;
}

void ptx_softcache_done_release(struct ptx_softcache_done *d)
{
	free(d->params);
	free(d->note);
	memset(d, 0, sizeof(*d));
}

/* One replacement of [off, end) by text (end == off: an insertion). */
struct edit {
	size_t off, end, seq;
	char *text;
};

struct rewriter {
	const struct ptx_module *m;
	struct edit *edits;
	size_t nr_edits, alloc_edits;
	unsigned labels;
};

static void add_edit(struct rewriter *rw, size_t off, size_t end, char *text)
{
	ALLOC_GROW(rw->edits, rw->nr_edits + 1, rw->alloc_edits);
	rw->edits[rw->nr_edits].off = off;
	rw->edits[rw->nr_edits].end = end;
	rw->edits[rw->nr_edits].seq = rw->nr_edits;
	rw->edits[rw->nr_edits].text = text;
	rw->nr_edits++;
}

static int cmp_edit(const void *a, const void *b)
{
	const struct edit *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c == '%';
}

/* Bits of a register type (".b32" -> 32), 0 for .pred or unknown. */
static int type_bits(const char *t, size_t n)
{
	if (n < 3 || t[0] != '.')
		return 0;
	if (!strchr("bsuf", t[1]) && !(n > 3 && !strncmp(t, ".bf16", 5)))
		return 0;
	if (n == 5 && !strncmp(t, ".bf16", 5))
		return 16;
	if (n == 7 && !strncmp(t, ".bf16x2", 7))
		return 32;
	if (n == 7 && !strncmp(t, ".f16x2", 6))
		return 32;
	return atoi(t + 2);
}

/*
 * The width in bits of register `reg` as the function body declares it
 * (".reg .b32 %r<50>;" or ".reg .f32 %f1, %f2;"), 0 when no declaration
 * names it.
 */
static int reg_width(const struct ptx_module *m, const struct ptx_function *f, const char *reg)
{
	const char *t = m->text, *p = t + f->body_begin, *end = t + f->body_end;
	size_t rn = strlen(reg);

	while ((p = memmem(p, (size_t)(end - p), ".reg", 4)) != NULL) {
		const char *q = p + 4, *semi, *ty;
		size_t tn;
		int bits;

		p = q;
		if (q < end && !isspace((unsigned char)*q))
			continue;
		while (q < end && isspace((unsigned char)*q))
			q++;
		ty = q;
		while (q < end && !isspace((unsigned char)*q))
			q++;
		tn = (size_t)(q - ty);
		/* ".reg .v4 .b32" vector registers are not what nvcc writes */
		bits = type_bits(ty, tn);
		semi = memchr(q, ';', (size_t)(end - q));
		if (!semi)
			return 0;
		while (q < semi) {
			const char *s, *e;

			while (q < semi && (isspace((unsigned char)*q) || *q == ','))
				q++;
			s = q;
			while (q < semi && ident_char((unsigned char)*q))
				q++;
			e = q;
			if (q < semi && *q == '<') {
				/* %r<50>: %r0 .. %r49 */
				unsigned long count = strtoul(q + 1, NULL, 10);
				size_t pn = (size_t)(e - s);

				if (rn > pn && !strncmp(reg, s, pn)) {
					char *num_end;
					unsigned long num = strtoul(reg + pn, &num_end, 10);

					if (*num_end == '\0' && isdigit((unsigned char)reg[pn]) &&
					    num < count)
						return bits;
				}
				while (q < semi && *q != '>')
					q++;
				if (q < semi)
					q++;
			} else if ((size_t)(e - s) == rn && !strncmp(reg, s, rn)) {
				return bits;
			} else if (q == s) {
				q++;
			}
		}
		p = semi;
	}
	return 0;
}

/* Splits "base+off" / "base+-off" / "base-off" / "base". 0, or -1. */
static int split_address(const char *a, char *base, size_t nbase, long long *off)
{
	const char *p = a;
	size_t n;
	char *e;

	while (isspace((unsigned char)*p))
		p++;
	if (*p != '%' && !isalpha((unsigned char)*p) && *p != '_')
		return -1;
	n = 0;
	while (ident_char((unsigned char)p[n]))
		n++;
	if (!n || n >= nbase)
		return -1;
	memcpy(base, p, n);
	base[n] = '\0';
	p += n;
	while (isspace((unsigned char)*p))
		p++;
	*off = 0;
	if (!*p)
		return 0;
	if (*p == '+')
		p++;
	else if (*p != '-')
		return -1;
	while (isspace((unsigned char)*p))
		p++;
	*off = strtoll(p, &e, 0);
	while (isspace((unsigned char)*e))
		e++;
	return e == p || *e ? -1 : 0;
}

/* The destination registers of a load ("%r5" or "{%f1, %f2}"): how many. */
static size_t split_dest(const char *d, char regs[][64], size_t max)
{
	size_t nr = 0;
	const char *p = d;

	while (*p && nr < max + 1) {
		size_t n = 0;

		while (*p && (isspace((unsigned char)*p) || *p == '{' || *p == ',' || *p == '}'))
			p++;
		if (!*p)
			break;
		while (ident_char((unsigned char)p[n]))
			n++;
		if (!n || n >= 64 || nr >= max)
			return 0;
		memcpy(regs[nr], p, n);
		regs[nr][n] = '\0';
		nr++;
		p += n;
	}
	return nr;
}

/* Whether the load's type is a signed integer (".s8", ".s16", ...). */
static int signed_type(const char *opcode)
{
	const char *dot = strrchr(opcode, '.');

	return dot && dot[1] == 's' && isdigit((unsigned char)dot[2]);
}

/*
 * The text that replaces one load: address, call, tag update, conversion
 * into the destination. NULL with *why (static) when the load's form is
 * not one it handles.
 */
static char *load_replacement(struct rewriter *rw, const struct ptx_function *f,
			      const struct ptx_load *ld, int slot, const char **why)
{
	char base[128], regs[8][64];
	long long off;
	int size = ld->vector * ld->bits / 8, w[8], sgn = signed_type(ld->opcode);
	size_t nd, i;
	struct strbuf sb = STRBUF_INIT;

	if (ld->space != PTX_SPACE_GLOBAL)
		return *why = "a generic load", NULL;
	if (ld->strong || ld->cache_op == PTX_CACHE_OP_CV)
		return *why = "a strong or volatile load", NULL;
	if (!ld->address || split_address(ld->address, base, sizeof(base), &off))
		return *why = "an address the rewrite cannot follow", NULL;
	if (size != 1 && size != 2 && size != 4 && size != 8 && size != 16)
		return *why = "an access size other than 1, 2, 4, 8 or 16 bytes", NULL;
	nd = ld->dest ? split_dest(ld->dest, regs, 8) : 0;
	if (nd != (size_t)ld->vector)
		return *why = "a destination the rewrite cannot follow", NULL;
	for (i = 0; i < nd; i++) {
		w[i] = reg_width(rw->m, f, regs[i]);
		if (!w[i])
			return *why = "a destination register whose width is not declared", NULL;
	}
	if (ld->vector > 1 && (ld->bits < 16 || w[0] != ld->bits))
		return *why = "a vector of 8-bit elements or of wider registers", NULL;
	for (i = 1; i < nd; i++)
		if (w[i] != w[0])
			return *why = "a vector of registers of different widths", NULL;
	if (ld->vector == 1 && (size >= 4 ? (w[0] < size * 8 || size == 16) : w[0] < 16))
		return *why = "a destination narrower than the access", NULL;
	if (ld->vector == 1 && size == 8 && w[0] != 64)
		return *why = "a destination narrower than the access", NULL;

	if (ld->predicate) {
		const char *p = ld->predicate + 1;

		strbuf_addf(&sb, "\t@%s%s bra \t$" P "skip%u;\n", *p == '!' ? "" : "!",
			    *p == '!' ? p + 1 : p, rw->labels);
	}
	if (off)
		strbuf_addf(&sb, "\tadd.s64 \t" R "a, %s, %lld;\n", base, off);
	else
		strbuf_addf(&sb, "\tmov.b64 \t" R "a, %s;\n", base);
	strbuf_addf(&sb, "\t{\n\t.param .b64 " P "p0;\n\tst.param.b64 \t[" P "p0], " R "a;\n"
		    "\t.param .b32 " P "p1;\n\tst.param.b32 \t[" P "p1], " R "ln%d;\n"
		    "\t.param .b64 " P "p2;\n\tst.param.b64 \t[" P "p2], " R "tag%d;\n",
		    slot, slot);
	if (size == 16)
		strbuf_addf(&sb, "\t.param .align 16 .b8 " P "rv[16];\n");
	else
		strbuf_addf(&sb, "\t.param .b%d " P "rv;\n", size == 8 ? 64 : 32);
	strbuf_addf(&sb, "\tcall (" P "rv), " P "read%d, (" P "p0, " P "p1, " P "p2);\n", size);
	if (size == 16)
		strbuf_addf(&sb, "\tld.param.v4.b32 \t{" R "v0, " R "v1, " R "v2, " R "v3}, [" P "rv];\n");
	else if (size == 8)
		strbuf_addf(&sb, "\tld.param.b64 \t" R "t64, [" P "rv];\n");
	else
		strbuf_addf(&sb, "\tld.param.b32 \t" R "t32, [" P "rv];\n");
	strbuf_addf(&sb, "\t}\n");
	strbuf_addf(&sb, "\tshr.u64 \t" R "tag%d, " R "a, 4;\n", slot);

	if (ld->vector == 1) {
		if (size <= 2 && sgn)
			strbuf_addf(&sb, "\tbfe.s32 \t" R "t32, " R "t32, 0, %d;\n", size * 8);
		if (size <= 4 && w[0] == 32) {
			strbuf_addf(&sb, "\tmov.b32 \t%s, " R "t32;\n", regs[0]);
		} else if (size <= 2 && w[0] == 16) {
			strbuf_addf(&sb, "\tcvt.u16.u32 \t" R "t16, " R "t32;\n");
			strbuf_addf(&sb, "\tmov.b16 \t%s, " R "t16;\n", regs[0]);
		} else if (size <= 4 && w[0] == 64) {
			strbuf_addf(&sb, "\tcvt.%s64.%s32 \t" R "t64, " R "t32;\n", sgn ? "s" : "u",
				    sgn ? "s" : "u");
			strbuf_addf(&sb, "\tmov.b64 \t%s, " R "t64;\n", regs[0]);
		} else if (size == 8) {
			strbuf_addf(&sb, "\tmov.b64 \t%s, " R "t64;\n", regs[0]);
		} else {
			strbuf_release(&sb);
			return *why = "a destination register of an unusual width", NULL;
		}
	} else if (size == 4 || size == 8) {
		strbuf_addf(&sb, "\tmov.b%d \t{", size * 8);
		for (i = 0; i < nd; i++)
			strbuf_addf(&sb, "%s%s", i ? ", " : "", regs[i]);
		strbuf_addf(&sb, "}, " R "t%d;\n", size * 8);
	} else if (ld->bits == 32) {
		for (i = 0; i < 4; i++)
			strbuf_addf(&sb, "\tmov.b32 \t%s, " R "v%zu;\n", regs[i], i);
	} else if (ld->bits == 64) {
		for (i = 0; i < 2; i++)
			strbuf_addf(&sb, "\tmov.b64 \t%s, {" R "v%zu, " R "v%zu};\n", regs[i], 2 * i,
				    2 * i + 1);
	} else {
		strbuf_release(&sb);
		return *why = "a 16-byte vector of 16-bit elements", NULL;
	}
	if (ld->predicate)
		strbuf_addf(&sb, "$" P "skip%u:\n", rw->labels++);
	return strbuf_detach(&sb, NULL);
}

/* The start of the load's instruction: its guard when it has one. */
static size_t load_start(const struct ptx_module *m, const struct ptx_function *f,
			 const struct ptx_load *ld)
{
	size_t i = ld->text_offset;

	if (!ld->predicate)
		return i;
	while (i > f->body_begin + 1 && m->text[i - 1] != '@' && m->text[i - 1] != '\n')
		i--;
	return m->text[i - 1] == '@' ? i - 1 : ld->text_offset;
}

/* Where the replacement goes: from the start of the line when only blanks precede. */
static size_t line_start(const struct ptx_module *m, size_t pos, int *whole)
{
	size_t i = pos;

	while (i > 0 && (m->text[i - 1] == ' ' || m->text[i - 1] == '\t'))
		i--;
	*whole = i == 0 || m->text[i - 1] == '\n';
	return *whole ? i : pos;
}

static int in_list(const int *v, size_t n, int x)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

/*
 * Plans the edits of one kernel. Returns 0 when it is rewritten (edits
 * added), 1 with d->note set when it cannot be (no edit added).
 */
static int plan_kernel(struct rewriter *rw, const struct ptx_softcache_kernel *k, size_t kidx,
		       struct ptx_softcache_done *d)
{
	const struct ptx_module *m = rw->m;
	const struct ptx_function *f = ptx_module_find(m, k->function);
	struct strbuf note = STRBUF_INIT, init = STRBUF_INIT;
	size_t first_edit = rw->nr_edits, i, j, bytes;
	unsigned first_label = rw->labels;
	int *params, nr = 0;

	if (!f || !f->is_entry) {
		d->note = xasprintf("kernel %s is not an entry of the module", k->function);
		return 1;
	}
	if (!k->threads_per_block || k->threads_per_block > 1024) {
		d->note = xasprintf("kernel %s: the launch's block of %u threads is unknown or too large",
				    k->function, k->threads_per_block);
		return 1;
	}
	params = xcalloc(k->nr_params + 1, sizeof(*params));
	for (i = 0; i < k->nr_params; i++) {
		int p = k->params[i], ro = -1, any = 0;

		for (j = 0; j < f->nr_loads; j++)
			if (f->loads[j].param == p) {
				any = 1;
				ro = f->loads[j].read_only;
			}
		if (p < 0 || (size_t)p >= f->nr_params || !any) {
			strbuf_addf(&note, "%sparameter %d: no global load of the kernel reads it",
				    note.len ? "; " : "", p);
			continue;
		}
		if (ro != 1) {
			strbuf_addf(&note, "%sparameter %d is written by the kernel (only read-only structures are cached)",
				    note.len ? "; " : "", p);
			continue;
		}
		if (!in_list(params, (size_t)nr, p))
			params[nr++] = p;
	}
	if (!nr) {
		d->note = note.len ? strbuf_detach(&note, NULL)
				   : xasprintf("kernel %s: no structure to cache", k->function);
		free(params);
		return 1;
	}
	bytes = (size_t)nr * LINE * k->threads_per_block;
	if (f->static_shared_bytes + bytes > PTX_SOFTCACHE_STATIC_SHARED_MAX) {
		d->note = xasprintf("kernel %s: %d line%s of 16 bytes for %u threads need %zu bytes of static shared memory; with the kernel's %zu that is more than the %d a block may declare",
				    k->function, nr, nr > 1 ? "s" : "", k->threads_per_block, bytes,
				    f->static_shared_bytes, PTX_SOFTCACHE_STATIC_SHARED_MAX);
		goto refuse;
	}
	if (k->shared_per_block_optin &&
	    f->static_shared_bytes + bytes + k->dynamic_shared_bytes > k->shared_per_block_optin) {
		d->note = xasprintf("kernel %s: too little free shared memory: its %zu static and %llu dynamic bytes and the lines' %zu exceed the %llu a block may use",
				    k->function, f->static_shared_bytes, k->dynamic_shared_bytes,
				    bytes, k->shared_per_block_optin);
		goto refuse;
	}

	/* every load of the cached structures */
	for (j = 0; j < f->nr_loads; j++) {
		const struct ptx_load *ld = &f->loads[j];
		const char *why = NULL;
		char *text;
		size_t start, at;
		int slot, whole;

		for (slot = 0; slot < nr && params[slot] != ld->param; slot++)
			;
		if (slot == nr)
			continue;
		text = load_replacement(rw, f, ld, slot, &why);
		if (!text) {
			d->nr_left++;
			strbuf_addf(&note, "%sload %u left as it is: %s", note.len ? "; " : "",
				    ld->ordinal, why);
			continue;
		}
		start = load_start(m, f, ld);
		at = line_start(m, start, &whole);
		if (!whole) {
			char *t = xasprintf("\n%s\t", text);

			free(text);
			text = t;
		}
		/* the load's own line end stays: drop the trailing newline of the block */
		if (whole && text[strlen(text) - 1] == '\n')
			text[strlen(text) - 1] = '\0';
		add_edit(rw, at, ld->text_offset + ld->text_len, text);
		d->nr_loads++;
	}
	if (!d->nr_loads) {
		d->note = xasprintf("kernel %s: no load of the cached structures can be rewritten (%s)",
				    k->function, note.len ? note.buf : "none found");
		goto refuse;
	}

	/* the thread's lines and tags, at the top of the body */
	strbuf_addf(&init, "\n\t// cacheadvise: software cache (%d structure%s, %u threads per block)\n",
		    nr, nr > 1 ? "s" : "", k->threads_per_block);
	strbuf_addf(&init, "\t.reg .b64 \t" R "a, " R "t64;\n");
	strbuf_addf(&init, "\t.reg .b32 \t" R "t32, " R "v<4>, " R "nt, " R "tid, " R "x;\n");
	strbuf_addf(&init, "\t.reg .b16 \t" R "t16;\n\t.reg .pred \t" R "off;\n");
	strbuf_addf(&init, "\t.reg .b64 \t" R "tag<%d>;\n\t.reg .b32 \t" R "ln<%d>;\n", nr, nr);
	strbuf_addf(&init,
		      "\tmov.u32 \t" R "nt, %%ntid.x;\n\tmov.u32 \t" R "x, %%ntid.y;\n"
		      "\tmul.lo.u32 \t" R "nt, " R "nt, " R "x;\n\tmov.u32 \t" R "x, %%ntid.z;\n"
		      "\tmul.lo.u32 \t" R "nt, " R "nt, " R "x;\n"
		      "\tmov.u32 \t" R "tid, %%tid.z;\n\tmov.u32 \t" R "x, %%ntid.y;\n"
		      "\tmul.lo.u32 \t" R "tid, " R "tid, " R "x;\n\tmov.u32 \t" R "x, %%tid.y;\n"
		      "\tadd.u32 \t" R "tid, " R "tid, " R "x;\n\tmov.u32 \t" R "x, %%ntid.x;\n"
		      "\tmul.lo.u32 \t" R "tid, " R "tid, " R "x;\n\tmov.u32 \t" R "x, %%tid.x;\n"
		      "\tadd.u32 \t" R "tid, " R "tid, " R "x;\n");
	strbuf_addf(&init, "\tsetp.gt.u32 \t" R "off, " R "nt, %u;\n", k->threads_per_block);
	strbuf_addf(&init, "\tmov.u32 \t" R "ln0, " P "lines%zu;\n", kidx);
	strbuf_addf(&init, "\tmad.lo.u32 \t" R "ln0, " R "tid, 16, " R "ln0;\n");
	for (i = 1; i < (size_t)nr; i++)
		strbuf_addf(&init, "\tadd.u32 \t" R "ln%zu, " R "ln%zu, %u;\n", i, i - 1,
			    LINE * k->threads_per_block);
	for (i = 0; i < (size_t)nr; i++) {
		strbuf_addf(&init, "\t@" R "off mov.u32 \t" R "ln%zu, " LINE_OFF ";\n", i);
		strbuf_addf(&init, "\tmov.b64 \t" R "tag%zu, 0;\n", i);
	}
	add_edit(rw, f->body_begin + 1, f->body_begin + 1, strbuf_detach(&init, NULL));
	add_edit(rw, ptx_header_end(m->text, m->len), ptx_header_end(m->text, m->len),
		 xasprintf("// cacheadvise: software-cache lines of %s\n"
			   ".shared .align 16 .b8 " P "lines%zu[%zu];\n", f->name, kidx, bytes));
	d->params = params;
	d->nr_params = (size_t)nr;
	d->shared_bytes = bytes;
	if (note.len)
		d->note = strbuf_detach(&note, NULL);
	strbuf_release(&note);
	return 0;
refuse:
	for (i = first_edit; i < rw->nr_edits; i++)
		free(rw->edits[i].text);
	rw->nr_edits = first_edit;
	rw->labels = first_label;
	d->nr_loads = 0;
	d->nr_left = 0;
	free(params);
	strbuf_release(&note);
	return 1;
}

/* The read functions as module-internal .func definitions, to go after the header. */
static void add_functions(struct strbuf *out)
{
	const char *t = ca_softcache_calls_ptx, *p;
	size_t len = strlen(t);

	p = t + ptx_header_end(t, len);
	strbuf_addstr(out, "\n// cacheadvise: the software cache's read functions (device/softcache_calls.cu)\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
		const char *s = p;

		while (s < p + n && (*s == ' ' || *s == '\t'))
			s++;
		if (!strncmp(s, "// .globl", 9)) {
			/* dropped: the functions are the module's own */
		} else if (!strncmp(s, ".visible .func", 14)) {
			strbuf_add(out, s + 9, n - (size_t)(s + 9 - p));
		} else {
			strbuf_add(out, p, n);
		}
		p += n;
	}
}

int ptx_softcache_rewrite(const struct ptx_module *m, const struct ptx_softcache_kernel *k,
			  size_t nr, struct strbuf *out, struct ptx_softcache_done *done,
			  char **reason)
{
	struct rewriter rw;
	struct strbuf why = STRBUF_INIT;
	size_t i, copied, ok = 0;

	*reason = NULL;
	if (!ptx_softcache_available()) {
		*reason = xstrdup("cacheadvise was not built with nvcc: the software cache's read functions are missing");
		return 1;
	}
	if (m->address_size != 64) {
		*reason = xasprintf("the module has .address_size %d: only 64-bit modules are rewritten",
				    m->address_size);
		return 1;
	}
	if (strstr(m->text, PTX_SOFTCACHE_PREFIX)) {
		*reason = xstrdup("the module already names " PTX_SOFTCACHE_PREFIX "*: it was rewritten before");
		return 1;
	}
	memset(&rw, 0, sizeof(rw));
	rw.m = m;
	for (i = 0; i < nr; i++) {
		if (!plan_kernel(&rw, &k[i], i, &done[i])) {
			ok++;
		} else {
			strbuf_addf(&why, "%s%s", why.len ? "; " : "", done[i].note);
		}
	}
	if (!ok) {
		*reason = strbuf_detach(&why, NULL);
		free(rw.edits);
		return 1;
	}
	strbuf_release(&why);
	/* defined before the kernels that call them: PTX wants a prototype first */
	{
		struct strbuf fns = STRBUF_INIT;
		size_t hdr = ptx_header_end(m->text, m->len);

		add_functions(&fns);
		add_edit(&rw, hdr, hdr, strbuf_detach(&fns, NULL));
	}
	qsort(rw.edits, rw.nr_edits, sizeof(*rw.edits), cmp_edit);
	strbuf_grow(out, m->len + rw.nr_edits * 512 + strlen(ca_softcache_calls_ptx));
	copied = 0;
	for (i = 0; i < rw.nr_edits; i++) {
		strbuf_add(out, m->text + copied, rw.edits[i].off - copied);
		strbuf_addstr(out, rw.edits[i].text);
		copied = rw.edits[i].end;
		free(rw.edits[i].text);
	}
	strbuf_add(out, m->text + copied, m->len - copied);
	free(rw.edits);
	return 0;
}
