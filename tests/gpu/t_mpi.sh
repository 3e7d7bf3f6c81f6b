#!/usr/bin/env bash
# GPU, issue 29: an MPI job profiled as a user types it,
#   cacheadvise profile -- mpirun -np 2 ./mpi_gather
# Each rank on its own GPU where there are two (rank r uses GPU r % GPUs).
# Checks: every rank's events were read and kept apart (kernels[].ranks,
# with its GPU), the merged kernel was measured, verification timed every
# rank on its own launches and kept advice only where it held on each; with
# skew=1 (rank 1's table does not fit L1) the report names rank 1.
# Skips without mpirun or without the sample (MPI not found at build time).
. "$(dirname "$0")/lib.sh"

bin=$SAMPLES/mpi_gather
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$bin" ]; then
	echo "no mpirun or no $bin (MPI not found when built): skipped"
	exit 77
fi
gpus=$(nvidia-smi -L | wc -l)
mpi=(mpirun --allow-run-as-root --oversubscribe -np 2)

profile() { # profile NAME ARGS...
	local name=$1; shift
	local t0=$SECONDS
	"$CACHEADVISE" profile --out "$WORK/$name" --top 1 --no-l2 -- "${mpi[@]}" "$bin" "$@" \
		>"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
	local rc=$?
	echo "$name: $((SECONDS - t0)) s" >>"$WORK/times"
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-mpi-$name.json" 2>/dev/null
	"$CACHEADVISE" report "$WORK/$name" >"${CA_GPU_LOGS:-$WORK}/report-mpi-$name.txt" 2>&1
	[ "$rc" = 0 ] && ok || not_ok "profile $name failed (exit $rc): $(tail -n 5 "$WORK/$name.stderr")"
}

profile even records=8388608 iters=12
cap=$WORK/even/capture.json
check "the job's two ranks were read" 'sorted(j["ranks"]["seen"]) == [0, 1]' "$cap"
check "gather measured on the merged counters" \
	'any("gather" in k["name"] and any(l.get("measured") and l.get("hit") is not None for l in k["loads"]) for k in j["kernels"])' "$cap"
check "gather's ranks kept apart, each with its GPU and hit_i per launch" \
	'all(len(k.get("ranks", [])) == 2 and all(r["gpu"] and r["loads"] for r in k["ranks"]) for k in j["kernels"] if "gather" in k["name"])' "$cap"
if [ "$gpus" -ge 2 ]; then
	check "the ranks ran on two GPUs" \
		'all(len({r["gpu"] for r in k["ranks"]}) == 2 for k in j["kernels"] if "gather" in k["name"])' "$cap"
else
	# the range profiler is one process's at a time on a GPU (issue 35)
	check "ranks on one GPU measured in turns" \
		'{p.get("ranks") for p in j["measure"]["passes"]} == {"0", "1"}' "$cap"
fi
check "no capture run lost the profiler (CUPTI_ERROR_HARDWARE_BUSY)" \
	'not any("HARDWARE_BUSY" in e for r in j["runs"] for e in r.get("errors", []))' "$cap"
check "every variant of gather measured (none left unmeasured)" \
	'all(not k.get("unmeasured") and "all" in k["variants"] for n, k in j["measure"]["kernels"].items() if "gather" in n)' "$cap"
check "verification timed each rank (verdict per rank)" \
	'all(len(v.get("ranks", [])) == 2 for v in j.get("verification", {}).get("kernels", []))' "$cap"
check "kept only where every rank kept it" \
	'all((not v.get("kept")) or all(r["verdict"] and r["verdict"]["kept"] for r in v["ranks"]) for v in j.get("verification", {}).get("kernels", []))' "$cap"
python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for v in j.get("verification", {}).get("kernels", []):
    per = ", ".join("rank %d %s %.3fx" % (r["rank"], r.get("gpu") or "?", r["verdict"]["speedup"]["median"])
                    for r in v.get("ranks", []) if r.get("verdict"))
    print("RESULT: mpi even: %s %.3fx %s; %s" % (v["name"][:20], v["speedup"]["median"],
          "kept" if v.get("kept") else "rejected", per))
PY

profile skew records=8388608 iters=12 skew=1
"$CACHEADVISE" report "$WORK/skew" >"$WORK/skew.txt" 2>&1
if grep -q "rank 1.* differ" "$WORK/skew.txt"; then ok; else not_ok "skew: the report does not name rank 1: $(grep 'ranks measured' "$WORK/skew.txt")"; fi
echo "RESULT: mpi skew: $(grep -o '[0-9] ranks measured apart.*' "$WORK/skew.txt" | head -c 300)"
echo "RESULT: mpi wall: $(tr '\n' ' ' <"$WORK/times")"
finish
