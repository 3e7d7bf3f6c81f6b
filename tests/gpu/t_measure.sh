#!/usr/bin/env bash
# GPU: in-run capture (--measure launches, the default; issue 15) against
# one program run per variant (--measure runs). On each sample both methods
# must give the same plan (or, where loads tie, one as good on the runs
# method's own graph within its baseline spread or the largest difference
# between the methods' hit_i), and hit_i within 10% of the larger of the two
# (or 1% of the busiest load's sectors) for every measured load; the
# in-run capture needs fewer program runs. RESULT lines give runs, wall
# time and each method's hits.
#   CA_MEASURE_SAMPLES  samples to compare (default stream_table thrash_pair records)
. "$(dirname "$0")/lib.sh"

samples=${CA_MEASURE_SAMPLES:-stream_table thrash_pair records}
for s in $samples; do
	for m in runs launches mask; do
		out=$WORK/$s-$m
		case $m in
		runs) how=(--measure runs) ;;
		mask) how=(--measure launches --variant-form mask) ;;
		launches) how=(--measure launches) ;;
		esac
		start=$(date +%s.%N)
		if "$CACHEADVISE" profile --out "$out" "${how[@]}" --no-verify --no-l2 --top 1 \
			--max-loads 6 "$SAMPLES/$s" >"$out.stdout" 2>"$out.stderr"; then
			ok
		else
			not_ok "$s: profile --measure $m failed"; tail -n 20 "$out.stderr" >&2
		fi
		python3 -c "import sys; print(float(sys.argv[1]) - float(sys.argv[2]))" "$(date +%s.%N)" "$start" >"$out.secs"
		cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-measure-$s-$m.json" 2>/dev/null
	done
	for form in launches mask; do
	python3 - "$WORK/$s-runs" "$WORK/$s-$form" "$s ($form)" <<'PY'
import json, sys
runs_dir, launch_dir, name = sys.argv[1:4]
def load(d):
    return json.load(open(d + "/capture.json")), json.load(open(d + "/plan.json"))
(cr, pr), (cl, pl) = load(runs_dir), load(launch_dir)
secs = {m: float(open(d + ".secs").read()) for m, d in (("runs", runs_dir), ("launches", launch_dir))}
print("RESULT: %s variant forms %s" % (name, [p["variant_form"] for p in cl.get("measure", {}).get("passes", [])]))
fails = []
def acts(plan):
    return sorted((f["name"], l["ordinal"], l["action"]) for m in plan["modules"] for f in m["functions"] for l in f["loads"])
kr, kl = cr["kernels"][0], cl["kernels"][0]
if acts(pr) != acts(pl):
    # Near ties: the runs method's own plan moves between captures where
    # loads have near-equal hits (records: six loads within 5%). Judge the
    # in-run plan on the runs method's graph: its objective must be within
    # that capture's baseline-against-baseline counter spread (at least 2%).
    hit = {l["ordinal"]: l["hit"] or 0.0 for l in kr["loads"] if l["measured"]}
    pair = {(p["i"], p["j"]): p["hit"] for p in kr["pairs"] if p["hit"] is not None}
    def cached(plan):
        bypass = {l["ordinal"] for m in plan["modules"] for f in m["functions"] if f["name"] == kr["name"]
                  for l in f["loads"] if l["action"] != "default"}
        return [o for o in hit if o not in bypass]
    def objective(S):
        v = sum(hit[i] for i in S)
        for a in S:
            for b in S:
                if a < b and (a, b) in pair:
                    v += pair[(a, b)] - hit[a] - hit[b]
        return v
    ob_r, ob_l = objective(cached(pr)), objective(cached(pl))
    # ...or the largest difference between the two methods' hit_i on a
    # load that matters (1% of the busiest load's sectors): plans whose
    # objectives differ by less than the measurements do cannot be told apart
    busiest = max(l.get("access") or 0 for l in kr["loads"]) or 1
    hl0 = {l["ordinal"]: l["hit"] or 0.0 for l in kl["loads"] if l["measured"]}
    diffs = [abs(hit[o] - hl0.get(o, 0.0)) / max(hit[o], hl0.get(o, 0.0)) for o in hit
             if max(hit[o], hl0.get(o, 0.0)) > 0.01 * busiest]
    # the objective sums pairs too (hit_{i,j}): their differences count
    # alike (records on an H200: singles within 1.7%, pairs within 3.6%)
    pl0 = {(p["i"], p["j"]): p["hit"] for p in kl["pairs"] if p["hit"] is not None}
    diffs += [abs(pair[e] - pl0[e]) / max(pair[e], pl0[e]) for e in pair
              if e in pl0 and max(pair[e], pl0[e]) > 0.01 * busiest]
    tol = max(0.02, (cr.get("baseline_check") or {}).get("max_counter_spread") or 0, max(diffs or [0]))
    print("RESULT: %s plans differ: on the runs graph the in-run plan scores %.4g against %.4g (%.2f%%, tolerance %.1f%%)" % (
        name, ob_l, ob_r, 100.0 * (ob_l - ob_r) / max(abs(ob_r), 1.0), 100 * tol))
    if ob_l < ob_r - tol * abs(ob_r):
        fails.append("plans differ beyond a near tie: runs %s, in-run %s" % (acts(pr), acts(pl)))
sectors = max(l.get("access") or 0 for l in kr["loads"]) or 1
hr = {l["ordinal"]: l["hit"] for l in kr["loads"] if l["measured"]}
hl = {l["ordinal"]: l["hit"] for l in kl["loads"] if l["measured"]}
for o in sorted(hr):
    a, b = hr[o] or 0.0, hl.get(o) or 0.0
    big = max(a, b, 1.0)
    print("RESULT: %s load %d: hit_i runs %.4g, launches %.4g (%+.2f%%)" % (name, o, a, b, 100.0 * (b - a) / big))
    if abs(a - b) > 0.10 * big and abs(a - b) > 0.01 * sectors:
        fails.append("load %d: hit_i %.4g (runs) vs %.4g (launches)" % (o, a, b))
runs = lambda c: len([r for r in c["runs"]])
m = cl.get("measure", {})
print("RESULT: %s runs: %d program runs %.1f s (runs) vs %d program runs %.1f s (launches), %s variants in-run" % (
    name, runs(cr), secs["runs"], runs(cl), secs["launches"], m.get("variants_measured")))
for kname, kk in (m.get("kernels") or {}).items():
    rep = kk.get("replays") or []
    tot = sum(r.get("total_ms", 0) for r in rep)
    print("RESULT: %s in-run: replay=%s, %d replays, %.1f ms replaying, %d pairs additive, refused %s" % (
        name, kk.get("replay"), len(rep), tot, len(kk.get("pairs_additive") or []), kk.get("replay_refused")))
if m.get("method") != "launches":
    fails.append("capture.json measure.method is %r" % m.get("method"))
if runs(cl) >= runs(cr) and len(hr) > 1:
    fails.append("the in-run capture took as many program runs")
# the mask form is reported, not required (its switchable module is not the
# program's code: records' hits move by up to 14% under it)
for f in fails:
    print("%s: %s: %s" % ("NOTE (mask form, not required)" if "(mask)" in name else "FAIL", name, f),
          file=sys.stderr)
sys.exit(1 if fails else 0)
PY
	rc=$?
	# the default (auto) must agree; the mask form is reported, not required
	if [ $rc = 0 ] || [ "$form" = mask ]; then ok; else not_ok "$s ($form): the in-run capture disagrees with --measure runs"; fi
	done
done
finish
