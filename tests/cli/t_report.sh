# `cacheadvise report` on every committed capture (tests/fixtures/capture-*/):
# every format renders, -o writes the same bytes as stdout, the JSON and
# SARIF have their required structure, the HTML is self-contained, and
# `report --all` writes every artifact of a capture directory.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

captures=$(ls -d "$CA_SOURCE_DIR"/tests/fixtures/capture-*/ 2>/dev/null)
[ -n "$captures" ] || { echo "no captures under tests/fixtures"; exit 77; }

for fixture in $captures; do
	name=$(basename "$fixture")
	cap="$TMP/$name"
	cp -r "$fixture" "$cap"
	root=()
	[ -f "$fixture/source-root.txt" ] && root=(--source-root "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")")

	for fmt in text html json sarif; do
		expect_status 0 "$CACHEADVISE" report "$cap" --format "$fmt" "${root[@]}"
		cp "$TMP/out" "$TMP/$name.stdout.$fmt"
		expect_status 0 "$CACHEADVISE" report "$cap" --format "$fmt" -o "$TMP/$name.$fmt" "${root[@]}"
		# Solver times ("seconds") are the one volatile field.
		if [ -s "$TMP/$name.$fmt" ] && cmp -s <(grep -v '"seconds":' "$TMP/$name.$fmt") \
			<(grep -v '"seconds":' "$TMP/$name.stdout.$fmt"); then ok; else
			not_ok "$name: report --format $fmt -o differs from stdout or is empty"; fi
	done
	# No temporary files left beside -o outputs.
	if ls "$TMP" | grep -q '\.tmp\.'; then not_ok "$name: temporary file left in $TMP"; else ok; fi

	# Text: summary first, plain when piped, colour only when asked.
	txt="$TMP/$name.text"
	s=$(grep -n '^SUMMARY' "$txt" | head -1 | cut -d: -f1)
	k=$(grep -n '^KERNEL ' "$txt" | head -1 | cut -d: -f1)
	if [ -n "$s" ] && { [ -z "$k" ] || [ "$s" -lt "$k" ]; }; then ok; else not_ok "$name: SUMMARY is not first"; fi
	if grep -q $'\033' "$txt"; then not_ok "$name: escape codes in piped text"; else ok; fi
	expect_status 0 "$CACHEADVISE" report "$cap" --color always "${root[@]}"
	if grep -q $'\033\\[1mSUMMARY' "$TMP/out"; then ok; else not_ok "$name: --color always has no colour"; fi
	if command -v script >/dev/null 2>&1; then
		script -qec "'$CACHEADVISE' report '$cap' ${root[*]}" /dev/null > "$TMP/tty.out" 2>&1
		if grep -q $'\033\\[' "$TMP/tty.out"; then ok; else not_ok "$name: no colour on a terminal"; fi
		NO_COLOR=1 script -qec "'$CACHEADVISE' report '$cap' ${root[*]}" /dev/null > "$TMP/tty.out" 2>&1
		if grep -q $'\033\\[' "$TMP/tty.out"; then not_ok "$name: colour despite NO_COLOR"; else ok; fi
	fi
	# A measured speedup is shown as measured; without one, "not verified".
	if python3 - "$cap/capture.json" >/dev/null <<'EOF'
import json, sys
cap = json.load(open(sys.argv[1]))
def measured(v):
    s = v.get("speedup") if isinstance(v, dict) else None
    return isinstance(s, (int, float)) or (isinstance(s, dict) and s.get("median") is not None)
sys.exit(0 if any(measured(k.get("verification")) for k in cap["kernels"]) else 1)
EOF
	then expect_grep '(verified: |measured and rejected: )[0-9.]+x median kernel speedup' "$txt"
	else expect_grep 'Verified speedup: not verified' "$txt"; expect_no_grep 'verified: [0-9]' "$txt"; fi

	# JSON: the documented schema, every kernel and load of the capture.
	if python3 - "$TMP/$name.json" "$cap/capture.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); c = json.load(open(sys.argv[2]))
assert r["schema"] == "cacheadvise.report/1", r["schema"]
for key in ("capture", "summary", "kernels", "plan", "sections", "sources", "notes"):
    assert key in r, key
assert r["capture"]["status"] == c["status"]
assert [k["name"] for k in r["kernels"]] == [k["name"] for k in c["kernels"]]
for rk, ck in zip(r["kernels"], c["kernels"]):
    assert [l["ordinal"] for l in rk["loads"]] == [l["ordinal"] for l in ck["loads"]]
    for l in rk["loads"]:
        assert l["decision"] in ("cache", "bypass", "keep", "not patchable", "not measured"), l["decision"]
        assert l["hint"]["status"] in ("none", "rewritten", "no_lineinfo", "no_source",
                                       "outside_root", "not_rewritten", "no_source_form")
        assert l["hint"]["message"]
        if l["hit_rate"] is not None:
            assert l["hit_rate"] >= 0
s = r["summary"]
assert s["loads_changed"] == sum(1 for k in r["kernels"] for l in k["loads"] if l["changes"])
assert s["loads_rewritten_in_source"] <= s["loads_changed"]
EOF
	then ok; else not_ok "$name: report.json structure"; fi

	# SARIF 2.1.0: the structure the schema requires, one result per decided load.
	if python3 - "$TMP/$name.sarif" "$TMP/$name.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert d["version"] == "2.1.0" and d["$schema"].startswith("https://")
assert len(d["runs"]) == 1
run = d["runs"][0]
assert run["tool"]["driver"]["name"] == "cacheadvise"
rules = [x["id"] for x in run["tool"]["driver"]["rules"]]
assert "cacheadvise/bypass-l1" in rules and "cacheadvise/cache-l1" in rules
decided = [l for k in r["kernels"] for l in k["loads"] if l["decision"] in ("cache", "bypass")]
assert len(run["results"]) == len(decided), (len(run["results"]), len(decided))
for res in run["results"]:
    assert res["ruleId"] in rules
    assert rules[res["ruleIndex"]] == res["ruleId"]
    assert res["message"]["text"]
    assert res["level"] in ("note", "warning")
    for loc in res["locations"]:
        pl = loc["physicalLocation"]
        assert pl["artifactLocation"]["uri"]
        assert pl["region"]["startLine"] >= 1
        if "uriBaseId" in pl["artifactLocation"]:
            assert pl["artifactLocation"]["uriBaseId"] in run["originalUriBaseIds"]
EOF
	then ok; else not_ok "$name: hints.sarif structure"; fi

	# HTML: one self-contained page.
	html="$TMP/$name.html"
	expect_grep '^<!DOCTYPE html>' "$html"
	expect_grep 'id="summary"' "$html"
	expect_no_grep '<script|<link|<img| src=|url\(|@import' "$html"
	if grep -o 'https\?://[^"]*' "$html" | grep -v '^http://www.w3.org/2000/svg$' | grep -q .; then
		not_ok "$name: report.html refers to the network"; else ok; fi
	if python3 - "$html" "$TMP/$name.json" <<'EOF'
import json, sys, html
page = open(sys.argv[1]).read(); r = json.load(open(sys.argv[2]))
for k in r["kernels"]:
    assert ">%s</code>" % html.escape(k["label"]) in page, k["label"]
    if k["graph"] and k["graph"]["nodes"]:
        assert page.count("<circle") >= len(k["graph"]["nodes"])
EOF
	then ok; else not_ok "$name: report.html lacks a kernel or its graph"; fi

	# --all writes every artifact, atomically.
	expect_status 0 "$CACHEADVISE" report "$cap" --all "${root[@]}"
	for f in plan.json report.txt report.html report.json hints.sarif source.patch sources.json; do
		if [ -f "$cap/$f" ]; then ok; else not_ok "$name: --all did not write $f"; fi
	done
	if ls "$cap" | grep -q '\.tmp\.'; then not_ok "$name: temporary file left in the capture"; else ok; fi
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='cacheadvise.plan/1'" \
		"$cap/plan.json" && ok || not_ok "$name: plan.json schema"
	nmod=$(python3 -c "import json,sys; print(sum(1 for m in json.load(open(sys.argv[1]))['modules'] if m.get('ptx')))" "$cap/capture.json")
	npat=$(ls "$cap"/patched/*.ptx 2>/dev/null | wc -l)
	[ "$nmod" = "$npat" ] && ok || not_ok "$name: $npat patched modules, want $nmod"
	if command -v ptxas >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/ptxas ]; then
		PTXAS=$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)
		for p in "$cap"/patched/*.ptx; do
			arch=$(sed -n 's/^\.target[ \t]*\(sm_[0-9a-z]*\).*/\1/p' "$p" | head -1)
			if "$PTXAS" -arch="${arch:-sm_90}" "$p" -o "$TMP/p.cubin" 2>"$TMP/ptxas.err"; then ok; else
				not_ok "$name: ptxas rejects $(basename "$p"): $(head -c 300 "$TMP/ptxas.err")"; fi
		done
	fi
	# The patched PTX differs from the original exactly where the plan changes loads.
	if python3 - "$cap" "$TMP/$name.json" <<'EOF'
import json, sys, os
cap, r = sys.argv[1], json.load(open(sys.argv[2]))
c = json.load(open(os.path.join(cap, "capture.json")))
for m in c["modules"]:
    if not m.get("ptx"):
        continue
    a = open(os.path.join(cap, m["ptx"])).read().split("\n")
    b = open(os.path.join(cap, "patched", m["id"] + ".ptx")).read().split("\n")
    assert len(a) == len(b), m["id"]
    changed = {i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y}
    want = {l["ptx_line"] for k in r["kernels"] if k["module"] == m["id"]
            for l in k["loads"] if l["changes"]}
    assert changed == want, (m["id"], sorted(changed), sorted(want))
    for n in changed:
        assert "L1::no_allocate" in b[n - 1] or "L1::evict" in b[n - 1] or b[n - 1] != a[n - 1]
EOF
	then ok; else not_ok "$name: patched PTX changes other lines than the advised loads"; fi
done

# The hand-made capture: what its report must say.
cap="$TMP/capture-handmade"
if [ -d "$cap" ]; then
	t="$TMP/capture-handmade.text"
	expect_grep 'the plan changes 8 loads in 4 kernels' "$t"
	expect_grep '6 of 8 loads rewritten in source.patch' "$t"
	grep -A1 'stencil.cu:13  mix load 2 (ld.global.nc.f32): bypass, caching it enables 90.0 k L1 hits, avoids' "$t" > "$TMP/h"
	expect_grep '^    bypass L1 in source.patch: reads the load through ca_ldg_na\(\)' "$TMP/h"
	grep -A1 'stencil.cu:15  mix load 4 ' "$t" > "$TMP/h"
	expect_grep "not rewritten: the line reads 'a' 2 times" "$TMP/h"
	grep -A1 'PTX line 52  scale load 2 ' "$t" > "$TMP/h"
	expect_grep 'rebuild with nvcc -lineinfo' "$TMP/h"
	expect_grep 'SOFTWARE CACHE of mix  \(candidate, not verified on this program' "$t"
	# The software cache as a table, not a key=value dump.
	expect_grep '^  param  read-only simulated hits +accesses +hit rate  selected  why$' "$t"
	expect_grep '^      0  yes +210 +300 +70.0%  yes' "$t"
	expect_no_grep 'sim_hits=' "$t"
	# Per-load columns say what they are; a legend explains them; no rate above 100%.
	expect_grep 'L1 hits enabled sectors read hit rate' "$t"
	expect_grep '^LEGEND' "$t"
	expect_grep '^  L1 hits enabled  hit_i, in 32-byte sectors' "$t"
	if grep -E '[0-9]{3,}\.[0-9]%' "$t" | grep -qv '100.0%'; then not_ok "handmade: a rate above 100%"; else ok; fi
	# JIT against cubin only where both are unprofiled (gather's --measure launches shape).
	grep -A6 '^KERNEL gather' "$t" > "$TMP/k"
	expect_grep "baseline \(JIT from PTX\) vs the program's cubin: \+0.8% kernel time \(both timed unprofiled\)" "$TMP/k"
	grep -A6 '^KERNEL mix' "$t" > "$TMP/k"
	expect_no_grep 'JIT from PTX' "$TMP/k"
	expect_grep '^  L1 hit rate of the kernel with every load as built: 23.3%' "$TMP/k"
	python3 - "$TMP/capture-handmade.json" <<'PY' && ok || not_ok "handmade: report.json jit_vs_cubin / modules_without_ptx"
import json, sys
r = json.load(open(sys.argv[1]))
k = {x["label"]: x for x in r["kernels"]}
assert abs(k["gather"]["jit_vs_cubin"]["change"] - 0.00773) < 1e-4, k["gather"]["jit_vs_cubin"]
assert k["gather"]["jit_vs_cubin"]["reason"] is None
assert k["mix"]["jit_vs_cubin"]["change"] is None
assert "range profiler" in k["mix"]["jit_vs_cubin"]["reason"]
assert all(l["hit_rate"] is None for x in r["kernels"] for l in x["loads"])
m = r["modules_without_ptx"]
assert [x["id"] for x in m] == ["5d1e0c3b9a7f2e41", "a07c44e1d2b95f38"], m
assert m[0]["library"] == "cuBLAS" and "not patchable" in m[0]["reason"]
assert "-gencode arch=compute_90,code=compute_90" in m[1]["reason"]
PY
	# Modules without PTX are listed, with what would make them patchable.
	expect_grep '^MODULES WITHOUT PTX' "$t"
	expect_grep '^    a library shipped as cubin \(cuBLAS\): not patchable; L2 windows and carve-out checks still apply' "$t"
	expect_grep 'rebuild with -gencode arch=compute_90,code=compute_90 \(or -arch=sm_90, which embeds PTX\)' "$t"
	h="$TMP/capture-handmade.html"
	expect_grep '<section id="no-ptx"><h2>Modules without PTX</h2>' "$h"
	expect_grep '<section id="legend"><h2>Legend</h2>' "$h"
	expect_grep '<th>simulated hits</th>' "$h"
	# Short names with the full ones at hand, in the summary too.
	expect_grep '<code title="mix\(float const\*, float const\*, int const\*, float\*, int, int\) &#10;_Z3mixPKfS0_PKiPfii">mix</code>' "$h"
	if grep -o '<section class="summary".*</section>' "$h" | grep -q '>_Z'; then not_ok "handmade: mangled name shown in the HTML summary"; else ok; fi
	python3 - "$TMP/capture-handmade.sarif" <<'PY' && ok || not_ok "handmade: SARIF messages name kernels by their short names"
import json, sys
d = json.load(open(sys.argv[1]))
msgs = [r["message"]["text"] for r in d["runs"][0]["results"]]
assert msgs and all(not m.startswith("_Z") for m in msgs), msgs[:2]
assert any(m.startswith("mix load 2 ") and "caching it enables 90.0 k L1 hits" in m for m in msgs), msgs
PY
	expect_grep '^\+.*float s = ca_ldg_na\(&a\[i\]\);' "$cap/source.patch"
fi
finish
