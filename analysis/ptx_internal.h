#ifndef CACHEADVISE_ANALYSIS_PTX_INTERNAL_H
#define CACHEADVISE_ANALYSIS_PTX_INTERNAL_H

/*
 * What the files of the PTX parser share. Only they and the parser's unit
 * test (tests/unit/test_ptx_lex.c) include this; everyone else uses
 * analysis/ptx.h. The parser, one file per section:
 *   ptx_lex.c         lexing: blanks, comments, strings, balanced statements
 *                     and blocks, operands
 *   ptx_regmap.c      interned register names
 *   ptx_qualifiers.c  opcode qualifiers and type widths
 *   ptx_decl.c        .file/.loc, declaration sizes, functions and parameters
 *   ptx_insn.c        instructions: loads, memops, calls, definitions
 *   ptx_dataflow.c    pointer values, per function and across calls
 *   ptx_body.c        function bodies and the module level
 *   ptx.c             after parsing (locations, patchability), the public API
 */

#include <stddef.h>
#include <string.h>

#include "analysis/ptx.h"

/*
 * One pass over the text, statement by statement, with no regular
 * expressions. Inside each function body, instructions that can carry a
 * pointer (ld.param, cvta, mov, add, mad, selp, 64-bit loads...) are
 * recorded as small "definitions" over interned register names; after the
 * body, a bounded fixpoint over those definitions tells which parameter
 * each register derives from (flow-insensitive: a register redefined in a
 * loop derives from a parameter only if every definition does). Loads,
 * stores and atomics then read their address register's value. Which
 * parameters are written is resolved across calls once every function is
 * known.
 */

/* ---------------------------------------------------------------- values */

enum vkind { V_BOT, V_NONE, V_PARAM, V_UNK };

/*
 * What a register holds, as far as pointers go: nothing yet (BOT), no
 * pointer parameter (NONE: indices, constants, special registers), a value
 * derived from parameter `param` (weakly: read from the parameter; strongly:
 * also converted with cvta.to.global, so certainly an address; a param of
 * -2 - i is the module-scope variable i, a symbol's address: strong), or a mix of
 * sources that cannot be told apart (UNK: a pointer loaded from memory, two
 * different parameters).
 */
struct val {
	unsigned char kind;
	unsigned char strong;
	int param;
};

static const struct val val_bot = { V_BOT, 0, -1 };
static const struct val val_unk = { V_UNK, 0, -1 };

/* ------------------------------------------------------ register names */

struct slice {
	const char *s;
	size_t n;
};

/*
 * Interns register (and symbol) names of one function: name -> dense id.
 * nvcc names registers %<letters><number> (%rd12, %f3): those go straight
 * to a per-prefix array indexed by the number, which is much faster than
 * hashing on big functions; every other name goes to a hash table.
 */
#define REG_PREFIXES 16
#define REG_PREFIX_LEN 7
#define REG_MAX_NUMBER (1u << 22)

struct reg_prefix {
	char s[REG_PREFIX_LEN + 1];
	size_t n;
	int *ids;                   /* number -> id, -1 unset */
	size_t alloc, used;         /* used: entries that may be set */
};

struct hashed_name {
	struct slice name;
	int id;
};

struct ptx_regmap {
	size_t nr;                  /* ids handed out */
	struct reg_prefix prefixes[REG_PREFIXES];
	size_t nr_prefixes;
	struct hashed_name *names;
	size_t nr_names, alloc_names;
	int *table;                 /* open addressing: index into names, -1 empty */
	size_t size;                /* power of two */
};

/* ------------------------------------------------------ parser state */

enum def_op {
	D_CONST,    /* dst = k */
	D_COPY,     /* dst = a */
	D_STRONG,   /* dst = a, certainly an address (cvta.to.global) */
	D_ADD,      /* dst = a + b */
	D_PHI,      /* dst = a or b (selp) */
};

struct def {
	int dst, a, b;
	unsigned char op;
	struct val k;
};

enum use_kind {
	U_LOAD,     /* idx: load index; reg: address base */
	U_MEMOP,    /* idx: memop index; reg: address base; writes when store/atomic */
	U_WRITE,    /* reg is the address of an unmodelled instruction that may write */
	U_ESCAPE,   /* reg is stored to memory as a value: the pointer escapes */
};

struct use {
	unsigned char kind;
	int reg;
	size_t idx;
};

/* A call: its callee (NULL when indirect) and the register of each argument. */
struct call_rec {
	char *callee;
	int *args;                  /* register id or -1 */
	size_t nr_args;
};

/* The last register stored to each call parameter (st.param [param0], %rd6). */
struct param_store {
	struct slice name;
	int reg;
};

struct escape {
	int param;
	char *callee;               /* NULL: unknown callee */
	size_t arg;
};

/* Per function, kept until every function is parsed. */
struct flow {
	unsigned char *written;     /* per parameter */
	struct escape *esc;
	size_t nr_esc, alloc_esc;
};

/* One .loc line; parent is the previous .loc of the same inlining chain. */
struct loc_rec {
	unsigned file, line, col, inl_file, inl_line, inl_col;
	int has_inl;
	long parent;
};

struct load_loc {
	size_t fn, load;            /* load: the index of a load, or of a memop */
	int memop;                  /* of an async copy (f->memops[load]) */
	long loc;
};

struct shared_var {
	struct slice name;
	size_t bytes;
};

struct parser {
	const char *name;
	struct ptx_module *m;
	const char *base, *p, *end;
	unsigned line;
	int seen_version, seen_target;

	int linkage_extern;         /* the declaration being read follows .extern */
	size_t alloc_variables;     /* of m->variables */
	struct shared_var *shvars;  /* module-scope .shared variables */
	size_t nr_shvars, alloc_shvars;
	struct ptx_regmap shnames;  /* their names -> index in shvars */
	size_t *shvar_seen;         /* function index + 1 that last counted it */

	struct loc_rec *locs;
	size_t nr_locs, alloc_locs;
	long cur_loc;
	struct load_loc *load_locs;
	size_t nr_load_locs, alloc_load_locs;

	struct flow *flows;
	size_t alloc_flows;

	/* per function scratch */
	struct ptx_regmap regs;
	struct def *defs;
	size_t nr_defs, alloc_defs;
	struct use *uses;
	size_t nr_uses, alloc_uses;
	struct call_rec *calls;
	size_t nr_calls, alloc_calls;
	struct param_store *pstores;
	size_t nr_pstores, alloc_pstores;
	struct val *vals;
	size_t alloc_vals;
	size_t alloc_loads, alloc_memops;
};

/* ------------------------------------------------------ opcode qualifiers */

struct quals {
	struct slice mnemonic;      /* "ld" */
	int space_global, space_other, space_param;
	int strong_sem;             /* volatile relaxed acquire mmio */
	int nc;
	enum ptx_cache_op cop;
	enum ptx_l1_eviction l1;
	int l2;
	int vec;
	int bits;
	int wide;
};

/* ------------------------------------------------------ lexing */


/* ------------------------------------------------------ lexing (ptx_lex.c) */

/* Skips blanks, newlines and comments from p; counts lines. */
const char *ptx_skip_ws(const char *p, const char *end, unsigned *line);
/* Skips blanks and comments, but not newlines. */
const char *ptx_skip_blank(const char *p, const char *end);
/*
 * Skips a string literal starting at p ('"'), backslash escapes included;
 * returns the position after it (end when unclosed). Counts lines.
 */
const char *ptx_skip_string(const char *p, const char *end, unsigned *line);

enum ptx_skip {
	PTX_SKIP_STATEMENT,     /* to ';' at depth 0; (), [] and {} nest */
	PTX_SKIP_BLOCK,         /* to the '}' closing a block; only {} nest */
};

/*
 * The one balanced-skip scanner, for statements and { } blocks: walks from p
 * at depth 0, skipping comments and string literals and counting newlines
 * into *line, and returns the position of the byte that ends the scan: for
 * PTX_SKIP_STATEMENT a ';' at depth 0 or less, or a '}' that the text from p
 * did not open; for PTX_SKIP_BLOCK a '}' that the text from p did not open
 * (';', parentheses and brackets are plain text). Returns end when there is
 * no such byte.
 */
const char *ptx_skip_balanced(const char *p, const char *end, unsigned *line, enum ptx_skip how);
enum stmt_end { STMT_OK, STMT_EOF, STMT_BRACE };

/*
 * Finds the ';' ending the statement that starts at p (ptx_skip_balanced,
 * PTX_SKIP_STATEMENT) and sets *semi to it: STMT_OK. STMT_EOF, *semi = end,
 * at the end of the text; STMT_BRACE, *semi at the '}', at a '}' that the
 * statement did not open (a missing ';').
 */
enum stmt_end ptx_scan_statement(const char *p, const char *end, unsigned *line,
				   const char **semi);
/* Skips a balanced { } block starting at p ('{'). Returns NULL if unclosed. */
const char *ptx_skip_block(const char *p, const char *end, unsigned *line);
/* [s, e) without leading and trailing blanks and newlines. */
struct slice ptx_trim(const char *s, const char *e);
/* Parses an unsigned decimal number; returns 0 and sets *v, or -1. */
int ptx_parse_uint(const char *s, const char *e, unsigned long *v);
/*
 * Splits the operand text [s, e) at top-level commas. Fills up to max
 * slices, returns how many operands there are (possibly more than max).
 */
size_t ptx_split_operands(const char *s, const char *e, struct slice *ops, size_t max);
/* The leading identifier of an operand ("%rd4" of "%rd4+16"), maybe empty. */
struct slice ptx_operand_name(struct slice op);

/* ------------------------------------------------------ ptx_regmap.c */

/* Forgets every name, keeping the storage. */
void ptx_regmap_reset(struct ptx_regmap *r);
void ptx_regmap_release(struct ptx_regmap *r);
/* The id of a name already interned, or -1; interns nothing. */
int ptx_regmap_find(const struct ptx_regmap *r, const char *s, size_t n);
/* The id of the name, interning it (ids are dense, from 0). s must outlive r. */
int ptx_regmap_intern(struct ptx_regmap *r, const char *s, size_t n);

/* ------------------------------------------------------ ptx_qualifiers.c */

/* Bits of a PTX type name ("f32" -> 32), 0 when q is not a type. */
int ptx_type_bits(struct slice q);
/* The mnemonic and qualifiers of an opcode ("ld.global.nc.v4.f32"). */
void ptx_parse_quals(struct slice op, struct quals *q);

/* ------------------------------------------------------ ptx_decl.c */

/* .file N "name" [, timestamp, size] -- the rest of the line [p, e). */
void ptx_parse_file_directive(struct parser *P, const char *p, const char *e);
/* .loc FILE LINE COL [, function_name L [+off], inlined_at FILE LINE COL] */
void ptx_parse_loc_directive(struct parser *P, const char *p, const char *e);
/*
 * Size in bytes of a variable declaration's tail: "[.align N] [.vN] .type
 * name[dims]...". Unsized arrays ([]) are 0 bytes. Sets *name.
 */
size_t ptx_decl_bytes(const char *p, const char *e, struct slice *name);
/* A new function at index nr_functions (counted only once its body parsed). */
struct ptx_function *ptx_new_function(struct parser *P);
/* Frees what f owns, not f. */
void ptx_function_release(struct ptx_function *f);
void ptx_flow_release(struct flow *fl);
/* One parameter "[.param|.reg] <attrs and type> name[dims]". */
void ptx_add_param(struct parser *P, struct ptx_function *f, size_t *alloc, struct slice t);

/* ------------------------------------------------------ ptx_insn.c */

/*
 * One instruction: [opcode.s, opcode end) then operands up to semi.
 * Records loads, memops, definitions and uses.
 */
void ptx_do_instruction(struct parser *P, struct ptx_function *f, struct slice opcode,
			struct slice pred, const char *semi, unsigned line);

/* ------------------------------------------------------ ptx_dataflow.c */

/* After the body: parameters of loads and memops, what is written. */
void ptx_finish_function(struct parser *P, struct ptx_function *f);
/*
 * Which parameters are written, through calls too: a parameter passed to a
 * callee is written when the callee writes that argument, or when the
 * callee is unknown (extern, indirect). A fixpoint over the call graph.
 */
void ptx_resolve_written(struct parser *P);

/* ------------------------------------------------------ ptx_body.c */

/* Parses the whole text into P->m; 0 or a negative error code (error_set). */
int ptx_parse_module(struct parser *P);

/* ------------------------------------------------------ small lexing helpers */

static inline int is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
	       c == '%';
}

static inline int is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static inline int is_opcode_char(int c)
{
	return is_ident_char(c) || c == '.' || c == ':';
}

static inline int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static inline const char *scan_ident(const char *p, const char *end)
{
	while (p < end && is_ident_char((unsigned char)*p))
		p++;
	return p;
}

/* End of the line at p: the '\n' or the end of the text. */
static inline const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

static inline void skip_space(struct parser *P)
{
	P->p = ptx_skip_ws(P->p, P->end, &P->line);
}

static inline int slice_eq(struct slice a, const char *lit)
{
	size_t n = strlen(lit);
	return a.n == n && !memcmp(a.s, lit, n);
}

/* slice_eq for a string literal (only: "" lit fails to compile otherwise), no strlen. */
#define SLICE_IS(a, lit) \
	((a).n == sizeof("" lit) - 1 && !memcmp((a).s, "" lit, sizeof("" lit) - 1))

#endif
