#!/usr/bin/env bash
# Benchmark (GPU, two or more GPUs): why two measured runs side by side on
# two GPUs take nearly as long as one after the other (issue 35 item 6:
# `--gpus 0,1` gave 0.91x of one GPU's wall time, not 0.6x; a run's counter
# setup went 0.45 -> 0.64-1.08 s and its counted launches 1.1 -> 2.1 s).
# One program (stream_table by default, CA_SIDE_SAMPLE) runs under the
# injection library, as the profile runs it, in three modes: timing only,
# the counters on (CACHEADVISE_METRICS=1, the range profiler on every
# launch, as --measure runs counts), and plain (no injection library);
# each mode alone on GPU 0, alone on GPU 1, then on both at once. Prints
# per mode the wall times and the injection library's own cost by mechanism
# (events.jsonl "cost"): if only the counted mode slows side by side, the
# range profiler serialises across GPUs; if every mode does, the host or
# the GPUs' shared links do. Skips with fewer than two GPUs.
. "$(dirname "$0")/../tests/gpu/lib.sh"

n=$(nvidia-smi -L | wc -l)
[ "$n" -ge 2 ] || { echo "one GPU: skipped (needs kind nvidia-h200-x2)"; exit 77; }
inject="$CA_BUILD_DIR/lib/cacheadvise/libcacheadvise_inject.so"
[ -f "$inject" ] || { not_ok "no injection library at $inject"; finish; }
prog="$SAMPLES/${CA_SIDE_SAMPLE:-stream_table}"

# one GPU MODE OUT: the program on GPU in MODE; wall seconds to OUT/wall
one() {
	local gpu=$1 mode=$2 out=$3 t0 t1
	mkdir -p "$out"
	t0=$(date +%s.%N)
	case $mode in
	plain) CUDA_VISIBLE_DEVICES=$gpu "$prog" >"$out/stdout" 2>&1 ;;
	timing) CUDA_VISIBLE_DEVICES=$gpu CUDA_INJECTION64_PATH=$inject CACHEADVISE_OUT=$out \
		CACHEADVISE_TIMING=1 "$prog" >"$out/stdout" 2>&1 ;;
	counters) CUDA_VISIBLE_DEVICES=$gpu CUDA_INJECTION64_PATH=$inject CACHEADVISE_OUT=$out \
		CACHEADVISE_METRICS=1 "$prog" >"$out/stdout" 2>&1 ;;
	esac
	t1=$(date +%s.%N)
	python3 -c "print('%.3f' % ($t1 - $t0))" >"$out/wall"
}

# the library's cost of a run, "counter_setup 0.45 replays 0.00 ..."
cost_of() {
	python3 - "$1/events.jsonl" <<'PY'
import json, sys
try:
    for line in open(sys.argv[1]):
        e = json.loads(line)
        if e.get("ev") == "cost":
            s = e.get("seconds") or {}
            print(" ".join("%s %.2f" % (k, v) for k, v in sorted(s.items(), key=lambda kv: -kv[1]) if v >= 0.01))
            break
except OSError:
    print("-")
PY
}

result "| mode | GPU 0 alone | GPU 1 alone | both at once (GPU 0, GPU 1) | side by side / alone | GPU 0's costs alone -> beside |"
for mode in plain timing counters; do
	for r in 1 2; do   # the first round warms the driver's caches
		one 0 "$mode" "$WORK/$mode-a0-$r"
		one 1 "$mode" "$WORK/$mode-a1-$r"
		one 0 "$mode" "$WORK/$mode-b0-$r" & p0=$!
		one 1 "$mode" "$WORK/$mode-b1-$r" & p1=$!
		wait $p0 $p1
	done
	a0=$(cat "$WORK/$mode-a0-2/wall") a1=$(cat "$WORK/$mode-a1-2/wall")
	b0=$(cat "$WORK/$mode-b0-2/wall") b1=$(cat "$WORK/$mode-b1-2/wall")
	ratio=$(python3 -c "print('%.2f' % (max($b0, $b1) / max($a0, $a1)))")
	costs="-"
	[ "$mode" = plain ] || costs="$(cost_of "$WORK/$mode-a0-2") -> $(cost_of "$WORK/$mode-b0-2")"
	result "| $mode | $a0 s | $a1 s | $b0 s, $b1 s | ${ratio}x | $costs |"
	ok
done
finish
