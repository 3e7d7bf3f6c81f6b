#!/usr/bin/env bash
# `cacheadvise probe`. First, on any machine, the CLI's handling of its
# helper, with stand-in helpers (CACHEADVISE_PROBE): a result is checked,
# written atomically with -o and cached per GPU UUID; a helper that finds no
# GPU gives exit 4 and its reason; a broken or missing helper is an error
# that leaves no output file. Then, where there is a GPU, the real probe:
# plausible geometry and latencies, in under a minute. Without a GPU the
# real helper must say why (exit 4) and the test is skipped (77); any
# failed check fails the test either way.
set -u
: "${CACHEADVISE:?set by ctest}"
: "${CA_SOURCE_DIR:?set by ctest}"
: "${CA_BUILD_DIR:?set by ctest}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
not_ok() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { if eval "$2"; then ok; else not_ok "$1"; fi; }
export XDG_CACHE_HOME="$TMP/cache"
fixture="$CA_SOURCE_DIR/tests/gpu/device/fixtures/probe-result.json"

if [ ! -x "$CACHEADVISE" ]; then
	echo "$CACHEADVISE not built: skipped"
	exit 77
fi

# --- stand-in helpers ------------------------------------------------------
cat >"$TMP/good-helper" <<EOS
#!/bin/sh
# args: --out FILE --device N
cp "$fixture" "\$2"
EOS
cat >"$TMP/nogpu-helper" <<'EOS'
#!/bin/sh
echo "checking the driver" >&2
echo "no CUDA-capable GPU was found (stand-in)" >&2
exit 4
EOS
cat >"$TMP/garbage-helper" <<'EOS'
#!/bin/sh
echo '{"schema": "cacheadvise.device/1", "source": "probe", "sector_bytes": "big"}' >"$2"
EOS
cat >"$TMP/crash-helper" <<'EOS'
#!/bin/sh
echo "cudaMalloc failed: out of memory" >&2
exit 2
EOS
chmod +x "$TMP"/*-helper

uuid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["uuid"])' "$fixture" 2>/dev/null ||
	sed -n 's/.*"uuid": *"\([^"]*\)".*/\1/p' "$fixture")

CACHEADVISE_PROBE="$TMP/good-helper" "$CACHEADVISE" probe -o "$TMP/device.json" >"$TMP/o" 2>"$TMP/e"
rc=$?
check "good helper -o: exit 0" '[ $rc = 0 ]'
check "good helper: summary names the GPU" 'grep -q "^GPU " "$TMP/o"'
check "good helper: summary says where it is cached" 'grep -q "cached as .*device-$uuid.json" "$TMP/o"'
check "good helper: cache file under XDG_CACHE_HOME" '[ -s "$XDG_CACHE_HOME/cacheadvise/device-$uuid.json" ]'
check "good helper: device.json has the schema and a created time" \
	'grep -q "\"schema\": \"cacheadvise.device/1\"" "$TMP/device.json" && grep -q "\"created\": \"20" "$TMP/device.json"'
check "good helper: no temporary files left beside device.json" '[ -z "$(ls "$TMP" | grep "device.json.tmp")" ]'
CACHEADVISE_PROBE="$TMP/good-helper" "$CACHEADVISE" probe --json --no-cache >"$TMP/j" 2>"$TMP/e"
rc=$?
check "--json: exit 0" '[ $rc = 0 ]'
if command -v python3 >/dev/null 2>&1; then
	check "--json: stdout is the device model" \
		'python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d[\"schema\"]==\"cacheadvise.device/1\" and d[\"source\"]==\"probe\" and d[\"sector_bytes\"]>0" "$TMP/j"'
fi

rm -f "$TMP/device2.json"
CACHEADVISE_PROBE="$TMP/nogpu-helper" "$CACHEADVISE" probe -o "$TMP/device2.json" >"$TMP/o" 2>"$TMP/e"
rc=$?
check "no GPU: exit 4 (got $rc)" '[ $rc = 4 ]'
check "no GPU: the helper's reason" 'grep -q "no usable GPU: no CUDA-capable GPU was found (stand-in)" "$TMP/e"'
check "no GPU: no output file" '[ ! -e "$TMP/device2.json" ]'

CACHEADVISE_PROBE="$TMP/garbage-helper" "$CACHEADVISE" probe -o "$TMP/device2.json" >"$TMP/o" 2>"$TMP/e"
rc=$?
check "invalid result: exit 2 (got $rc)" '[ $rc = 2 ]'
check "invalid result: says the helper is out of step" 'grep -q "out of step" "$TMP/e" && grep -q "sector_bytes" "$TMP/e"'
check "invalid result: no output file" '[ ! -e "$TMP/device2.json" ]'

CACHEADVISE_PROBE="$TMP/crash-helper" "$CACHEADVISE" probe -o "$TMP/device2.json" >"$TMP/o" 2>"$TMP/e"
rc=$?
check "failing helper: exit 2 with its last words (got $rc)" '[ $rc = 2 ] && grep -q "out of memory" "$TMP/e"'

CACHEADVISE_PROBE="$TMP/does-not-exist" "$CACHEADVISE" probe >"$TMP/o" 2>"$TMP/e"
rc=$?
check "missing helper: exit 4 and says so" '[ $rc = 4 ] && grep -q "helper .* is missing" "$TMP/e"'

"$CACHEADVISE" probe --bogus >"$TMP/o" 2>"$TMP/e"
rc=$?
check "unknown option: exit 1" '[ $rc = 1 ]'
"$CACHEADVISE" probe --help >"$TMP/o" 2>"$TMP/e"
rc=$?
check "--help: exit 0, ends with EXAMPLES" '[ $rc = 0 ] && grep -q "^EXAMPLES" "$TMP/o"'

# --- the real probe --------------------------------------------------------
helper="$(dirname "$CACHEADVISE")/cacheadvise-probe"
if ! nvidia-smi -L >/dev/null 2>&1; then
	if [ -x "$helper" ]; then
		"$CACHEADVISE" probe -o "$TMP/device3.json" >"$TMP/o" 2>"$TMP/e"
		rc=$?
		check "real helper without a GPU: exit 4 (got $rc)" '[ $rc = 4 ]'
		check "real helper without a GPU: says why" 'grep -q "no usable GPU: ." "$TMP/e"'
		check "real helper without a GPU: no output file" '[ ! -e "$TMP/device3.json" ]'
	fi
	echo "$pass passed, $fail failed (no GPU: the real probe was skipped)"
	[ "$fail" = 0 ] || exit 1
	exit 77
fi
[ -x "$helper" ] || { not_ok "$helper is not built"; echo "$pass passed, $fail failed"; exit 1; }

rm -rf "$XDG_CACHE_HOME" "$TMP/device.json"
start=$(date +%s.%N)
"$CACHEADVISE" probe --verbose -o "$TMP/device.json" >"$TMP/o" 2>"$TMP/e"
rc=$?
end=$(date +%s.%N)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "real probe: exit $rc in $secs s"
cat "$TMP/o" "$TMP/e"
if [ -n "${CA_TEST_OUT:-}" ]; then
	cp "$TMP/device.json" "$CA_TEST_OUT/device.json" 2>/dev/null
	cp "$TMP/o" "$CA_TEST_OUT/probe-summary.txt"
fi
check "real probe: exit 0 (got $rc)" '[ $rc = 0 ]'
check "real probe: under a minute ($secs s)" 'awk -v s="$secs" "BEGIN { exit !(s < 60) }"'
uuid=$(nvidia-smi --query-gpu=uuid --format=csv,noheader -i 0 2>/dev/null | head -n1)
check "real probe: cached under the UUID nvidia-smi reports ($uuid)" '[ -s "$XDG_CACHE_HOME/cacheadvise/device-$uuid.json" ]'
python3 - "$TMP/device.json" <<'EOS'
import json, sys
d = json.load(open(sys.argv[1]))
lat = d["latency_cycles"]
checks = [
    ("sector size is a power of two from 16 to 128", d["sector_bytes"] in (16, 32, 64, 128)),
    ("line size is a multiple of the sector size", d["l1_line_bytes"] % d["sector_bytes"] == 0),
    ("L1 capacity between 8 KB and 512 KB", d["l1_bytes"] is not None and 8 << 10 <= d["l1_bytes"] <= 512 << 10),
    ("L1 with the most shared memory is not larger", d["l1_bytes_min"] is None or d["l1_bytes_min"] <= d["l1_bytes"]),
    ("latencies: L1 hit < L2 hit < DRAM", lat["l1_hit"] and lat["l2_hit"] and lat["dram"] and lat["l1_hit"] < lat["l2_hit"] < lat["dram"]),
    ("L2 size reported", d["l2_bytes"] > 0),
    ("measured L2 reach within 2x of the reported size", d["l2_bytes_measured"] is None or d["l2_bytes_measured"] <= 2 * d["l2_bytes"]),
    ("UUID looks like nvidia-smi's", d["uuid"].startswith("GPU-") and len(d["uuid"]) == 40),
]
bad = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(("PASS: " if ok else "FAIL: ") + name)
sys.exit(1 if bad else 0)
EOS
rc=$?
check "real probe: plausible values" '[ $rc = 0 ]'
check "real probe: summary" 'grep -q "^L1 " "$TMP/o" && grep -q "^L2 " "$TMP/o"'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
