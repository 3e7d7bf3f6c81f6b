#ifndef CACHEADVISE_PTX_H
#define CACHEADVISE_PTX_H

#include <stddef.h>

#include "base/strbuf.h"

/*
 * The PTX model: functions, parameters and every global load of one PTX
 * module, in text order, plus stores, atomics and fences. The parser keeps
 * the text as given: everything it does not understand is kept verbatim and
 * simply not modelled, so rewriting a module changes only what was asked.
 *
 * Load identity (DESIGN.md): (module id, function name, ordinal), ordinal =
 * 0-based index of the function's global loads (ld.global*, ldu.global, and
 * generic ld that may reach global memory) in PTX text order.
 *
 * Parameters: a load's or memop's `param` is the parameter of its own
 * function (kernel or .func) that the address derives from, followed back
 * through ld.param, cvta, mov, add/sub/and/or, mad (the addend), selp and
 * registers redefined in loops (every definition must agree); offsets
 * computed by mul/shl/cvt do not count. -1 when unknown: a pointer read
 * from memory, a global variable, two parameters mixed.
 * A parameter is written in a function when it is the base of a store,
 * atomic or other writing instruction there, when the pointer itself is
 * stored to memory, or when it is passed to a function that writes that
 * argument or whose body is not in the module (extern, indirect call).
 */

enum ptx_space {
	PTX_SPACE_GLOBAL,   /* ld.global / ldu.global */
	PTX_SPACE_GENERIC,  /* ld without a state space: may reach global */
};

/* The L1 cache operator written on the load (.ca .cg .cs .lu .cv), if any. */
enum ptx_cache_op {
	PTX_CACHE_OP_NONE,
	PTX_CACHE_OP_CA,
	PTX_CACHE_OP_CG,
	PTX_CACHE_OP_CS,
	PTX_CACHE_OP_LU,
	PTX_CACHE_OP_CV,
};

/* The L1 eviction priority written on the load (.L1::*), if any. */
enum ptx_l1_eviction {
	PTX_L1_NONE,
	PTX_L1_EVICT_NORMAL,
	PTX_L1_EVICT_UNCHANGED,
	PTX_L1_EVICT_FIRST,
	PTX_L1_EVICT_LAST,
	PTX_L1_NO_ALLOCATE,
};

/* A call an inlined function's code was put in (a .loc's inlined_at). */
struct ptx_call_site {
	const char *file;           /* the module's file table; NULL: not in it */
	int line;
	int column;                 /* 0 unknown */
};

struct ptx_load {
	unsigned ordinal;
	unsigned ptx_line;          /* 1-based line of the instruction */
	size_t text_offset;         /* byte offset of the opcode ("ld...") */
	size_t text_len;            /* bytes up to and including the ';' */
	char *opcode;               /* e.g. "ld.global.nc.v4.f32" */
	char *dest;                 /* destination operand text, e.g. "{%f1,%f2}" */
	char *address;              /* address operand without brackets, e.g. "%rd4+16" */
	char *predicate;            /* guard, e.g. "@%p1" / "@!%p2"; NULL when none */
	enum ptx_space space;
	int is_ldu;
	int nc;                     /* .nc (read-only data path) */
	enum ptx_cache_op cache_op;
	enum ptx_l1_eviction l1_eviction;
	int has_l2_qualifier;       /* .L2::* or .L2::cache_hint present */
	int vector;                 /* 1, 2, 4 or 8 */
	int bits;                   /* bits per element (8..128) */
	int strong;                 /* .volatile .relaxed .acquire .cv .mmio */
	/*
	 * 0 for ldu, strong loads, loads already .ca or .cg (strong on sm_70
	 * and later), and generic loads whose address is not provably global;
	 * a generic load whose address derives from a kernel's pointer
	 * parameter is global (kernels receive only global pointers).
	 */
	int patchable;
	const char *unpatchable_reason; /* static string, NULL when patchable */
	int param;                  /* parameter the address derives from, -1 unknown */
	int read_only;              /* param is never written (see above): 1, 0, -1 unknown */
	/*
	 * Source location from the last .loc before the load in its function
	 * (.file names; NULL and 0 without -lineinfo). Where that .loc lies in a
	 * CUDA toolkit header (__ldg, cuda::atomic_ref, ...) and was inlined,
	 * the location is the call site it was inlined at, outwards until user
	 * code. Points into the module's file table.
	 */
	const char *file;
	int line;
	int column;                 /* of that .loc, 0 unknown: the column of the source
				       expression (Triton's tl.load calls on one line
				       differ by it) */
	/*
	 * Where file:line lies in a user function that was inlined into this
	 * one (a __device__ helper): the call site in this function's own body
	 * (the outermost location of the inlining chain), and how many user
	 * functions deep the load is (1: a helper called from the body; 2: a
	 * helper called by a helper). NULL, 0 and 0 when the load is in the
	 * function's own body, or without -lineinfo.
	 */
	const char *call_file;
	int call_line;
	int inline_depth;
	/*
	 * The whole inlining chain of file:line, innermost call first, out to
	 * the call in this function's body (inlined_at[inline_depth - 1] is
	 * call_file:call_line): the copies of one expression that unrolling a
	 * loop makes share it, a helper's load inlined at two calls does not.
	 * Owned (the array); NULL when inline_depth is 0.
	 */
	struct ptx_call_site *inlined_at;
};

enum ptx_memop_kind {
	PTX_MEMOP_STORE,    /* st.global / generic st */
	PTX_MEMOP_ATOMIC,   /* atom.* / red.* on global or generic addresses (not .shared) */
	PTX_MEMOP_FENCE,    /* membar / fence.* */
	PTX_MEMOP_BARRIER,  /* bar / barrier .sync .red .arrive (__syncthreads); not
			     * bar.warp.sync, not barrier.cluster */
	PTX_MEMOP_ASYNC_COPY, /* cp.async / cp.async.bulk[.tensor] from global to shared
			       * memory: a load that is no ld.global, neither measured nor
			       * patched (Triton pipelines a matmul's tl.load so) */
	PTX_MEMOP__COUNT,
};

struct ptx_memop {
	enum ptx_memop_kind kind;
	unsigned ptx_line;
	size_t text_offset;
	char *opcode;
	int param;                  /* derived parameter, -1 unknown or n/a */
	int module_var;             /* else the module-scope variable (index in the
				     * module's variables) its address derives from, -1 */
	/* An async copy's source location, as a load's (file, line, column;
	 * NULL and 0 unknown); not recorded for the other kinds. */
	const char *file;
	int line, column;
};

struct ptx_param {
	char *name;                 /* e.g. "_Z3mixPKfS0_PKiPfii_param_0" */
	char *type;                 /* ".u64", ".u32", ".align 8 .b8 ...[16]" etc */
	int is_pointer_sized;       /* .u64/.b64/.s64 in a 64-bit module */
};

struct ptx_function {
	char *name;
	int is_entry;               /* .entry (kernel) or .func */
	unsigned decl_line;         /* line of ".entry"/".func" */
	size_t body_begin, body_end;/* offsets of the body's '{' and matching '}' */
	struct ptx_param *params;
	size_t nr_params;
	struct ptx_load *loads;
	size_t nr_loads;
	struct ptx_memop *memops;
	size_t nr_memops;
	int uses_shared;            /* declares or uses .shared storage */
	/* Sum of its .shared declarations and of the module-scope .shared
	 * variables it uses (extern arrays without a size count 0). */
	size_t static_shared_bytes;
};

/* A module-scope variable in global or constant memory (a __device__ or
 * __constant__ variable): the program's host code reaches it by name
 * (cudaMemcpyToSymbol), so a copy of the module loaded apart from the
 * program's has its own, unset, copy. */
struct ptx_variable {
	char *name;
	int is_const;               /* .const, else .global */
	int is_extern;              /* .extern: defined in another module */
	size_t bytes;               /* its size from the declaration, 0 unknown */
};

struct ptx_module {
	char *text;                 /* owned copy of the PTX text, NUL-terminated */
	size_t len;
	char version[16];           /* ".version" e.g. "9.0" */
	char target[32];            /* ".target" e.g. "sm_90" */
	int address_size;           /* 32 or 64 (32 without .address_size, as in PTX) */
	char **files;               /* .file index -> name, NULL where unset */
	size_t nr_files;
	struct ptx_function *functions;
	size_t nr_functions;
	struct ptx_variable *variables;  /* module-scope .global and .const, in order */
	size_t nr_variables;
	/* the functions' names and indices sorted by name (then index), for
	 * ptx_module_find: a plan of 40k functions applied to a module of 40k
	 * took 27 s of name comparisons (issue 36) */
	struct ptx_function_name {
		const char *name;   /* the function's own */
		size_t index;
	} *by_name;
};

/*
 * Parses PTX text (len bytes, need not be NUL-terminated). On success
 * returns 0 and a new module in *out (free with ptx_module_free). On
 * malformed PTX (unbalanced braces, no .version/.target, a truncated
 * instruction) returns CA_E_INPUT with a message naming the line
 * ("k.ptx:12: unbalanced '}'"); name is used in messages only. Unknown
 * directives and instructions are skipped. Function prototypes (no body)
 * are not functions of the module. One pass, linear in the text.
 */
int ptx_parse(const char *name, const char *text, size_t len, struct ptx_module **out);
void ptx_module_free(struct ptx_module *m);

/*
 * The offset just after the module header: the .version, .target and
 * .address_size lines and the comments among them. Text inserted there
 * (module-scope declarations) comes before every function and variable.
 */
size_t ptx_header_end(const char *text, size_t len);

/* The function called name, or NULL. */
const struct ptx_function *ptx_module_find(const struct ptx_module *m, const char *name);

/* Static names for enums, as written in inspect --json ("default" for none). */
const char *ptx_cache_op_name(enum ptx_cache_op op);

/*
 * The library of the CUDA Toolkit a source path lies in ("CUB", "Thrust",
 * "libcu++", "cooperative groups", "the CUDA Toolkit" for its other
 * headers), NULL for the user's own sources. A kernel of CUB or Thrust is
 * compiled into the program from the toolkit's headers: its loads are there,
 * not in the user's code. Static strings.
 */
const char *ptx_toolkit_library(const char *path);
/* Such a path as it is included ("cub/block/block_load.cuh"), NULL for the
 * user's own sources. Points into path. */
const char *ptx_toolkit_include_name(const char *path);

/* The async copies (PTX_MEMOP_ASYNC_COPY) of one source location. */
struct ptx_async_site {
	const char *file;           /* NULL without line info */
	int line, column;
	size_t copies;
	unsigned first_ptx_line;
};
/*
 * f's async copies grouped by source file, line and column, in the order
 * of their first copy; *out is allocated (free it), NULL when none.
 * Returns how many sites.
 */
size_t ptx_async_copy_sites(const struct ptx_function *f, struct ptx_async_site **out);
const char *ptx_l1_eviction_name(enum ptx_l1_eviction ev);

/*
 * Load actions: what a plan asks of a load (DESIGN.md, docs/plan-json.md).
 * The names are the strings of plan.json.
 */
enum load_action {
	LOAD_ACTION_DEFAULT,         /* "default": no cache operator, no L1 eviction */
	LOAD_ACTION_CACHE,           /* "cache": .ca */
	LOAD_ACTION_BYPASS,          /* "bypass": .cg */
	LOAD_ACTION_STREAM,          /* "stream": .cs */
	LOAD_ACTION_LAST_USE,        /* "last_use": .lu */
	LOAD_ACTION_NO_ALLOCATE,     /* "L1::no_allocate" */
	LOAD_ACTION_EVICT_FIRST,     /* "L1::evict_first" */
	LOAD_ACTION_EVICT_LAST,      /* "L1::evict_last" */
	LOAD_ACTION_AS_BUILT,        /* the L1 form as built (a plan that sets the L2
					priority only); no name of its own in plan.json */
	LOAD_ACTION__COUNT
};
const char *load_action_name(enum load_action a);
/* Returns 0 and sets *a, or -1 for an unknown name (LOAD_ACTION_AS_BUILT has none). */
int load_action_parse(const char *name, enum load_action *a);

/*
 * A load's L2 eviction priority (issue 26, docs/l2-priority-ptx.md): a
 * createpolicy.fractional.L2::<priority> policy, hoisted to the top of the
 * function, and .L2::cache_hint with that policy on the load.
 */
enum l2_priority {
	L2_PRIORITY_NONE,            /* the plan leaves the L2 side as built */
	L2_PRIORITY_EVICT_FIRST,     /* "L2::evict_first" */
	L2_PRIORITY_EVICT_LAST,      /* "L2::evict_last" */
	L2_PRIORITY_EVICT_NORMAL,    /* "L2::evict_normal" */
	L2_PRIORITY_EVICT_UNCHANGED, /* "L2::evict_unchanged" */
	L2_PRIORITY__COUNT
};
/* "L2::evict_first", ...; "none" for L2_PRIORITY_NONE. */
const char *l2_priority_name(enum l2_priority p);

/*
 * A load's whole form as plan.json spells it (docs/plan-json.md): the L1
 * action alone ("L1::no_allocate"), the L2 priority alone ("L2::evict_last":
 * the L1 form as built), or both joined by '+' ("L1::no_allocate+L2::evict_first").
 * load_form_name returns a static string; load_form_parse returns 0 and
 * sets both parts, or -1 for anything else (an empty part, two of a kind,
 * the L2 part first).
 */
const char *load_form_name(enum load_action a, enum l2_priority p);
int load_form_parse(const char *name, enum load_action *a, enum l2_priority *p);
/*
 * Whether a parsed form is one the L2 pass measures and the L2 oracle
 * gives: an L2 priority, with or without an L1 part (Triton's
 * eviction_policy), or "default" (a Triton load without eviction_policy:
 * its own cache hint removed).
 */
int load_form_is_l2_choice(enum load_action a, enum l2_priority p);

struct ptx_load_edit {
	const char *function;
	unsigned ordinal;
	enum load_action action;
	enum l2_priority l2;         /* L2_PRIORITY_NONE: no L2 hint added */
};

/*
 * Appends to out the module's text with each edited load rewritten to the
 * action's form; .nc, vector width, type, L2 qualifiers and operands are
 * kept, and only forms the PTX ISA allows are written (an action that would
 * be illegal on a given load is CA_E_INPUT, naming the load). An edit with
 * an L2 priority also gets .L2::cache_hint and a policy operand, and each
 * function with such edits gets, at the top of its body, one .b64 register
 * and one createpolicy.fractional (fraction 1.0) per priority it uses,
 * named with a prefix no name of the module has. That needs PTX ISA 7.4
 * and sm_80 or later, and a load without an L2 cache hint or L2 eviction
 * qualifier of its own: anything else is CA_E_INPUT saying why. Nothing
 * else in the text changes. An edit naming an unknown function or ordinal,
 * or an unpatchable load, is CA_E_INPUT.
 */
int ptx_rewrite_loads(const struct ptx_module *m, const struct ptx_load_edit *edits,
		      size_t nr_edits, struct strbuf *out);

/*
 * The L2 priority a load of function f of module m carries: its
 * .L2::cache_hint's policy operand, traced to the last
 * createpolicy.fractional.L2::<priority> that writes that register before
 * the load in f's body. L2_PRIORITY_NONE when the load has no cache hint;
 * L2_PRIORITY__COUNT when it has one whose policy is not made so (a
 * parameter, a copy, createpolicy.range).
 */
enum l2_priority ptx_load_l2_priority(const struct ptx_module *m, const struct ptx_function *f,
				      const struct ptx_load *ld);

/* Why a module cannot carry L2 cache hints (below PTX ISA 7.4 or sm_80), or
 * why a load cannot take an L2 priority of a plan's (it has an L2 hint or
 * priority of its own); NULL when it can. Static strings. */
const char *ptx_l2_unsupported(const struct ptx_module *m);
const char *ptx_load_l2_refused(const struct ptx_load *ld);

/*
 * Appends to out the module's text with the body of every kernel (.entry)
 * but entry replaced by "{ ret; }": a module that JIT-compiles only the
 * one kernel it is loaded for (in-run capture's variant modules). Device
 * functions, globals and declarations are kept. CA_E_INPUT when entry is
 * not a kernel of the module.
 */
int ptx_keep_one_entry(const struct ptx_module *m, const char *entry, struct strbuf *out);

/*
 * Appends to out the opcode that action gives ld (e.g. "ld.global.nc.f32"
 * with LOAD_ACTION_NO_ALLOCATE -> "ld.global.nc.L1::no_allocate.f32"):
 * the old cache operator and L1 eviction priority are dropped, everything
 * else is kept in order. Does not look at ld->patchable (callers that
 * rewrite must). Returns 0, or CA_E_INPUT for a combination ptxas rejects
 * (last_use on an .nc load) with out unchanged.
 */
int ptx_load_rewrite_opcode(const struct ptx_load *ld, enum load_action action,
			    struct strbuf *out);

#endif
