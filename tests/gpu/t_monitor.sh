#!/usr/bin/env bash
# GPU: the monitor run (issue 4). On every sample, the per-load sector
# counts of the instrumented run, summed over the kernel, equal the
# hardware L1 global-load sector count of the baseline run exactly (with
# --measure runs, whose baselines count every launch; spmv:
# within 0.001%, see below); the
# instrumented program prints the same checksum; where a kernel has more
# loads than --max-loads, one load of every source site is measured before
# a second of any, a site's busiest first (the monitor run goes first); on records the software
# cache ranks the data structures as the seed's reasoning predicts:
# charInput (param 0, 15 of 16 byte reads hit a 16-byte line) above
# intInput (param 1, 3 of 4), and charInput is selected first.
. "$(dirname "$0")/lib.sh"

for s in stream_table thrash_pair records stencil1d spmv l2_reuse; do
	out=$WORK/$s
	if "$CACHEADVISE" profile --out "$out" --measure runs --top 1 --max-loads 4 --no-verify --no-l2 \
		"$SAMPLES/$s" >"$WORK/$s.stdout" 2>"$WORK/$s.stderr"; then ok; else
		not_ok "profile $s failed: $(tail -n 5 "$WORK/$s.stderr")"; continue; fi
	cap=$out/capture.json
	check "$s: monitor counted every load" 'all(l["access"] is not None for l in j["kernels"][0]["loads"] if l["patchable"])' "$cap"
	# README: "exactly on 5 samples and within 0.00003% on the sixth". The
	# sixth is spmv: 7,790,361,007 counted against 7,790,363,163 in hardware,
	# the same 2,156 sectors on an H200 and an H100, so a fixed difference of
	# this kernel, not noise; 0.001% is 30 times that and 1,000 times tighter
	# than the 1% this test used to allow.
	tol=0
	[ "$s" = spmv ] && tol=0.00001
	check "$s: sum of per-load sectors = hardware L1 sectors (tolerance $tol)" \
		"(lambda k: abs(sum(l['access'] or 0 for l in k['loads']) - k['counters']['baseline']['l1_sectors']) <= $tol * k['counters']['baseline']['l1_sectors'])(j['kernels'][0])" "$cap"
	check "$s: the instrumented program prints the same output" \
		'len(set(r["stdout_sha256"] for r in j["runs"] if r["variant"] in ("baseline", "monitor"))) == 1' "$cap"
	# with loads left out: one load of every source site before a second of
	# any (analysis/load_choice.h), a site's busiest first
	python3 - "$cap" <<'PY' >"$WORK/$s.choice"
import json, sys
k = json.load(open(sys.argv[1]))["kernels"][0]
def site(l):
    if not l.get("file") or not l.get("line") or l.get("param", -1) < 0:
        return ("load", l["ordinal"])
    return (l["file"], l["line"], l.get("column"), l.get("param"), json.dumps(l.get("inlined_at")))
loads = [l for l in k["loads"] if l["patchable"]]
sites = {}
for l in loads:
    sites.setdefault(site(l), []).append(l)
measured = [l for l in loads if l.get("measured")]
busiest_first = all(min([l["access"] for l in g if l.get("measured")] or [float("inf")]) >=
                    max([l["access"] for l in g if not l.get("measured")] or [0])
                    for g in sites.values())
covered = sum(1 for g in sites.values() if any(l.get("measured") for l in g))
ok = k["left_out_loads"] == 0 or (busiest_first and covered == min(len(measured), len(sites)))
print("sites %d, loads %d, measured %d" % (len(sites), len(loads), len(measured)))
print("OK" if ok else "FAIL")
PY
	if tail -n 1 "$WORK/$s.choice" | grep -qx OK; then ok; else
		not_ok "$s: with loads left out, the measured ones are not one of every site first, its busiest: $(head -1 "$WORK/$s.choice")"; fi
	python3 - "$cap" "$s" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s = sys.argv[2]; k = j["kernels"][0]
hw = k["counters"]["baseline"]["l1_sectors"]; mon = sum(l["access"] or 0 for l in k["loads"])
base = k["gpu_time_ns"].get("cubin") or 0; m = k.get("monitor_gpu_time_ns") or 0
print("RESULT: %s %s: monitor sectors %.0f vs hardware %.0f (%.3f%%); instrumented kernel time x%.2f; E_on %s E_off %s" % (
    s, k["name"][:24], mon, hw, 100.0 * (mon - hw) / hw if hw else 0, m / base if base else 0,
    (k.get("efficiency") or {}).get("on"), (k.get("efficiency") or {}).get("off")))
sc = k.get("software_cache") or {}
print("RESULT: %s software cache: enabled=%s cln=%s selected=%s" % (s, sc.get("enabled"), sc.get("cln"), sc.get("selected")))
PY
done
# --no-monitor: no traffic to choose by; the loads measured are the first
# ones in the PTX, and the notes say so.
if "$CACHEADVISE" profile --out "$WORK/nomon" --top 1 --max-loads 2 --no-monitor --no-verify --no-l2 \
	"$SAMPLES/records" >/dev/null 2>"$WORK/nomon.stderr"; then ok; else
	not_ok "profile --no-monitor records failed: $(tail -n 5 "$WORK/nomon.stderr")"; fi
check "records --no-monitor: the first two patchable loads are measured, and the notes say why" \
	'(lambda k: [l["ordinal"] for l in k["loads"] if l.get("measured")] == [l["ordinal"] for l in k["loads"] if l["patchable"]][:2] and any("without monitor counts" in n for n in j["notes"]))(j["kernels"][0])' \
	"$WORK/nomon/capture.json"
cap=$WORK/records/capture.json
check "records: charInput (param 0) has more simulated hits than intInput (param 1)" \
	'(lambda d: d[0]["sim_hits"] > d[1]["sim_hits"])({x["param"]: x for x in j["kernels"][0]["data_structures"]})' "$cap"
check "records: charInput hits about 15/16 of its accesses, intInput about 3/4" \
	'(lambda d: abs(d[0]["sim_hits"] / d[0]["sim_accesses"] - 15/16) < 0.03 and abs(d[1]["sim_hits"] / d[1]["sim_accesses"] - 3/4) < 0.03)({x["param"]: x for x in j["kernels"][0]["data_structures"]})' "$cap"
check "records: the software cache selects charInput first" \
	'j["kernels"][0]["software_cache"]["enabled"] and j["kernels"][0]["software_cache"]["selected"][0] == 0' "$cap"
finish
