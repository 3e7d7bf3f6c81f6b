# The register-cache rewrite end to end without a GPU: `cacheadvise report
# --all` on a capture of samples/stencil1d.cu whose stencil_global the
# detector flags (tests/fixtures/stencil-capture) writes regcache.patch;
# it applies to a copy of the sample with git and with patch -p1, includes
# the installed <cacheadvise/regcache.cuh>, and the result compiles with
# nvcc (sm_90) against the build tree's include/. The
# rewritten loop reads `in` through the regcache API; the reports show the
# rewrite marked "not verified on this program". Without nvcc the compile
# is skipped (exit 77 when nothing else could be checked).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
fixture="$CA_SOURCE_DIR/tests/fixtures/stencil-capture"
cap="$TMP/cap" src="$TMP/src"
cp -r "$fixture" "$cap"
mkdir "$src"
cp "$CA_SOURCE_DIR/samples/stencil1d.cu" "$src/"

expect_status 0 "$CACHEADVISE" report "$cap" --all --source-root "$CA_SOURCE_DIR/samples"
patch="$cap/regcache.patch"
[ -s "$patch" ] && ok || not_ok "regcache.patch is missing or empty"

# The patch: the header as a new file, the include, the loop's rewrite.
expect_grep '^--- a/stencil1d\.cu$' "$patch"
expect_grep '^-			s \+= in\[i \+ j\];$' "$patch"
expect_grep '^\+				s \+= ca_rc\.read\(j\);$' "$patch"
expect_grep '^\+			regcache::window<float, 15> ca_rc;$' "$patch"
expect_grep '^\+			ca_rc\.load\(in, \(long long\)\(i - regcache::lane\(\)\), \(long long\)nout \+ \(2 \* k\), \(2 \* k\)\);$' "$patch"
expect_grep 'i - regcache::lane\(\) < nout;$' "$patch"
expect_grep '^\+			if \(i < nout\) \{$' "$patch"

# It applies as written, with git and with patch(1).
cp -r "$src" "$TMP/git"
if git -C "$TMP/git" init -q && git -C "$TMP/git" apply "$patch" 2>"$TMP/git.err"; then ok; else
	not_ok "git apply: $(cat "$TMP/git.err")"; fi
if (cd "$src" && patch -s -p1 <"$patch") >"$TMP/patch.out" 2>&1; then ok; else
	not_ok "patch -p1: $(cat "$TMP/patch.out")"; fi
cmp -s "$src/stencil1d.cu" "$TMP/git/stencil1d.cu" && ok || not_ok "git apply and patch -p1 differ"
[ ! -e "$src/regcache.cuh" ] && ok || not_ok "the patch copies regcache.cuh beside the file"
expect_grep '^\+#include <cacheadvise/regcache\.cuh>' "$patch"

# The rewritten stencil_global (between its name and the next kernel)
# reads `in` only through the window in the regcache branch.
sed -n '/^stencil_global(/,/^stencil_shared(/p' "$src/stencil1d.cu" >"$TMP/kernel"
expect_grep 'regcache::window<float, 15> ca_rc;' "$TMP/kernel"
expect_grep 'ca_rc\.load\(in,' "$TMP/kernel"
expect_grep 's \+= ca_rc\.read\(j\);' "$TMP/kernel"
[ "$(grep -c 'in\[i + j\]' "$TMP/kernel")" = 1 ] && ok ||
	not_ok "the rewrite should keep in[i + j] only in the fallback loop for k > 15"

# The reports show it, not verified.
expect_grep 'rewrite: regcache\.patch rewrites the loop at stencil1d\.cu:65-71 .*not verified on this program' "$cap/report.txt"
expect_grep 'class="regcache-rewrite"' "$cap/report.html"
expect_grep 'not verified on this program' "$cap/report.html"
python3 - "$cap/report.json" >"$TMP/json.out" 2>&1 <<'PY' && ok || not_ok "report.json: $(cat "$TMP/json.out")"
import json, sys
r = json.load(open(sys.argv[1]))["register_cache_rewrites"]
assert len(r) == 1, r
r = r[0]
assert r["kernel"] == "_Z14stencil_globalPKfPfmi", r
assert r["status"] == "patched" and r["patch"] == "regcache.patch", r
assert r["lines"] == [65, 71], r
assert r["verified"] == "not verified on this program", r
assert "ca_rc.read(j)" in r["text"], r
PY

# Without the sources: no regcache.patch (the earlier one is removed), and
# the report gives the code to paste and why.
mkdir "$TMP/nowhere"     # a source root without the file
expect_status 0 "$CACHEADVISE" report "$cap" --all --source-root "$TMP/nowhere"
[ -e "$patch" ] && not_ok "regcache.patch kept without the sources" || ok
expect_grep 'rewrite: not patched: its source file cannot be read \(pass --source-root\); the code to paste \(not verified on this program\):' "$cap/report.txt"
expect_grep '\| regcache::window<T, 15> ca_rc;' "$cap/report.txt"
expect_grep '\| ca_rc\.load\(P, \(long long\)\(i - regcache::lane\(\)\), \(long long\)n, 2 \* k\);' "$cap/report.txt"

# It compiles against the user's file.
if [ -n "$NVCC" ]; then
	# the header as built (build/include/cacheadvise/, as an install has it)
	if (cd "$src" && "$NVCC" -arch=sm_90 -I"$CA_BUILD_DIR/include" -c stencil1d.cu \
		-o "$TMP/stencil1d.o") 2>"$TMP/nvcc.err"; then
		ok
	else
		not_ok "nvcc cannot compile the patched stencil1d.cu: $(head -c 800 "$TMP/nvcc.err")"
	fi
else
	echo "nvcc not found: the patched file was not compiled"
	[ "$fail" = 0 ] && { echo "$pass passed, $fail failed (compile skipped)"; exit 77; }
fi
finish
