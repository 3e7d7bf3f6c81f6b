#!/usr/bin/env bash
# Issue 25, item 6: what the report says must be true of the capture.
# - a source patch that rewrites no load was not timed: no "1.00x" for it,
#   and one reason shared by several loads is said once;
# - a verification that measured every kernel and rejected every change is
#   not "not verified", and "Nothing to change" says why.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

dep="$CA_SOURCE_DIR/tests/fixtures/deposit-capture"
real="$CA_SOURCE_DIR/tests/fixtures/capture-real"

expect_status 0 "$CACHEADVISE" report "$dep"
expect_grep "the source patch as written: rewrites no load, so nothing was timed" "$TMP/out"
expect_no_grep "source patch as written: 1.00x" "$TMP/out"
expect_grep "loads 0, 1 of deposit_step not rewritten: cannot read" "$TMP/out"
# the SUMMARY (before the first KERNEL section) says it once
n=$(sed '/^KERNEL /q' "$TMP/out" | grep -o "cannot read '/tmp/wt/samples/deposit.cu'" | wc -l)
[ "$n" = 1 ] && ok || not_ok "the SUMMARY repeats the same reason $n times"
expect_no_grep "program speedup 1.34x via run --plan" "$TMP/out"

cp -r "$real" "$TMP/rej"
python3 - "$TMP/rej" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
k = c["verification"]["kernels"][0]
k.update(kept=False, reason="not faster beyond the noise",
         speedup={"min": 0.97, "median": 0.98, "max": 0.99})
c["verification"]["kept"] = False
if "verification" in c["kernels"][0]:
    c["kernels"][0]["verification"] = k
json.dump(c, open(d + "/capture.json", "w"))
p = json.load(open(d + "/plan.json"))
p["modules"] = []          # verification dropped the rejected advice
json.dump(p, open(d + "/plan.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/rej"
expect_grep "Verified speedup: none kept: the verification measured 1 kernel and rejected every change" "$TMP/out"
expect_grep "decode_keys +0.98x median kernel speedup, rejected: not faster beyond the noise" "$TMP/out"
expect_no_grep "measured none of the changed kernels" "$TMP/out"
expect_grep "Nothing to change: the changes the analysis advised were measured and rejected" "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$TMP/rej" --format json
python3 - "$TMP/out" <<'PY' && ok || not_ok "report.json summary.verification is not 'all rejected'"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["summary"]["verification"] == "all rejected", r["summary"]
PY

# A carve-out set inside cuBLAS is not the user's call to remove.
cp -r "$real" "$TMP/lib"
python3 - "$TMP/lib" <<'PY'
import json, sys
d = sys.argv[1]
c = json.load(open(d + "/capture.json"))
gemm = "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x128x32"
c["modules"].append({"id": "5d1e0c3b9a7f2e41", "origin": "cuLibraryLoadData#2", "has_ptx": False,
                     "library": "cuBLAS", "no_ptx_reason": "a library shipped as cubin (cuBLAS)",
                     "kernels": [gemm], "gpu_time_ns": 1830000})
own = "_Z12gather_tablePKfjPfjj"
def entry(name):
    return {"name": name, "program_value": 100, "default_value": -1, "launches": 120,
            "speedup_of_default": {"method": "in-run, ABBA launches", "groups": 29,
                                   "speedup": {"min": 1.5, "median": 1.6, "max": 1.7},
                                   "noise": 0.004, "kept": True, "reason": "faster"},
            "kept": "default", "reason": "the driver's default is faster",
            "advice": "remove the cudaFuncSetAttribute(..., cudaFuncAttributePreferredSharedMemoryCarveout, 100) call for kernel " + name}
c["carveout"] = {"kernels": [entry(gemm), entry(own)]}
json.dump(c, open(d + "/capture.json", "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/lib"
expect_grep "cuBLAS sets this carve-out \(100\) inside its own code for its kernel sm90_xmma_gemm" "$TMP/out"
expect_no_grep "remove the cudaFuncSetAttribute\(.*\) call for kernel sm90_xmma" "$TMP/out"
expect_grep "remove the cudaFuncSetAttribute\(.*\) call for kernel _Z12gather_table" "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$TMP/lib" --format html
expect_grep "cuBLAS sets this carve-out" "$TMP/out"

# The first screen leads with the largest verified win, whatever its kind:
# a carve-out measured at 6.93x comes before the load plan's 1.76x.
python3 - "$TMP/lib/capture.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["carveout"]["kernels"][1]["speedup_of_default"]["speedup"]["median"] = 6.93
json.dump(c, open(sys.argv[1], "w"))
PY
expect_status 0 "$CACHEADVISE" report "$TMP/lib"
first=$(grep -m1 -A1 "Verified advice, best first:" "$TMP/out" | tail -n 1)
case "$first" in *"1. 6.93x carve-out"*"gather_table"*) ok ;; *) not_ok "the first verified advice is: $first" ;; esac
expect_grep "2. 1.76x load plan" "$TMP/out"
expect_grep "3. 1.6x carve-out" "$TMP/out"
expect_status 0 "$CACHEADVISE" report "$TMP/lib" --format json
python3 - "$TMP/out" <<'PY' && ok || not_ok "report.json's verified_advice is not ranked"
import json, sys
v = json.load(open(sys.argv[1]))["summary"]["verified_advice"]
assert [w["kind"] for w in v] == ["carve-out", "load plan", "carve-out"], v
assert v[0]["speedup"] == 6.93 and "gather_table" in v[0]["what"], v[0]
PY

finish
