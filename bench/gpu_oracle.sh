#!/usr/bin/env bash
# Benchmark (GPU): the quality of the advice. For each sample, profile with
# verification and --oracle (every plan of kernels with <= 6 measured
# loads, 3 rounds each); prints (sample, kernel, N, runs for capture, chosen
# plan speedup, oracle best speedup, ratio): the rows of
# bench/results/advice-quality.md.
. "$(dirname "$0")/../tests/gpu/lib.sh"

result "| sample | kernel | N | capture runs | verified speedup (median) | kept | advised plan speedup (oracle runs) | best plan speedup | ratio |"
for s in ${CA_BENCH_SAMPLES:-stream_table thrash_pair records spmv}; do
	"$CACHEADVISE" profile --out "$WORK/$s" --top 1 --max-loads ${CA_BENCH_MAX_LOADS:-6} --repeat 5 --oracle=6 --no-l2 \
		"$SAMPLES/$s" >/dev/null 2>"$WORK/$s.err" || { not_ok "$s: $(tail -n 3 "$WORK/$s.err")"; continue; }
	ok
	cp "$WORK/$s/capture.json" "${CA_GPU_LOGS:-$WORK}/oracle-$s.json" 2>/dev/null
	python3 - "$WORK/$s/capture.json" "$s" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s = sys.argv[2]
cap_runs = sum(1 for r in j["runs"] if r["variant"] in ("discovery", "baseline", "all_bypassed", "single", "pair", "monitor"))
vk = {k["name"]: k for k in (j.get("verification") or {}).get("kernels", [])}
for o in (j.get("oracle") or {}).get("kernels", []):
    v = vk.get(o["kernel"], {})
    sp = (v.get("speedup") or {}).get("median")
    f = lambda x: "-" if x is None else "%.3f" % x
    print("RESULT: | %s | %s | %d | %d | %s | %s | %s | %s | %s |" % (s, o["kernel"][:30], o["loads"], cap_runs,
          f(sp), "yes" if v.get("kept") else "no", f(o["advised_speedup"]), f(o["best_speedup"]), f(o["ratio"])))
PY
done
finish
