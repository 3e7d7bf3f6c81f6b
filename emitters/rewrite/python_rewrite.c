/*
 * Triton tl.load calls rewritten in Python (emitters/rewrite/python_rewrite.h):
 * the request goes to emitters/rewrite/tl_load_rewrite.py as JSON on its standard
 * input, the answer comes back as JSON on its standard output.
 */
#include "emitters/rewrite/python_rewrite.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "analysis/load_sites.h"
#include "analysis/ptx.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

extern const char ca_tl_load_rewrite_py[];

const char *python_rewrite_interpreter(const char *named)
{
	const char *env = getenv("CACHEADVISE_PYTHON");

	if (named)
		return named;
	return env && *env ? env : "python3";
}

int python_program(const char *program)
{
	const char *base = program ? strrchr(program, '/') : NULL;

	base = base ? base + 1 : program;
	return base && !strncmp(base, "python", 6);
}

int tl_load_form_of_action(const char *action, struct tl_load_edit *e)
{
	enum load_action a;
	enum l2_priority l2;

	memset(e, 0, sizeof(*e));
	if (load_form_parse(action, &a, &l2) ||
	    !load_sites_triton_form(a, l2, &e->eviction_policy, &e->cache_modifier))
		return 0;
	e->set_eviction_policy = e->set_cache_modifier = 1;
	return 1;
}

void tl_load_result_release(struct tl_load_result *r)
{
	free(r->why);
	free(r->text);
	memset(r, 0, sizeof(*r));
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Runs python on the script with request as its stdin; *out gets its stdout. */
static int run_python(const char *python, const char *script, const char *request,
		      struct strbuf *out, struct strbuf *err)
{
	char dir[] = "/tmp/cacheadvise-py-XXXXXX";
	char *spath = NULL, *rpath = NULL, *opath = NULL, *epath = NULL;
	int ret = 0, status, fd;
	pid_t pid;

	if (!mkdtemp(dir))
		return error_set(CA_E_IO, "cannot create a temporary directory: %s", strerror(errno));
	spath = xasprintf("%s/tl_load_rewrite.py", dir);
	rpath = xasprintf("%s/request.json", dir);
	opath = xasprintf("%s/out.json", dir);
	epath = xasprintf("%s/err.txt", dir);
	fd = open(spath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write_all(fd, script, strlen(script)) || close(fd)) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", spath, strerror(errno));
		goto out;
	}
	fd = open(rpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write_all(fd, request, strlen(request)) || close(fd)) {
		ret = error_set(CA_E_IO, "cannot write '%s': %s", rpath, strerror(errno));
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		ret = error_set(CA_E_IO, "cannot start %s: %s", python, strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int in = open(rpath, O_RDONLY), o = open(opath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(epath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (in < 0 || o < 0 || e < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		/* -I: the user's environment and site packages play no part */
		execlp(python, python, "-I", spath, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = error_set(CA_E_IO, "cannot wait for %s: %s", python, strerror(errno));
			goto out;
		}
	}
	strbuf_read_file(err, epath, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		ret = error_set(CA_E_IO, "cannot run '%s' (not found): the Python rewrite needs a "
				"python3 with its ast module (name one with --python or "
				"CACHEADVISE_PYTHON)", python);
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		const char *last;

		while (err->len && (err->buf[err->len - 1] == '\n' || err->buf[err->len - 1] == ' '))
			strbuf_setlen(err, err->len - 1);
		/* the reason is one line: the helper writes one, and of a
		 * traceback the last line is the exception */
		last = strrchr(err->buf, '\n');
		ret = error_set(CA_E_IO, "%s", err->len ? (last ? last + 1 : err->buf) :
				"the Python rewrite helper failed");
		goto out;
	}
	if (strbuf_read_file(out, opath, 0))
		ret = error_set(CA_E_IO, "the Python rewrite helper wrote no answer");
out:
	unlink(spath);
	unlink(rpath);
	unlink(opath);
	unlink(epath);
	rmdir(dir);
	free(spath);
	free(rpath);
	free(opath);
	free(epath);
	return ret;
}

int python_rewrite_check(const char *python)
{
	int status, fd;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return error_set(CA_E_IO, "cannot start %s: %s", python, strerror(errno));
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execlp(python, python, "-I", "-c", "import ast", (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error_set(CA_E_IO, "cannot wait for %s: %s", python, strerror(errno));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return error_set(CA_E_IO, "cannot run '%s' (not found)", python);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return error_set(CA_E_IO, "'%s' has no ast module, or is not a Python", python);
	return 0;
}

/*
 * The file's bytes as a JSON string: each byte the code point of its
 * value (bytes.decode("latin-1") in the helper), so that a file that is
 * not UTF-8 (a PEP 263 latin-1 file) passes whole (issue 36).
 */
static json_t *bytes_as_string(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *v;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x80) {
			strbuf_addch(&sb, c);
		} else {
			strbuf_addch(&sb, 0xc0 | c >> 6);
			strbuf_addch(&sb, 0x80 | (c & 0x3f));
		}
	}
	v = json_stringn(sb.buf, sb.len);
	strbuf_release(&sb);
	return v;
}

/* The reverse: the bytes a string of code points below 256 stands for, or
 * NULL when it holds another (caller frees). */
static char *string_as_bytes(const char *s)
{
	struct strbuf sb = STRBUF_INIT;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x80) {
			strbuf_addch(&sb, c);
		} else if ((c == 0xc2 || c == 0xc3) && ((unsigned char)s[1] & 0xc0) == 0x80) {
			strbuf_addch(&sb, (c & 0x03) << 6 | ((unsigned char)*++s & 0x3f));
		} else {
			strbuf_release(&sb);
			return NULL;
		}
	}
	return strbuf_detach(&sb, NULL);
}

static json_t *keyword(int set, const char *value)
{
	return set && value ? json_string(value) : json_null();
}

int tl_load_rewrite(const char *python, const char *source, const struct tl_load_edit *edits,
		    size_t nr, struct tl_load_result *out)
{
	json_t *req = json_object(), *arr = json_array(), *resp = NULL, *res, *r;
	struct strbuf answer = STRBUF_INIT, err = STRBUF_INIT;
	json_error_t jerr;
	char *text;
	size_t i;
	int ret;

	memset(out, 0, nr * sizeof(*out));
	for (i = 0; i < nr; i++) {
		json_t *set = json_object(), *e;

		if (edits[i].set_eviction_policy)
			json_object_set_new(set, "eviction_policy",
					    keyword(1, edits[i].eviction_policy));
		if (edits[i].set_cache_modifier)
			json_object_set_new(set, "cache_modifier", keyword(1, edits[i].cache_modifier));
		e = json_pack("{s:i, s:i, s:o}", "line", edits[i].line, "column", edits[i].column,
			      "set", set);
		json_array_append_new(arr, e);
	}
	json_object_set_new(req, "source_bytes", bytes_as_string(source));
	json_object_set_new(req, "edits", arr);
	text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	ret = run_python(python ? python : python_rewrite_interpreter(NULL), ca_tl_load_rewrite_py,
			 text ? text : "{}", &answer, &err);
	free(text);
	if (!ret && !(resp = json_loads(answer.buf, 0, &jerr)))
		ret = error_set(CA_E_IO, "the Python rewrite helper's answer is not JSON: %s",
				jerr.text);
	res = resp ? json_object_get(resp, "edits") : NULL;
	if (!ret && json_array_size(res) != nr)
		ret = error_set(CA_E_IO, "the Python rewrite helper answered %zu edits, not %zu",
				json_array_size(res), nr);
	for (i = 0; !ret && i < nr; i++) {
		const char *status, *why;

		r = json_array_get(res, i);
		status = json_string_value(json_object_get(r, "status"));
		why = json_string_value(json_object_get(r, "why"));
		if (status && !strcmp(status, "rewritten")) {
			out[i].status = TL_LOAD_REWRITTEN;
			out[i].first = (size_t)json_integer_value(json_object_get(r, "first"));
			out[i].last = (size_t)json_integer_value(json_object_get(r, "last"));
			out[i].text = string_as_bytes(json_string_value(json_object_get(r,
								"text_bytes")) ?: "");
			if (!out[i].text)
				ret = error_set(CA_E_IO, "the Python rewrite helper gave edit %zu text "
						"that is not bytes", i);
			else if (!out[i].first || out[i].last < out[i].first)
				ret = error_set(CA_E_IO, "the Python rewrite helper gave edit %zu no "
						"lines", i);
		} else if (status && !strcmp(status, "unchanged")) {
			out[i].status = TL_LOAD_UNCHANGED;
		} else {
			out[i].status = TL_LOAD_NOT_FOUND;
			out[i].why = xstrdup(why ? why : "the call was not found");
		}
	}
	if (ret)
		for (i = 0; i < nr; i++)
			tl_load_result_release(&out[i]);
	json_decref(resp);
	strbuf_release(&answer);
	strbuf_release(&err);
	return ret;
}
