#!/usr/bin/env bash
# GPU: per-load L2 eviction priority through `run --plan` (issue 26), on the
# two samples built for it. Plans written by hand from `inspect --json`
# (by source line and parameter): the program prints the same checksum as
# built, the patched PTX carries one .L2::cache_hint per planned load and
# one createpolicy per priority, and the kernel times (median of three
# program runs each) are reported for the plans FACTS.md measured in
# Triton, blanket policies among them. The figures are reported, not
# judged: which plan wins is what the profile has to measure.
. "$(dirname "$0")/lib.sh"

# plan SAMPLE KERNEL OUT RULES: RULES is "line:param=priority,..." ("*"
# matches any); every patchable load of the kernels whose name has KERNEL
# that a rule matches gets that L2 priority, the L1 form as built. Prints
# how many loads.
plan() {
	"$CACHEADVISE" inspect --json "$SAMPLES/$1" | python3 -c '
import json, sys
kernel, rules = sys.argv[2], [r.split("=") for r in sys.argv[3].split(",")]
doc, mods, n = json.load(sys.stdin), [], 0
for m in doc["modules"]:
    fns = []
    for f in m["functions"]:
        if kernel not in f["name"]:
            continue
        loads = []
        for l in f["loads"]:
            if not l["patchable"]:
                continue
            for where, prio in rules:
                line, param = where.split(":")
                if (line == "*" or str(l.get("line")) == line) and (param == "*" or str(l.get("param")) == param):
                    loads.append({"ordinal": l["ordinal"], "action": "L2::" + prio})
                    break
        if loads:
            fns.append({"name": f["name"], "loads": loads})
            n += len(loads)
    if fns:
        mods.append({"id": m["id"], "functions": fns})
json.dump({"schema": "cacheadvise.plan/1", "modules": mods}, open(sys.argv[1], "w"))
print(n)' "$3" "$2" "$4"
}

# median_ms KERNEL CMD...: the median of three runs' "kernel KERNEL: X ms" lines
median_ms() {
	local kernel=$1 i
	shift
	for i in 1 2 3; do
		"$@" 2>&1 >/dev/null | sed -n "s/^kernel $kernel: \([0-9.]*\) ms/\1/p"
	done | sort -n | sed -n 2p
}

# try SAMPLE KERNEL NAME RULES: one plan, checked and timed against the build
try() {
	local sample=$1 kernel=$2 name=$3 rules=$4 n want got t_plan
	n=$(plan "$sample" "$kernel" "$WORK/$sample.$name.json" "$rules")
	[ "${n:-0}" -gt 0 ] && ok || { not_ok "$sample/$name: the plan names no load"; return; }
	want=$("$SAMPLES/$sample" 2>/dev/null | grep checksum)
	rm -rf "$WORK/keep"
	got=$("$CACHEADVISE" run --plan "$WORK/$sample.$name.json" --keep "$WORK/keep" -- \
		"$SAMPLES/$sample" 2>"$WORK/err" | grep checksum)
	[ -n "$want" ] && [ "$want" = "$got" ] && ok ||
		not_ok "$sample/$name: checksum '$got', as built '$want': $(tail -3 "$WORK/err")"
	hints=$(cat "$WORK"/keep/*.ptx 2>/dev/null | grep -c 'L2::cache_hint')
	[ "$hints" = "$n" ] && ok || not_ok "$sample/$name: $hints cache hints in the PTX run, want $n"
	t_plan=$(median_ms "$kernel" "$CACHEADVISE" run --plan "$WORK/$sample.$name.json" -- "$SAMPLES/$sample")
	result "$sample $kernel: $name $t_plan ms (as built $t_built ms; $(python3 -c "print('%.3fx' % ($t_built / $t_plan))" 2>/dev/null || echo '?'))"
}

# rownorm: pass 1 reads x at line 60, pass 2 reads x (param 0) and w (param 1) at line 71
t_built=$(median_ms rownorm "$SAMPLES/rownorm")
result "rownorm rownorm: as built $t_built ms"
try rownorm rownorm facts_best "60:0=evict_last,71:0=evict_first,71:1=evict_last"
try rownorm rownorm pass2_last "60:0=evict_last,71:0=evict_last,71:1=evict_last"
try rownorm rownorm all_first "*:*=evict_first"
try rownorm rownorm all_last "*:*=evict_last"

# gather_stream: idx (param 0) and s (param 2) stream, t (param 1) is gathered
t_built=$(median_ms gather_add "$SAMPLES/gather_stream")
result "gather_stream gather_add: as built $t_built ms"
try gather_stream gather_add streams_first "*:0=evict_first,*:2=evict_first,*:1=evict_last"
try gather_stream gather_add streams_first_table_normal "*:0=evict_first,*:2=evict_first"
try gather_stream gather_add all_first "*:*=evict_first"
try gather_stream gather_add all_last "*:*=evict_last"

# the profile measures and chooses the priorities itself (--l2-priority), and
# the L2 oracle times every form of each load (--oracle 4: 3^n plans) to say
# what share of the best plan the advice reaches (issue 26: 95% or more)
for sample in rownorm gather_stream; do
	cap="$WORK/cap-$sample"
	if "$CACHEADVISE" profile --l2-priority --oracle 4 --out "$cap" -- "$SAMPLES/$sample" \
		>"$WORK/profile-$sample.out" 2>&1; then ok; else
		not_ok "profile --l2-priority $sample: $(tail -5 "$WORK/profile-$sample.out")"; continue; fi
	cp "$cap/capture.json" "${CA_GPU_LOGS:-$WORK}/capture-l2prio-$sample.json" 2>/dev/null
	check "$sample: l2_priority measured" \
		'any(k.get("l2_priority", {}).get("loads") for k in j["kernels"])' "$cap/capture.json"
	check "$sample: the L2 oracle ran" \
		'any(k.get("dimension") == "l2" for k in (j.get("oracle") or {}).get("kernels", []))' \
		"$cap/capture.json"
	grep -E 'L2 priorities|verified|L2::evict|L2 priority plans|reaches' "$cap/report.txt" | head -8 |
		sed "s/^ */RESULT: $sample: /"
done
finish
