#!/usr/bin/env bash
# The software cache (device/softcache.cuh) on a GPU: samples/records.cu's
# kernel and a read-write kernel with barriers and atomics give the plain
# kernels' results bit for bit, concurrent writers of different bytes of
# shared lines lose nothing, aliasing without restrict stays correct
# (tests/gpu/device/softcache_test.cu). Exit 77 without a GPU.
set -u
: "${CA_BUILD_DIR:?set by ctest}"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
bin="$CA_BUILD_DIR/device/softcache_test"
[ -x "$bin" ] || { echo "$bin not built (CACHEADVISE_CUDA=OFF?): skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" >"$out" 2>&1
rc=$?
cat "$out"
[ -n "${CA_TEST_OUT:-}" ] && cp "$out" "$CA_TEST_OUT/softcache_test.log"
[ "$rc" = 77 ] && exit 77
npass=$(grep -c '^PASS' "$out")
nfail=$(grep -c '^FAIL' "$out")
echo "$npass passed, $nfail failed (exit $rc)"
# 12 checks at least: records x2 (3 each), read-write (6), stress (3), alias (2), merge (2)
[ "$rc" = 0 ] && [ "$nfail" = 0 ] && [ "$npass" -ge 18 ]
