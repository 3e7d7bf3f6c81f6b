#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json_file.h"
#include "base/xalloc.h"
#include "collectors/probe_run.h"
#include "collectors/runner.h"

static char *helper_path(const char *exe_dir)
{
	const char *env = getenv("CACHEADVISE_PROBE");

	if (env && *env)
		return xstrdup(env);
	return xasprintf("%s/cacheadvise-probe", exe_dir);
}

/* The last non-empty line of text (a static-free copy, caller frees). */
static char *last_line(const char *text)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	return xstrndup(start, (size_t)(end - start));
}

static void now_iso8601(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int probe_run(const struct probe_run_options *opt, struct device_model *dm, struct strbuf *log)
{
	char tmpl[] = "/tmp/cacheadvise-probe-XXXXXX";
	char *dir, *helper = helper_path(opt->exe_dir), *out_path = NULL, *log_path = NULL, *reason = NULL;
	char devnum[16], buf[160];
	struct run_spec spec;
	struct run_result res;
	json_t *doc = NULL;
	int ret;

	device_model_init(dm);
	if (access(helper, X_OK)) {
		ret = error_set(CA_E_NOGPU,
				"no usable GPU: the probe helper '%s' is missing (this cacheadvise was "
				"built without CUDA, or the helper was not installed beside it)", helper);
		free(helper);
		return ret;
	}
	dir = mkdtemp(tmpl);
	if (!dir) {
		ret = error_set(CA_E_IO, "cannot create a temporary folder in /tmp: %s", strerror(errno));
		free(helper);
		return ret;
	}
	out_path = xasprintf("%s/device.json", dir);
	log_path = xasprintf("%s/probe.log", dir);
	snprintf(devnum, sizeof(devnum), "%d", opt->device);
	{
		char *argv[] = { helper, (char *)"--out", out_path, (char *)"--device", devnum,
				 opt->verbose ? (char *)"--verbose" : NULL, NULL };

		memset(&spec, 0, sizeof(spec));
		spec.argv = argv;
		spec.log_path = log_path;
		spec.timeout_seconds = opt->timeout;
		runner_install_interrupt_handler();
		ret = runner_run(&spec, &res);
	}
	if (ret)
		goto out;
	if (strbuf_read_file(log, log_path, 1 << 20))
		strbuf_reset(log);
	reason = last_line(log->buf);
	switch (res.status) {
	case RUN_OK:
		break;
	case RUN_INTERRUPTED:
		ret = error_set(CA_E_INTERRUPTED, "interrupted");
		goto out;
	case RUN_NOT_STARTED:
		ret = error_set(CA_E_NOGPU, "no usable GPU: %s", res.start_error);
		goto out;
	case RUN_TIMEOUT:
		ret = error_set(CA_E_INTERNAL, "the probe did not finish in %g s (try --timeout); "
				"its last words: %s", opt->timeout, *reason ? reason : "(none)");
		goto out;
	case RUN_FAILED:
		if (res.exit_code == 4) {
			ret = error_set(CA_E_NOGPU, "no usable GPU: %s",
					*reason ? reason : "the probe found none");
			goto out;
		}
		/* fall through */
	case RUN_SIGNALED:
		ret = error_set(CA_E_INTERNAL, "the probe helper '%s' %s: %s", helper,
				run_result_describe(&res, buf, sizeof(buf)),
				*reason ? reason : "(no message)");
		goto out;
	}

	doc = json_file_load(out_path);
	if (!doc) {
		ret = error_prefix(CA_E_INTERNAL, "the probe helper wrote no usable result");
		goto out;
	}
	ret = device_model_from_json(dm, doc, "the probe's result");
	if (!ret && (dm->source != DEVICE_MODEL_PROBE || !dm->uuid))
		ret = error_set(CA_E_INTERNAL, "the probe's result names no GPU UUID");
	if (ret) {
		ret = error_prefix(CA_E_INTERNAL, "the probe helper '%s' is out of step with this cacheadvise",
				   helper);
		goto out;
	}
	now_iso8601(buf, sizeof(buf));
	free(dm->created);
	dm->created = xstrdup(buf);
out:
	json_decref(doc);
	unlink(out_path);
	unlink(log_path);
	rmdir(dir);
	free(reason);
	free(out_path);
	free(log_path);
	free(helper);
	return ret;
}

int probe_keep(const struct probe_run_options *opt, const struct device_model *dm,
	       struct probe_kept *k)
{
	const char *output = opt->output;
	int ret;

	memset(k, 0, sizeof(*k));
	if (output && (ret = device_model_write_file(dm, output)))
		return ret;
	if (!opt->cache)
		return 0;
	ret = device_model_save_cached(dm);
	if (ret && !output) {
		char *why = xstrdup(error_message());

		ret = error_set(ret, "cannot cache the result (%s); use -o FILE to keep it", why);
		free(why);
		return ret;
	}
	if (ret)
		k->cache_error = xstrdup(error_message());
	else
		k->cached = 1;
	k->cache_path = device_model_cache_path(dm->uuid);
	return 0;
}

void probe_kept_release(struct probe_kept *k)
{
	free(k->cache_path);
	free(k->cache_error);
	memset(k, 0, sizeof(*k));
}
