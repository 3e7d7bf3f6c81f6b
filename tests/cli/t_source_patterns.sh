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
expect_grep "'x' points to 'T', a type no load helper is written for \(a template parameter" "$TMP/report.txt"
expect_grep "the line reads 'it' 2 times" "$TMP/report.txt"

expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
(cd "$TMP/src" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx patterns.cu -o "$TMP/patched.ptx") \
	2>"$TMP/nvcc2" && ok || not_ok "the patched file does not compile: $(grep error "$TMP/nvcc2" | head -3)"
"$CACHEADVISE" check "$TMP/cap" --static --source-root "$TMP/src" -- "$TMP/patched.ptx" \
	>"$TMP/check" 2>&1 && ok || not_ok "check --static: $(grep -v ' found (' "$TMP/check" | head -5)"
expect_grep '^  16 advised loads: 10 carry the advised form, 0 do not, 6 not in source\.patch$' "$TMP/check"
expect_grep '^  halfs +load 1 +L2::evict_first +found \(ld\.global\.L2::cache_hint\.b16' "$TMP/check"
finish
