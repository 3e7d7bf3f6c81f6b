# `cacheadvise apply DIR --source-root SRC` on a capture that could not read
# its sources when it was profiled (issue 17): its source.patch is empty and
# its hints say "cannot read ...". apply makes the patch from SRC and applies
# it; without --source-root, or where the sources there cannot be rewritten,
# it is exit 2 and lists every advised load with the reason.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-real"
cap="$TMP/cap" src="$TMP/src"
cp -r "$fixture" "$cap"
# Profiled where the sources were at $TMP/gone/samples (the PTX's own paths
# are only used to find call sites: inlined_at names no directory here).
sed -i "s|/work/main/samples|$TMP/gone/samples|g" "$cap/capture.json"
cp -r "$CA_SOURCE_DIR/samples" "$src"
# As profile leaves it where the sources are elsewhere: an empty patch and
# a sources.json that read nothing ("root" is the directory the PTX's
# source paths are under, as recorded on the GPU machine).
: > "$cap/source.patch"
cat > "$cap/sources.json" <<JSON
{"schema": "cacheadvise.sources/1", "root": "$TMP/gone/samples",
 "read_from": "$TMP/gone/samples", "files": []}
JSON

# Without --source-root: nothing can be rewritten, exit 2 with the reasons.
expect_status 2 "$CACHEADVISE" apply "$cap"
expect_grep 'no advised load could be rewritten in source' "$TMP/err"
expect_grep "load 0 \(stream_table.cu:119, L1::no_allocate\): cannot read" "$TMP/err"
expect_grep "load 2 \(stream_table.cu:92, L1::no_allocate\): cannot read" "$TMP/err"
expect_grep 'pass --source-root' "$TMP/err"
[ ! -s "$cap/source.patch" ] && ok || not_ok "a refused apply wrote source.patch"

# A dry run with --source-root prints the patch made from there, writes nothing.
before=$(cd "$src" && find . -type f -exec sha256sum {} + | sort)
expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src" --dry-run
expect_grep '^\+\+\+ b/stream_table.cu' "$TMP/out"
expect_grep 'made it from the sources' "$TMP/err"
[ ! -s "$cap/source.patch" ] && ok || not_ok "--dry-run wrote source.patch"
[ "$before" = "$(cd "$src" && find . -type f -exec sha256sum {} + | sort)" ] && ok ||
	not_ok "--dry-run changed the sources"

# With --source-root: the patch is made, written to DIR and applied.
expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
expect_grep '2 lines rewritten' "$TMP/err"
expect_grep 'applied' "$TMP/err"
[ -s "$cap/source.patch" ] && ok || not_ok "apply did not write source.patch"
expect_grep 'classmap\[i\] = ca_ld_na_ro\(&classmap_g\[i\]\);' "$src/stream_table.cu"
expect_grep 'nxt = load_key_na\(' "$src/stream_table.cu"
expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
expect_grep 'already applied' "$TMP/err"

# Sources where the advised lines read nothing the matcher can wrap: exit 2, reasons.
cp -r "$fixture" "$cap.2"
sed -i "s|/work/main/samples|$TMP/gone/samples|g" "$cap.2/capture.json"
: > "$cap.2/source.patch"
cat > "$cap.2/sources.json" <<JSON
{"schema": "cacheadvise.sources/1", "root": "$TMP/gone/samples",
 "read_from": "$TMP/gone/samples", "files": []}
JSON
mkdir -p "$src.2"
sed -e 's/classmap\[i\] = classmap_g\[i\];/classmap[i] = classmap_g[i] + 0 * classmap_g[i];/' \
    -e 's/^\treturn \*p;$/\treturn p[0] + p[0].x * 0;/' "$CA_SOURCE_DIR/samples/stream_table.cu" > "$src.2/stream_table.cu"
expect_status 2 "$CACHEADVISE" apply "$cap.2" --source-root "$src.2"
expect_grep 'rewrites none of the 2 loads the plan changes' "$TMP/err"
expect_grep 'load 0 \(stream_table.cu:119, L1::no_allocate\): not rewritten' "$TMP/err"
expect_grep 'load 2 \(stream_table.cu:92, L1::no_allocate\): not rewritten' "$TMP/err"
expect_grep 'run --plan' "$TMP/err"
[ ! -s "$cap.2/source.patch" ] && ok || not_ok "a refused apply wrote source.patch"
finish
