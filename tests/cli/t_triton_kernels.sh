#!/usr/bin/env bash
# Triton kernels in general (issue 27): ten kernels in the styles real
# programs use (tests/fixtures/triton/wide, compiled offline by Triton 3.6
# for sm_90), every tl.load call given a form in turn, the source.patch
# written, applied, and the rebuilt kernels (wide/rebuilt: Triton's compile
# of the patched file) checked to carry every advised form. Covers what a
# tl.load looks like in the wild: positional mask and other, a call over
# several lines, several calls on a line, a gather through a nested
# tl.load, a load in a @triton.jit helper, block pointers, Inductor's
# pointwise code, an eviction policy already there, and a matmul whose
# loads Triton pipelines as cp.async copies. Needs python3, not Triton.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
FIX="$CA_SOURCE_DIR/tests/fixtures/triton/wide"

mkdir -p "$TMP/cap/modules" "$TMP/src"
cp "$FIX/kernels.py" "$TMP/src/kernels.py"
# a capture of the cache's kernels: loads as inspect sees them; the plan
# gives each tl.load call (line and column) the next form of the list
python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/cap" \
	--forms "L1::evict_first+L2::evict_first,L1::evict_last+L2::evict_last,bypass,cache,default" \
	-- $(ls "$FIX"/cache/*/*.ptx | awk -F/ '{ print $NF, $0 }' | sort | cut -d' ' -f2) \
	>"$TMP/calls"
# 26 calls in 9 kernels (the pipelined matmul has no ld.global)
calls=$(wc -l <"$TMP/calls")
[ "$calls" = 26 ] && ok || not_ok "want 26 tl.load calls, got $calls: $(cat "$TMP/calls")"

expect_status 0 "$CACHEADVISE" report "$TMP/cap" --all --source-root "$TMP/src"
patch="$TMP/cap/source.patch"
# positional mask and other: the loads sit at the last positional argument
expect_line '+    tmp5 = tl.load(in_ptr1 + (x0 + (768*tmp4)), xmask, eviction_policy="evict_first")' "$patch"
expect_line '+    e = tl.load(X + offs + 3, m, 0.0, cache_modifier=".cg") + tl.load(T + offs + 4, m, cache_modifier=".ca")' "$patch"
# "default": nothing to add where nothing is there
expect_no_grep '^[-+]    c = tl.load\(I \+ offs, m\)' "$patch"
# an eviction policy already there gives way to a cache modifier (Triton
# 3.6 cannot compile both on one load)
expect_line '+    tmp0 = tl.load(in_ptr0 + (x1), xmask, cache_modifier=".ca")' "$patch"
expect_line '+    x = tl.load(X + offs, mask=offs < n, other=0.0, cache_modifier=".cg")' "$patch"
# a call over several lines: its loads sit on the pointer's line
expect_line '+        other=1.0, eviction_policy="evict_first",' "$patch"
# several calls on a line, a gather through a nested tl.load, a space
# before the pointer
expect_line '+    z = tl.load(X + offs, m, 0.0) + tl.load(Y + offs, mask=m, eviction_policy="evict_last")' "$patch"
expect_line '+    d = tl.load(T + tl.load(I + offs + 1, mask=m, eviction_policy="evict_last"), mask=m, eviction_policy="evict_first")' "$patch"
expect_line '+    b = tl.load(  T + offs, mask=m, other=1.0, cache_modifier=".ca")' "$patch"
# the tl.load of a @triton.jit helper, written once for both its calls
expect_line '+    v = tl.load(ptr + offs, mask=mask, other=0.0, cache_modifier=".ca")' "$patch"
# block pointers
expect_line '+        a = tl.load(a_bp, boundary_check=(0, 1), eviction_policy="evict_first")' "$patch"
# every call found: no "by hand" reason in the report
"$CACHEADVISE" report "$TMP/cap" --source-root "$TMP/src" >"$TMP/report.txt" 2>&1
expect_no_grep 'no tl.load call' "$TMP/report.txt"
# a call's PTX loads are one hint and one decision
expect_grep '^  kernels\.py:17:16  softmax_kernel loads 0-7 \(ld\.global\.b32\): [a-z]+, 8 PTX loads of one call$' "$TMP/report.txt"
expect_line '  decided per call: 8 PTX loads are 1 source call (a tl.load'"'"'s loads take one decision)' "$TMP/report.txt"
# ... in the HTML report too: one row of "What to change", one hint
expect_grep 'softmax_kernel</[a-z]+></td><td class="num">0&ndash;7</td><td>kernels\.py:17:16</td>' "$TMP/cap/report.html"
expect_grep 'kernels\.py:17:16</strong> &mdash; .*softmax_kernel.* loads 0&ndash;7 \(<code>ld\.global\.b32</code>\): <span class="tag [a-z]+">[a-z]+</span>, 8 PTX loads of one call<br>' "$TMP/cap/report.html"
# the pipelined matmul's tl.load calls are cp.async copies: inspect counts
# them by line, and the report says they are neither measured nor patched
"$CACHEADVISE" inspect "$FIX"/cache/*/matmul_pipelined_kernel.ptx >"$TMP/mm.txt"
expect_grep 'kernel matmul_pipelined_kernel .*0 global loads, .*24 async copies from global to shared memory\)' "$TMP/mm.txt"
expect_line '    async copies (cp.async, not measured or patched): kernels.py:182 (12), kernels.py:183 (12)' "$TMP/mm.txt"
"$CACHEADVISE" inspect --json "$FIX"/cache/*/matmul_pipelined_kernel.ptx >"$TMP/mm.json"
python3 - "$TMP/mm.json" >"$TMP/mm.sites" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["modules"][0]["functions"][0]
print([(a["line"], a["column"], a["copies"]) for a in f["async_copies"]])
PY
expect_line '[(182, 20, 12), (183, 20, 12)]' "$TMP/mm.sites"
expect_grep '^  24 async copies from global to shared memory \(cp\.async\) at kernels\.py:182 \(12\), kernels\.py:183 \(12\) are no ld\.global loads: they are neither measured nor patched\. Triton pipelines' "$TMP/report.txt"
expect_grep '24 async copies from global to shared memory' "$TMP/cap/report.html"

# run --plan's side: every patched module (the plan's forms in the PTX,
# createpolicy and all) assembles for its target (sm_90a: wgmma)
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
if [ -x "$PTXAS" ]; then
	n=0
	for f in "$TMP"/cap/patched/*.ptx; do
		target=$(awk '$1 == ".target" { print $2; exit }' "$f")
		if "$PTXAS" -arch="$target" "$f" -o "$TMP/p.cubin" 2>"$TMP/ptxas.err"; then
			n=$((n + 1))
		else
			not_ok "ptxas -arch=$target $(basename "$f"): $(head -3 "$TMP/ptxas.err")"
		fi
	done
	[ "$n" = 10 ] && ok || not_ok "$n of 10 patched modules assembled"
fi

expect_status 0 "$CACHEADVISE" apply "$TMP/cap" --source-root "$TMP/src"
# the applied file is the one wide/rebuilt was compiled from
if cmp -s "$TMP/src/kernels.py" "$FIX/rebuilt/kernels.py"; then ok; else
	not_ok "the applied kernels.py differs from wide/rebuilt/kernels.py: $(diff "$TMP/src/kernels.py" "$FIX/rebuilt/kernels.py" | head -20)"
fi
python3 -m py_compile "$TMP/src/kernels.py" 2>"$TMP/pyc" && ok || not_ok "patched kernels.py: $(cat "$TMP/pyc")"

# the rebuilt kernels carry every advised form, each tl.load found by its
# line and column in the patched file
TRITON_CACHE_DIR="$FIX/rebuilt/cache" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check.out" 2>&1
rc=$?
[ "$rc" = 0 ] && ok || not_ok "check --static exited $rc: $(grep -v ' found (' "$TMP/check.out" | head -20)"
expect_grep '^  ([0-9]+) advised loads: \1 carry the advised form, 0 do not, 0 not in source.patch' "$TMP/check.out"
# the second call of a line whose first call's text changed length: its
# column moved through the rewritten line (92 -> 84)
expect_grep 'oneline_kernel +load [0-9]+ +cache +found \(ld\.global\.ca\.b32, PTX line [0-9]+; line 162 of the patched source, the tl.load at column 84, load 0 of it\)' "$TMP/check.out"
# the kernels as first compiled do not: exit 2
TRITON_CACHE_DIR="$FIX/cache" "$CACHEADVISE" check "$TMP/cap" --static \
	--source-root "$FIX/rebuilt" -- python3 prog.py >"$TMP/check0.out" 2>&1
rc=$?
[ "$rc" = 2 ] && ok || not_ok "check --static of the unpatched kernels exited $rc, want 2"
finish
