#!/usr/bin/env bash
# Issue 36 item 8: what hostile-sized inputs cost, in time and memory
# (/usr/bin/time -v: elapsed wall time, user + system CPU time, maximum
# resident set size; on a shared machine the CPU time is the steadier).
# Not a test: it prints figures (bench/results/inspect.md keeps them).
#
# usage: bench/limits.sh [CACHEADVISE]   (default build/bin/cacheadvise)
#
#   inspect --json of a PTX module of 10^5 and 10^6 global loads (1000
#     kernels; bench/gen_ptx_loads.py), and inspect (the table) of 10^6
#   inspect of a 1.3 MB fatbin of three zstd entries of 400 MiB each
#   patch --plan with a plan.json of 40k functions on a small module, and
#     on a module of those 40k functions; report of a capture whose
#     plan.json has 40k functions (it exits 2 at the first function the
#     capture did not measure, after reading the plan)
set -u
cd "$(dirname "$0")/.."
ca=$(realpath "${1:-build/bin/cacheadvise}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure LABEL CMD...: one line of wall time, max RSS and exit status
measure() {
	local label=$1; shift
	/usr/bin/time -v "$@" >"$tmp/out" 2>"$tmp/time"
	local rc=$?
	awk -v l="$label" -v rc="$rc" '
		/Elapsed \(wall clock\)/ { n = split($NF, t, ":"); s = t[n] + (n > 1 ? 60 * t[n-1] : 0) + (n > 2 ? 3600 * t[n-2] : 0) }
		/User time \(seconds\)/ { cpu += $NF }
		/System time \(seconds\)/ { cpu += $NF }
		/Maximum resident set size/ { kb = $NF }
		END { printf "%-44s wall %7.2f s  cpu %7.2f s  max RSS %8.1f MB  exit %s\n", l, s, cpu, kb / 1024, rc }' "$tmp/time"
}

python3 bench/gen_ptx_loads.py 100000 1000 >"$tmp/l100k.ptx"
python3 bench/gen_ptx_loads.py 1000000 1000 >"$tmp/l1m.ptx"
echo "PTX: $(wc -c <"$tmp/l1m.ptx") bytes for 10^6 loads"
measure "inspect --json, 10^5 loads" "$ca" inspect --json "$tmp/l100k.ptx"
measure "inspect --json, 10^6 loads" "$ca" inspect --json "$tmp/l1m.ptx"
measure "inspect --json -o FILE, 10^6 loads" "$ca" inspect --json -o "$tmp/l1m.json" "$tmp/l1m.ptx"
measure "inspect (table), 10^6 loads" "$ca" inspect "$tmp/l1m.ptx"

python3 bench/gen_fatbin_bomb.py "$tmp/bomb.fatbin"
echo "fatbin: $(wc -c <"$tmp/bomb.fatbin") bytes, 3 entries of 400 MiB"
measure "inspect, fatbin of 3 x 400 MiB entries" "$ca" inspect "$tmp/bomb.fatbin"

python3 - "$tmp" <<'PY'
import json, sys
d = sys.argv[1]
fn = lambda i: "_Z29kernel_function_number_%06dPKfS0_Pf" % i
def plan(names, path):
    json.dump({"schema": "cacheadvise.plan/1", "modules": [{"functions": [
        {"name": n, "loads": [{"ordinal": 0, "action": "L1::no_allocate"}]} for n in names]}]},
        open(path, "w"))
plan([fn(i) for i in range(40000)], d + "/plan40k.json")
plan(["k%d" % i for i in range(40000)], d + "/plank40k.json")
PY
python3 bench/gen_ptx_loads.py 40000 40000 >"$tmp/k40k.ptx"
echo "plan.json: $(wc -c <"$tmp/plan40k.json") bytes, 40000 functions"
measure "patch --plan (40k functions), small module" "$ca" patch --plan "$tmp/plan40k.json" \
	-o "$tmp/p.ptx" tests/fixtures/intake/kernels.ptx
measure "patch --plan (40k), module of 40k functions" "$ca" patch --plan "$tmp/plank40k.json" \
	-o "$tmp/k.ptx" "$tmp/k40k.ptx"
cp -r tests/fixtures/capture-handmade "$tmp/cap"
cp "$tmp/plan40k.json" "$tmp/cap/plan.json"
measure "report, plan.json of 40k functions" "$ca" report "$tmp/cap"
