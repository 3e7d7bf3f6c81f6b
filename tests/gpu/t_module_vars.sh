#!/usr/bin/env bash
# GPU: programs whose kernels use module-scope variables (__device__,
# __constant__ set with cudaMemcpyToSymbol). The modules the library loads
# beside the program's (capture variants, verification versions, the
# sampled monitor) have their own copies; the library fills them from the
# program's before each launch and copies them back after the program's own
# launch ran one (collectors/inject/own_module.h). tests/gpu/device/
# module_vars.cu prints what every launch computed; the checks: every run
# that ran modules of ours (capture, monitor, verification in-run) prints
# what the discovery run printed, the capture's events say which variables
# were shared, and the profile completes.
. "$(dirname "$0")/lib.sh"

bin=$CA_BUILD_DIR/device/module_vars
[ -x "$bin" ] || { echo "no $bin (build with CUDA)" >&2; exit 1; }
out=$WORK/prof
if "$CACHEADVISE" profile --out "$out" --min-share 0 "$bin" >"$WORK/stdout" 2>"$WORK/stderr"; then
	ok
else
	not_ok "profile failed: $(tail -n 5 "$WORK/stderr")"
	finish
fi
cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-module-vars.json" 2>/dev/null
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
cap = json.load(open(os.path.join(d, "capture.json")))
runs = cap["runs"]
def out_of(r):
    return open(os.path.join(d, r["log"][:-4] + ".out")).read()
disc = [r for r in runs if r["variant"] == "discovery"][0]
want = out_of(disc)
print("RESULT: discovery printed: %s" % " | ".join(want.strip().splitlines()))
fails = 0
for r in runs:
    if r["variant"] in ("capture", "monitor", "verify-in-run") and r.get("status") == "ok":
        got = out_of(r)
        same = got == want
        print("RESULT: run %d (%s) prints what discovery printed: %s%s" % (
            r["index"], r["variant"], same, "" if same else " (" + " | ".join(got.strip().splitlines()) + ")"))
        fails += not same
kinds = sorted({r["variant"] for r in runs})
if "capture" not in kinds or "monitor" not in kinds:
    print("FAIL: no capture or monitor run: %s" % kinds, file=sys.stderr)
    fails += 1
# which variables the library shared, per run
for r in runs:
    ev = os.path.join(d, "runs", "%03d.d" % r["index"], "events.jsonl")
    if not os.path.exists(ev):
        continue
    shared = {}
    for line in open(ev):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("ev") == "module_globals":
            key = (e["kernel"], e["module"])
            shared[key] = (e["shared"], e["bytes"], e["unpaired"])
    for (k, m), (n, b, unp) in sorted(shared.items()):
        print("RESULT: run %d (%s) %s, %s: %d variables shared (%d bytes), unpaired %s" % (
            r["index"], r["variant"], k[:16], m[:24], n, b, unp))
    if r["variant"] == "capture":
        mix = [v for (k, m), v in shared.items() if "mix" in k]
        if not mix or min(v[0] for v in mix) < 3:
            print("FAIL: capture run: mix's modules did not share d_table, d_gain, c_scale: %s" % mix,
                  file=sys.stderr)
            fails += 1
bc = cap.get("baseline_check") or {}
print("RESULT: baseline_check output %s" % ((bc.get("output") or {}).get("status")))
ver = cap.get("verification") or {}
print("RESULT: verification %s; kernels %s" % (ver.get("status"), [
    (k["name"][:16], k.get("method"), (k.get("speedup") or {}).get("median"), k.get("kept"))
    for k in ver.get("kernels", [])]))
sys.exit(1 if fails else 0)
PY
if [ $? = 0 ]; then ok; else not_ok "a run of modules of ours printed other results than the program"; fi
finish
