#!/usr/bin/env bash
# GPU: the L2 persistence advisor (issue 8) on samples/l2_reuse: a window is
# advised on the reused buffer, each variant is measured against the
# baseline (DRAM bytes and GPU time), and a window is kept only if faster.
# Measured (bench/results/l2.md): both windows slower and rejected, H200
# 0.753x and 0.562x, H100 0.763x and 0.572x; the checks hold either outcome
# to its numbers rather than passing on "nothing kept". --budget 0: the
# test is of every window's measurement; at the default budget (20x a
# 0.3 s program, 15 s) the step times the first window only and says so
# in capture.json's budget section (seen on an H200, 2026-11-28).
# --no-l2-priority in both profiles: the window's baseline is then the
# program as built in both (with the L2 priority pass, on by default, it is
# the kept priorities, and two profiles that keep different ones, or one
# that keeps none, give DRAM baselines 25% apart: seen on an H200,
# 2026-11-28, when only the second profile left the pass out).
. "$(dirname "$0")/lib.sh"

out=$WORK/l2
if "$CACHEADVISE" profile --out "$out" --budget 0 --no-l2-priority --top 2 --repeat 5 --max-loads 8 "$SAMPLES/l2_reuse" \
	>"$WORK/l2.stdout" 2>"$WORK/l2.stderr"; then ok; else not_ok "profile l2_reuse failed: $(tail -n 5 "$WORK/l2.stderr")"; fi
cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-l2.json" 2>/dev/null
cap=$out/capture.json
check "an L2 window is advised" 'j["l2"]["status"] == "advised"' "$cap"
check "limits come from the device" 'j["l2"]["l2_bytes"] == j["device"]["l2_bytes"] and j["l2"]["set_aside_bytes"] <= j["device"]["persisting_l2_max_bytes"]' "$cap"
check "every window variant was measured" 'all("verification" in w for w in j["l2"]["windows"])' "$cap"
check "the guide's window lowers DRAM read bytes" \
	'j["l2"]["windows"][0]["verification"]["dram_bytes"] < j["l2"]["baseline_dram_bytes"]' "$cap"
check "every window was timed: as many advice times as rounds (or two where both were slower, or none where DRAM reads did not fall), a median speedup" \
	'len(j["l2"]["windows"]) >= 1 and all(("not timed" in (w["verification"].get("reason") or "") and w["verification"]["kept"] is False) or (len([t for t in w["verification"]["advice_ns"] if t]) == w["verification"].get("ended_after_rounds", j["options"]["repeat"]) and w["verification"]["speedup"]["median"] > 0) for w in j["l2"]["windows"])' "$cap"
check "a window ended after two rounds was slower in both than either baseline" \
	'all(min(w["verification"]["program"]["advice_gpu_ns"]) > max(w["verification"]["program"]["baseline_gpu_ns"]) for w in j["l2"]["windows"] if "ended_after_rounds" in w["verification"])' "$cap"
check "a kept window is faster than the baseline by more than the noise" \
	'all(w["verification"]["speedup"]["median"] - 1 > w["verification"]["noise"] for w in j["l2"]["windows"] if w["verification"]["kept"] is True)' "$cap"
check "the DRAM bytes were measured (non-zero) for the baseline and every window" \
	'j["l2"]["baseline_dram_bytes"] > 0 and all(w["verification"]["dram_bytes"] > 0 for w in j["l2"]["windows"])' "$cap"
check "a rejected window carries its measured slowdown (speedup < 1) and the reason" \
	'all(("not timed" in w["verification"]["reason"] and w["verification"]["dram_bytes"] > 0.98 * j["l2"]["baseline_dram_bytes"]) or (w["verification"]["speedup"]["median"] < 1 and w["verification"]["reason"] == "slower than the baseline") for w in j["l2"]["windows"] if w["verification"]["kept"] is False)' "$cap"
check "l2.kept names the fastest kept window, or is null when none is kept" \
	'(lambda kept: j["l2"]["kept"] is None if not kept else j["l2"]["kept"] == max(kept, key=lambda w: w["verification"]["speedup"]["median"])["variant"])([w for w in j["l2"]["windows"] if w["verification"]["kept"] is True])' "$cap"
python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); l2 = j["l2"]
print("RESULT: l2 status %s; baseline DRAM %.3g B; kept: %s" % (l2["status"], l2.get("baseline_dram_bytes") or 0, l2.get("kept")))
for w in l2.get("windows", []):
    v = w.get("verification", {}); sp = v.get("speedup") or {}
    if v.get("ended_after_rounds"): print("RESULT: window %s: timing ended after %d rounds (slower in each)" % (w["variant"], v["ended_after_rounds"]))
    print("RESULT: window %s: %.1f MB hitRatio %.2f -> DRAM %.3g B, GPU-time speedup median %.3f (noise %.3f) %s" % (
        w["variant"], w["num_bytes"] / 1e6, w["hit_ratio"], v.get("dram_bytes") or 0,
        sp.get("median", 0), v.get("noise") or 0, "KEPT" if v.get("kept") else "rejected: " + str(v.get("reason"))))
PY

# The same sample launched 71 times a kernel (> 64): the DRAM-measuring runs
# count 3 sampled launches a kernel and scale (issue 15). The scaled figure,
# per gather launch, must agree with the full count above within 20%.
# --budget 0: the window step is what is judged, whatever the budget would
# leave out
out2=$WORK/l2-many
if "$CACHEADVISE" profile --out "$out2" --top 2 --repeat 2 --max-loads 8 --budget 0 --no-l2-priority "$SAMPLES/l2_reuse" iters=70 \
	>"$WORK/l2-many.stdout" 2>"$WORK/l2-many.stderr"; then ok; else not_ok "profile l2_reuse iters=70 failed: $(tail -n 5 "$WORK/l2-many.stderr")"; fi
cp "$out2/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-l2-many.json" 2>/dev/null
python3 - "$cap" "$out2/capture.json" <<'PY' >"$WORK/l2-many.check"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def per_launch(j):
    n = sum(k["launches"] for k in j["all_kernels"])
    return (j["l2"].get("baseline_dram_bytes") or 0) / n, n
pa, na = per_launch(a); pb, nb = per_launch(b)
print("RESULT: baseline DRAM a launch: %d launches counted in full %.4g B; %d launches, 3 a kernel counted and scaled %.4g B (%+.1f%%)" % (
    na, pa, nb, pb, 100 * (pb - pa) / pa if pa else 0))
print("OK" if pa > 0 and abs(pb - pa) <= 0.2 * pa else "FAIL")
PY
cat "$WORK/l2-many.check"
if tail -n 1 "$WORK/l2-many.check" | grep -qx OK; then ok; else not_ok "the sampled DRAM figure does not agree with the full count"; fi
finish
