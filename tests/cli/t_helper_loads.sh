#!/usr/bin/env bash
# Loads in __device__ helpers of the user's tree (issue 38, item 1), from the
# committed PTX of samples/helper_loads.cu: produce (a float source) and
# consume (16-byte uint4 keys) read through the template helper load_at,
# consume's table through the macro LOAD_ROW of helper_loads.cuh.
#   - every use of load_at advised one form: the header's line is rewritten
#     once, with the helper's overloads for each type it is instantiated
#     with (float, and uint4 read as .v4.u32), the macro's use in consume
#     where it stands; the patch applies (and, where nvcc is here, compiles
#     and carries every form);
#   - the uses advised different forms (consume's keys L1::no_allocate, the
#     sample's advice; produce as built): the helper takes the form as a
#     template parameter (default: as built), consume's call passes its own
#     with T read from the call's argument (a kernel parameter declared
#     const uint4 *: load_at<uint4, CA_FORM_NA>); the patch applies, and
#     where nvcc is here compiles and carries every form, produce's loads
#     plain;
#   - two calls on one line the PTX's column cannot tell apart: the helper
#     is left as it is, its hint names each call site and its form;
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
expect_grep '^\+__device__ __forceinline__ uint4 ca_ld_l2ef_ro\(const uint4 \*p\)' "$patch"
expect_line '+					state = ca_ld_l2ef_ro(&LOAD_ROW(table, NCLASS, state, c & (NCLASS - 1)));' "$patch"
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
	expect_grep '^  consume +load 2 +L2::evict_first +found' "$TMP/check"
	expect_no_grep 'not found' "$TMP/check"
else
	echo "no nvcc: the patched sample is not compiled"
fi

# The uses differ: consume's keys L1::no_allocate, produce's as built.
sources "$TMP/src2"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap2" \
	--forms L2::evict_first --kernel-forms produce=- \
	--kernel-forms consume=L1::no_allocate,-,-,- --program ./helper_loads \
	-- "$ptx/helper_loads.ptx" >/dev/null
expect_status 0 "$CACHEADVISE" report "$TMP/cap2" --all --source-root "$TMP/src2"
"$CACHEADVISE" report "$TMP/cap2" --source-root "$TMP/src2" >"$TMP/report2.txt" 2>&1
patch2="$TMP/cap2/source.patch"
# the helper takes the form as a template parameter, its default as built
expect_line '-template <typename T>' "$patch2"
expect_line '+template <typename T, int CA_FORM = CA_FORM_AS_BUILT>' "$patch2"
expect_line '+	if constexpr (CA_FORM == CA_FORM_NA) return ca_ld_na_ro(&p[i]); else return p[i];' "$patch2"
expect_grep '^\+#ifndef CA_FORM_AS_BUILT$' "$patch2"
expect_grep '^\+#define CA_FORM_NA [0-9]+$' "$patch2"
# consume's call passes its form, T from its argument; produce's (as built) keeps the default
expect_line '+				nxt = load_at<uint4, CA_FORM_NA>(keys, (r + (uint64_t)p * spread) % nkeys);' "$patch2"
expect_no_grep '^[-+].*s \+= load_at' "$patch2"
expect_no_grep '^[-+].*LOAD_ROW' "$patch2"
expect_grep "helper 'load_at' takes the form as template parameter CA_FORM .*helper_loads\.cu:89" "$TMP/report2.txt"
expect_no_grep "advised different forms" "$TMP/report2.txt"
expect_status 0 "$CACHEADVISE" apply "$TMP/cap2" --source-root "$TMP/src2"
expect_grep 'template <typename T, int CA_FORM = CA_FORM_AS_BUILT>' "$TMP/src2/helper_loads.cuh"
expect_grep 'load_at<uint4, CA_FORM_NA>\(keys' "$TMP/src2/helper_loads.cu"
if [ -x "$NVCC" ]; then
	(cd "$TMP/src2" && "$NVCC" -O3 -lineinfo -arch=sm_90 -ptx helper_loads.cu -o "$TMP/patched2.ptx") \
		2>"$TMP/nvcc2" && ok || not_ok "the patched sample does not compile: $(grep error "$TMP/nvcc2" | head -3)"
	"$CACHEADVISE" check "$TMP/cap2" --static --source-root "$TMP/src2" -- "$TMP/patched2.ptx" \
		>"$TMP/check2" 2>&1 && ok || not_ok "check --static: $(head -5 "$TMP/check2")"
	expect_grep '^  consume +load 2 +L1::no_allocate +found' "$TMP/check2"
	expect_no_grep 'not found|wrong form|missing' "$TMP/check2"
	# produce's source reads stay as built: plain loads
	[ "$(grep -c 'ld.global.f32' "$TMP/patched2.ptx")" -ge 1 ] && ok ||
		not_ok "produce's as-built load_at is gone from the rebuilt PTX"
else
	echo "no nvcc: the patched sample is not compiled"
fi

# Two calls of load_at on one line, advised different forms, that the
# PTX's column cannot tell apart (the committed PTX names one column per
# line): still named, the helper left as it is.
sources "$TMP/src4"
sed -i 's/^\t\t\ts += load_at(src, (size_t)c \* NSTATES \* NCLASS + t);$/\t\t\ts += load_at(src, (size_t)c * NSTATES * NCLASS + t) + 0 * load_at(src, t);/' "$TMP/src4/helper_loads.cu"
grep -q '0 \* load_at(src, t)' "$TMP/src4/helper_loads.cu" && ok || not_ok "the two-call line was not made"
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap4" \
	--forms L2::evict_first --kernel-forms produce=L2::evict_first \
	--kernel-forms consume=-,-,-,- --program ./helper_loads \
	-- "$ptx/helper_loads.ptx" >/dev/null
"$CACHEADVISE" report "$TMP/cap4" --all --source-root "$TMP/src4" >/dev/null 2>&1
"$CACHEADVISE" report "$TMP/cap4" --source-root "$TMP/src4" >"$TMP/report4.txt" 2>&1
expect_grep "not rewritten: the uses of helper 'load_at' \(helper_loads\.cuh:16\) are advised different forms: produce \(helper_loads\.cu:60\) L2::evict_first, consume \(helper_loads\.cu:89\) as built; line 60 calls 'load_at' more than once" "$TMP/report4.txt"
expect_grep 'cacheadvise run --plan' "$TMP/report4.txt"
expect_no_grep '^\+\+\+ b/helper_loads\.cuh$' "$TMP/cap4/source.patch"

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
