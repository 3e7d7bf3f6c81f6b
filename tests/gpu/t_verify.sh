#!/usr/bin/env bash
# GPU: verification (issue 7). On the samples with per-load advice, profile
# runs the advice against the baseline; no kept plan is slower than the
# baseline, every kept kernel's median speedup exceeds 1 + noise, the
# verification is in report.json, and the oracle ratio is reported.
. "$(dirname "$0")/lib.sh"

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
	check "$s: verification ran" 'j["verification"]["status"] == "verified" or "nothing" in j["verification"]["status"]' "$cap"
	check "$s: no kept plan is slower than the baseline" \
		'all(k["speedup"]["median"] >= 1 for k in j["verification"].get("kernels", []) if k["kept"])' "$cap"
	check "$s: kept means median speedup - 1 > noise" \
		'all(k["speedup"]["median"] - 1 > k["noise"] for k in j["verification"].get("kernels", []) if k["kept"])' "$cap"
	check "$s: output unchanged by the advice" 'j["verification"].get("output_identical", True)' "$cap"
	if [ -f "$out/report.json" ]; then ok; else not_ok "$s: no report.json"; fi
	check "$s: report.json carries the verification" \
		'"verification" in __import__("json").dumps(j)' "$out/report.json" 2>/dev/null || true
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
