#!/usr/bin/env bash
# GPU, issue 29: profile --gpus 0,1 spreads a single-process program's
# independent runs over two GPUs. Against the same profile on one GPU:
# the same plan (loads and actions), runs recorded on both GPUs, and the
# wall-time ratio printed (the issue's target is at most 0.6x; reported,
# not judged: it depends on the host, and bench/gpu_side_by_side.sh shows
# why). Skips with one GPU.
. "$(dirname "$0")/lib.sh"

if [ "$(nvidia-smi -L | wc -l)" -lt 2 ]; then
	echo "one GPU: skipped (needs the 2-GPU kind)"
	exit 77
fi

plan_key() { # the plan's loads and actions, one line each, sorted
	python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for m in p.get("modules", []):
    for f in m.get("functions", []):
        for l in f.get("loads", []):
            print(f["name"], l["ordinal"], l["action"])
PY
}

profile() { # profile NAME ARGS...
	local name=$1; shift
	local t0=$SECONDS
	"$CACHEADVISE" profile --out "$WORK/$name" --no-l2 --no-softcache --no-monitor "$@" \
		>"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
	local rc=$?
	echo $((SECONDS - t0)) >"$WORK/$name.seconds"
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-gpus-$name.json" 2>/dev/null
	[ "$rc" = 0 ] && ok || not_ok "profile $name failed (exit $rc): $(tail -n 5 "$WORK/$name.stderr")"
}

# stream_table: 25 program runs with --measure runs, ~20 of them variants
# (a few seconds each on one H200), so the measurement runs dominate; the
# verification is left out of this comparison, as it times on one GPU
for mode in runs launches; do
	profile "one-$mode" --measure $mode --no-verify --gpus 0 -- "$SAMPLES/stream_table"
	profile "two-$mode" --measure $mode --no-verify --gpus 0,1 -- "$SAMPLES/stream_table"
	one=$WORK/one-$mode two=$WORK/two-$mode
	if [ "$(plan_key "$one/plan.json")" = "$(plan_key "$two/plan.json")" ]; then ok; else
		not_ok "$mode: --gpus 0,1 gave another plan than one GPU"
	fi
	# --measure runs spreads its variants; in-run capture only the passes after the first,
	# which a program may not need: there it is reported, not required
	if [ "$mode" = runs ]; then
		check "$mode: runs on both GPUs" '{r.get("gpu") for r in j["runs"]} >= {0, 1}' "$two/capture.json"
	fi
	echo "RESULT: --measure $mode: runs by GPU $(python3 -c 'import json,sys,collections; print(dict(collections.Counter(r.get("gpu") for r in json.load(open(sys.argv[1]))["runs"])))' "$two/capture.json")"
	check "$mode: runs side by side are no output reference" \
		'all(r.get("files_compared", True) for r in j["runs"] if r["index"] in j.get("baseline_check", {}).get("runs", []))' \
		"$two/capture.json"
	s1=$(cat "$one.seconds") s2=$(cat "$two.seconds")
	result "--gpus 0,1 vs 0, --measure $mode: ${s2} s vs ${s1} s ($(python3 -c "print('%.2f' % ($s2 / max($s1, 1)))")x), plan $(plan_key "$two/plan.json" | wc -l) loads"
	# --measure runs: one program run a variant, the measurement dominates;
	# issue 35's target is at most 0.6x one GPU's wall time. A figure, not a
	# verdict (a test's verdict may not hang on the machine's speed): on the
	# H200 pair even the program alone, without the tool, takes 1.9x as long
	# beside itself on the other GPU (bench/gpu_side_by_side.sh)
	if [ "$mode" = runs ]; then
		if [ "$((s2 * 10))" -le "$((s1 * 6))" ]; then t=met; else t="not met"; fi
		result "--measure runs: issue 35's target (at most 0.6x one GPU's wall time) $t"
	fi
done
finish
