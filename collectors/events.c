#include "collectors/events.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "base/xalloc.h"

void run_events_init(struct run_events *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->errors = json_array();
	ev->allocations = json_array();
	ev->launch_sequence = json_array();
}

void run_events_release(struct run_events *ev)
{
	size_t i;

	for (i = 0; i < ev->nr_modules; i++) {
		free(ev->modules[i].id);
		free(ev->modules[i].origin);
		free(ev->modules[i].substitute_error);
	}
	for (i = 0; i < ev->nr_kernels; i++) {
		free(ev->kernels[i].name);
		free(ev->kernels[i].module);
		json_decref(ev->kernels[i].metrics);
		json_decref(ev->kernels[i].args);
		free(ev->kernels[i].counters);
	}
	free(ev->modules);
	free(ev->kernels);
	json_decref(ev->errors);
	json_decref(ev->allocations);
	json_decref(ev->launch_sequence);
	json_decref(ev->metric_names);
	memset(ev, 0, sizeof(*ev));
}

struct event_kernel *run_events_kernel(struct run_events *ev, const char *name)
{
	struct event_kernel *k;
	size_t i;

	for (i = 0; i < ev->nr_kernels; i++)
		if (!strcmp(ev->kernels[i].name, name))
			return &ev->kernels[i];
	ALLOC_GROW(ev->kernels, ev->nr_kernels + 1, ev->alloc_kernels);
	k = &ev->kernels[ev->nr_kernels++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(name);
	k->static_shared = -1;
	k->registers = -1;
	return k;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static void dims(json_t *arr, unsigned out[3])
{
	size_t i;

	for (i = 0; i < 3; i++)
		out[i] = (unsigned)json_integer_value(json_array_get(arr, i));
}

/* seq -> kernel name, for metrics/counters events that name the seq. */
static void handle(struct run_events *ev, json_t *o)
{
	const char *type = str(o, "ev");

	if (!type)
		return;
	if (!strcmp(type, "start")) {
		ev->saw_start = 1;
	} else if (!strcmp(type, "exit")) {
		ev->saw_exit = 1;
	} else if (!strcmp(type, "error")) {
		json_array_append_new(ev->errors, json_string(str(o, "what") ? str(o, "what") : "?"));
	} else if (!strcmp(type, "module")) {
		struct event_module *m;
		ALLOC_GROW(ev->modules, ev->nr_modules + 1, ev->alloc_modules);
		m = &ev->modules[ev->nr_modules++];
		memset(m, 0, sizeof(*m));
		m->id = xstrdup(str(o, "id") ? str(o, "id") : "unknown");
		m->origin = str(o, "origin") ? xstrdup(str(o, "origin")) : NULL;
		m->has_ptx = json_is_true(json_object_get(o, "has_ptx"));
		m->substituted = json_is_true(json_object_get(o, "substituted"));
		if (str(o, "substitute_error"))
			m->substitute_error = xstrdup(str(o, "substitute_error"));
	} else if (!strcmp(type, "launch")) {
		struct event_kernel *k = run_events_kernel(ev, str(o, "kernel") ? str(o, "kernel") : "?");
		if (!k->launches) {
			dims(json_object_get(o, "grid"), k->grid);
			dims(json_object_get(o, "block"), k->block);
			k->dynamic_shared = (unsigned)json_integer_value(json_object_get(o, "dynamic_shared"));
			k->args = json_incref(json_object_get(o, "args"));
			if (str(o, "module"))
				k->module = xstrdup(str(o, "module"));
		}
		k->launches++;
		ev->launches++;
		json_array_append_new(ev->launch_sequence,
			json_pack("{s:O?, s:s, s:O?}", "seq", json_object_get(o, "seq"),
				  "kernel", k->name, "args", json_object_get(o, "args")));
	} else if (!strcmp(type, "alloc")) {
		json_array_append_new(ev->allocations,
			json_pack("{s:O?, s:O?}", "seq", json_object_get(o, "seq"),
				  "bytes", json_object_get(o, "bytes")));
	} else if (!strcmp(type, "metrics_config")) {
		json_decref(ev->metric_names);
		ev->metric_names = json_incref(json_object_get(o, "metrics"));
	} else if (!strcmp(type, "metrics")) {
		struct event_kernel *k = run_events_kernel(ev, str(o, "kernel") ? str(o, "kernel") : "?");
		json_t *vals = json_object_get(o, "values"), *v;
		const char *key;

		if (!k->metrics)
			k->metrics = json_object();
		json_object_foreach(vals, key, v) {
			double prev = json_number_value(json_object_get(k->metrics, key));
			json_object_set_new(k->metrics, key, json_real(prev + json_number_value(v)));
		}
		k->metric_launches++;
	} else if (!strcmp(type, "kernel_time")) {
		struct event_kernel *k = run_events_kernel(ev, str(o, "kernel") ? str(o, "kernel") : "?");
		json_int_t s = json_integer_value(json_object_get(o, "start"));
		json_int_t e = json_integer_value(json_object_get(o, "end"));

		if (e > s)
			k->gpu_time_ns += (uint64_t)(e - s);
		k->timed_launches++;
		k->static_shared = (int)json_integer_value(json_object_get(o, "static_shared"));
		k->registers = (int)json_integer_value(json_object_get(o, "registers"));
	} else if (!strcmp(type, "counters")) {
		struct event_kernel *k = run_events_kernel(ev, str(o, "kernel") ? str(o, "kernel") : "?");
		json_t *vals = json_object_get(o, "values");
		size_t i, n = json_array_size(vals);

		if (k->nr_counters < n) {
			k->counters = xrealloc(k->counters, n * sizeof(*k->counters));
			memset(k->counters + k->nr_counters, 0, (n - k->nr_counters) * sizeof(*k->counters));
			k->nr_counters = n;
		}
		for (i = 0; i < n; i++)
			k->counters[i] += (uint64_t)json_integer_value(json_array_get(vals, i));
	}
}

/* One process's file. */
static int load_file(struct run_events *ev, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *line, *next;
	FILE *f = fopen(path, "rb");

	if (!f) {
		if (errno == ENOENT)
			return 0;
		return error_set(CA_E_INPUT, "cannot read '%s': %s", path, strerror(errno));
	}
	fclose(f);
	if (strbuf_read_file(&sb, path, 0))
		return CA_E_INPUT;
	for (line = sb.buf; line && *line; line = next) {
		json_t *o;
		json_error_t jerr;

		next = strchr(line, '\n');
		if (!next)
			break; /* torn last line */
		*next++ = '\0';
		o = json_loads(line, 0, &jerr);
		if (o) {
			handle(ev, o);
			json_decref(o);
		}
	}
	strbuf_release(&sb);
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pids of the other processes' files beside events.jsonl
 * (events.<pid>.jsonl), in increasing order; *n gets their number.
 */
static long *other_processes(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	long *pids = NULL;
	size_t alloc = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, "events.", 7) || !isdigit((unsigned char)de->d_name[7]))
			continue;
		pid = strtol(de->d_name + 7, &end, 10);
		if (strcmp(end, ".jsonl"))
			continue;
		ALLOC_GROW(pids, *n + 1, alloc);
		pids[(*n)++] = pid;
	}
	closedir(d);
	if (*n)
		qsort(pids, *n, sizeof(*pids), cmp_pid);
	return pids;
}

int run_events_load(struct run_events *ev, const char *path)
{
	const char *base = strrchr(path, '/');
	int ret, all_exited;
	size_t n = 0, i;
	long *pids = NULL;
	char *dir;

	ret = load_file(ev, path);
	base = base ? base + 1 : path;
	if (ret || strcmp(base, "events.jsonl"))
		return ret;
	dir = base == path ? xstrdup(".") : xstrndup(path, (size_t)(base - path - 1));
	pids = other_processes(dir, &n);
	/* the run exited cleanly only if every process that started did */
	all_exited = !ev->saw_start || ev->saw_exit;
	for (i = 0; i < n && !ret; i++) {
		char *other = xasprintf("%s/events.%ld.jsonl", dir, pids[i]);
		int had_start = ev->saw_start;

		ev->saw_start = ev->saw_exit = 0;
		ret = load_file(ev, other);
		if (ev->saw_start && !ev->saw_exit)
			all_exited = 0;
		ev->saw_start |= had_start;
		free(other);
	}
	ev->saw_exit = ev->saw_start && all_exited;
	free(pids);
	free(dir);
	return ret;
}
