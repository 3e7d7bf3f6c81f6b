#!/usr/bin/env bash
# GPU: a hand-written Triton program (samples/triton_rownorm.py, issue 27).
# `profile` finds the Triton kernels' PTX beside their cubins in Triton's
# cache, measures their loads and verifies the advice; the capture's modules
# name the PTX file and Triton's metadata; the source patch rewrites tl.load
# calls in a copy of the sample, which still runs and prints the same
# checksum; `check --static` finds the rerun kernels' advised forms, also
# when the original compiles were written after them (issue 35: `check`
# then reads the compile the program loaded, or the one with the forms); with
# --l2-priority each tl.load is measured as one site in Triton's forms; the
# report's figures and `run --plan`'s are reported. Skipped without
# PyTorch and Triton.
. "$(dirname "$0")/lib.sh"

python3 -c 'import torch, triton' 2>/dev/null || { echo "no torch/triton: skipped"; exit 77; }
export TRITON_CACHE_DIR="$WORK/triton-cache"
src="$WORK/src"
mkdir -p "$src"
cp "$CA_SOURCE_DIR/samples/triton_rownorm.py" "$src/"
want=$(python3 "$src/triton_rownorm.py" iters=3 2>/dev/null | grep checksum)
[ -n "$want" ] && ok || { not_ok "the sample does not run: $(python3 "$src/triton_rownorm.py" iters=3 2>&1 | tail -3)"; finish; }

cap="$WORK/cap"
"$CACHEADVISE" profile --l2-priority --out "$cap" -- python3 "$src/triton_rownorm.py" iters=5 \
	>"$WORK/profile.out" 2>&1
rc=$?
[ "$rc" = 0 ] && ok || { not_ok "profile exited $rc: $(tail -5 "$WORK/profile.out")"; finish; }
check "a module read from Triton's cache, with its PTX" \
	'any((m.get("ptx_file") or "").endswith(".ptx") and m.get("has_ptx") for m in j["modules"])' "$cap/capture.json"
check "Triton's metadata recorded" \
	'any(isinstance(m.get("triton"), dict) and m["triton"].get("num_warps") for m in j["modules"])' "$cap/capture.json"
check "both Triton kernels measured" \
	'all(any(k["name"] == n and any(l.get("hit") is not None for l in k.get("loads", [])) for k in j["kernels"]) for n in ("rownorm_kernel", "gather_kernel"))' \
	"$cap/capture.json"
# --l2-priority on Triton: each tl.load's PTX loads measured as one site, in
# the two forms eviction_policy= writes
check "L2 priorities measured per tl.load, in Triton's forms" \
	'any(k.get("l2_priority") and "L1::evict_last+L2::evict_last" in k["l2_priority"]["forms"] and any(len(l.get("ordinals", [])) > 1 for l in k["l2_priority"]["loads"]) for k in j["kernels"])' \
	"$cap/capture.json"
grep -E 'kernel (rownorm|gather)_kernel|verified|L2 priorities|decided per call' "$cap/report.txt" | head -10 | sed 's/^ */RESULT: /'

# the source patch: tl.load arguments in the copy, which still runs the same
if [ -s "$cap/source.patch" ]; then
	"$CACHEADVISE" apply "$cap" --source-root "$src" >"$WORK/apply.out" 2>&1 && ok ||
		not_ok "apply: $(tail -3 "$WORK/apply.out")"
	grep -E 'eviction_policy|cache_modifier' "$src/triton_rownorm.py" | sed 's/^ */RESULT: patched: /'
	ls "$TRITON_CACHE_DIR" >"$WORK/original-compiles"
	got=$(python3 "$src/triton_rownorm.py" iters=3 2>/dev/null | grep checksum)
	[ "$want" = "$got" ] && ok || not_ok "the patched sample prints '$got', the original '$want'"
	"$CACHEADVISE" check "$cap" --static --source-root "$src" -- python3 "$src/triton_rownorm.py" \
		>"$WORK/check.out" 2>&1 && ok || not_ok "check --static: $(tail -5 "$WORK/check.out")"
	tail -1 "$WORK/check.out" | sed 's/^ */RESULT: check: /'
	# the stale cache of issue 35: the original compiles written after the
	# patched ones. check reads the compile the program loaded (timed: one
	# run to see it), or the one with the advised forms (--static)
	while read -r d; do touch "$TRITON_CACHE_DIR/$d"/*; done <"$WORK/original-compiles"
	"$CACHEADVISE" check "$cap" --static --source-root "$src" -- python3 "$src/triton_rownorm.py" \
		>"$WORK/check-stale.out" 2>&1 && ok || not_ok "check --static, stale cache: $(tail -5 "$WORK/check-stale.out")"
	grep -Eq "compiles in Triton's cache (that carries|carry) the advised forms" "$WORK/check-stale.out" && ok ||
		not_ok "check --static, stale cache: no compile chosen by its forms: $(head -3 "$WORK/check-stale.out")"
	"$CACHEADVISE" check "$cap" --repeat 3 --source-root "$src" \
		--baseline "python3 $CA_SOURCE_DIR/samples/triton_rownorm.py iters=5" \
		-- python3 "$src/triton_rownorm.py" iters=5 >"$WORK/check-timed.out" 2>&1
	rc=$?
	[ "$rc" = 0 ] || [ "$rc" = 5 ] && ok || not_ok "check, stale cache, exited $rc: $(tail -5 "$WORK/check-timed.out")"
	grep -q "the compile the rebuilt program loaded" "$WORK/check-timed.out" && ok ||
		not_ok "check, stale cache: not the compile the program loaded: $(head -3 "$WORK/check-timed.out")"
	grep -E 'advised loads:|^RESULT program' "$WORK/check-timed.out" | sed 's/^ */RESULT: check, stale cache: /'
else
	result "no source.patch: nothing advised in a Triton form (see $cap/report.txt)"
fi
t_built=$(python3 "$CA_SOURCE_DIR/samples/triton_rownorm.py" 2>&1 >/dev/null | tr '\n' ' ')
t_plan=$("$CACHEADVISE" run --plan "$cap/plan.json" -- python3 "$CA_SOURCE_DIR/samples/triton_rownorm.py" \
	2>&1 >/dev/null | grep '^kernel' | tr '\n' ' ')
result "as built: $t_built"
result "run --plan: $t_plan"
finish
