# `cacheadvise report` on bad command lines and bad capture directories:
# exit 1 for usage, 2 for input, a message naming the file, and never a
# half-written output file.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

fixture="$CA_SOURCE_DIR/tests/fixtures/capture-handmade"
[ -d "$fixture" ] || { echo "no hand-made capture"; exit 77; }
fresh() { rm -rf "$TMP/c"; cp -r "$fixture" "$TMP/c"; }

expect_status 0 "$CACHEADVISE" report --help
expect_grep '^usage: cacheadvise report DIR' "$TMP/out"
if tail -n 5 "$TMP/out" | grep -q 'cacheadvise report' && grep -q '^EXAMPLES' "$TMP/out"; then ok; else
	not_ok "report --help does not end with EXAMPLES"; fi
expect_status 1 "$CACHEADVISE" report
expect_grep 'which capture directory' "$TMP/err"
expect_status 1 "$CACHEADVISE" report "$fixture" --format pdf
expect_grep "unknown format 'pdf'" "$TMP/err"
expect_status 1 "$CACHEADVISE" report "$fixture" "$fixture"
expect_status 1 "$CACHEADVISE" report "$fixture" --color sometimes
expect_status 1 "$CACHEADVISE" report "$fixture" --all -o x.txt
expect_status 1 "$CACHEADVISE" report "$fixture" --bogus

expect_status 2 "$CACHEADVISE" report "$TMP/nonexistent"
expect_grep "'$TMP/nonexistent' is not a capture directory" "$TMP/err"
mkdir -p "$TMP/empty"
expect_status 2 "$CACHEADVISE" report "$TMP/empty"
expect_grep 'capture.json is missing' "$TMP/err"

fresh
printf '{"schema": "cacheadvise.capture/1", "status": ' > "$TMP/c/capture.json"
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "invalid JSON in '$TMP/c/capture.json'" "$TMP/err"

fresh
sed -i 's|"cacheadvise.capture/1"|"cacheadvise.capture/2"|' "$TMP/c/capture.json"
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep 'newer than this cacheadvise reads.*upgrade cacheadvise' "$TMP/err"

fresh
sed -i 's|"cacheadvise.capture/1"|"cacheadvise.inspect/1"|' "$TMP/c/capture.json"
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep 'expected "cacheadvise.capture/1"' "$TMP/err"

fresh
rm "$TMP/c"/modules/cf936e38cf9700b0.ptx
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep "is missing 'modules/cf936e38cf9700b0.ptx'" "$TMP/err"

fresh
python3 - "$TMP/c/capture.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["kernels"][0]["loads"] = 7
json.dump(d, open(sys.argv[1], "w"))
EOF
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep 'capture.json' "$TMP/err"

fresh
printf '{"schema": "cacheadvise.plan/1", "modules": [{"functions": [{"name": "k", "loads": [{"ordinal": 0, "action": "sideways"}]}]}]}\n' > "$TMP/c/plan.json"
expect_status 2 "$CACHEADVISE" report "$TMP/c"
expect_grep 'plan.json' "$TMP/err"

# An interrupted capture renders under a banner, with a warning.
fresh
sed -i 's|"status": "complete"|"status": "incomplete"|' "$TMP/c/capture.json"
expect_status 0 "$CACHEADVISE" report "$TMP/c"
expect_grep '^\*\*\* INCOMPLETE CAPTURE' "$TMP/out"
expect_grep 'incomplete' "$TMP/err"
expect_status 0 "$CACHEADVISE" report "$TMP/c" --format html -o "$TMP/inc.html"
expect_grep 'id="incomplete"' "$TMP/inc.html"

# A failed run is reported with its log.
fresh
python3 - "$TMP/c/capture.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["runs"][7]["status"] = "failed"
d["runs"][7]["exit_status"] = 1
json.dump(d, open(sys.argv[1], "w"))
EOF
expect_status 0 "$CACHEADVISE" report "$TMP/c"
expect_grep 'run 7 \(single\) failed: see runs/007.log' "$TMP/out"

# -o into a directory that does not exist: exit 2, nothing left behind.
fresh
expect_status 2 "$CACHEADVISE" report "$TMP/c" -o "$TMP/no/such/dir/r.txt"
expect_grep "cannot write '$TMP/no/such/dir/r.txt" "$TMP/err"
if [ -e "$TMP/no" ]; then not_ok "-o left something behind"; else ok; fi
# A full standard output (/dev/full takes nothing): the report must not exit 0.
if [ -w /dev/full ]; then
	"$CACHEADVISE" report "$TMP/c" > /dev/full 2> "$TMP/err"
	st=$?
	[ "$st" = 2 ] && ok || not_ok "report to a full stdout exited $st, want 2"
fi
finish
