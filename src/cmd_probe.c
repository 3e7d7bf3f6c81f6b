#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analysis/device_model.h"
#include "base/error.h"
#include "base/json_file.h"
#include "base/strbuf.h"
#include "base/xalloc.h"
#include "collectors/runner.h"
#include "src/cli.h"

/*
 * cacheadvise probe: runs the P-chase helper (device/probe.cu, built as
 * cacheadvise-probe beside this binary so the CLI itself never links the
 * CUDA driver), checks what it measured, writes device.json and caches it
 * per GPU UUID for `profile` (analysis/device_model.h).
 */

struct probe_options {
	int json;                   /* print the device model as JSON */
	const char *output;         /* -o FILE, or NULL */
	int cache;                  /* store under the cache folder */
	int device;                 /* GPU index */
	double timeout;             /* seconds for the helper */
	int verbose;                /* show the helper's progress */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cacheadvise probe [--json] [-o device.json] [--no-cache] [--device N]\n"
		"                         [--timeout SEC]\n"
		"\n"
		"Measures the GPU's caches with P-chase microbenchmarks (L1 through\n"
		"ld.global.ca, the read-only path through ld.global.nc, L2 through\n"
		"ld.global.cg): capacities, line and sector size, sets and ways where the\n"
		"replacement policy lets them be measured, and hit latencies. Writes the\n"
		"device model (docs/device-json.md) and caches it for this GPU, where\n"
		"'cacheadvise profile' finds it. Takes a few seconds to a minute.\n"
		"\n"
		"  --json            print the device model as JSON instead of a summary\n"
		"  -o, --output FILE also write it to FILE (device.json)\n"
		"      --no-cache    do not store it in the cache folder\n"
		"                    ($XDG_CACHE_HOME/cacheadvise or ~/.cache/cacheadvise)\n"
		"      --device N    probe GPU N (default 0, as numbered by CUDA)\n"
		"      --timeout SEC give up after SEC seconds (default 120)\n"
		"  -v, --verbose     show each measurement as the helper makes it\n"
		"\n"
		"Exit status: 0 measured; 1 usage; 2 cannot write the output or the probe\n"
		"failed; 4 no usable GPU (the message says why).\n"
		"\n"
		"EXAMPLES\n"
		"  cacheadvise probe\n"
		"  cacheadvise probe --json -o device.json\n"
		"  cacheadvise profile --device device.json ./app\n");
}

static int parse_options(int argc, char **argv, struct probe_options *opt)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "device", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(opt, 0, sizeof(*opt));
	opt->cache = 1;
	opt->timeout = 120;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt->json = 1;
			break;
		case 'o':
			opt->output = optarg;
			break;
		case 'n':
			opt->cache = 0;
			break;
		case 'd':
			opt->device = (int)strtol(optarg, &end, 10);
			if (*end || end == optarg || opt->device < 0)
				return cli_usage_error("--device wants a GPU number, not '%s'", optarg);
			break;
		case 't':
			opt->timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(opt->timeout > 0))
				return cli_usage_error("--timeout wants a number of seconds, not '%s'", optarg);
			break;
		case 'v':
			opt->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case ':':
			return cli_usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (opt->output && !*opt->output)
		return cli_usage_error("-o wants a file name");
	return 0;
}

/* The helper: $CACHEADVISE_PROBE, else cacheadvise-probe beside this binary. */
static char *helper_path(void)
{
	const char *env = getenv("CACHEADVISE_PROBE");

	if (env && *env)
		return xstrdup(env);
	return xasprintf("%s/cacheadvise-probe", cli_exe_dir());
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

/*
 * Runs the helper and reads its result into dm (initialised). Returns 0,
 * CA_E_NOGPU with the helper's reason, CA_E_INTERRUPTED, or
 * CA_E_INTERNAL / CA_E_IO with the message set.
 */
static int run_probe(const struct probe_options *opt, struct device_model *dm)
{
	char tmpl[] = "/tmp/cacheadvise-probe-XXXXXX";
	char *dir, *helper = helper_path(), *out_path = NULL, *log_path = NULL, *reason = NULL;
	char devnum[16], buf[160];
	struct strbuf log = STRBUF_INIT;
	struct run_spec spec;
	struct run_result res;
	json_t *doc = NULL;
	int ret;

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
	if (strbuf_read_file(&log, log_path, 1 << 20))
		strbuf_reset(&log);
	if (opt->verbose)
		fputs(log.buf, stderr);
	reason = last_line(log.buf);
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
	strbuf_release(&log);
	unlink(out_path);
	unlink(log_path);
	rmdir(dir);
	free(reason);
	free(out_path);
	free(log_path);
	free(helper);
	return ret;
}

static void print_size(const char *label, unsigned long long v)
{
	if (!v)
		printf("%s not measured", label);
	else if (v >= (1ULL << 20) && v % (1ULL << 20) == 0)
		printf("%s %llu MB", label, v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		printf("%s %llu KB", label, v >> 10);
	else
		printf("%s %llu bytes", label, v);
}

static void print_latency(const char *label, double v)
{
	if (v > 0)
		printf("%s %.0f cycles", label, v);
	else
		printf("%s not measured", label);
}

static void print_summary(const struct device_model *dm)
{
	json_t *notes = dm->probe ? json_object_get(dm->probe, "notes") : NULL;
	json_t *secs = dm->probe ? json_object_get(dm->probe, "seconds") : NULL;
	size_t i;

	printf("GPU        %s (%s), cc %s, %u SMs\n", dm->name ? dm->name : "?",
	       dm->uuid ? dm->uuid : "no UUID", dm->cc ? dm->cc : "?", dm->sm_count);
	print_size("L1         ld.global.ca:", dm->l1_bytes);
	printf(" at the default carve-out");
	if (dm->l1_bytes_min) {
		print_size(",", dm->l1_bytes_min);
		printf(" with the most shared memory");
	}
	printf("\n");
	printf("           %u-byte lines, %u-byte sectors, ", dm->l1_line_bytes, dm->sector_bytes);
	if (dm->l1_sets && dm->l1_ways)
		printf("%u sets x %u ways;", dm->l1_sets, dm->l1_ways);
	else
		printf("sets and ways not measurable;");
	print_latency(" hit", dm->lat_l1_hit);
	printf("\n");
	print_size("read-only  ld.global.nc:", dm->readonly_bytes);
	printf(";");
	print_latency(" hit", dm->lat_readonly_hit);
	printf("\n");
	print_size("L2        ", dm->l2_bytes);
	printf(" (driver);");
	if (dm->l2_bytes_measured)
		print_size(" P-chase (ld.global.cg) hits up to", dm->l2_bytes_measured);
	else
		printf(" P-chase reach not measured");
	printf(";");
	print_latency(" hit", dm->lat_l2_hit);
	printf(";");
	print_latency(" DRAM", dm->lat_dram);
	printf("\n");
	print_size("persisting", dm->persisting_l2_max_bytes);
	printf(" set-aside at most;");
	print_size(" windows up to", dm->access_policy_max_window_bytes);
	printf("\n");
	print_size("shared    ", dm->shared_per_sm);
	printf(" per SM,");
	print_size("", dm->shared_per_block_optin);
	printf(" per block (opt-in)\n");
	if (json_is_number(secs))
		printf("probe took %.1f s\n", json_number_value(secs));
	for (i = 0; json_is_array(notes) && i < json_array_size(notes); i++)
		printf("note: %s\n", json_string_value(json_array_get(notes, i)));
}

int cmd_probe(int argc, char **argv)
{
	struct probe_options opt;
	struct device_model dm;
	char *cache_path = NULL;
	int ret, cached = 0;

	ret = parse_options(argc, argv, &opt);
	if (ret)
		return ret < 0 ? 0 : ret;

	device_model_init(&dm);
	ret = run_probe(&opt, &dm);
	if (ret) {
		device_model_release(&dm);
		return cli_fail(ret, NULL);
	}
	if (opt.output && (ret = device_model_write_file(&dm, opt.output))) {
		device_model_release(&dm);
		return cli_fail(ret, NULL);
	}
	if (opt.cache) {
		ret = device_model_save_cached(&dm);
		if (ret && !opt.output) {
			device_model_release(&dm);
			return cli_fail(ret, "cannot cache the result (%s); use -o FILE to keep it",
					error_message());
		}
		if (ret)
			cli_warn("cannot cache the result: %s", error_message());
		else
			cached = 1;
		cache_path = device_model_cache_path(dm.uuid);
	}

	if (opt.json) {
		json_t *doc = device_model_to_json(&dm);
		char *text = json_to_string(doc);

		fputs(text, stdout);
		fputc('\n', stdout);
		free(text);
		json_decref(doc);
	} else {
		print_summary(&dm);
		if (opt.output)
			printf("written to %s\n", opt.output);
		if (cached)
			printf("cached as %s\n", cache_path);
	}
	free(cache_path);
	device_model_release(&dm);
	return 0;
}
