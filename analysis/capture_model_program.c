/* The capture model (analysis/capture_model_internal.h): program, options, device. */
#include "analysis/capture_model_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/xalloc.h"

int capture_read_program(const struct rd *r, json_t *o, struct capture_program *p)
{
	int ret;

	p->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "program")) ||
	    (ret = capture_rd_str(r, o, "program", "path", &p->path, 0)) ||
	    (ret = capture_rd_str(r, o, "program", "cwd", &p->cwd, 0)))
		return ret;
	return capture_rd_strings(r, o, "program", "args", &p->args, &p->nr_args, NULL);
}

json_t *capture_program_json(const struct capture_program *prog)
{
	json_t *p = capture_start(prog->source);

	capture_put_str(p, "path", prog->path);
	if (prog->nr_args || json_object_get(p, "args"))
		json_object_set_new(p, "args", capture_strings_json(prog->args, prog->nr_args));
	capture_put_str(p, "cwd", prog->cwd);
	return p;
}

void capture_program_release(struct capture_program *p)
{
	free(p->path);
	capture_free_strings(p->args, p->nr_args);
	free(p->cwd);
}

int capture_read_options(const struct rd *r, json_t *o, struct capture_options *p)
{
	int ret;

	p->source = SEC(o);
	if ((ret = capture_rd_object(r, o, "options")) ||
	    (ret = capture_rd_intv(r, o, "options", "top", &p->top, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, "options", "min_share", &p->min_share, NUM_COUNT)) ||
	    (ret = capture_rd_intv(r, o, "options", "max_loads", &p->max_loads, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_str(r, o, "options", "model", &p->model, 0)) ||
	    (ret = capture_rd_str(r, o, "options", "bypass_form", &p->bypass_form, 0)) ||
	    (ret = capture_rd_str(r, o, "options", "kernels_regex", &p->kernels_regex, 0)) ||
	    (ret = capture_rd_intv(r, o, "options", "repeat", &p->repeat, 0, CAPTURE_LIST_MAX, -1)) ||
	    (ret = capture_rd_num(r, o, "options", "timeout", &p->timeout, NUM_COUNT)) ||
	    (ret = capture_rd_bool(r, o, "options", "l2_priority", &p->l2_priority)))
		return ret;
	if (p->model && strcmp(p->model, "sector") && strcmp(p->model, "classic"))
		return capture_fail(r, "options", "model", "\"%s\" is not a model: sector or classic",
				    p->model);
	return 0;
}

json_t *capture_options_json(const struct capture_options *op)
{
	json_t *p = capture_start(op->source);

	capture_put_int(p, "top", op->top, -1);
	capture_put_num(p, "min_share", op->min_share);
	capture_put_int(p, "max_loads", op->max_loads, -1);
	capture_put_str(p, "model", op->model);
	capture_put_str(p, "bypass_form", op->bypass_form);
	capture_put_str(p, "kernels_regex", op->kernels_regex);
	capture_put_int(p, "repeat", op->repeat, -1);
	capture_put_num(p, "timeout", op->timeout);
	capture_put_bool(p, "l2_priority", op->l2_priority);
	return p;
}

void capture_options_release(struct capture_options *op)
{
	free(op->model);
	free(op->bypass_form);
	free(op->kernels_regex);
}

int capture_read_device(const struct rd *r, json_t *o, struct capture *cap)
{
	json_t *copy;
	char *name;
	int ret;

	if (!json_is_object(o))
		return capture_fail(r, "device", NULL, "not an object");
	/* device.json's reader checks the sizes; the capture's copy may
	 * predate its "schema" member */
	copy = json_copy(o);
	if (!json_object_get(copy, "schema"))
		json_object_set_new(copy, "schema", json_string(DEVICE_MODEL_SCHEMA));
	name = xasprintf("%s: device", r->name);
	ret = device_model_from_json(&cap->device, copy, name);
	free(name);
	json_decref(copy);
	if (ret) {
		/* device.json's message, said of the capture's field */
		const char *m = error_message(), *p = strstr(m, "': ");
		char *why = xstrdup(p ? p + 3 : m);

		ret = capture_fail(r, "device", NULL, "%s", why);
		free(why);
		return ret;
	}
	/* the capture says where the model came from as the profile saw it */
	{
		const char *src = json_string_value(json_object_get(o, "source"));

		if (src && !strcmp(src, "defaults"))
			cap->device.source = DEVICE_MODEL_DEFAULTS;
	}
	cap->has_device = 1;
	cap->device_json = SEC(o);
	return capture_rd_str(r, o, "device", "partitioned", &cap->device_partitioned, 0);
}
