#!/usr/bin/env bash
# "Done when" of the intake issue: for every sample program, inspect --json
# of the built binary lists every global load that `nvcc -ptx` of the same
# source shows, per kernel, each with a source file and line.
# Skipped (77) when no sample binary is built (CACHEADVISE_CUDA=OFF) or
# nvcc is missing.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "skipped: no nvcc"; exit 77; }

checked=0
for src in "$CA_SOURCE_DIR"/samples/*.cu; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .cu)
	bin="$CA_BUILD_DIR/samples/$name"
	[ -x "$bin" ] || continue
	checked=$((checked + 1))

	# Global loads per .entry in nvcc's PTX: ld.global*, ldu.global*.
	if ! "$NVCC" -ptx -arch=sm_90 -lineinfo -I"$CA_SOURCE_DIR" -o "$TMP/$name.ptx" "$src" \
		2>"$TMP/nvcc.err"; then
		not_ok "nvcc -ptx $name: $(head -c 400 "$TMP/nvcc.err")"
		continue
	fi
	awk '
		/^[ \t]*(\.visible[ \t]+|\.weak[ \t]+)?\.entry[ \t]/ {
			name = $0; sub(/.*\.entry[ \t]+/, "", name); sub(/[ \t(].*/, "", name)
			entry = name; count[entry] += 0; next
		}
		/^[ \t]*(\.visible[ \t]+|\.weak[ \t]+|\.extern[ \t]+)?\.func[ \t]/ { entry = ""; next }
		entry != "" && /^[ \t]*(@!?%[a-z0-9_]+[ \t]+)?(ld\.([a-z0-9_:]+\.)*global\.|ldu\.global\.)/ {
			count[entry]++
		}
		END { for (e in count) print e, count[e] }
	' "$TMP/$name.ptx" | sort >"$TMP/$name.want"
	[ -s "$TMP/$name.want" ] && ok || not_ok "$name: no kernels found in nvcc's PTX"

	expect_status 0 "$CACHEADVISE" inspect --json "$bin"
	cp "$TMP/out" "$TMP/$name.json"
	python3 - "$TMP/$name.json" "$TMP/$name.want" "$name" <<'PY' && ok || not_ok "$name: inspect --json disagrees with nvcc -ptx"
import json, sys
doc = json.load(open(sys.argv[1]))
name = sys.argv[3]
want = {}
for line in open(sys.argv[2]):
    k, n = line.split()
    want[k] = int(n)
got, bad = {}, []
for m in doc["modules"]:
    for f in m["functions"]:
        if f["kind"] != "entry" or f["name"] not in want:
            continue
        if not m["has_ptx"]:
            bad.append("%s: module %s has no PTX" % (f["name"], m["origin"]))
        loads = [l for l in f["loads"] if l["space"] == "global"]
        got[f["name"]] = got.get(f["name"], 0) + len(loads)
        for l in loads:
            if not l["file"] or not isinstance(l["line"], int) or l["line"] <= 0:
                bad.append("%s load %d has no file:line" % (f["name"], l["ordinal"]))
for k, n in want.items():
    if got.get(k) != n:
        bad.append("%s: nvcc -ptx shows %d global loads, inspect %s" % (k, n, got.get(k)))
for b in bad:
    print("%s: %s" % (name, b), file=sys.stderr)
print("%s: %d kernels, %d global loads agree" % (name, len(want), sum(want.values())))
sys.exit(1 if bad else 0)
PY
done
if [ "$checked" = 0 ]; then
	echo "skipped: no sample binaries in $CA_BUILD_DIR/samples (CUDA off?)"
	exit 77
fi
finish
