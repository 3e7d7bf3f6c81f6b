#!/usr/bin/env bash
# Benchmark (GPU), issue 39's Done-when: every program profiled at the
# defaults within 10x its native time or 10 s, with the same plan as a
# `--budget 0` profile of it. Programs (CA_TARGET_PROGRAMS, KIND:NAME):
#   corpus:APP     ../shared/corpus's APP through its run.sh (RUN_PREFIX, as
#                  bench/gpu_corpus.sh runs it; prepare.sh once)
#   sample:NAME    samples/NAME as built (an input made for those that read one)
#   torch:NAME     python3 samples/NAME.py (torch_gemm: every kernel cubin-only)
#   triton:NAME    python3 samples/NAME.py iters=5, with --l2-priority
# For each: the native run's wall time, the profile's at the defaults and
# at --budget 0, one RESULT line (native, profile, ratio, the target met or
# not, the plan the same as --budget 0's or the loads that differ), then
# bench/cost_breakdown.py's lines for the default profile. A profile that
# fails, a missed target or a plan that differs counts as a failure. The
# default list takes longer than one device call: run it in parts.
. "$(dirname "$0")/../tests/gpu/lib.sh"

programs=${CA_TARGET_PROGRAMS:-corpus:bfs corpus:particlefilter corpus:lud corpus:stencil corpus:atax corpus:lavaMD sample:stream_table sample:thrash_pair sample:records sample:deposit sample:decode_iter sample:gather_stream sample:l2_reuse torch:torch_gemm triton:triton_rownorm}
limit=${CA_TARGET_LIMIT:-600}
logs=${CA_GPU_LOGS:-$WORK}

corpus=${CA_CORPUS_DIR:-}
for d in "$CA_SOURCE_DIR/shared/corpus" "$CA_SOURCE_DIR/../shared/corpus"; do
	[ -z "$corpus" ] && [ -x "$d/prepare.sh" ] && corpus=$(cd "$d" && pwd)
done
prepared=0

now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"; }

# run_one KIND NAME PREFIX...: the program, under PREFIX (none: native)
run_one() {
	local kind=$1 name=$2
	shift 2
	case $kind in
	corpus)
		if [ $# -gt 0 ]; then RUN_PREFIX="$*" "$corpus/$name/run.sh"; else "$corpus/$name/run.sh"; fi ;;
	sample)
		local a=()
		case $name in cfd_iter | decode_iter | deposit | wide_iter)
			[ -f "$WORK/$name.in" ] || "$SAMPLES/$name" --make-input "$WORK/$name.in" >/dev/null
			a=("$WORK/$name.in" "$WORK/$name.result") ;;
		esac
		"$@" "$SAMPLES/$name" "${a[@]}" ;;
	torch) "$@" python3 "$CA_SOURCE_DIR/samples/$name.py" ;;
	triton) "$@" python3 "$CA_SOURCE_DIR/samples/$name.py" iters=5 ;;
	esac
}

for p in $programs; do
	kind=${p%%:*} name=${p#*:}
	case $kind in
	corpus)
		[ -n "$corpus" ] || { echo "$p: no corpus (CA_CORPUS_DIR): skipped"; continue; }
		if [ $prepared = 0 ]; then
			"$corpus/prepare.sh" >"$WORK/prepare.log" 2>&1 || not_ok "prepare.sh: $(tail -n 2 "$WORK/prepare.log")"
			prepared=1
		fi ;;
	torch | triton)
		python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
			{ echo "$p: no PyTorch with CUDA: skipped"; continue; } ;;
	esac
	extra=()
	[ "$kind" = triton ] && extra=(--l2-priority)
	t0=$(now)
	run_one "$kind" "$name" >"$WORK/$name.native" 2>&1 || not_ok "$p: the native run failed"
	native=$(elapsed "$t0" "$(now)")
	for mode in defaults budget0; do
		out=$WORK/$name-$mode
		opts=(--out "$out" "${extra[@]}")
		[ $mode = budget0 ] && opts+=(--budget 0)
		t0=$(now)
		run_one "$kind" "$name" timeout -s INT -k 60 "$limit" "$CACHEADVISE" profile "${opts[@]}" -- \
			>"$WORK/$name-$mode.log" 2>&1
		rc=$?
		if [ $mode = defaults ]; then wall_defaults=$(elapsed "$t0" "$(now)")
		else wall_budget0=$(elapsed "$t0" "$(now)"); fi
		cp "$out/capture.json" "$logs/capture-target-$name-$mode.json" 2>/dev/null
		[ "$rc" = 0 ] && ok || not_ok "$p ($mode): profile exited $rc: $(tail -n 2 "$WORK/$name-$mode.log")"
	done
	ratio=$(python3 -c "print('%.1f' % ($wall_defaults / $native))")
	if python3 -c "import sys; sys.exit(0 if $wall_defaults <= max(10 * $native, 10) else 1)"; then
		target="met"; ok; else target="NOT met"; not_ok "$p: ${wall_defaults} s for a ${native} s program"; fi
	if python3 "$CA_SOURCE_DIR/bench/plan_diff.py" "$WORK/$name-defaults" "$WORK/$name-budget0" \
		>"$WORK/$name.diff" 2>&1; then
		same="the same plan as --budget 0"; ok
	else
		same="another plan than --budget 0 ($(tail -n 1 "$WORK/$name.diff"))"
		not_ok "$p: $same"
	fi
	result "$p: native ${native} s, profile ${wall_defaults} s (${ratio}x; --budget 0: ${wall_budget0} s), 10x or 10 s $target, $same"
	[ -f "$WORK/$name-defaults/capture.json" ] &&
		python3 "$CA_SOURCE_DIR/bench/cost_breakdown.py" "$p" "$WORK/$name-defaults/capture.json"
done
finish
