#!/usr/bin/env bash
# GPU (issue 25, item 2): a deterministic floating-point program whose
# result files are float32 and text (tests/gpu/device/fp_result.cu). Its
# output must be checked at the defaults, never "unchecked": the monitor run
# (instrumented, changed code) is not one of the output's reference runs,
# the discovery run is the reference, and where a JIT form rounds the last
# bits of field.f32 otherwise, the file is equal within the tolerance (with
# the largest difference recorded), not "differs between baseline runs".
# Then a run of each JIT form by hand: `cacheadvise run` with an empty plan
# (the unpatched PTX, JIT-compiled) against the program's own cubin, and the
# judge of the capture's reader on the two field.f32 files.
. "$(dirname "$0")/lib.sh"

bin=$CA_BUILD_DIR/device/fp_result
[ -x "$bin" ] || { echo "no $bin (build with CUDA)" >&2; exit 1; }
mkdir -p "$WORK/app"
cd "$WORK/app" || exit 1
out=$WORK/prof
if "$CACHEADVISE" profile --out "$out" --min-share 0 "$bin" >"$WORK/stdout" 2>"$WORK/stderr"; then
	ok
else
	not_ok "profile failed: $(tail -n 5 "$WORK/stderr")"
	finish
fi
cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-fp-result.json" 2>/dev/null
python3 - "$out/capture.json" <<'PY' || not_ok "the output check of fp_result (see above)"
import json, sys
cap = json.load(open(sys.argv[1]))
runs = {r["index"]: r for r in cap["runs"]}
bc = cap.get("baseline_check") or {}
ref = [runs[i]["variant"] for i in bc.get("runs", [])]
print("RESULT: output reference runs: %s" % ", ".join(ref))
out = bc.get("output") or {}
files = {f["path"]: f for f in out.get("files", [])}
for p, f in sorted(files.items()):
    print("RESULT: %s: %s%s" % (p, f["status"], "" if "max_rel_difference" not in f else
          " (%s, largest difference %.3g relative)" % (f.get("compared_as"), f["max_rel_difference"])))
print("RESULT: baseline output: %s: %s" % (out.get("status"), out.get("reason")))
bad = 0
if "monitor" in ref:
    print("FAIL: the monitor run is an output reference", file=sys.stderr); bad += 1
if not ref or ref[0] != "discovery":
    print("FAIL: the discovery run is not the reference", file=sys.stderr); bad += 1
if out.get("status") not in ("identical", "within_tolerance"):
    print("FAIL: baseline output is %s" % out.get("status"), file=sys.stderr); bad += 1
for p in ("field.f32", "residual.txt"):
    if files.get(p, {}).get("status") not in ("identical", "within_tolerance"):
        print("FAIL: %s is %s" % (p, files.get(p, {}).get("status")), file=sys.stderr); bad += 1
ver = cap.get("verification") or {}
vo = ver.get("output") or {}
if vo:
    print("RESULT: verification output: %s" % vo.get("status"))
    if vo.get("status") == "unchecked":
        print("FAIL: verification output unchecked", file=sys.stderr); bad += 1
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] && ok

# The JIT form against the cubin, by hand: an empty plan runs the unpatched
# PTX through the driver's JIT.
printf '{"schema": "cacheadvise.plan/1", "modules": []}\n' >"$WORK/empty.json"
mkdir -p "$WORK/native" "$WORK/jit"
(cd "$WORK/native" && "$bin" >/dev/null) || not_ok "native run failed"
(cd "$WORK/jit" && "$CACHEADVISE" run --plan "$WORK/empty.json" -- "$bin" >/dev/null 2>&1) ||
	not_ok "run --plan (JIT) failed"
python3 - "$WORK/native/field.f32" "$WORK/jit/field.f32" <<'PY'
import struct, sys
a = open(sys.argv[1], "rb").read()
b = open(sys.argv[2], "rb").read()
n = len(a) // 4
fa = struct.unpack("<%df" % n, a)
fb = struct.unpack("<%df" % n, b)
diff = sum(1 for x, y in zip(fa, fb) if x != y)
rel = max((abs(x - y) / max(abs(x), abs(y)) for x, y in zip(fa, fb) if x != y), default=0)
print("RESULT: JIT vs cubin field.f32: %s, %d of %d values differ, largest %.3g relative" % (
    "identical" if a == b else "differs", diff, n, rel))
PY
finish
