#!/usr/bin/env bash
# GPU: the register-cache rewrite (issue 18, item 4) on samples/stencil1d.
# profile finds stencil_global's k-stencil (analysis/stencil_detect.c) and
# `report --all` writes regcache.patch; the patch applies to a copy of the
# sample, the patched program builds with nvcc as samples/CMakeLists.txt
# builds the sample, and for k = 1, 4, 15 (the window: 2k <= 30) and 20
# (the original loop kept for larger radii) it prints the same checksum as
# the original program. The patched program also checks its own
# stencil_global against stencil_shared bit for bit (exit 1 otherwise).
# The kernel times are printed as RESULT lines; nothing is kept or
# claimed: the report says "not verified on this program".
. "$(dirname "$0")/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
ARGS="n=16 iters=3"

out=$WORK/cap src=$WORK/src
if "$CACHEADVISE" profile --out "$out" --kernels stencil_global --top 1 --max-loads 8 --no-verify \
	--no-l2 --no-softcache "$SAMPLES/stencil1d" $ARGS >"$WORK/profile.stdout" 2>"$WORK/profile.stderr"; then
	ok
else
	not_ok "profile stencil1d failed: $(tail -n 5 "$WORK/profile.stderr")"
	finish
fi
check "stencil_global has a register-cache hint" \
	'any("register_cache" in k for k in j["kernels"] if "stencil_global" in k["name"])' "$out/capture.json"
mkdir -p "$src"
cp "$CA_SOURCE_DIR/samples/stencil1d.cu" "$src/"
if "$CACHEADVISE" report "$out" --all --source-root "$CA_SOURCE_DIR/samples" >"$WORK/report.out" 2>&1; then
	ok
else
	not_ok "report --all failed: $(tail -n 5 "$WORK/report.out")"
fi
[ -s "$out/regcache.patch" ] && ok || { not_ok "no regcache.patch in $out"; finish; }
grep 'rewrite: ' "$out/report.txt" | sed 's/^ */RESULT: /'
grep -q 'not verified on this program' "$out/report.txt" && ok || not_ok "report.txt: rewrite not marked unverified"
if (cd "$src" && patch -s -p1 <"$out/regcache.patch") >"$WORK/patch.out" 2>&1; then ok; else
	not_ok "patch -p1: $(cat "$WORK/patch.out")"; finish; fi

flags="-gencode arch=compute_90,code=[sm_90,compute_90] -lineinfo -O3"
if "$NVCC" $flags "$CA_SOURCE_DIR/samples/stencil1d.cu" -o "$WORK/original" 2>"$WORK/nvcc0.err"; then ok; else
	not_ok "nvcc (original): $(head -c 600 "$WORK/nvcc0.err")"; finish; fi
if "$NVCC" $flags -I"$CA_BUILD_DIR/include" "$src/stencil1d.cu" -o "$WORK/patched" 2>"$WORK/nvcc1.err"; then ok; else
	not_ok "nvcc (patched): $(head -c 600 "$WORK/nvcc1.err")"; finish; fi

for k in 1 4 15 20; do
	"$WORK/original" $ARGS k=$k >"$WORK/o$k.out" 2>"$WORK/o$k.err" || not_ok "original k=$k exited $?"
	if "$WORK/patched" $ARGS k=$k >"$WORK/p$k.out" 2>"$WORK/p$k.err"; then ok; else
		not_ok "patched k=$k exited $? (stencil_global against stencil_shared): $(tail -n 2 "$WORK/p$k.err")"
	fi
	want=$(grep '^checksum:' "$WORK/o$k.out") got=$(grep '^checksum:' "$WORK/p$k.out")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok; else
		not_ok "k=$k: patched '$got', original '$want'"
	fi
	to=$(sed -n 's/^kernel stencil_global: \([0-9.]*\) ms/\1/p' "$WORK/o$k.err")
	tp=$(sed -n 's/^kernel stencil_global: \([0-9.]*\) ms/\1/p' "$WORK/p$k.err")
	result "k=$k on $GPU: stencil_global ${to:-?} ms original, ${tp:-?} ms with regcache.patch ($want)"
done
finish
