#!/usr/bin/env bash
# GPU: `profile` measures what the method needs (issue 3). On the
# stream_table sample, hit_i of the streaming key load (param 0) is near 0
# and that of the table load (param 4) is high; on thrash_pair, the A and B
# loads thrash: hit_{A,B} < half of hit_A + hit_B. The capture is complete, every
# baseline counter is there, and the runs needed are 2 + 1 + max N + pairs
# (+ discovery, monitor, verification), with --measure runs (the first
# method; t_measure.sh compares the in-run one with it).
. "$(dirname "$0")/lib.sh"

profile() { # profile NAME ARGS...: capture into $WORK/NAME
	local name=$1; shift
	"$CACHEADVISE" profile --out "$WORK/$name" --measure runs --no-verify --top 1 "$@" \
		>"$WORK/$name.stdout" 2>"$WORK/$name.stderr"
	local rc=$?
	cp "$WORK/$name/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-$name.json" 2>/dev/null
	tail -n 5 "$WORK/$name.stderr"
	return $rc
}

if profile stream_table "$SAMPLES/stream_table"; then ok; else not_ok "profile stream_table failed"; fi
cap=$WORK/stream_table/capture.json
check "capture complete" 'j["status"] == "complete"' "$cap"
check "one kernel measured" 'len(j["kernels"]) == 1' "$cap"
check "baseline counters present" 'all(k in j["kernels"][0]["counters"]["baseline"] for k in ("l1_hits","l1_sectors","l2_sectors_from_l1","dram_bytes_read","duration_ns"))' "$cap"
check "streaming load (param 0) hit_i near 0" \
	'[l for l in j["kernels"][0]["loads"] if l["param"] == 0 and l["measured"]][0]["hit"] < 0.02 * j["kernels"][0]["counters"]["baseline"]["l1_sectors"]' "$cap"
check "table load (param 4) hit_i high, > 20x the streaming load's" \
	'(lambda L: L(4)["hit"] > 20 * max(1.0, L(0)["hit"]))(lambda p: [l for l in j["kernels"][0]["loads"] if l["param"] == p and l["measured"]][0])' "$cap"
check "runs = discovery + 2 baselines + all-bypassed + N + pairs + monitor" \
	'(lambda n: len([r for r in j["runs"] if r["variant"] not in ("verify-plan","verify-baseline")]) == 1 + 2 + 1 + n + n*(n-1)//2 + 1)(sum(1 for l in j["kernels"][0]["loads"] if l["measured"]))' "$cap"
python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); k = j["kernels"][0]
for l in k["loads"]:
    if l["measured"]:
        print("RESULT: stream_table %s load %d (param %s, line %s): hit_i=%.0f access=%s" % (
            k["name"][:24], l["ordinal"], l["param"], l["line"], l["hit"] or 0, l.get("access")))
PY

if profile thrash_pair "$SAMPLES/thrash_pair"; then ok; else not_ok "profile thrash_pair failed"; fi
cap=$WORK/thrash_pair/capture.json
check "thrash_pair capture complete" 'j["status"] == "complete"' "$cap"
# README: hit_{A,B} = 1.45e9 < hit_A + hit_B = 4.23e9 (H200); H100
# 1,320,403,616 < 4,229,432,624: the pair keeps a third of its hits, so
# "less than half" holds on both with room and fails if they stop thrashing.
check "a pair of loads thrashes: hit_{A,B} < 0.5 x (hit_A + hit_B)" \
	'(lambda k: any(p["hit"] is not None and p["hit"] < 0.5 * (H(k,p["i"]) + H(k,p["j"])) for p in k["pairs"]))(j["kernels"][0])' "$cap"
python3 - "$cap" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); k = j["kernels"][0]
hit = {l["ordinal"]: l["hit"] for l in k["loads"] if l["measured"]}
for p in k["pairs"]:
    if p["hit"] is None: continue
    print("RESULT: thrash_pair pair (%d,%d): hit_ij=%.0f hit_i+hit_j=%.0f gain=%.0f" % (
        p["i"], p["j"], p["hit"], hit[p["i"]] + hit[p["j"]], p["hit"] - hit[p["i"]] - hit[p["j"]]))
PY
finish
