#include "analysis/monitor_counts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/capture_model.h"
#include "analysis/ptx_instrument.h"
#include "base/error.h"
#include "base/xalloc.h"

void monitor_counts_init(struct monitor_counts *mc)
{
	memset(mc, 0, sizeof(*mc));
}

void monitor_counts_release(struct monitor_counts *mc)
{
	size_t i;

	for (i = 0; i < mc->nr_functions; i++) {
		free(mc->functions[i].name);
		free(mc->functions[i].loads);
		free(mc->functions[i].ds);
	}
	free(mc->functions);
	monitor_counts_init(mc);
}

/* A non-negative integer field, at most max; CA_E_INPUT naming path.key. */
static int get_index(const json_t *obj, const char *key, const char *path, json_int_t max,
		     json_int_t *out)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return error_set(CA_E_INPUT, "monitor layout: %s.%s must be an integer from 0 to %lld",
				 path, key, (long long)max);
	*out = json_integer_value(v);
	return 0;
}

static int read_function(struct monitor_function *mf, const json_t *jf, size_t fi,
			 json_int_t slots, const uint64_t *counters)
{
	const json_t *jloads = json_object_get(jf, "loads");
	const json_t *jds = json_object_get(jf, "data_structures");
	const json_t *name = json_object_get(jf, "name");
	const char *kind = json_string_value(json_object_get(jf, "kind"));
	char path[96];
	size_t i;
	int ret;

	if (!json_is_object(jf) || !json_is_string(name))
		return error_set(CA_E_INPUT, "monitor layout: functions[%zu] needs a \"name\"", fi);
	if (!json_is_array(jloads) || (jds && !json_is_array(jds)))
		return error_set(CA_E_INPUT, "monitor layout: functions[%zu]: \"loads\" and \"data_structures\" must be arrays",
				 fi);
	mf->name = xstrdup(json_string_value(name));
	mf->is_entry = !kind || !strcmp(kind, "entry");
	mf->loads = xcalloc(json_array_size(jloads) + 1, sizeof(*mf->loads));
	for (i = 0; i < json_array_size(jloads); i++) {
		const json_t *jl = json_array_get(jloads, i);
		json_int_t ord = 0, s[4] = { 0, 0, 0, 0 };
		static const char *const keys[4] = { "requests", "sectors", "lines", "bytes" };
		int k;

		snprintf(path, sizeof(path), "functions[%zu].loads[%zu]", fi, i);
		ret = get_index(jl, "ordinal", path, 0xffffffff, &ord);
		for (k = 0; !ret && k < 4; k++)
			ret = get_index(jl, keys[k], path, slots - 1, &s[k]);
		if (ret)
			return ret;
		mf->loads[i].ordinal = (unsigned)ord;
		mf->loads[i].requests = counters[s[0]];
		mf->loads[i].sectors = counters[s[1]];
		mf->loads[i].lines = counters[s[2]];
		mf->loads[i].bytes = counters[s[3]];
		mf->nr_loads++;
	}
	mf->ds = xcalloc(json_array_size(jds) + 1, sizeof(*mf->ds));
	for (i = 0; i < json_array_size(jds); i++) {
		const json_t *jd = json_array_get(jds, i), *ro;
		json_int_t param = 0, hits = 0, acc = 0;

		snprintf(path, sizeof(path), "functions[%zu].data_structures[%zu]", fi, i);
		ret = get_index(jd, "param", path, 0xffff, &param);
		if (!ret)
			ret = get_index(jd, "hits", path, slots - 1, &hits);
		if (!ret)
			ret = get_index(jd, "accesses", path, slots - 1, &acc);
		if (ret)
			return ret;
		ro = json_object_get(jd, "read_only");
		mf->ds[i].param = (int)param;
		mf->ds[i].read_only = json_is_boolean(ro) ? json_is_true(ro) : -1;
		mf->ds[i].sim_hits = counters[hits];
		mf->ds[i].sim_accesses = counters[acc];
		mf->nr_ds++;
	}
	return 0;
}

static unsigned get_size(const json_t *layout, const char *key, unsigned def)
{
	const json_t *v = json_object_get(layout, key);

	return json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= 1 << 20
		       ? (unsigned)json_integer_value(v)
		       : def;
}

int monitor_counts_read(struct monitor_counts *mc, const json_t *layout,
			const uint64_t *counters, size_t nr_counters)
{
	const json_t *jfunctions;
	const char *schema;
	json_int_t slots = 0;
	size_t i;
	int ret;

	monitor_counts_release(mc);
	if (!json_is_object(layout))
		return error_set(CA_E_INPUT, "monitor layout is not a JSON object");
	schema = json_string_value(json_object_get(layout, "schema"));
	if (schema && strcmp(schema, PTX_INSTRUMENT_LAYOUT_SCHEMA))
		return error_set(CA_E_INPUT, "monitor layout has schema \"%s\": expected \"%s\"", schema,
				 PTX_INSTRUMENT_LAYOUT_SCHEMA);
	ret = get_index(layout, "slots", "(top)", 1LL << 40, &slots);
	if (ret)
		return ret;
	if ((size_t)slots > nr_counters)
		return error_set(CA_E_INPUT, "monitor layout has %lld slots but only %zu counters were read",
				 (long long)slots, nr_counters);
	jfunctions = json_object_get(layout, "functions");
	if (!json_is_array(jfunctions))
		return error_set(CA_E_INPUT, "monitor layout: \"functions\" must be an array");
	mc->sector_bytes = get_size(layout, "sector_bytes", 32);
	mc->line_bytes = get_size(layout, "line_bytes", 128);
	mc->threshold = get_size(layout, "threshold", PTX_INSTRUMENT_DEFAULT_THRESHOLD);
	mc->functions = xcalloc(json_array_size(jfunctions) + 1, sizeof(*mc->functions));
	for (i = 0; i < json_array_size(jfunctions); i++) {
		mc->nr_functions++;
		ret = read_function(&mc->functions[i], json_array_get(jfunctions, i), i, slots,
				    counters);
		if (ret) {
			monitor_counts_release(mc);
			return ret;
		}
	}
	return 0;
}

const struct monitor_function *monitor_counts_find(const struct monitor_counts *mc,
						   const char *name)
{
	size_t i;

	for (i = 0; i < mc->nr_functions; i++)
		if (!strcmp(mc->functions[i].name, name))
			return &mc->functions[i];
	return NULL;
}

static void add_loads(const struct monitor_function *f, uint64_t *bytes, uint64_t *sectors,
		      uint64_t *lines)
{
	size_t i;

	for (i = 0; i < f->nr_loads; i++) {
		*bytes += f->loads[i].bytes;
		*sectors += f->loads[i].sectors;
		*lines += f->loads[i].lines;
	}
}

int monitor_counts_efficiency(const struct monitor_counts *mc, const char *name, int with_funcs,
			      double *e_on, double *e_off)
{
	const struct monitor_function *f = monitor_counts_find(mc, name);
	uint64_t bytes = 0, sectors = 0, lines = 0;
	size_t i;

	*e_on = *e_off = NAN;
	if (f)
		add_loads(f, &bytes, &sectors, &lines);
	if (with_funcs)
		for (i = 0; i < mc->nr_functions; i++)
			if (!mc->functions[i].is_entry && &mc->functions[i] != f)
				add_loads(&mc->functions[i], &bytes, &sectors, &lines);
	if (!bytes || !sectors || !lines)
		return -1;
	*e_on = (double)bytes / ((double)lines * mc->line_bytes);
	*e_off = (double)bytes / ((double)sectors * mc->sector_bytes);
	return 0;
}

int monitor_counts_update_kernel(const struct monitor_counts *mc, const struct capture_kernel *k,
				 int with_funcs)
{
	json_t *kernel = capture_section_json(k->source), *eff, *ds;
	const char *name = k->name;
	const struct monitor_function *f;
	double on, off;
	size_t i;

	if (!kernel || !name)
		return error_set(CA_E_INPUT, "monitor counts: the kernel was not read from capture.json");
	f = monitor_counts_find(mc, name);
	if (!f || !f->is_entry)
		return error_set(CA_E_INPUT, "kernel '%s' is not an entry of the monitor layout", name);
	for (i = 0; i < f->nr_loads; i++) {
		const struct monitor_load *ml = &f->loads[i];
		const struct capture_load *cl = capture_kernel_find_load(k, ml->ordinal);
		json_t *l = cl ? capture_section_json(cl->source) : NULL;

		if (!l)
			continue;   /* a load the capture does not list */
		json_object_set_new(l, "access", json_integer((json_int_t)ml->sectors));
		json_object_set_new(l, "requests", json_integer((json_int_t)ml->requests));
		json_object_set_new(l, "lines", json_integer((json_int_t)ml->lines));
		json_object_set_new(l, "bytes", json_integer((json_int_t)ml->bytes));
	}
	eff = json_object();
	if (monitor_counts_efficiency(mc, name, with_funcs, &on, &off) == 0) {
		json_object_set_new(eff, "on", json_real(on));
		json_object_set_new(eff, "off", json_real(off));
	} else {
		json_object_set_new(eff, "on", json_null());
		json_object_set_new(eff, "off", json_null());
	}
	json_object_set_new(kernel, "efficiency", eff);
	ds = json_array();
	for (i = 0; i < f->nr_ds; i++) {
		const struct monitor_ds *d = &f->ds[i];

		json_array_append_new(ds, json_pack("{s:i, s:o, s:I, s:I}", "param", d->param,
						    "read_only", d->read_only < 0 ? json_null()
										  : json_boolean(d->read_only),
						    "sim_hits", (json_int_t)d->sim_hits,
						    "sim_accesses", (json_int_t)d->sim_accesses));
	}
	json_object_set_new(kernel, "data_structures", ds);
	return 0;
}
