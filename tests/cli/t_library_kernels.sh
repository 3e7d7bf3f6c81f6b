#!/usr/bin/env bash
# Kernels that CUB and Thrust compile into a program (issue 25 item 6:
# advice phrased for code the user owns): their loads lie in the CUDA
# Toolkit's headers, so source.patch leaves them alone and the report says
# whose code they are, how to apply the advice without a change, and CUB's
# own spelling where it has one; the loads of one header line are one line
# of advice, not one per load. The program's own kernel is rewritten as
# ever. Compiles tests/fixtures/sources/lib_kernels.cu to PTX (needs nvcc).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }

mkdir -p "$TMP/src" "$TMP/cap"
cp "$CA_SOURCE_DIR/tests/fixtures/sources/lib_kernels.cu" "$TMP/src/"
"$NVCC" -O3 -lineinfo -arch=sm_90 -ptx "$TMP/src/lib_kernels.cu" -o "$TMP/lib.ptx" 2>"$TMP/nvcc.err" ||
	{ not_ok "nvcc: $(head -5 "$TMP/nvcc.err")"; finish; }
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap" \
	--forms "L1::no_allocate,bypass" --program "$TMP/src/app" -- "$TMP/lib.ptx" >"$TMP/calls"
expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1

# the program's own kernel: rewritten
expect_grep '^    scale +loads 0-1 lib_kernels\.cu:15 +bypass L1 \(L1::no_allocate\)  \[in source\.patch\]$' "$TMP/report.txt"
# CUB's kernels: named by the header as it is included, one line a header line
expect_grep '^    DeviceReduceSingleTileKernel loads [0-9]+-[0-9]+ <cub/[a-z_/]+\.cuh>:[0-9]+ bypass L1' "$TMP/report.txt"
expect_grep '^    transform_kernel loads [0-9]+-[0-9]+ <cub/device/dispatch/kernels/transform\.cuh>:[0-9]+ ' "$TMP/report.txt"
changed=$(python3 -c 'import json,sys; print(sum(len(f["loads"]) for m in json.load(open(sys.argv[1]))["modules"] for f in m["functions"]))' "$TMP/cap/plan.json")
lines=$(sed -n '/What to change:/,/How to apply:/p' "$TMP/report.txt" | grep -c '^    [A-Za-z_]')
[ "$changed" -gt 100 ] && [ "$lines" -lt $((changed / 4)) ] && ok ||
	not_ok "What to change has $lines lines for $changed changed loads"
# ... and their hints say whose code it is and what to do
expect_grep "in CUB, a header of the CUDA Toolkit \(cub/[a-z_/]+\.cuh:[0-9]+\): the library's code, not yours, so not rewritten; cacheadvise run --plan applies it without a change \(for a CUB algorithm's input, cub::CacheModifiedInputIterator<cub::LOAD_CG, T> gives its loads this form\)" "$TMP/report.txt"
expect_grep "in CUB, a header of the CUDA Toolkit \(cub/[a-z_/]+\.cuh:[0-9]+\): the library's code, not yours, so not rewritten; cacheadvise run --plan applies it without a change$" "$TMP/report.txt"
expect_no_grep 'is outside the source root' "$TMP/report.txt"
# the HTML report names and groups them the same way
expect_grep '<td class="num">[0-9]+&ndash;[0-9]+</td><td>&lt;cub/[a-z_/]+\.cuh&gt;:[0-9]+</td>' "$TMP/cap/report.html"
expect_grep "in CUB, a header of the CUDA Toolkit \(cub/[a-z_/]+\.cuh:[0-9]+\): the library&#39;s code|in CUB, a header of the CUDA Toolkit \(cub/[a-z_/]+\.cuh:[0-9]+\): the library's code" "$TMP/cap/report.html"
# source.patch rewrites the program's file only
grep '^+++ ' "$TMP/cap/source.patch" >"$TMP/files"
expect_line '+++ b/lib_kernels.cu' "$TMP/files"
[ "$(wc -l <"$TMP/files")" = 1 ] && ok || not_ok "source.patch rewrites more files: $(cat "$TMP/files")"
# the same in the JSON report: the hint's status is outside_root
"$CACHEADVISE" report "$TMP/cap" --format json -o "$TMP/report.json" 2>"$TMP/err" && ok ||
	not_ok "report --format json: $(head -c 300 "$TMP/err")"
python3 - "$TMP/report.json" >"$TMP/status" <<'PY'
import json, sys
st = set()
for k in json.load(open(sys.argv[1]))["kernels"]:
    for l in k["loads"]:
        if "cub/" in (l.get("file") or "") and l.get("hint"):
            st.add(l["hint"]["status"])
print(sorted(st))
PY
expect_line "['outside_root']" "$TMP/status"
finish
