#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/device_model.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "collectors/probe_run.h"
#include "emitters/device_summary.h"
#include "src/cli.h"

/*
 * cacheadvise probe: runs the P-chase helper, writes device.json and caches
 * it per GPU UUID for `profile` (collectors/probe_run.h).
 */

/* The largest --device: as profile's --gpus (CUDA numbers its GPUs from 0). */
#define PROBE_MAX_DEVICE 1023

struct probe_options {
	struct probe_run_options run; /* -o, --no-cache, --device, --timeout, --verbose */
	int json;                   /* print the device model as JSON */
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
		"  -o, --output FILE also write it to FILE (device.json); '-' for standard output\n"
		"                    in place of the summary (as --json)\n"
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
	int c;

	memset(opt, 0, sizeof(*opt));
	opt->run.cache = 1;
	opt->run.timeout = 120;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			opt->json = 1;
			break;
		case 'o':
			/* -o -: the device model on standard output, as --json */
			if (cli_parse_output(optarg, &opt->run.output))
				return 1;
			if (!opt->run.output)
				opt->json = 1;
			break;
		case 'n':
			opt->run.cache = 0;
			break;
		case 'd':
		{
			unsigned long v;

			if (cli_parse_uint(optarg, "--device", 0, PROBE_MAX_DEVICE,
					   "a GPU number from 0 to 1023", &v))
				return 1;
			opt->run.device = (int)v;
			break;
		}
		case 't':
			if (cli_parse_timeout(optarg, "--timeout", &opt->run.timeout))
				return 1;
			break;
		case 'v':
			opt->run.verbose = 1;
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
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	struct probe_options opt;
	struct probe_kept kept = { 0 };
	struct device_model dm;
	struct strbuf log = STRBUF_INIT, text = STRBUF_INIT;
	int ret;

	if ((ret = parse_options(argc, argv, &opt)))
		return ret < 0 ? 0 : ret;
	opt.run.exe_dir = cli_exe_dir();
	ret = probe_run(&opt.run, &dm, &log);
	if (opt.run.verbose)
		fputs(log.buf, stderr);
	strbuf_release(&log);
	if (!ret)
		ret = probe_keep(&opt.run, &dm, &kept);
	if (ret) {
		device_model_release(&dm);
		return cli_fail(ret, NULL);
	}
	if (kept.cache_error)
		cli_warn("cannot cache the result: %s", kept.cache_error);
	if (opt.json)
		device_summary_json(&text, &dm);
	else
		device_summary_text(&text, &dm);
	if (!opt.json && opt.run.output)
		strbuf_addf(&text, "written to %s\n", opt.run.output);
	if (!opt.json && kept.cached)
		strbuf_addf(&text, "cached as %s\n", kept.cache_path);
	fputs(text.buf, stdout);
	strbuf_release(&text);
	probe_kept_release(&kept);
	device_model_release(&dm);
	return 0;
}
