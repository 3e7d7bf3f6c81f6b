#!/usr/bin/env bash
# The source patch on the forms real CUDA code reads memory in
# (tests/fixtures/sources/patterns.cu): every load given a form in turn,
# the patch applied, the patched file compiled by nvcc and checked. What
# the matcher rewrites (__ldg(&x[i]) becomes the helper, a
# reinterpret_cast<const float4 *>(x)[i] read, a __half and a uint8_t
# element, a shared-memory tile's global reads) and what it leaves with a
# reason (a template's T, which no helper overload is written for; two reads
# of one parameter on a line). Needs nvcc.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }

mkdir -p "$TMP/build" "$TMP/src" "$TMP/cap"
cp "$CA_SOURCE_DIR/tests/fixtures/sources/patterns.cu" "$TMP/build/"
cp "$CA_SOURCE_DIR/tests/fixtures/sources/patterns.cu" "$TMP/src/"
(cd "$TMP/build" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx patterns.cu -o orig.ptx) 2>"$TMP/nvcc" ||
	{ not_ok "nvcc: $(head -3 "$TMP/nvcc")"; finish; }
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap" \
	--forms "L1::no_allocate,L1::evict_last+L2::evict_last,L2::evict_first" --program ./app \
	-- "$TMP/build/orig.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1
patch="$TMP/cap/source.patch"
expect_line '+		out[i] = ca_ldg_na(&x[i]) * 2.0f;' "$patch"
expect_line '+		float4 v = ca_ldg_el_l2el(&reinterpret_cast<const float4 *>(x)[i]);' "$patch"
expect_grep '^\+		out\[i\] = __half2float\(ca_ld_l2ef_ro\(&x\[i\]\)\);$' "$patch"
expect_grep '^\+__device__ __forceinline__ __half ca_ld_l2ef_ro\(const __half \*p\) \{ unsigned short v; .*ld\.global\.L2::cache_hint\.b16 .* return __ushort_as_half\(v\); \}$' "$patch"
expect_grep '^\+		As\[threadIdx\.y\]\[threadIdx\.x\] = ca_ld_l2ef_ro\(&A\[row \* N \+ t \* TILE \+ threadIdx\.x\]\);$' "$patch"
expect_grep 'not rewritten: load [0-9] of axpy comes from the same expression and is advised' "$TMP/report.txt"
expect_grep "the line reads 'it' 2 times" "$TMP/report.txt"

expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
(cd "$TMP/src" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx patterns.cu -o "$TMP/patched.ptx") \
	2>"$TMP/nvcc2" && ok || not_ok "the patched file does not compile: $(grep error "$TMP/nvcc2" | head -3)"
"$CACHEADVISE" check "$TMP/cap" --static --source-root "$TMP/src" -- "$TMP/patched.ptx" \
	>"$TMP/check" 2>&1 && ok || not_ok "check --static: $(grep -v ' found (' "$TMP/check" | head -5)"
expect_grep '^  16 advised loads: 10 carry the advised form, 0 do not, 6 not in source\.patch$' "$TMP/check"
expect_grep '^  halfs +load 1 +L2::evict_first +found \(ld\.global\.L2::cache_hint\.b16' "$TMP/check"

# A template kernel: one text for axpy<float> and axpy<double>. Advised one
# form in both, it is rewritten with an overload for each instantiation's T
# (from the kernel's mangled name); advised in one only, it is not, and the
# hint says why (the other instantiation would change unverified).
mkdir -p "$TMP/cap2" "$TMP/src2"
cp "$CA_SOURCE_DIR/tests/fixtures/sources/patterns.cu" "$TMP/src2/"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap2" \
	--forms "L1::no_allocate" --program ./app -- "$TMP/build/orig.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap2" --all --source-root "$TMP/src2"
expect_line '+		y[i] = a * ca_ldg_na(&x[i]) + ca_ld_na(&y[i]);' "$TMP/cap2/source.patch"
expect_grep '^\+__device__ __forceinline__ double ca_ldg_na\(const double \*p\)' "$TMP/cap2/source.patch"
expect_grep '^\+__device__ __forceinline__ float ca_ldg_na\(const float \*p\)' "$TMP/cap2/source.patch"
expect_status 0 "$CACHEADVISE" apply "$TMP/cap2" --source-root "$TMP/src2"
(cd "$TMP/src2" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx patterns.cu -o "$TMP/patched2.ptx") \
	2>"$TMP/nvcc3" && ok || not_ok "the patched template does not compile: $(grep error "$TMP/nvcc3" | head -3)"
"$CACHEADVISE" check "$TMP/cap2" --static --source-root "$TMP/src2" -- "$TMP/patched2.ptx" \
	>"$TMP/check2" 2>&1 && ok || not_ok "check --static: $(grep -v ' found (' "$TMP/check2" | head -5)"
expect_grep '^  axpy +load 0 +L1::no_allocate +found \(ld\.global\.nc\.L1::no_allocate\.f64' "$TMP/check2"
# axpy<double> not measured (the program never launched it): it is still
# in the module, and would change with the text
python3 - "$TMP/cap2" <<'PY'
import json, sys
for name, key in (("plan.json", "modules"), ("capture.json", None)):
    path = sys.argv[1] + "/" + name
    doc = json.load(open(path))
    if key:
        for m in doc[key]:
            m["functions"] = [f for f in m["functions"] if not f["name"].startswith("_ZN3ops4axpyId")]
    else:
        doc["kernels"] = [k for k in doc["kernels"] if not k["name"].startswith("_ZN3ops4axpyId")]
    json.dump(doc, open(path, "w"))
PY
rm -f "$TMP/cap2/sources.json" "$TMP/cap2/source.patch"
"$CACHEADVISE" report "$TMP/cap2" --source-root "$CA_SOURCE_DIR/tests/fixtures/sources" >"$TMP/report2.txt" 2>&1
expect_grep "not rewritten: kernel template 'axpy' has 2 instantiations in its module and the rewrite of its source changes them all, but 1 is advised L1::no_allocate here: the others would change unverified" "$TMP/report2.txt"
finish
