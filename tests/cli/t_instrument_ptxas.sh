#!/usr/bin/env bash
# The monitor instrumentation must always give PTX that ptxas accepts
# (docs/monitor.md): `cacheadvise patch --instrument` of every fixture PTX
# that assembles as it is, and of `nvcc -ptx -arch=sm_90 -lineinfo` of every
# samples/*.cu, is assembled with ptxas for the module's own target.
# Skipped (77) without ptxas. The samples part is skipped (with a note)
# while samples/ has no .cu file or nvcc is missing.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"
PTXAS=${PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$PTXAS" ] || { echo "skipped: no ptxas"; exit 77; }

target_of() { sed -n 's/^[ \t]*\.target[ \t]*\(sm_[0-9a-z]*\).*/\1/p' "$1" | head -n 1; }

# instrument_and_assemble NAME FILE.ptx [PTXAS-FLAG]
instrument_and_assemble() {
	local name=$1 ptx=$2 flag=${3:-} arch
	arch=$(target_of "$ptx")
	expect_status 0 "$CACHEADVISE" patch --instrument --layout "$TMP/$name.layout.json" \
		-o "$TMP/$name.mon.ptx" "$ptx"
	[ -s "$TMP/$name.mon.ptx" ] || { not_ok "$name: no instrumented PTX written"; return; }
	expect_grep '^\.visible \.global \.align 8 \.u64 __cacheadvise_counters\[[0-9]+\];' "$TMP/$name.mon.ptx"
	expect_grep '"schema": "cacheadvise.monitor_layout/1"' "$TMP/$name.layout.json"
	if "$PTXAS" $flag -arch="$arch" -o "$TMP/$name.cubin" "$TMP/$name.mon.ptx" 2>"$TMP/ptxas.err"; then
		ok
	else
		not_ok "$name: ptxas -arch=$arch rejects the instrumented PTX: $(head -c 600 "$TMP/ptxas.err")"
	fi
	# every global load of an instrumented entry is counted or listed as skipped
	python3 - "$ptx" "$TMP/$name.layout.json" "$name" <<'PY' && ok || not_ok "$name: layout does not cover the loads"
import json, re, sys
ptx, layout, name = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
slots = layout["slots"]
used = []
for f in layout["functions"]:
    for l in f["loads"]:
        used += [l["requests"], l["sectors"], l["lines"], l["bytes"]]
    for d in f["data_structures"]:
        used += [d["hits"], d["accesses"]]
ok = sorted(used) == list(range(slots))
if not ok:
    print("%s: slots are not 0..%d, each once" % (name, slots - 1), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

checked=0
for ptx in "$CA_SOURCE_DIR"/tests/fixtures/*/*.ptx; do
	[ -e "$ptx" ] || continue
	arch=$(target_of "$ptx")
	num=${arch#sm_}; num=${num%%[!0-9]*}
	[ -n "$num" ] && [ "$num" -ge 70 ] || continue
	# modules calling extern functions assemble only as relocatable code
	# (-c); error fixtures (PTX that does not assemble at all) are not ours
	flag=
	if ! "$PTXAS" -arch="$arch" -o /dev/null "$ptx" 2>/dev/null; then
		"$PTXAS" -c -arch="$arch" -o /dev/null "$ptx" 2>/dev/null || continue
		flag=-c
	fi
	name=$(basename "$(dirname "$ptx")")_$(basename "$ptx" .ptx)
	instrument_and_assemble "$name" "$ptx" $flag
	checked=$((checked + 1))
done
[ "$checked" -ge 3 ] && ok || not_ok "only $checked fixture PTX files were checked"

# instrumenting twice is refused, and leaves no file behind
fx="$CA_SOURCE_DIR/tests/fixtures/monitor/kernels.ptx"
expect_status 0 "$CACHEADVISE" patch --instrument -o "$TMP/once.ptx" "$fx"
expect_status 2 "$CACHEADVISE" patch --instrument -o "$TMP/twice.ptx" "$TMP/once.ptx"
expect_grep 'already' "$TMP/err"
[ ! -e "$TMP/twice.ptx" ] && ok || not_ok "a refused instrumentation left $TMP/twice.ptx"
# --threshold reaches the code
expect_status 0 "$CACHEADVISE" patch --instrument --threshold 77 "$fx"
expect_grep 'setp\.lt(\.and)?\.u32[[:space:]]+%ca_q, %ca_n, 77' "$TMP/out"

samples=0
if [ -x "$NVCC" ]; then
	for src in "$CA_SOURCE_DIR"/samples/*.cu; do
		[ -e "$src" ] || continue
		name=sample_$(basename "$src" .cu)
		if ! "$NVCC" -ptx -arch=sm_90 -lineinfo -I"$CA_SOURCE_DIR" -o "$TMP/$name.ptx" "$src" \
			2>"$TMP/nvcc.err"; then
			not_ok "nvcc -ptx $src: $(head -c 400 "$TMP/nvcc.err")"
			continue
		fi
		instrument_and_assemble "$name" "$TMP/$name.ptx"
		samples=$((samples + 1))
	done
fi
echo "checked $checked fixture PTX files and $samples samples"
[ "$samples" -gt 0 ] || echo "note: no samples/*.cu (or no nvcc): samples part skipped"
finish
