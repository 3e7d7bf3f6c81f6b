#ifndef CACHEADVISE_PLAN_H
#define CACHEADVISE_PLAN_H

#include <stddef.h>

#include <jansson.h>

#include "analysis/ptx.h"

/*
 * plan.json ("cacheadvise.plan/1", docs/plan-json.md): the advice every
 * capability shares. The load section says, per module and function, which
 * action each load gets. Other sections ("l2_windows", "software_cache",
 * "register_cache", ...) are kept in `extra` as JSON so a plan round-trips
 * through this module without losing what it does not model.
 */

struct plan_load {
	unsigned ordinal;
	enum load_action action;    /* the L1 form; LOAD_ACTION_AS_BUILT: as built */
	enum l2_priority l2;        /* L2_PRIORITY_NONE: the L2 side as built */
};

struct plan_function {
	char *name;
	struct plan_load *loads;
	size_t nr_loads, alloc_loads;
};

struct plan_module {
	char *id;                   /* NULL: applies to every module with the function */
	struct plan_function *functions;
	size_t nr_functions, alloc_functions;
};

/* The arrays grow through plan_set, plan_set_l2 and plan_from_json only. */
struct plan {
	struct plan_module *modules;
	size_t nr_modules, alloc_modules;
	json_t *extra;              /* object of the other top-level sections (owned) */
};

void plan_init(struct plan *p);
void plan_release(struct plan *p);

/* The ids the plan's modules name (those with one), *n of them, borrowed
 * from the plan in a new array (caller frees the array). */
const char **plan_module_ids(const struct plan *p, size_t *n);

/*
 * Reads plan.json. Returns 0, or CA_E_INPUT with a message naming the file
 * and the JSON path of the bad item ("modules[0].functions[1].loads[2].action:
 * unknown action 'foo'"). Time linear in the plan's entries (plus sorting
 * its loads once to find one given twice), whatever their number.
 */
int plan_load_file(struct plan *p, const char *path);
int plan_from_json(struct plan *p, json_t *doc, const char *name);
/* A new JSON document (caller owns) / written atomically to path. */
json_t *plan_to_json(const struct plan *p);

/* A top-level section of the plan other than its loads ("l2_windows"), as
 * written (borrowed), or NULL when the plan has none or it is null. */
json_t *plan_extra_section(const struct plan *p, const char *key);
int plan_write_file(const struct plan *p, const char *path);

/* Adds (or replaces) one load's L1 action, keeping its L2 priority. id may be NULL. */
void plan_set(struct plan *p, const char *module_id, const char *function,
	      unsigned ordinal, enum load_action action);
/* Adds (or replaces) one load's L2 priority, keeping its L1 action (a new
 * entry keeps the L1 form as built). */
void plan_set_l2(struct plan *p, const char *module_id, const char *function,
		 unsigned ordinal, enum l2_priority l2);

/*
 * The edits that apply to a module with the given id: entries with that id
 * and entries without an id, for functions the module has. Returns the
 * number of edits written to *edits (caller frees the array; the strings
 * point into p and m).
 */
size_t plan_edits_for_module(const struct plan *p, const char *module_id,
			     const struct ptx_module *m, struct ptx_load_edit **edits);

#endif
