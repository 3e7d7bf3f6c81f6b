#!/usr/bin/env bash
# GPU: verification (issue 7). On the samples with per-load advice, profile
# runs the advice against the baseline. The pass conditions are what README
# and bench/results/advice-quality.md report, within measured noise: the
# advice is kept at the speedup measured, no kept plan is slower than the
# baseline, every kept kernel's median speedup exceeds 1 + noise, the output
# check ran and found the output unchanged, the verification is in
# report.json, and the oracle ratio is near 1.
. "$(dirname "$0")/lib.sh"

# What each sample must show: "keep MIN_SPEEDUP MIN_ORACLE_RATIO", or "any"
# (only the general checks). Measured (median of 5 alternating rounds,
# baseline spread 0.1% or less):
#   stream_table  H200 1.79x, H100 1.781x, kept; oracle ratio 0.9999 on both
#   thrash_pair   H200 1.19x, H100 1.225x, kept; oracle ratio 0.991, 1.000
#   records       H100 1.112x kept (one session)
#   l2_reuse      H100 1.077x kept (one session; --no-l2: per-load advice)
#   spmv          H100 0.971x rejected (the model bypasses an x[col] gather)
# The thresholds sit about 10% below the lowest speedup measured (the runs
# vary by 0.1%, the GPUs by 3%), so a change that loses most of the gain
# fails while an H100 against an H200 does not. The oracle ratio has measured
# 0.991 to 1.000; 0.97 leaves 2% for clocks and catches a plan that is not
# among the best. Samples measured once (records, l2_reuse) keep a looser
# bound: kept, and faster by 5% or 3%.
expect() {
	case $1 in
	stream_table) echo "keep 1.6 0.97" ;;
	thrash_pair) echo "keep 1.1 0.97" ;;
	records) echo "keep 1.05 0" ;;
	l2_reuse) echo "keep 1.03 0" ;;
	*) echo any ;;
	esac
}

# CA_VERIFY_SAMPLES: the samples to verify (default the two with per-load
# advice; "all" adds records, stencil1d, spmv and l2_reuse, at --max-loads 6)
samples=${CA_VERIFY_SAMPLES:-stream_table thrash_pair}
[ "$samples" = all ] && samples="stream_table thrash_pair records stencil1d spmv l2_reuse"
for s in $samples; do
	out=$WORK/$s
	if "$CACHEADVISE" profile --out "$out" --top 1 --max-loads 6 --repeat 5 --oracle=4 --no-l2 "$SAMPLES/$s" \
		>"$WORK/$s.stdout" 2>"$WORK/$s.stderr"; then ok; else
		not_ok "profile $s failed: $(tail -n 5 "$WORK/$s.stderr")"; continue; fi
	cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-verify-$s.json" 2>/dev/null
	# the whole capture (without per-run events and substitutes), for fixtures
	[ -n "${CA_GPU_LOGS:-}" ] && tar czf "$CA_GPU_LOGS/capture-dir-$s.tgz" -C "$WORK" \
		--exclude='*.d' --exclude='*.subst' "$s"
	cap=$out/capture.json
	read -r want min_speedup min_ratio <<<"$(expect "$s")"
	if [ "$want" = keep ]; then
		check "$s: verification ran (status \"verified\", not \"nothing to verify\")" \
			'j["verification"]["status"] == "verified" and len(j["verification"]["kernels"]) >= 1' "$cap"
		check "$s: the advice is kept at a median kernel speedup >= $min_speedup" \
			"j['verification']['kept'] is True and all(k['kept'] is True and k['speedup']['median'] >= $min_speedup for k in j['verification']['kernels'])" "$cap"
		[ "$min_ratio" = 0 ] || check "$s: oracle measured, advised plan within $min_ratio of the best" \
			"j['oracle']['status'] == 'measured' and len(j['oracle']['kernels']) >= 1 and all(o['ratio'] >= $min_ratio for o in j['oracle']['kernels'])" "$cap"
	else
		check "$s: verification ran or said why not" \
			'j["verification"]["status"] == "verified" or j["verification"]["status"].startswith("nothing to verify")' "$cap"
	fi
	check "$s: no kept plan is slower than the baseline" \
		'all(k["speedup"]["median"] >= 1 for k in j["verification"].get("kernels", []) if k["kept"])' "$cap"
	check "$s: kept means median speedup - 1 > noise" \
		'all(k["speedup"]["median"] - 1 > k["noise"] for k in j["verification"].get("kernels", []) if k["kept"])' "$cap"
	# The output check must have run and said "unchanged": the field is
	# required (the output check of issue 14 reports verification.output;
	# until then, output_identical).
	check "$s: the output check ran and found the output unchanged" \
		'j["verification"]["status"] != "verified" or ((j["verification"]["output"]["status"] == "identical") if "output" in j["verification"] else (j["verification"]["output_identical"] is True))' "$cap"
	if [ -f "$out/report.json" ]; then ok; else not_ok "$s: no report.json"; fi
	status=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["verification"]["status"])' "$cap")
	check "$s: report.json carries the capture's verification ($status)" \
		"j['verification']['status'] == '$status' and j['summary']['verification'] is not None" "$out/report.json"
	python3 - "$cap" "$s" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); s = sys.argv[2]
v = j["verification"]
for k in v.get("kernels", []):
    sp = k["speedup"] or {}
    print("RESULT: %s %s: advice speedup min %.3f median %.3f max %.3f, noise %.3f, %s (%s)" % (
        s, k["name"][:28], sp.get("min", 0), sp.get("median", 0), sp.get("max", 0),
        k["noise"] or 0, "KEPT" if k["kept"] else "rejected", k["reason"]))
if not v.get("kernels"):
    print("RESULT: %s: %s" % (s, v.get("status")))
for o in (j.get("oracle") or {}).get("kernels", []):
    print("RESULT: %s oracle %s: N=%d best plan %s speedup %s, advised plan %s speedup %s, ratio %s" % (
        s, o["kernel"][:28], o["loads"], o["best_plan"], o["best_speedup"], o["advised_plan"],
        o["advised_speedup"], o["ratio"]))
PY
done
finish
