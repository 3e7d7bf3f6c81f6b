#ifndef CACHEADVISE_SOURCE_FILE_H
#define CACHEADVISE_SOURCE_FILE_H

#include <stddef.h>

/*
 * A CUDA C++ source file as the source hints see it: its bytes, its lines,
 * its SHA-256, a small tokenizer that skips comments, string literals and
 * preprocessor lines, and the lookup of a kernel's definition (parameter
 * names and the lines of its body). It understands just enough C++ to find
 * things reliably; where it is unsure it says so instead of guessing.
 */

struct source_file {
	char *path;                 /* as opened */
	char *text;                 /* whole file, NUL-terminated (owned) */
	size_t len;
	size_t nr_lines;            /* a final line without '\n' counts */
	size_t *line_off;           /* nr_lines + 1 offsets; line n (1-based) is
				       [line_off[n-1], line_off[n]) including its '\n' */
	unsigned char *in_comment;  /* per line: starts inside a block comment */
	char sha256[65];            /* lowercase hex of the file's bytes */
};

/*
 * Reads path. Returns a new source_file (free with source_file_free), or
 * NULL with the error message set (CA_E_INPUT) when it cannot be read.
 */
struct source_file *source_file_load(const char *path);
void source_file_free(struct source_file *sf);

/* Line n (1-based) without its line terminator; *len gets its length.
 * Returns NULL when n is out of range. */
const char *source_file_line(const struct source_file *sf, size_t n, size_t *len);
/* The 1-based line that byte offset off of the text is on. */
size_t source_file_line_of(const struct source_file *sf, size_t off);

enum source_token_kind {
	SOURCE_TOKEN_IDENT,
	SOURCE_TOKEN_NUMBER,
	SOURCE_TOKEN_STRING,        /* "..." or '...' */
	SOURCE_TOKEN_PUNCT,         /* operators and punctuation, longest match */
};

struct source_token {
	enum source_token_kind kind;
	size_t begin, end;          /* byte offsets into the tokenized text */
};

/*
 * Splits text[0, len) into tokens, skipping comments and preprocessor
 * lines. in_comment says whether text starts inside a block comment.
 * Returns the number of tokens; *toks (caller frees) holds them.
 */
size_t source_tokenize(const char *text, size_t len, int in_comment,
		       struct source_token **toks);

/* 1 when the token's text equals s. */
int source_token_is(const char *text, const struct source_token *t, const char *s);
/*
 * Index of the token closing the bracket at t[open] ("(" "[" "{" "<"), or
 * nr when unbalanced. For "<" only angle brackets are counted, with ">>"
 * closing two.
 */
size_t source_token_close(const char *text, const struct source_token *t, size_t nr,
			  size_t open);

/* A kernel's definition as found in a file. */
struct source_kernel {
	char **params;              /* parameter names, NULL where unnamed (owned) */
	char **param_types;         /* the declared type text of each, e.g. "const float *" (owned) */
	size_t nr_params;
	size_t decl_line;           /* line of the kernel's name */
	size_t body_first_line;     /* line of the body's '{' */
	size_t body_last_line;      /* line of the matching '}' */
	size_t start_line;          /* line of the definition's first token
				       (source_file_function_at only; 0 otherwise) */
	/* A template's parameters ("template <typename T, int N>": "T", "N"),
	 * and which of them are types; none for a plain kernel (owned). */
	char **template_params;
	int *template_param_is_type;
	size_t nr_template_params;
};

void source_kernel_release(struct source_kernel *k);

/*
 * Looks for the definition of the __global__ function called name (the
 * unqualified name, e.g. "mix" for "ns::mix<float>(float const*)") in sf.
 * Returns 1 and fills *k (release with source_kernel_release) when there is
 * exactly one definition, 0 when there is none, and -1 when there are
 * several (overloads, template specialisations): the caller cannot know
 * which one the PTX came from.
 */
int source_file_find_kernel(const struct source_file *sf, const char *name,
			    struct source_kernel *k);

/*
 * The innermost function definition of any kind (a __device__ helper, a
 * template, a kernel) whose body holds line. Returns 1 and fills *k
 * (release with source_kernel_release; k->start_line is the line of the
 * definition's first token: its template header or qualifiers; a
 * template's parameters are in k->template_params) and *name
 * (caller frees), or 0 when line is in no function body the tokenizer can
 * see (a macro, a lambda, file scope).
 */
int source_file_function_at(const struct source_file *sf, size_t line,
			    struct source_kernel *k, char **name);

/*
 * The lines of sf that call name ("name(" or "name<...>("), outside the
 * definitions of name. Returns how many there are (one per call, so a
 * line calling twice is listed twice); *lines (caller frees) gets them in
 * order.
 */
size_t source_file_call_lines(const struct source_file *sf, const char *name, size_t **lines);

/*
 * The unqualified function name of a kernel: from the demangled name when
 * given ("ns::mix<float>(float const*)" -> "mix"), else from the Itanium
 * mangled name ("_Z3mixPKfS0_" -> "mix", "_ZN2ns3mixEPf" -> "mix"), else
 * the name itself (extern "C" kernels). Returns a new string, or NULL when
 * the name cannot be read.
 */
char *source_kernel_base_name(const char *mangled, const char *demangled);

/*
 * The template arguments of a kernel instantiation, in order: from the
 * demangled name when given ("void ns::axpy<float, 256>(...)" -> "float",
 * "256"), else from an Itanium mangled name's builtin and named types
 * ("_ZN2ns4axpyIfLi256EEv..." -> "float", NULL for the value). Returns a new
 * array of *nr new strings (NULL where an argument cannot be read), or NULL
 * with *nr 0 when the name has none.
 */
char **source_template_args(const char *mangled, const char *demangled, size_t *nr);
void source_template_args_free(char **args, size_t nr);

#endif
