# `cacheadvise patch`: usage, applying a plan (stdout and -o), module ids,
# and every error a user can cause: exit status, message, no output file.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

FIX="$CA_SOURCE_DIR/tests/fixtures/ptx"
PTX="$FIX/cacheops.ptx"
K=_Z10intrinsicsPKfPK6float4Pfi      # 8 loads: nc, cg, ca, cs, lu, cv, nc.v4, cs.v4
ID=$(sha256sum "$PTX" | cut -c1-16)

plan() {  # plan FILE ID-OR-EMPTY FUNCTION LOADS-JSON
	local idpart=
	[ -n "$2" ] && idpart="\"id\": \"$2\", "
	printf '{"schema": "cacheadvise.plan/1", "modules": [{%s"functions": [{"name": "%s", "loads": %s}]}]}\n' \
		"$idpart" "$3" "$4" >"$1"
}

# --help: stdout, EXAMPLES, exit 0
expect_status 0 "$CACHEADVISE" patch --help
expect_grep '^EXAMPLES' "$TMP/out"
expect_grep 'patch --plan' "$TMP/out"

# usage errors: exit 1
expect_status 1 "$CACHEADVISE" patch
expect_grep 'say what to do' "$TMP/err"
expect_status 1 "$CACHEADVISE" patch --plan x.json
expect_grep 'no PTX file' "$TMP/err"
expect_status 1 "$CACHEADVISE" patch --plan x.json --instrument "$PTX"
expect_status 1 "$CACHEADVISE" patch --plan x.json --threshold 5 "$PTX"
expect_status 1 "$CACHEADVISE" patch --instrument --threshold 0 "$PTX"
expect_status 1 "$CACHEADVISE" patch --bogus "$PTX"
expect_grep "unknown option '--bogus'" "$TMP/err"
expect_status 1 "$CACHEADVISE" patch --plan x.json "$PTX" "$PTX"

# A plan without id: load 0 (nc) -> no_allocate, 3 (cs) -> default, 6 (nc.v4) -> bypass.
plan "$TMP/p.json" "" "$K" '[{"ordinal": 0, "action": "L1::no_allocate"},
	{"ordinal": 3, "action": "default"}, {"ordinal": 6, "action": "bypass"}]'
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/p.json" "$PTX"
cp "$TMP/out" "$TMP/stdout.ptx"
# Exactly three lines differ, each only in its opcode.
diff "$PTX" "$TMP/stdout.ptx" | grep '^[<>]' >"$TMP/diff"
if [ "$(grep -c '^<' "$TMP/diff")" = 3 ] && [ "$(grep -c '^>' "$TMP/diff")" = 3 ]; then ok; else
	not_ok "want 3 changed lines: $(cat "$TMP/diff")"; fi
expect_grep '^> 	ld.global.nc.L1::no_allocate.f32 %f1, \[%rd4\];' "$TMP/diff"
expect_grep '^> 	ld.global.f32 %f4, \[%rd7\];' "$TMP/diff"
expect_grep '^> 	ld.global.cg.nc.v4.f32 \{%f7,%f8,%f9,%f10\}, \[%rd10\];' "$TMP/diff"

# -o: same bytes, written atomically (no temporary file left), nothing on stdout.
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/p.json" -o "$TMP/o.ptx" "$PTX"
if cmp -s "$TMP/o.ptx" "$TMP/stdout.ptx"; then ok; else not_ok "-o output differs from stdout"; fi
if [ -s "$TMP/out" ]; then not_ok "stdout not empty with -o"; else ok; fi
if ls "$TMP"/o.ptx.tmp.* >/dev/null 2>&1; then not_ok "temporary file left"; else ok; fi
# '-' reads standard input.
expect_status 0 sh -c "'$CACHEADVISE' patch --plan '$TMP/p.json' - <'$PTX'"
if cmp -s "$TMP/out" "$TMP/stdout.ptx"; then ok; else not_ok "stdin result differs"; fi

# The module's own id applies; another id does not (warning, unchanged output).
plan "$TMP/id.json" "$ID" "$K" '[{"ordinal": 7, "action": "L1::evict_first"}]'
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/id.json" "$PTX"
expect_grep 'ld.global.L1::evict_first.v4.f32' "$TMP/out"
plan "$TMP/other.json" 0000000000000000 "$K" '[{"ordinal": 7, "action": "L1::evict_first"}]'
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/other.json" "$PTX"
expect_grep 'has no loads for module' "$TMP/err"
if cmp -s "$TMP/out" "$PTX"; then ok; else not_ok "output changed for another module's plan"; fi

# Errors: exit 2, a message naming the problem, and no output file (an
# existing one is left as it was).
echo keep >"$TMP/keep.ptx"
bad() {  # bad NEEDLE PLAN-ARGS...
	local needle=$1; shift
	expect_status 2 "$CACHEADVISE" patch -o "$TMP/keep.ptx" "$@"
	expect_grep "$needle" "$TMP/err"
	if [ "$(cat "$TMP/keep.ptx")" = keep ]; then ok; else not_ok "output file was touched"; fi
	if ls "$TMP"/keep.ptx.tmp.* >/dev/null 2>&1; then not_ok "temporary file left"; else ok; fi
}
plan "$TMP/b1.json" "" "$K" '[{"ordinal": 0, "action": "L1::no_alloc"}]'
bad "modules\[0\]\.functions\[0\]\.loads\[0\]\.action: unknown action 'L1::no_alloc'" --plan "$TMP/b1.json" "$PTX"
plan "$TMP/b2.json" "" "$K" '[{"ordinal": 1, "action": "L1::no_allocate"}]'
bad "load 1 of '$K' \(PTX line 109, 'ld.global.cg.f32'\) cannot be rewritten: already .cg" --plan "$TMP/b2.json" "$PTX"
plan "$TMP/b3.json" "" "$K" '[{"ordinal": 8, "action": "cache"}]'
bad "has 8 global loads: no load 8" --plan "$TMP/b3.json" "$PTX"
plan "$TMP/b4.json" "" "$K" '[{"ordinal": 0, "action": "last_use"}]'
bad "\.lu has no \.nc form" --plan "$TMP/b4.json" "$PTX"
plan "$TMP/b5.json" "$ID" nosuchkernel '[{"ordinal": 0, "action": "cache"}]'
bad "names function 'nosuchkernel' for module $ID" --plan "$TMP/b5.json" "$PTX"
echo '{"schema": "cacheadvise.plan/1", "modules": [' >"$TMP/b6.json"
bad "invalid JSON in '$TMP/b6.json' at line" --plan "$TMP/b6.json" "$PTX"
bad "cannot open '$TMP/none.json': No such file" --plan "$TMP/none.json" "$PTX"
bad "cannot open '$TMP/none.ptx'" --plan "$TMP/p.json" "$TMP/none.ptx"
head -c 2000 "$PTX" >"$TMP/trunc.ptx"
bad "trunc.ptx:[0-9]+: " --plan "$TMP/p.json" "$TMP/trunc.ptx"
printf 'not ptx at all\n' >"$TMP/junk.ptx"
bad "junk.ptx:1: not PTX: no .version" --plan "$TMP/p.json" "$TMP/junk.ptx"

# --instrument: PTX with the counter array, and the layout as JSON.
expect_status 0 "$CACHEADVISE" patch --instrument --threshold 100 --layout "$TMP/layout.json" \
	-o "$TMP/mon.ptx" "$PTX"
expect_grep '__cacheadvise_counters' "$TMP/mon.ptx"
expect_grep '"symbol": "__cacheadvise_counters"' "$TMP/layout.json"
expect_grep '"threshold": 100' "$TMP/layout.json"
printf '.version 7.0\n.target sm_70\n.entry k()\n{\n\tret;\n}\n' >"$TMP/m32.ptx"
bad "cannot instrument '$TMP/m32.ptx'" --instrument "$TMP/m32.ptx"

finish
