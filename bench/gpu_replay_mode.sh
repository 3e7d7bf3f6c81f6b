#!/usr/bin/env bash
# Benchmark (GPU): what a replayed range costs, kernel replay against user
# replay (issue 39). A range cost about 50 ms in the fourth session's
# captures whatever the kernel (lavaMD 51 ms for a 1 ms kernel whose
# written memory is 3 MB; particlefilter's find_index 51 ms with none:
# bench/cost_breakdown.py's replay lines), so the cost is the range
# profiler's, not the kernel's nor the tool's restores. Each sample
# (CA_REPLAY_SAMPLES, default stream_table records thrash_pair) is profiled
# at the defaults that capture (no verification, no L2 step, no software
# cache), once as shipped and once with CACHEADVISE_USER_REPLAY=1 (the
# lighter configuration's sessions in CUPTI_UserReplay: the launch plans
# replay and restore memory themselves). Prints per sample and mode the
# capture's seconds and ms a variant, and the largest relative difference
# of hit_i between the two; fails when the user-replay profile does not
# complete, or when its hit_i differ by more than 2% (the counts must be
# the same counts), or its plan differs.
. "$(dirname "$0")/../tests/gpu/lib.sh"

for s in ${CA_REPLAY_SAMPLES:-stream_table records thrash_pair}; do
	for mode in kernel user; do
		out=$WORK/$s-$mode
		if [ $mode = user ]; then export CACHEADVISE_USER_REPLAY=1; else unset CACHEADVISE_USER_REPLAY; fi
		if "$CACHEADVISE" profile --out "$out" --no-verify --no-l2 --no-softcache "$SAMPLES/$s" \
			>/dev/null 2>"$WORK/$s-$mode.err"; then ok; else
			not_ok "$s ($mode replay): $(tail -n 3 "$WORK/$s-$mode.err")"; continue 2; fi
		cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-replay-$s-$mode.json" 2>/dev/null
		python3 "$CA_SOURCE_DIR/bench/cost_breakdown.py" "$s ($mode replay)" "$out/capture.json" |
			grep -v ' cost: '
	done
	unset CACHEADVISE_USER_REPLAY
	d=$(python3 - "$WORK/$s-kernel/capture.json" "$WORK/$s-user/capture.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = 0.0
for ka in a["kernels"]:
    kb = [k for k in b["kernels"] if k["name"] == ka["name"]]
    if not kb:
        continue
    hb = {l["ordinal"]: l.get("hit") for l in kb[0]["loads"]}
    for l in ka["loads"]:
        x, y = l.get("hit"), hb.get(l["ordinal"])
        if isinstance(x, (int, float)) and isinstance(y, (int, float)) and max(x, y) > 0:
            worst = max(worst, abs(x - y) / max(x, y))
print("%.4f" % worst)
PY
)
	result "$s: hit_i kernel replay against user replay differ by at most $(python3 -c "print('%.2f%%' % (100 * $d))")"
	python3 -c "import sys; sys.exit(0 if $d <= 0.02 else 1)" && ok || not_ok "$s: hit_i differ by $d between the replay modes"
	python3 "$CA_SOURCE_DIR/bench/plan_diff.py" "$WORK/$s-kernel" "$WORK/$s-user" >"$WORK/$s.diff" && ok ||
		not_ok "$s: the plans differ between the replay modes: $(head -n 3 "$WORK/$s.diff")"
done
finish
