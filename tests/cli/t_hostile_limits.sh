#!/usr/bin/env bash
# Hostile limits (issue 36, items 7, 11, 13, 16): numbers on the command
# line are range-checked where they are parsed (exit 1, naming the option
# and the range), never wrapped or overflowed; a truncated cubin and an
# out-of-range PTX ISA version are named as such (exit 2).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

# expect_text TEXT FILE: FILE holds TEXT (no pattern characters)
expect_text() {
	if grep -q -F -- "$1" "$2"; then ok; else not_ok "'$1' not found in $2: $(head -c 400 "$2")"; fi
}

FIX="$CA_SOURCE_DIR/tests/fixtures/intake"

# 7: solve --time-limit 2147484 overflowed GLPK's int milliseconds and GLPK
# aborted (SIGABRT). Up to 1e7 s solves as without a limit; beyond, exit 1.
python3 - "$TMP/g.json" <<'PY'
import json, random, sys
random.seed(36)
n = 14
nodes = [{"id": "ld%d" % i, "weight": random.randint(-100, 100)} for i in range(n)]
edges = [{"u": "ld%d" % i, "v": "ld%d" % j, "weight": random.randint(-100, 100)}
         for i in range(n) for j in range(i + 1, n)]
json.dump({"nodes": nodes, "edges": edges}, open(sys.argv[1], "w"))
PY
"$CACHEADVISE" solve --json --method exhaustive "$TMP/g.json" >"$TMP/ex.json"
for t in 2147484 1e7; do
	expect_status 0 "$CACHEADVISE" solve --json --method ilp --time-limit $t "$TMP/g.json"
	python3 - "$TMP/out" "$TMP/ex.json" <<'PY' && ok || not_ok "ilp --time-limit $t: $(head -c 300 "$TMP/out")"
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:3])
assert got["optimal"] and abs(got["objective"] - want["objective"]) < 1e-6, (got, want)
PY
done
for t in 4294967296 1e8 1e300 inf nan -1 '' 10s; do
	expect_status 1 "$CACHEADVISE" solve --time-limit "$t" "$TMP/g.json"
	expect_text "cacheadvise solve: --time-limit needs a number of seconds from 0 (no limit) to 1e7, not '$t'" "$TMP/err"
done

# 13: every integer option is digits only and within its range: no wrap
# (4294967296 was GPU 0), no saturation, no sign, no blank, no hex
for v in 4294967296 18446744073709551617 -1 1024 ' 1' +1 0x1 ''; do
	expect_status 1 "$CACHEADVISE" probe --device "$v"
	expect_text "cacheadvise probe: --device needs a GPU number from 0 to 1023, not '$v'" "$TMP/err"
done
for v in 0 1001 4294967297 -18446744073709551615 ' 5'; do
	expect_status 1 "$CACHEADVISE" check "$TMP" --repeat "$v" -- true
	expect_text "cacheadvise check: --repeat needs a number from 1 to 1000, not '$v'" "$TMP/err"
done
for v in 0 16777217 4294967297 -18446744073709551615; do
	expect_status 1 "$CACHEADVISE" patch --instrument --threshold "$v" "$FIX/kernels.ptx"
	expect_text "cacheadvise patch: --threshold needs a number from 1 to 16777216, not '$v'" "$TMP/err"
done
for o in --top --max-loads --repeat --samples --oracle; do
	for v in 18446744073709551617 -18446744073709551615 4294967297; do
		expect_status 1 "$CACHEADVISE" profile "$o=$v" ./app
		expect_text "cacheadvise profile: $o needs a whole number, not '$v'" "$TMP/err"
	done
done
expect_status 1 "$CACHEADVISE" profile --min-share '' ./app
expect_text "cacheadvise profile: --min-share is a percentage from 0 to 100, not ''" "$TMP/err"
expect_status 1 "$CACHEADVISE" profile --ranks 99999999999999999999 ./app
expect_grep "^cacheadvise profile: --ranks takes" "$TMP/err"

# 8a: the compressed entries of one input decompress to 64 times their
# size at most (at least 256 MiB, at most 4 GiB), all together, checked
# before any is decompressed: a 1.3 MB fatbin of three 400 MiB zstd
# entries (each within the per-entry limits) took 1.2 GB
python3 "$CA_SOURCE_DIR/bench/gen_fatbin_bomb.py" "$TMP/bomb.fatbin"
expect_status 2 "$CACHEADVISE" inspect "$TMP/bomb.fatbin"
expect_grep "^cacheadvise inspect: cannot read fatbin in '.*/bomb\.fatbin': its compressed entries decompress to 1258291200 bytes from [0-9]+, more than the 268435456 bytes one input may \(64 times its compressed bytes, at least 256 MiB\): it is corrupt or hostile$" "$TMP/err"
expect_no_grep . "$TMP/out"

# 11: a truncated cubin is refused as truncated (exit 2), not read as one
# with no PTX and no kernels
size=$(wc -c <"$FIX/kernels.cubin")
for n in 100 $((size / 2)) $((size - 1)); do
	head -c $n "$FIX/kernels.cubin" >"$TMP/short.cubin"
	expect_status 2 "$CACHEADVISE" inspect "$TMP/short.cubin"
	expect_grep "^cacheadvise inspect: cannot read cubin '.*short\.cubin': it is truncated \(.* ends at byte [0-9]+, the cubin has $n bytes\)" "$TMP/err"
	expect_no_grep . "$TMP/out"
	expect_status 2 "$CACHEADVISE" inspect --json "$TMP/short.cubin"
done
expect_status 0 "$CACHEADVISE" inspect "$FIX/kernels.cubin"
expect_grep "3 kernels" "$TMP/out"

# 16: .version 99999999999999.x is not "too old": it is not an ISA version
for v in 99999999999999.x 99999999999999.0 4294967302.2 100.0; do
	sed "s/^\.version .*/.version $v/" "$FIX/kernels.ptx" >"$TMP/v.ptx"
	for cmd in "inspect" "patch --instrument"; do
		expect_status 2 "$CACHEADVISE" $cmd "$TMP/v.ptx"
		expect_grep "v\.ptx:[0-9]+: \.version '$v' is not a PTX ISA version \(major\.minor" "$TMP/err"
		expect_no_grep "or later" "$TMP/err"
	done
done
finish
