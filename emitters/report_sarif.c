#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emitters/capture_layout.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "emitters/report.h"

/*
 * hints.sarif: SARIF 2.1.0 (docs/sarif.md), one result per decided load,
 * so editors and code-review tools show the advice on the source line.
 */

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"

struct rule {
	const char *id;
	const char *name;
	const char *short_text;
	const char *full_text;
	const char *level;
};

static const struct rule rules[] = {
	{ "cacheadvise/bypass-l1", "BypassL1",
	  "This global load should bypass L1 (L1::no_allocate)",
	  "Measured per-load L1 hits show that letting this load allocate in L1 costs more L2 "
	  "traffic than it saves: it evicts lines other loads reuse. Load it with "
	  "ld.global.L1::no_allocate (source.patch does it with an inline-PTX helper).",
	  "warning" },
	{ "cacheadvise/cache-l1", "CacheL1",
	  "This global load should stay cached in L1",
	  "Measured per-load L1 hits show that this load's L1 hits save L2 traffic: keep it a "
	  "plain (weak) load, or mark it L1::evict_last where advised.",
	  "note" },
};

static size_t rule_index(const char *decision)
{
	return !strcmp(decision, "bypass") ? 0 : 1;
}

/* Percent-encodes a path for a URI reference ('/' kept). Caller frees. */
static char *uri_encode(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	const unsigned char *p;

	for (p = (const unsigned char *)path; *p; p++) {
		if (isalnum(*p) || strchr("-._~/", *p))
			strbuf_addch(&sb, *p);
		else
			strbuf_addf(&sb, "%%%02X", *p);
	}
	return strbuf_detach(&sb, NULL);
}

static char *dir_uri(const char *dir)
{
	char buf[PATH_MAX];
	const char *abs = realpath(dir, buf) ? buf : dir;
	char *enc = uri_encode(abs);
	char *ret = xasprintf("file://%s%s", enc, enc[0] && enc[strlen(enc) - 1] == '/' ? "" : "/");

	free(enc);
	return ret;
}

static json_t *text_obj(const char *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "text", json_string(s));
	return o;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

static json_t *location(const struct report_input *in, const struct report_kernel *k,
			const struct report_load *l)
{
	json_t *loc = json_object(), *phys = json_object(), *art = json_object();
	json_t *region = json_object(), *logical = json_array(), *ll = json_object();
	char *label = report_kernel_label(k), *uri;

	if (l->hint.path && l->line) {
		const struct report_source *src = &in->sources[l->hint.source_index];
		uri = uri_encode(src->path);
		if (src->under_root) {
			json_object_set_new(art, "uri", json_string(uri));
			json_object_set_new(art, "uriBaseId", json_string("SRCROOT"));
		} else {
			char *u = xasprintf("file://%s", uri);
			json_object_set_new(art, "uri", json_string(u));
			free(u);
		}
		json_object_set_new(region, "startLine", json_integer(l->line));
		if (l->hint.has_span)
			json_object_set_new(region, "startColumn",
					    json_integer((json_int_t)l->hint.span_begin + 1));
		if (l->hint.source_text)
			json_object_set_new(region, "snippet", text_obj(l->hint.source_text));
	} else {
		/* Without -lineinfo the PTX line is the best location there is. */
		uri = uri_encode(l->hint.ptx_path ? l->hint.ptx_path : CAPTURE_LAYOUT_CAPTURE);
		json_object_set_new(art, "uri", json_string(uri));
		json_object_set_new(art, "uriBaseId", json_string("CAPTUREDIR"));
		json_object_set_new(region, "startLine", json_integer(l->ptx_line ? l->ptx_line : 1));
		if (l->hint.ptx_text)
			json_object_set_new(region, "snippet", text_obj(l->hint.ptx_text));
	}
	free(uri);
	json_object_set_new(phys, "artifactLocation", art);
	json_object_set_new(phys, "region", region);
	json_object_set_new(loc, "physicalLocation", phys);
	json_object_set_new(ll, "name", json_string(label));
	json_object_set_new(ll, "fullyQualifiedName", json_string(k->demangled ? k->demangled :
								  k->name));
	json_object_set_new(ll, "decoratedName", json_string(k->name));
	json_object_set_new(ll, "kind", json_string("function"));
	json_array_append_new(logical, ll);
	json_object_set_new(loc, "logicalLocations", logical);
	free(label);
	return loc;
}

static json_t *result(const struct report_input *in, const struct report_kernel *k,
		      const struct report_load *l)
{
	const struct rule *r = &rules[rule_index(l->decision)];
	json_t *res = json_object(), *locs = json_array(), *props = json_object(), *fp = json_object();
	char *label = report_kernel_label(k), *saved = report_load_saving(l);
	char *hits = report_load_hits_phrase(l);
	char *msg, *key;

	msg = xasprintf("%s load %u (%s): %s; %s%s%s. %s%s", label, l->ordinal,
			l->instruction, l->changes ? report_action_phrase(l->action) : "keep as is",
			*hits ? hits : "L1 hits unmeasured", *saved ? ", " : "", saved,
			l->hint.message ? l->hint.message : "", l->hint.message ? "." : "");
	json_object_set_new(res, "ruleId", json_string(r->id));
	json_object_set_new(res, "ruleIndex", json_integer((json_int_t)rule_index(l->decision)));
	json_object_set_new(res, "level", json_string(l->changes ? "warning" : "note"));
	json_object_set_new(res, "message", text_obj(msg));
	json_array_append_new(locs, location(in, k, l));
	json_object_set_new(res, "locations", locs);
	key = xasprintf("%s:%s:%u", k->module, k->name, l->ordinal);
	json_object_set_new(fp, "cacheadviseLoad/v1", json_string(key));
	json_object_set_new(res, "partialFingerprints", fp);
	json_object_set_new(props, "module", json_string(k->module));
	json_object_set_new(props, "kernel", json_string(k->name));
	json_object_set_new(props, "ordinal", json_integer(l->ordinal));
	json_object_set_new(props, "decision", json_string(l->decision));
	json_object_set_new(props, "action", l->action ? json_string(l->action) : json_null());
	json_object_set_new(props, "hit", num_or_null(l->hit));
	json_object_set_new(props, "l1HitsEnabled", num_or_null(l->hit));
	json_object_set_new(props, "access", num_or_null(l->access));
	json_object_set_new(props, "hitRate", num_or_null(l->hit_rate));
	json_object_set_new(props, "trafficSavedBytes", num_or_null(l->traffic_saved_bytes));
	json_object_set_new(props, "bypassAvoidsBytes", num_or_null(l->bypass_avoids_bytes));
	json_object_set_new(props, "sourcePatch", json_string(source_hint_status_name(l->hint.status)));
	json_object_set_new(res, "properties", props);
	free(key);
	free(msg);
	free(label);
	free(saved);
	free(hits);
	return res;
}

static int render_sarif(const struct report_input *in, const struct report_options *opt,
			struct strbuf *out)
{
	json_t *doc = json_object(), *runs = json_array(), *run = json_object();
	json_t *tool = json_object(), *driver = json_object(), *jrules = json_array();
	json_t *results = json_array(), *bases = json_object(), *b;
	size_t i, j;
	char *s;

	(void)opt;
	json_object_set_new(doc, "$schema", json_string(SARIF_SCHEMA));
	json_object_set_new(doc, "version", json_string("2.1.0"));
	json_object_set_new(driver, "name", json_string("cacheadvise"));
	json_object_set_new(driver, "version", json_string(CACHEADVISE_VERSION));
	for (i = 0; i < ARRAY_SIZE(rules); i++) {
		json_t *r = json_object(), *cfg = json_object();
		json_object_set_new(r, "id", json_string(rules[i].id));
		json_object_set_new(r, "name", json_string(rules[i].name));
		json_object_set_new(r, "shortDescription", text_obj(rules[i].short_text));
		json_object_set_new(r, "fullDescription", text_obj(rules[i].full_text));
		json_object_set_new(cfg, "level", json_string(rules[i].level));
		json_object_set_new(r, "defaultConfiguration", cfg);
		json_array_append_new(jrules, r);
	}
	json_object_set_new(driver, "rules", jrules);
	json_object_set_new(tool, "driver", driver);
	json_object_set_new(run, "tool", tool);
	if (in->source_root) {
		char *u = dir_uri(in->lookup_root ? in->lookup_root : in->source_root);
		b = json_object();
		json_object_set_new(b, "uri", json_string(u));
		json_object_set_new(bases, "SRCROOT", b);
		free(u);
	}
	s = dir_uri(in->dir);
	b = json_object();
	json_object_set_new(b, "uri", json_string(s));
	json_object_set_new(bases, "CAPTUREDIR", b);
	free(s);
	json_object_set_new(run, "originalUriBaseIds", bases);
	for (i = 0; i < in->nr_kernels; i++) {
		const struct report_kernel *k = &in->kernels[i];
		for (j = 0; j < k->nr_loads; j++) {
			const struct report_load *l = &k->loads[j];
			if (strcmp(l->decision, "bypass") && strcmp(l->decision, "cache"))
				continue;
			json_array_append_new(results, result(in, k, l));
		}
	}
	json_object_set_new(run, "results", results);
	json_array_append_new(runs, run);
	json_object_set_new(doc, "runs", runs);
	s = json_to_string(doc);
	strbuf_addstr(out, s);
	strbuf_addch(out, '\n');
	free(s);
	json_decref(doc);
	return 0;
}

const struct report_format report_format_sarif = { "sarif", CAPTURE_LAYOUT_HINTS_SARIF, render_sarif };
