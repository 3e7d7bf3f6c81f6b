#!/usr/bin/env bash
# The warp register cache (device/regcache.cuh): for k = 1..8 the plain,
# shared-memory and register-cache stencils all equal the host's answer
# (tests/gpu/device/regcache_test.cu). Exit 77 without a GPU.
set -u
: "${CA_BUILD_DIR:?set by ctest}"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
bin="$CA_BUILD_DIR/device/regcache_test"
[ -x "$bin" ] || { echo "$bin not built (CACHEADVISE_CUDA=OFF?): skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" >"$out" 2>&1
rc=$?
cat "$out"
[ -n "${CA_TEST_OUT:-}" ] && cp "$out" "$CA_TEST_OUT/regcache_test.log"
[ "$rc" = 77 ] && exit 77
npass=$(grep -c '^PASS' "$out")
nfail=$(grep -c '^FAIL' "$out")
echo "$npass passed, $nfail failed (exit $rc)"
[ "$rc" = 0 ] && [ "$nfail" = 0 ] && [ "$npass" = 24 ]
