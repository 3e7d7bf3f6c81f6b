#!/usr/bin/env bash
# Loads in __device__ helpers of the user's tree (issue 38, item 1), from the
# committed PTX of samples/helper_loads.cu: produce and consume read through
# the template helper load_at and the macro LOAD_ROW of helper_loads.cuh.
#   - every use of load_at advised one form: the header's line is rewritten
#     once, the macro's use in consume where it stands; the patch applies
#     (and, where nvcc is here, compiles and carries every form);
#   - the uses advised different forms (produce evict_first, consume as
#     built): the helper is left as it is, its hint names each call site
#     and its form; the macro's use is still rewritten;
#   - a helper in a header outside the source root (vendor_load.ptx): left
#     alone, named, with run --plan.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ptx="$CA_SOURCE_DIR/tests/fixtures/ptx"
sources() {
	mkdir -p "$1"
	cp "$CA_SOURCE_DIR"/samples/{helper_loads.cu,helper_loads.cuh,sample_util.h} "$1/"
}

# Every use the same form.
sources "$TMP/src"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap" \
	--forms L2::evict_first --program ./helper_loads -- "$ptx/helper_loads.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1
patch="$TMP/cap/source.patch"
expect_grep '^\+\+\+ b/helper_loads\.cuh$' "$patch"
expect_line '+	return ca_ld_l2ef_ro(&p[i]);' "$patch"
[ "$(grep -c '^-	return p\[i\];$' "$patch")" = 1 ] && ok || not_ok "the helper's line is not rewritten once"
expect_grep '^\+__device__ __forceinline__ float ca_ld_l2ef_ro\(const float \*p\)' "$patch"
expect_line '+			float v = ca_ld_l2ef_ro(&LOAD_ROW(rows, nrows, c, r));' "$patch"
expect_no_grep 'is not defined in' "$TMP/report.txt"
expect_grep 'helper_loads\.cuh:16 +produce loads 0-3 .*' "$TMP/report.txt"
expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
expect_grep 'return ca_ld_l2ef_ro\(&p\[i\]\);' "$TMP/src/helper_loads.cuh"
if [ -x "$NVCC" ]; then
	(cd "$TMP/src" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx helper_loads.cu -o "$TMP/patched.ptx") \
		2>"$TMP/nvcc" && ok || not_ok "the patched sample does not compile: $(grep error "$TMP/nvcc" | head -3)"
	"$CACHEADVISE" check "$TMP/cap" --static --source-root "$TMP/src" -- "$TMP/patched.ptx" \
		>"$TMP/check" 2>&1 && ok || not_ok "check --static: $(head -5 "$TMP/check")"
	expect_grep '^  produce +load 0 +L2::evict_first +found' "$TMP/check"
	expect_grep '^  consume +load 1 +L2::evict_first +found' "$TMP/check"
	expect_no_grep 'not found' "$TMP/check"
else
	echo "no nvcc: the patched sample is not compiled"
fi

# The uses differ: produce's evict_first, consume's as built.
sources "$TMP/src2"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap2" \
	--forms L2::evict_first --kernel-forms produce=L2::evict_first \
	--kernel-forms consume=-,L2::evict_first --program ./helper_loads \
	-- "$ptx/helper_loads.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap2" --all --source-root "$TMP/src2"
"$CACHEADVISE" report "$TMP/cap2" --source-root "$TMP/src2" >"$TMP/report2.txt" 2>&1
expect_grep "not rewritten: the uses of helper 'load_at' \(helper_loads\.cuh:16\) are advised different forms: produce \(helper_loads\.cu:44\) L2::evict_first, consume \(helper_loads\.cu:60\) as built" "$TMP/report2.txt"
expect_grep 'cacheadvise run --plan' "$TMP/report2.txt"
expect_no_grep '^\+\+\+ b/helper_loads\.cuh$' "$TMP/cap2/source.patch"
expect_line '+			float v = ca_ld_l2ef_ro(&LOAD_ROW(rows, nrows, c, r));' "$TMP/cap2/source.patch"
expect_status 0 "$CACHEADVISE" apply "$TMP/cap2" --source-root "$TMP/src2"
cmp -s "$CA_SOURCE_DIR/samples/helper_loads.cuh" "$TMP/src2/helper_loads.cuh" && ok ||
	not_ok "apply changed the helper whose uses differ"
if [ -x "$NVCC" ]; then
	(cd "$TMP/src2" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx helper_loads.cu -o "$TMP/patched2.ptx") \
		2>"$TMP/nvcc2" && ok || not_ok "the patched sample does not compile: $(grep error "$TMP/nvcc2" | head -3)"
fi

# A helper in a header outside the source root.
mkdir -p "$TMP/src3"
cp "$ptx/src/vendor_load.cu" "$TMP/src3/"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap3" \
	--forms L1::no_allocate --program ./vendor -- "$ptx/vendor_load.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap3" --all --source-root "$TMP/src3"
"$CACHEADVISE" report "$TMP/cap3" --source-root "$TMP/src3" >"$TMP/report3.txt" 2>&1
expect_grep "'/opt/vendor/include/vendor/vload\.cuh' is outside the source root .*not rewritten; cacheadvise run --plan applies it" "$TMP/report3.txt"
[ ! -s "$TMP/cap3/source.patch" ] && ok || not_ok "source.patch rewrites a header outside the root"
finish
