#include "collectors/events.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
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

	free(ev->ranks);
	free(ev->gpu);
	for (i = 0; i < ev->nr_rank_events; i++) {
		run_events_release(ev->rank_events[i].ev);
		free(ev->rank_events[i].ev);
	}
	free(ev->rank_events);
	for (i = 0; i < ev->nr_modules; i++) {
		free(ev->modules[i].id);
		free(ev->modules[i].origin);
		free(ev->modules[i].path);
		free(ev->modules[i].ptx_file);
		json_decref(ev->modules[i].triton);
		free(ev->modules[i].substitute_error);
	}
	for (i = 0; i < ev->nr_kernels; i++) {
		free(ev->kernels[i].name);
		free(ev->kernels[i].module);
		json_decref(ev->kernels[i].metrics);
		json_decref(ev->kernels[i].args);
		json_decref(ev->kernels[i].variants);
		json_decref(ev->kernels[i].variant_hits_at);
		json_decref(ev->kernels[i].replays);
		json_decref(ev->kernels[i].replay_refused);
		json_decref(ev->kernels[i].version_ns);
		json_decref(ev->kernels[i].replay_ns);
		json_decref(ev->kernels[i].carveout_ns);
		json_decref(ev->kernels[i].carveout_replay_ns);
		free(ev->kernels[i].counters);
	}
	free(ev->modules);
	free(ev->kernels);
	json_decref(ev->errors);
	json_decref(ev->allocations);
	json_decref(ev->launch_sequence);
	json_decref(ev->metric_names);
	json_decref(ev->attributes);
	json_decref(ev->join_);
	json_decref(ev->pending_);
	json_decref(ev->alloc_by_seq_);
	memset(ev, 0, sizeof(*ev));
}

struct event_kernel *run_events_kernel(struct run_events *ev, const char *name)
{
	struct event_kernel *k;
	size_t i;

	for (i = 0; i < ev->nr_kernels; i++)   /* a kernel taken has no name left */
		if (ev->kernels[i].name && !strcmp(ev->kernels[i].name, name))
			return &ev->kernels[i];
	ALLOC_GROW(ev->kernels, ev->nr_kernels + 1, ev->alloc_kernels);
	k = &ev->kernels[ev->nr_kernels++];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(name);
	k->static_shared = -1;
	k->registers = -1;
	return k;
}

struct run_events *run_events_of_rank(const struct run_events *ev, int rank)
{
	size_t i;

	for (i = 0; i < ev->nr_rank_events; i++)
		if (ev->rank_events[i].rank == rank)
			return ev->rank_events[i].ev;
	return NULL;
}

/* Whether an argument before the j-th of a launch has the same parameter
 * and allocation (two pointers of one struct parameter into one buffer). */
static int seen_in_launch(json_t *args, size_t j, json_t *p, json_t *a)
{
	size_t i;

	for (i = 0; i < j; i++)
		if (json_equal(json_object_get(json_array_get(args, i), "param"), p) &&
		    json_equal(json_object_get(json_array_get(args, i), "alloc"), a))
			return 1;
	return 0;
}

json_t *run_events_allocs_used(const struct run_events *ev, const char *kernel)
{
	json_t *out = json_array(), *launch, *arg, *u;
	size_t i, j, k;

	json_array_foreach(ev->launch_sequence, i, launch) {
		if (strcmp(json_string_value(json_object_get(launch, "kernel")), kernel))
			continue;
		json_array_foreach(json_object_get(launch, "args"), j, arg) {
			json_t *p = json_object_get(arg, "param"), *a = json_object_get(arg, "alloc");
			int found = 0;

			if (seen_in_launch(json_object_get(launch, "args"), j, p, a))
				continue;
			json_array_foreach(out, k, u) {
				if (json_equal(json_object_get(u, "param"), p) &&
				    json_equal(json_object_get(u, "alloc"), a)) {
					json_object_set_new(u, "launches", json_integer(
						json_integer_value(json_object_get(u, "launches")) + 1));
					found = 1;
					break;
				}
			}
			if (!found)
				json_array_append_new(out, json_pack("{s:O, s:O, s:i}", "param", p,
								     "alloc", a, "launches", 1));
		}
	}
	return out;
}

int run_events_attribute_int(const struct run_events *ev, const char *kernel,
			     const char *attribute, long long *value)
{
	json_t *v = json_object_get(json_object_get(ev->attributes, kernel), attribute);

	if (!json_is_integer(v))
		return 0;
	*value = json_integer_value(v);
	return 1;
}

int event_kernel_variant(const struct event_kernel *k, const char *label, const char *key,
			 double *sum, double *samples)
{
	json_t *v = json_object_get(k->variants, label);

	if (!json_is_number(json_object_get(v, key)))
		return 0;
	*sum = json_number_value(json_object_get(v, key));
	*samples = json_number_value(json_object_get(v, "samples"));
	return 1;
}

size_t event_kernel_variant_hits_at(const struct event_kernel *k, const char *label,
				    struct event_hits_at **at)
{
	json_t *by = json_object_get(k->variant_hits_at, label), *x;
	size_t n = 0;
	const char *key;

	*at = xcalloc(json_object_size(by) + 1, sizeof(**at));
	json_object_foreach(by, key, x) {
		int process;
		unsigned long long ordinal;

		if (sscanf(key, "%d:%llu", &process, &ordinal) != 2)
			continue;
		(*at)[n++] = (struct event_hits_at){ process, ordinal, json_number_value(x) };
	}
	return n;
}

/* The kernel's events in ev, NULL when none (nothing is added). */
static const struct event_kernel *find_kernel(const struct run_events *ev, const char *name)
{
	size_t i;

	/* a kernel the profile took (profile_take_kernel) has no name left */
	for (i = 0; i < ev->nr_kernels; i++)
		if (ev->kernels[i].name && !strcmp(ev->kernels[i].name, name))
			return &ev->kernels[i];
	return NULL;
}

unsigned run_events_launches_per_process(const struct run_events *ev, const char *kernel)
{
	const struct event_kernel *k = find_kernel(ev, kernel);
	unsigned fewest = 0;
	size_t r;

	for (r = 0; r < ev->nr_rank_events; r++) {
		const struct event_kernel *rk = find_kernel(ev->rank_events[r].ev, kernel);

		if (rk && rk->launches && (!fewest || rk->launches < fewest))
			fewest = rk->launches;
	}
	return fewest ? fewest : k ? k->launches : 0;
}

double event_kernel_metric(const struct event_kernel *k, const char *key)
{
	json_t *v = json_object_get(k->metrics, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

double *event_kernel_times(const struct event_kernel *k, enum event_times table,
			   const char *label, size_t *n)
{
	json_t *by_label = table == EVENT_VERSION_NS ? k->version_ns :
			   table == EVENT_REPLAY_NS ? k->replay_ns :
			   table == EVENT_CARVEOUT_NS ? k->carveout_ns : k->carveout_replay_ns;
	json_t *arr = json_object_get(by_label, label), *x;
	double *v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	size_t i;

	*n = 0;
	json_array_foreach(arr, i, x)
		v[(*n)++] = json_number_value(x);
	return v;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The kernel an event names ("?" when it names none). */
static struct event_kernel *kernel_of(struct run_events *ev, json_t *o)
{
	return run_events_kernel(ev, str(o, "kernel") ? str(o, "kernel") : "?");
}

/* Adds every number of vals to the same key of sum. */
static void add_values(json_t *sum, json_t *vals)
{
	json_t *v;
	const char *key;

	json_object_foreach(vals, key, v) {
		double prev = json_number_value(json_object_get(sum, key));
		json_object_set_new(sum, key, json_real(prev + json_number_value(v)));
	}
}

/* Appends x to the array under key of *obj (created as needed). */
static void push(json_t **obj, const char *key, json_t *x)
{
	json_t *arr;

	if (!*obj)
		*obj = json_object();
	arr = json_object_get(*obj, key);
	if (!arr) {
		arr = json_array();
		json_object_set_new(*obj, key, arr);
	}
	json_array_append_new(arr, x);
}

static void join_set(struct run_events *ev, const char *map, json_int_t key, json_t *value)
{
	char k[32];
	json_t *m;

	if (!ev->join_)
		ev->join_ = json_object();
	m = json_object_get(ev->join_, map);
	if (!m) {
		m = json_object();
		json_object_set_new(ev->join_, map, m);
	}
	snprintf(k, sizeof(k), "%lld", (long long)key);
	json_object_set_new(m, k, value);
}

static json_t *join_get(struct run_events *ev, const char *map, json_int_t key)
{
	char k[32];

	snprintf(k, sizeof(k), "%lld", (long long)key);
	return json_object_get(json_object_get(ev->join_, map), k);
}

static void dims(json_t *arr, unsigned out[3])
{
	size_t i;

	for (i = 0; i < 3; i++)
		out[i] = (unsigned)json_integer_value(json_array_get(arr, i));
}

/*
 * The carve-out's events (issue 18): what the program set on a kernel
 * (`attribute`), which setting a launch ran (`carveout`, joined to its
 * kernel_time through the correlation id) and replays' times
 * (`carveout_replay_time`).
 */
static void handle_carveout(struct run_events *ev, const char *type, json_t *o)
{
	const char *kernel = str(o, "kernel"), *what = str(o, "attribute");

	if (!strcmp(type, "attribute")) {
		json_t *attrs;

		if (!what || !json_object_get(o, "value"))
			return;
		if (!ev->attributes)
			ev->attributes = json_object();
		attrs = json_object_get(ev->attributes, kernel ? kernel : "");
		if (!attrs) {
			attrs = json_object();
			json_object_set_new(ev->attributes, kernel ? kernel : "", attrs);
		}
		json_object_set(attrs, what, json_object_get(o, "value"));
		return;
	}
	if (!str(o, "setting"))
		return;
	if (!strcmp(type, "carveout")) {
		json_t *corr = join_get(ev, "seq_correlation", json_integer_value(json_object_get(o, "seq")));

		if (corr)
			join_set(ev, "correlation_carveout", json_integer_value(corr),
				 json_string(str(o, "setting")));
		return;
	}
	push(&ev->pending_, "replays", json_incref(o));
}

/* seq -> kernel name, for metrics/counters events that name the seq. */
/*
 * An allocation is its process's program-order seq. The processes of a job
 * (MPI ranks, a wrapper's children) each number their own from 0, and the
 * injection library applies a window by seq in every process, so one seq
 * names one entry here: the ranks of an SPMD job make the same buffers in
 * the same order. The entry keeps the largest size seen.
 */
static void add_allocation(struct run_events *ev, json_t *seq, json_t *bytes)
{
	char key[32];
	json_t *a, *had;

	if (!json_is_integer(seq)) {   /* a torn event: kept as it came */
		json_array_append_new(ev->allocations,
				      json_pack("{s:O?, s:O?}", "seq", seq, "bytes", bytes));
		return;
	}
	if (!ev->alloc_by_seq_)
		ev->alloc_by_seq_ = json_object();
	snprintf(key, sizeof(key), "%" JSON_INTEGER_FORMAT, json_integer_value(seq));
	a = json_object_get(ev->alloc_by_seq_, key);
	if (!a) {
		a = json_pack("{s:O, s:O?}", "seq", seq, "bytes", bytes);
		json_array_append_new(ev->allocations, a);
		json_object_set(ev->alloc_by_seq_, key, a);
		return;
	}
	had = json_object_get(a, "bytes");
	if (json_is_number(bytes) && (!json_is_number(had) ||
				      json_number_value(bytes) > json_number_value(had)))
		json_object_set(a, "bytes", bytes);
}

/* A process's `cost` event, added to the run's (unknown names ignored). */
static void add_cost(struct run_events *ev, json_t *o)
{
	json_t *secs = json_object_get(o, "seconds"), *v;
	const char *name;
	int m;

	if (!json_is_number(json_object_get(o, "injected_seconds")) || !json_is_object(secs))
		return;
	ev->has_cost = 1;
	ev->injected_seconds += json_number_value(json_object_get(o, "injected_seconds"));
	json_object_foreach(secs, name, v)
		if ((m = run_cost_mechanism_of(name)) >= 0 && json_is_number(v) &&
		    json_number_value(v) >= 0)
			ev->cost_seconds[m] += json_number_value(v);
}

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
	} else if (!strcmp(type, "rank")) {
		json_t *r = json_object_get(o, "rank");
		size_t i;

		if (json_is_integer(r) && json_integer_value(r) >= 0 &&
		    json_integer_value(r) < (1 << 30)) {
			if (ev->file_rank_ == -1)
				ev->file_rank_ = (int)json_integer_value(r);
			for (i = 0; i < ev->nr_ranks && ev->ranks[i] != (int)json_integer_value(r); i++)
				;
			if (i == ev->nr_ranks) {
				ev->ranks = xrealloc(ev->ranks, (ev->nr_ranks + 1) * sizeof(*ev->ranks));
				ev->ranks[ev->nr_ranks++] = (int)json_integer_value(r);
			}
		}
	} else if (!strcmp(type, "cost")) {
		add_cost(ev, o);
	} else if (!strcmp(type, "device")) {
		/* the GPU of the process's first context (a job's rank) */
		if (!ev->gpu && str(o, "pci_bus_id"))
			ev->gpu = xstrdup(str(o, "pci_bus_id"));
	} else if (!strcmp(type, "module")) {
		struct event_module *m;
		ALLOC_GROW(ev->modules, ev->nr_modules + 1, ev->alloc_modules);
		m = &ev->modules[ev->nr_modules++];
		memset(m, 0, sizeof(*m));
		m->id = xstrdup(str(o, "id") ? str(o, "id") : "unknown");
		m->origin = str(o, "origin") ? xstrdup(str(o, "origin")) : NULL;
		m->path = str(o, "path") ? xstrdup(str(o, "path")) : NULL;
		m->ptx_file = str(o, "ptx_file") ? xstrdup(str(o, "ptx_file")) : NULL;
		m->triton = json_is_object(json_object_get(o, "triton")) ?
			    json_incref(json_object_get(o, "triton")) : NULL;
		m->has_ptx = json_is_true(json_object_get(o, "has_ptx"));
		m->substituted = json_is_true(json_object_get(o, "substituted"));
		if (str(o, "substitute_error"))
			m->substitute_error = xstrdup(str(o, "substitute_error"));
	} else if (!strcmp(type, "launch")) {
		struct event_kernel *k = kernel_of(ev, o);
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
		join_set(ev, "seq_correlation", json_integer_value(json_object_get(o, "seq")),
			 json_incref(json_object_get(o, "correlation")));
		if (json_is_integer(json_object_get(o, "correlation")))
			join_set(ev, "correlation_launch",
				 json_integer_value(json_object_get(o, "correlation")), json_true());
		json_array_append_new(ev->launch_sequence,
			json_pack("{s:O?, s:s, s:O?}", "seq", json_object_get(o, "seq"),
				  "kernel", k->name, "args", json_object_get(o, "args")));
	} else if (!strcmp(type, "alloc")) {
		add_allocation(ev, json_object_get(o, "seq"),
			       json_object_get(o, "bytes"));
	} else if (!strcmp(type, "metrics_config")) {
		json_decref(ev->metric_names);
		ev->metric_names = json_incref(json_object_get(o, "metrics"));
	} else if (!strcmp(type, "metrics")) {
		struct event_kernel *k = kernel_of(ev, o);
		json_t *vals = json_object_get(o, "values");
		const char *variant = str(o, "variant");

		if (variant) {
			json_t *sum;

			if (!k->variants)
				k->variants = json_object();
			sum = json_object_get(k->variants, variant);
			if (!sum) {
				sum = json_object();
				json_object_set_new(k->variants, variant, sum);
			}
			add_values(sum, vals);
			json_object_set_new(sum, "samples", json_integer(
				json_integer_value(json_object_get(sum, "samples")) + 1));
			/* each sample's hits apart: a pair is compared with its singles there */
			if (json_is_number(json_object_get(vals, "l1_hits")) &&
			    json_is_integer(json_object_get(o, "ordinal"))) {
				json_t *at;
				char ord[48];

				if (!k->variant_hits_at)
					k->variant_hits_at = json_object();
				at = json_object_get(k->variant_hits_at, variant);
				if (!at) {
					at = json_object();
					json_object_set_new(k->variant_hits_at, variant, at);
				}
				/* ordinals are per process (event_hits_at) */
				snprintf(ord, sizeof(ord), "%d:%lld", ev->file_rank_ >= 0 ?
					 ev->file_rank_ : -1 - ev->files_, (long long)json_integer_value(
					 json_object_get(o, "ordinal")));
				json_object_set(at, ord, json_object_get(vals, "l1_hits"));
			}
			return;
		}
		if (!k->metrics)
			k->metrics = json_object();
		add_values(k->metrics, vals);
		k->metric_launches++;
	} else if (!strcmp(type, "kernel_time")) {
		/* joined once the process's file is read: which record of a
		 * launch is the program's own is known only then */
		push(&ev->pending_, "times", json_incref(o));
	} else if (!strcmp(type, "version")) {
		json_t *corr = join_get(ev, "seq_correlation", json_integer_value(json_object_get(o, "seq")));

		if (corr && str(o, "version"))
			join_set(ev, "correlation_version", json_integer_value(corr),
				 json_string(str(o, "version")));
	} else if (!strcmp(type, "attribute") || !strcmp(type, "carveout") ||
		   !strcmp(type, "carveout_replay_time")) {
		handle_carveout(ev, type, o);
	} else if (!strcmp(type, "replay")) {
		struct event_kernel *k = kernel_of(ev, o);

		if (!k->replays)
			k->replays = json_array();
		json_array_append(k->replays, o);
	} else if (!strcmp(type, "replay_refused")) {
		struct event_kernel *k = kernel_of(ev, o);

		if (!k->replay_refused)
			k->replay_refused = json_array();
		json_array_append_new(k->replay_refused, json_string(str(o, "reason") ? str(o, "reason") : "?"));
	} else if (!strcmp(type, "replay_time")) {
		push(&ev->pending_, "replays", json_incref(o));
	} else if (!strcmp(type, "counters")) {
		struct event_kernel *k = kernel_of(ev, o);
		json_t *vals = json_object_get(o, "values");
		size_t i, n = json_array_size(vals);

		if (k->nr_counters < n) {
			k->counters = xrealloc(k->counters, n * sizeof(*k->counters));
			memset(k->counters + k->nr_counters, 0, (n - k->nr_counters) * sizeof(*k->counters));
			k->nr_counters = n;
		}
		for (i = 0; i < n; i++)
			k->counters[i] += (uint64_t)json_integer_value(json_array_get(vals, i));
		k->counter_launches++;
	}
}

/* One kernel_time record, for joining at the end of its process's file. */
struct kernel_record {
	json_t *o;
	json_int_t corr, start, end;
	size_t order;          /* its place in the file */
};

static int cmp_record(const void *a, const void *b)
{
	const struct kernel_record *x = a, *y = b;

	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* A record of the program's own launch (or of a launch no event names). */
static void add_launch_record(struct run_events *ev, struct event_kernel *k,
			      const struct kernel_record *r)
{
	json_t *version = join_get(ev, "correlation_version", r->corr);
	json_t *carveout = join_get(ev, "correlation_carveout", r->corr);

	if (r->end <= r->start)
		return;
	if (join_get(ev, "correlation_launch", r->corr)) {
		k->program_gpu_time_ns += (uint64_t)(r->end - r->start);
		k->program_timed_launches++;
	}
	if (version)
		push(&k->version_ns, json_string_value(version), json_integer(r->end - r->start));
	if (carveout)
		push(&k->carveout_ns, json_string_value(carveout), json_integer(r->end - r->start));
}

/*
 * Joins the kernel_time records and replay times of one process's file.
 * The library's replays run inside the program's launch call, before the
 * launch itself and synchronised, and CUPTI gives their records the
 * launch's correlation id: of a launch's records, the last to start is the
 * program's own, the earlier ones are the replays, in the order of the
 * replay_time (carveout_replay_time) events naming the launch's seq. Where
 * the counts agree, a replay's time is its activity record's, as for the
 * program's launches; else the library's CUDA-event time, which also holds
 * the launch latency (about 8 us on an H100).
 */
static void join_pending(struct run_events *ev)
{
	json_t *times = json_object_get(ev->pending_, "times");
	json_t *replays = json_object_get(ev->pending_, "replays"), *o;
	size_t n = json_array_size(times), nr = json_array_size(replays), i, j, x, m;
	struct kernel_record *recs = xcalloc(n + 1, sizeof(*recs));
	json_int_t *rep_corr = xcalloc(nr + 1, sizeof(*rep_corr));
	json_int_t *rep_ns = xcalloc(nr + 1, sizeof(*rep_ns));

	json_array_foreach(replays, i, o) {
		json_t *seq = json_object_get(o, "seq"), *corr = NULL;

		if (json_is_integer(seq))
			corr = join_get(ev, "seq_correlation", json_integer_value(seq));
		rep_corr[i] = json_is_integer(corr) ? json_integer_value(corr) : -1;
		rep_ns[i] = (json_int_t)json_number_value(json_object_get(o, "ns"));
	}
	json_array_foreach(times, i, o)
		recs[i] = (struct kernel_record){ o, json_integer_value(json_object_get(o, "correlation")),
						  json_integer_value(json_object_get(o, "start")),
						  json_integer_value(json_object_get(o, "end")), i };
	qsort(recs, n, sizeof(*recs), cmp_record);
	for (i = 0; i < n; i = j) {
		int launch = join_get(ev, "correlation_launch", recs[i].corr) != NULL;

		for (j = i; j < n && recs[j].corr == recs[i].corr; j++) {
			struct event_kernel *k = kernel_of(ev, recs[j].o);

			if (recs[j].end > recs[j].start)
				k->gpu_time_ns += (uint64_t)(recs[j].end - recs[j].start);
			k->timed_launches++;
			k->static_shared = (int)json_integer_value(json_object_get(recs[j].o, "static_shared"));
			k->registers = (int)json_integer_value(json_object_get(recs[j].o, "registers"));
			if (!launch)
				add_launch_record(ev, k, &recs[j]);
		}
		if (!launch)
			continue;
		add_launch_record(ev, kernel_of(ev, recs[j - 1].o), &recs[j - 1]);
		for (x = 0, m = 0; x < nr; x++)
			m += rep_corr[x] == recs[i].corr;
		if (!m || m != j - 1 - i)
			continue;
		for (x = 0, m = i; x < nr; x++) {
			if (rep_corr[x] != recs[i].corr)
				continue;
			if (recs[m].end > recs[m].start)
				rep_ns[x] = recs[m].end - recs[m].start;
			m++;
		}
	}
	json_array_foreach(replays, i, o) {
		int carve = !strcmp(str(o, "ev"), "carveout_replay_time");
		const char *label = str(o, carve ? "setting" : "version");
		struct event_kernel *k = kernel_of(ev, o);

		if (label)
			push(carve ? &k->carveout_replay_ns : &k->replay_ns, label, json_integer(rep_ns[i]));
	}
	free(recs);
	free(rep_corr);
	free(rep_ns);
	json_decref(ev->pending_);
	ev->pending_ = NULL;
}

/* One process's file. */
static int load_file(struct run_events *ev, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char *line, *next;
	FILE *f = fopen(path, "rb");

	ev->file_rank_ = -1;
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return error_set(CA_E_INPUT, "cannot read '%s': %s", path, strerror(errno));
	}
	fclose(f);
	if (strbuf_read_file(&sb, path, 0))
		return CA_E_INPUT;
	/* seq and correlation numbers are per process */
	json_decref(ev->join_);
	ev->join_ = NULL;
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
	join_pending(ev);
	ev->files_++;
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

/*
 * Reads path again into the events of the rank its process named, when it
 * named exactly one (a process's rank does not change).
 */
static int load_rank_file(struct run_events *ev, const char *path)
{
	struct run_events *one = xmalloc(sizeof(*one)), *into;
	int ret, rank;

	run_events_init(one);
	ret = load_file(one, path);
	if (ret || one->nr_ranks != 1) {
		run_events_release(one);
		free(one);
		return ret;
	}
	rank = one->ranks[0];
	into = run_events_of_rank(ev, rank);
	if (!into) {
		ev->rank_events = xrealloc(ev->rank_events,
					   (ev->nr_rank_events + 1) * sizeof(*ev->rank_events));
		ev->rank_events[ev->nr_rank_events].rank = rank;
		ev->rank_events[ev->nr_rank_events++].ev = one;
		return 0;
	}
	/* a second process of the same rank (a wrapper's child): read into it */
	run_events_release(one);
	free(one);
	return load_file(into, path);
}

/* rank_events in the order of ev->ranks */
static void order_rank_events(struct run_events *ev)
{
	struct run_events_rank *sorted;
	size_t i, j, n = 0;

	if (!ev->nr_rank_events)
		return;
	sorted = xcalloc(ev->nr_rank_events, sizeof(*sorted));
	for (i = 0; i < ev->nr_ranks; i++)
		for (j = 0; j < ev->nr_rank_events; j++)
			if (ev->rank_events[j].rank == ev->ranks[i])
				sorted[n++] = ev->rank_events[j];
	free(ev->rank_events);
	ev->rank_events = sorted;
	ev->nr_rank_events = n;
}

int run_events_load(struct run_events *ev, const char *path)
{
	const char *base = strrchr(path, '/');
	int ret, all_exited;
	size_t n = 0, i;
	long *pids = NULL;
	char *dir;

	ret = load_file(ev, path);
	if (!ret && ev->file_rank_ >= 0)   /* a job's process: its rank apart too */
		ret = load_rank_file(ev, path);
	base = base ? base + 1 : path;
	if (ret || strcmp(base, "events.jsonl")) {
		order_rank_events(ev);
		return ret;
	}
	dir = base == path ? xstrdup(".") : xstrndup(path, (size_t)(base - path - 1));
	pids = other_processes(dir, &n);
	/* the run exited cleanly only if every process that started did */
	all_exited = !ev->saw_start || ev->saw_exit;
	for (i = 0; i < n && !ret; i++) {
		char *other = xasprintf("%s/events.%ld.jsonl", dir, pids[i]);
		int had_start = ev->saw_start;

		ev->saw_start = ev->saw_exit = 0;
		ret = load_file(ev, other);
		if (!ret && ev->file_rank_ >= 0)
			ret = load_rank_file(ev, other);
		if (ev->saw_start && !ev->saw_exit)
			all_exited = 0;
		ev->saw_start |= had_start;
		free(other);
	}
	ev->saw_exit = ev->saw_start && all_exited;
	order_rank_events(ev);
	free(pids);
	free(dir);
	return ret;
}
