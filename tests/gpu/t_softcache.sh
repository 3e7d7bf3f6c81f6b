#!/usr/bin/env bash
# GPU: the automatic software cache (issue 18) on samples/records. The
# monitor run ranks charInput and intInput (read-only, 15/16 and 3/4
# simulated hits); profile must rewrite process_records' PTX so that their
# loads go through thread-private 16-byte lines in shared memory
# (analysis/ptx_softcache.h), substitute it, time it against the unpatched
# module in alternating runs and keep it: output identical (the checksum
# line too) and at least 2x faster than its baseline. The hand-written
# rewrite measured 2.2x-4.6x (bench/results/device.md).
. "$(dirname "$0")/lib.sh"

bin=$SAMPLES/records
[ -x "$bin" ] || { echo "records not built at $bin" >&2; exit 1; }

out=$WORK/softcache
if "$CACHEADVISE" profile --out "$out" --top 1 --kernels process_records --no-l2 --repeat 5 \
	"$bin" >"$WORK/sc.stdout" 2>"$WORK/sc.stderr"; then ok; else
	not_ok "profile records failed: $(tail -n 5 "$WORK/sc.stderr")"; fi
cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-softcache.json" 2>/dev/null
cp "$out/report.txt" "${CA_GPU_LOGS:-$WORK}/report-softcache.txt" 2>/dev/null
cap=$out/capture.json
K='[k for k in j["kernels"] if "process_records" in k["name"]][0]'
SC="($K)[\"software_cache\"]"
V="($SC)[\"verification\"]"

check "the ranking selects charInput (parameter 0), read-only" \
	"0 in $SC[\"selected\"] and [c for c in $SC[\"candidates\"] if c[\"param\"] == 0][0][\"read_only\"] is True" "$cap"
check "the software cache was rewritten and verified" "$V[\"status\"] == \"verified\"" "$cap"
check "the rewrite caches charInput and intInput through every one of their loads" \
	"set($V[\"rewrite\"][\"params\"]) >= {0, 1} and $V[\"rewrite\"][\"loads\"] >= 2 and $V[\"rewrite\"][\"loads_left\"] == 0" "$cap"
check "the lines take structures x 16 bytes x 256 threads of shared memory" \
	"$V[\"rewrite\"][\"shared_bytes\"] == 16 * 256 * len($V[\"rewrite\"][\"params\"])" "$cap"
check "every round timed both versions (5 replays each, or 3 or more A B B A groups in-run)" \
	"(len([t for t in $V.get(\"baseline_ns\", []) if t]) == 5 and len([t for t in $V.get(\"advice_ns\", []) if t]) == 5) or $V.get(\"groups\", 0) >= 3" "$cap"
check "the output is identical to the baseline's" "$V[\"output\"][\"status\"] == \"identical\"" "$cap"
check "the software cache is kept" "$V[\"kept\"] is True" "$cap"
check "kept at 2x or more over its baseline, beyond the noise" \
	"$V[\"speedup\"][\"median\"] >= 2.0 and $V[\"speedup\"][\"median\"] - 1 > $V[\"noise\"]" "$cap"

# the checksum line of every software-cache run equals the baselines'
if python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
j = json.load(open(os.path.join(d, "capture.json")))
def checksum(run):
    for line in open(os.path.join(d, run["stdout"])):
        if line.startswith("checksum:"):
            return line.strip()
base = {checksum(r) for r in j["runs"] if r["variant"] == "softcache-baseline"}
adv = {checksum(r) for r in j["runs"] if r["variant"] == "softcache-advice"}
print("checksums: baseline %s, software cache %s" % (sorted(base), sorted(adv)))
sys.exit(0 if len(base) == 1 and None not in base and adv == base else 1)
PY
then ok; else not_ok "the software cache's checksum differs from the baseline's"; fi

# the PTX to use is in the capture, and ptxas assembles it
ptx=$out/$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); k=[k for k in j['kernels'] if 'process_records' in k['name']][0]; print(k['software_cache']['verification']['rewrite']['ptx'])" "$cap" 2>/dev/null)
if [ -s "$ptx" ] && grep -q "__cacheadvise_sc_read" "$ptx"; then ok; else not_ok "no rewritten PTX at $ptx"; fi
if command -v ptxas >/dev/null 2>&1; then
	if ptxas -arch=sm_90 -o /dev/null "$ptx"; then ok; else not_ok "ptxas rejects $ptx"; fi
fi
if grep -q "verified on this program: kept" "$out/report.txt" && grep -q "automatic rewrite: KEPT" "$out/report.txt"; then
	ok; else not_ok "report.txt does not show the software cache kept"; fi

# --no-softcache skips the step
if "$CACHEADVISE" profile --out "$WORK/skip" --top 1 --kernels process_records --no-l2 --no-softcache \
	--repeat 1 "$bin" >/dev/null 2>"$WORK/skip.stderr"; then ok; else not_ok "profile --no-softcache failed"; fi
check "--no-softcache leaves the software cache unverified" \
	'"verification" not in [k for k in j["kernels"] if "process_records" in k["name"]][0].get("software_cache", {})' "$WORK/skip/capture.json"

python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
k = [k for k in j["kernels"] if "process_records" in k["name"]][0]
sc = k.get("software_cache", {}); v = sc.get("verification", {}); sp = v.get("speedup") or {}
rw = v.get("rewrite") or {}
print("RESULT: records software cache: CLN %s, selected %s; rewrite params %s, %s loads, %s B shared" % (
    sc.get("cln"), sc.get("selected"), rw.get("params"), rw.get("loads"), rw.get("shared_bytes")))
print("RESULT: records software cache: %s, speedup median %.2fx (min %.2fx, max %.2fx, noise %.3f), output %s%s" % (
    "KEPT" if v.get("kept") else "rejected", sp.get("median") or 0, sp.get("min") or 0, sp.get("max") or 0,
    v.get("noise") or 0, (v.get("output") or {}).get("status"),
    "" if v.get("kept") else ": " + str(v.get("reason"))))
PY
finish
