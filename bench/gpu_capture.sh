#!/usr/bin/env bash
# Benchmark (GPU): for each sample, the runs `profile` needs, its wall time,
# and the ratio to the program's own run time (median of 3 plain runs).
# Capture only (--no-verify --no-l2): verification's cost is --repeat x 2 runs.
# Prints one RESULT line a sample: the rows of bench/results/capture.md.
. "$(dirname "$0")/../tests/gpu/lib.sh"

result "| sample | kernel | loads N | runs | profile wall s | program wall s | ratio |"
for s in ${CA_BENCH_SAMPLES:-stream_table thrash_pair records stencil1d spmv l2_reuse}; do
	times=()
	for i in 1 2 3; do
		t0=$(date +%s.%N); "$SAMPLES/$s" >/dev/null 2>&1; t1=$(date +%s.%N)
		times+=("$(python3 -c "print($t1 - $t0)")")
	done
	plain=$(printf '%s\n' "${times[@]}" | sort -g | sed -n 2p)
	t0=$(date +%s.%N)
	"$CACHEADVISE" profile --out "$WORK/$s" --top 1 --no-verify --no-l2 "$SAMPLES/$s" \
		>/dev/null 2>"$WORK/$s.err" || { not_ok "$s: $(tail -n 3 "$WORK/$s.err")"; continue; }
	t1=$(date +%s.%N)
	ok
	python3 - "$WORK/$s/capture.json" "$s" "$(python3 -c "print($t1 - $t0)")" "$plain" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s, wall, plain = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
k = j["kernels"][0]
n = sum(1 for l in k["loads"] if l["measured"])
print("RESULT: | %s | %s | %d | %d | %.1f | %.2f | %.0fx |" % (s, k["name"][:30], n, len(j["runs"]), wall, plain, wall / plain))
PY
done
finish
