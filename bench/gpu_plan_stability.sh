#!/usr/bin/env bash
# Benchmark (GPU): are plans stable (issue 38 item 5)? Each sample is
# profiled three times (CA_STABILITY_RUNS) at the defaults that matter for
# the plan (L1 choices and L2 priorities; no L2 window or software-cache
# step), and bench/plan_diff.py prints the loads whose form differs between
# the plans, with the close calls each profile named. One RESULT line a
# sample; fails when the plans differ in a load that no profile called a
# close call. CA_STABILITY_SAMPLES picks the samples.
. "$(dirname "$0")/../tests/gpu/lib.sh"

runs=${CA_STABILITY_RUNS:-3}
for s in ${CA_STABILITY_SAMPLES:-stream_table thrash_pair records deposit gather_stream}; do
	a=()
	case $s in decode_iter | deposit)
		"$SAMPLES/$s" --make-input "$WORK/$s.in" >/dev/null && a=("$WORK/$s.in" "$WORK/$s.result") ;;
	esac
	caps=()
	for r in $(seq 1 "$runs"); do
		out=$WORK/$s-$r
		if "$CACHEADVISE" profile --out "$out" --top 1 --max-loads 6 --repeat 5 --no-l2 --no-softcache \
			"$SAMPLES/$s" "${a[@]}" >/dev/null 2>"$WORK/$s-$r.err"; then caps+=("$out"); else
			not_ok "$s profile $r: $(tail -n 3 "$WORK/$s-$r.err")"; fi
		# each capture kept: what moved a decision is in its measurements
		cp "$out/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-stability-$s-$r.json" 2>/dev/null
	done
	[ ${#caps[@]} -ge 2 ] || continue
	python3 "$CA_SOURCE_DIR/bench/plan_diff.py" "${caps[@]}" >"$WORK/$s.diff"
	st=$?
	sed 's/^/RESULT: '"$s"': /' "$WORK/$s.diff"
	# the close calls the profiles named (capture.json's analysis of each kernel)
	close=$(for c in "${caps[@]}"; do grep -h -o 'close call[^"]*' "$c/report.txt" 2>/dev/null; done | sort -u | head -5)
	[ -n "$close" ] && echo "$close" | sed 's/^/RESULT: '"$s"': named: /'
	if [ "$st" = 0 ]; then ok
	elif [ -n "$close" ]; then ok   # differing within the noise, and the report says so
	else not_ok "$s: the plans of $runs profiles differ and no profile named a close call"; fi
done
finish
