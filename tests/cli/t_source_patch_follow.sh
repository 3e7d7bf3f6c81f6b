#!/usr/bin/env bash
# The source patch when two loads come from one expression and the plan
# wants them apart (issue 17): deposit.cu:73 is compiled twice (a peeled
# loop); the plan bypasses load 1 and leaves load 3, a copy that read no
# sector. The expression is rewritten for load 1, load 3 follows it (the
# hint says so), and the patch's own plan carries both. Applied to a copy of
# samples/ and compiled with nvcc, the rebuilt kernel's loads 0, 1 and 3
# carry L1::no_allocate (`check --static`). Without nvcc the compile and
# the static check are skipped.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
cap="$TMP/cap" src="$TMP/src"
cp -r "$CA_SOURCE_DIR/tests/fixtures/deposit-capture" "$cap"
mkdir "$src"
cp "$CA_SOURCE_DIR/samples/deposit.cu" "$CA_SOURCE_DIR/samples/sample_util.h" "$src/"

expect_status 0 "$CACHEADVISE" report "$cap" --all --source-root "$CA_SOURCE_DIR/samples"
expect_grep '^-		float4 cur = parts\[r\];$' "$cap/source.patch"
expect_grep '^\+		float4 cur = ca_ld_na_ro\(&parts\[r\]\);$' "$cap/source.patch"
expect_grep '^\+				nxt = ca_ld_na_ro\(&parts\[\(r \+ \(uint64_t\)\(p \+ 1\) \* spread\) % n\]\);$' "$cap/source.patch"
python3 - "$cap/report.json" <<'PY' && ok || not_ok "report.json: load 3 does not follow load 1"
import json, sys
r = json.load(open(sys.argv[1]))
loads = {l["ordinal"]: l for k in r["kernels"] for l in k["loads"]}
h3, h1 = loads[3]["hint"], loads[1]["hint"]
assert h1["status"] == "rewritten", h1
assert h3["status"] == "rewritten" and "rewritten with load 1" in h3["message"], h3
PY

expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
expect_grep 'ca_ld_na_ro\(&parts\[r\]\)' "$src/deposit.cu"
if [ -z "$NVCC" ]; then
	echo "no nvcc: the compile and the static check are skipped"
	finish
fi
if "$NVCC" -gencode "arch=compute_90,code=[sm_90,compute_90]" -lineinfo -O3 "$src/deposit.cu" \
	-o "$TMP/rebuilt" 2>"$TMP/nvcc.err"; then ok; else not_ok "nvcc: $(head -c 400 "$TMP/nvcc.err")"; fi
expect_status 0 "$CACHEADVISE" check "$cap" --static --source-root "$src" -- "$TMP/rebuilt"
expect_grep '2 advised loads: 2 carry the advised form, 0 do not, 0 not in source.patch' "$TMP/out"
finish
