#!/usr/bin/env bash
# docs/l2-priority-ptx.md, re-checked with the installed ptxas (issue 26):
# which PTX ISA versions and targets accept createpolicy and
# .L2::cache_hint, and what ptxas says where they do not. Skipped without
# ptxas (CUDA toolkit).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v ptxas >/dev/null 2>&1 || { echo "no ptxas: skipped"; exit 77; }

# ptx VERSION TARGET BODY...: a kernel with a global pointer in %rd3,
# float registers %f1-%f4 and policy registers %pol0-%pol2.
ptx() {
	local version=$1 target=$2
	shift 2
	printf '.version %s\n.target %s\n.address_size 64\n' "$version" "$target"
	printf '.visible .entry k(.param .u64 p)\n{\n\t.reg .b64 %%rd<4>;\n\t.reg .f32 %%f<6>;\n'
	printf '\t.reg .b64 %%pol<3>;\n\tld.param.u64 %%rd1, [p];\n\tcvta.to.global.u64 %%rd3, %%rd1;\n'
	for line in "$@"; do printf '\t%s\n' "$line"; done
	printf '\tret;\n}\n'
}
# accepts VERSION TARGET BODY...
accepts() {
	ptx "$@" >"$TMP/k.ptx"
	if ptxas -arch="$2" "$TMP/k.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
		not_ok "ptxas refused (.version $1, $2): ${*:3}: $(head -c 300 "$TMP/err")"; fi
}
# refuses PATTERN VERSION TARGET BODY...
refuses() {
	local pattern=$1
	shift
	ptx "$@" >"$TMP/k.ptx"
	if ptxas -arch="$2" "$TMP/k.ptx" -o /dev/null 2>"$TMP/err"; then
		not_ok "ptxas accepted (.version $1, $2): ${*:3}"
	else
		expect_grep "$pattern" "$TMP/err"
	fi
}

pol="createpolicy.fractional.L2::evict_last.b64 %pol0, 1.0;"
for p in evict_last evict_first evict_normal evict_unchanged; do
	accepts 7.4 sm_80 "createpolicy.fractional.L2::$p.b64 %pol0, 1.0;" \
		"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
done
accepts 8.0 sm_90 "createpolicy.fractional.L2::evict_last.L2::evict_unchanged.b64 %pol0, 0.5;" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
for ld in "ld.global.L1::no_allocate.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.L1::evict_last.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.nc.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.cg.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.L2::cache_hint.f32 %f1, [%rd3], %pol0;" \
	  "ld.global.L2::cache_hint.v4.f32 {%f1,%f2,%f3,%f4}, [%rd3], %pol0;" \
	  "ld.global.L2::cache_hint.L2::128B.f32 %f1, [%rd3], %pol0;" \
	  "st.global.L2::cache_hint.f32 [%rd3], %f1, %pol0;"; do
	accepts 8.0 sm_90 "$pol" "$ld"
done
refuses "createpolicy.fractional' requires .target sm_80" 7.4 sm_75 "$pol" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
refuses "requires PTX ISA .version 7.4 or later" 7.3 sm_80 "$pol" \
	"ld.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"
refuses "requires '.v8.b32/.v4.b64' type with '.L2::evict_last'" 8.0 sm_90 \
	"ld.global.L2::evict_last.f32 %f1, [%rd3];"
refuses "Illegal modifier '.L2::cache_hint' for instruction 'ldu'" 8.0 sm_90 "$pol" \
	"ldu.global.L2::cache_hint.f32 %f1, [%rd3], %pol0;"

# `patch --plan` with L2 priorities (the rewrite, analysis/ptx_rewrite.c): every
# patchable load of every fixture without an L2 hint of its own gets the
# action; ptxas accepts the result, each edited load carries .L2::cache_hint
# with the policy of its priority, and each edited function one createpolicy
# per priority.
command -v python3 >/dev/null || { finish; exit; }
for ptx in "$CA_SOURCE_DIR"/tests/fixtures/ptx/*.ptx; do
	name=$(basename "$ptx" .ptx)
	"$CACHEADVISE" inspect --json "$ptx" >"$TMP/$name.json" 2>"$TMP/err" ||
		{ not_ok "inspect $name: $(head -c 200 "$TMP/err")"; continue; }
	for action in L2::evict_first L2::evict_last L1::no_allocate+L2::evict_first \
		      default+L2::evict_normal L1::evict_last+L2::evict_unchanged; do
		tag="$name/$action"
		n=$(python3 - "$TMP/$name.json" "$action" "$TMP/plan.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
action, mods, n = sys.argv[2], [], 0
for m in doc["modules"]:
    fns = []
    for f in m["functions"]:
        loads = [l for l in f["loads"] if l["patchable"] and "L2::cache_hint" not in l["instruction"]
                 and "L2::evict" not in l["instruction"]]
        if loads:
            fns.append({"name": f["name"], "loads": [{"ordinal": l["ordinal"], "action": action} for l in loads]})
            n += len(loads)
    if fns:
        mods.append({"id": m["id"], "functions": fns})
json.dump({"schema": "cacheadvise.plan/1", "modules": mods}, open(sys.argv[3], "w"))
print(n)
PY
) || { not_ok "$tag: plan"; continue; }
		[ "$n" -gt 0 ] || continue
		if ! "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/out.ptx" "$ptx" 2>"$TMP/err"; then
			not_ok "$tag: patch failed: $(head -c 300 "$TMP/err")"
			continue
		fi
		if ptxas -arch=sm_90 -c "$TMP/out.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
			not_ok "$tag: ptxas refused the patched PTX: $(head -c 300 "$TMP/err")"; fi
		prio=${action#*L2::}
		before=$(grep -c 'L2::cache_hint' "$ptx" || true)
		after=$(grep -c "L2::cache_hint.*%ca_l2p_${prio#evict_};" "$TMP/out.ptx" || true)
		[ "$after" = "$n" ] && ok || not_ok "$tag: $after loads carry the policy, want $n"
		total=$(grep -c 'L2::cache_hint' "$TMP/out.ptx" || true)
		[ "$total" = $((before + n)) ] && ok || not_ok "$tag: $total cache hints, want $((before + n))"
		fns=$(python3 -c 'import json,sys; print(sum(len(m["functions"]) for m in json.load(open(sys.argv[1]))["modules"]))' "$TMP/plan.json")
		pols=$(grep -c "createpolicy.fractional.L2::$prio.b64 %ca_l2p_" "$TMP/out.ptx" || true)
		[ "$pols" = "$fns" ] && ok || not_ok "$tag: $pols createpolicy, want one per function ($fns)"
	done
done
# Triton's own hints (eviction_policy="evict_first" on a tl.load: createpolicy and
# .L2::cache_hint in its PTX): the plan's priority replaces each load's policy
# operand, ptxas accepts the result, and the hints are as many as before
tptx=$(ls "$CA_SOURCE_DIR"/tests/fixtures/triton/cache/*/rownorm_kernel.ptx | head -n 1)
"$CACHEADVISE" inspect --json "$tptx" >"$TMP/triton.json"
n=$(python3 - "$TMP/triton.json" "$TMP/plan.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["modules"][0]
f = m["functions"][0]
own = [l for l in f["loads"] if "L2::cache_hint" in l["instruction"]]
json.dump({"schema": "cacheadvise.plan/1", "modules": [{"id": m["id"], "functions": [
    {"name": f["name"], "loads": [{"ordinal": l["ordinal"], "action": "L2::evict_last"} for l in own]}]}]},
    open(sys.argv[2], "w"))
print(len(own))
PY
)
[ "$n" -gt 0 ] && ok || not_ok "the Triton fixture has no load with a hint of its own"
expect_status 0 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/triton.out.ptx" "$tptx"
if ptxas -arch=sm_90a -c "$TMP/triton.out.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
	not_ok "ptxas refused Triton's PTX with the plan's policies: $(head -c 300 "$TMP/err")"; fi
got=$(grep -c 'L2::cache_hint.*\], %ca_l2p_last;' "$TMP/triton.out.ptx" || true)
[ "$got" = "$n" ] && ok || not_ok "Triton: $got of $n own-hinted loads carry the plan's policy"
[ "$(grep -c 'L2::cache_hint' "$TMP/triton.out.ptx")" = "$(grep -c 'L2::cache_hint' "$tptx")" ] && ok ||
	not_ok "Triton: the number of cache hints changed"

# Triton's forms on whole tl.load calls (what `profile --l2-priority` measures
# for a Triton kernel: every PTX load of a call in the form eviction_policy=
# writes, L1 part and all): ptxas accepts each kernel so patched, and each
# load carries its form
for tptx in "$CA_SOURCE_DIR"/tests/fixtures/triton/cache/*/*_kernel.ptx; do
	name=$(basename "$tptx" .ptx)
	for form in L1::evict_first+L2::evict_first L1::evict_last+L2::evict_last; do
		"$CACHEADVISE" inspect --json "$tptx" >"$TMP/t.json"
		n=$(python3 - "$TMP/t.json" "$form" "$TMP/tplan.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["modules"][0]
f = m["functions"][0]
loads = [l for l in f["loads"] if l["patchable"] and "L2::evict" not in l["instruction"]]
json.dump({"schema": "cacheadvise.plan/1", "modules": [{"id": m["id"], "functions": [
    {"name": f["name"], "loads": [{"ordinal": l["ordinal"], "action": sys.argv[2]} for l in loads]}]}]},
    open(sys.argv[3], "w"))
print(len(loads))
PY
)
		[ "$n" -gt 0 ] || continue
		if ! "$CACHEADVISE" patch --plan "$TMP/tplan.json" -o "$TMP/t.out.ptx" "$tptx" 2>"$TMP/err"; then
			not_ok "$name/$form: patch failed: $(head -c 300 "$TMP/err")"; continue; fi
		if ptxas -arch=sm_90a -c "$TMP/t.out.ptx" -o /dev/null 2>"$TMP/err"; then ok; else
			not_ok "$name/$form: ptxas refused: $(head -c 300 "$TMP/err")"; fi
		l1=${form%%+*}
		got=$(grep -c "ld\.global\.${l1//./\.}[.a-z0-9:]*\.L2::cache_hint" "$TMP/t.out.ptx" || true)
		[ "$got" -ge "$n" ] && ok || not_ok "$name/$form: $got loads carry $l1 with a hint, want $n"
	done
done

# a plan with an L2 priority on a module for sm_75 is refused, saying why, and writes nothing
sed -e 's/^\.target sm_90/.target sm_75/' -e 's/^\.version 9\.0/.version 7.0/' \
	"$CA_SOURCE_DIR/tests/fixtures/ptx/loop.ptx" >"$TMP/old.ptx"
"$CACHEADVISE" inspect --json "$TMP/old.ptx" >"$TMP/old.json"
python3 - "$TMP/old.json" >"$TMP/plan.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["modules"][0]
f = [f for f in m["functions"] if any(l["patchable"] for l in f["loads"])][0]
l = [l for l in f["loads"] if l["patchable"]][0]
json.dump({"schema": "cacheadvise.plan/1", "modules": [{"id": m["id"], "functions": [
    {"name": f["name"], "loads": [{"ordinal": l["ordinal"], "action": "L2::evict_last"}]}]}]}, sys.stdout)
PY
rm -f "$TMP/old.out"
expect_status 2 "$CACHEADVISE" patch --plan "$TMP/plan.json" -o "$TMP/old.out" "$TMP/old.ptx"
expect_grep "needs PTX ISA 7.4 or later" "$TMP/err"
[ ! -e "$TMP/old.out" ] && ok || not_ok "patch wrote output for a refused plan"
# an unknown spelling names the ones there are
sed 's/L2::evict_last/L2::evict_last+L1::no_allocate/' "$TMP/plan.json" >"$TMP/bad.json"
expect_status 2 "$CACHEADVISE" patch --plan "$TMP/bad.json" "$TMP/old.ptx"
expect_grep "unknown action 'L2::evict_last.L1::no_allocate'" "$TMP/err"
expect_grep "both joined by" "$TMP/err"

finish
