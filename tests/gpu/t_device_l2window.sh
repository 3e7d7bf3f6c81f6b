#!/usr/bin/env bash
# The persisting-L2 helpers (device/l2window.h): clamping to the device's
# limits, stream and graph-kernel-node windows as the driver reads them
# back, normal-window and full resets (tests/gpu/device/l2window_test.cu).
# Exit 77 without a GPU.
set -u
: "${CA_BUILD_DIR:?set by ctest}"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
bin="$CA_BUILD_DIR/device/l2window_test"
[ -x "$bin" ] || { echo "$bin not built (CACHEADVISE_CUDA=OFF?): skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" >"$out" 2>&1
rc=$?
cat "$out"
[ -n "${CA_TEST_OUT:-}" ] && cp "$out" "$CA_TEST_OUT/l2window_test.log"
[ "$rc" = 77 ] && exit 77
npass=$(grep -c '^PASS' "$out")
nfail=$(grep -c '^FAIL' "$out")
echo "$npass passed, $nfail failed (exit $rc)"
[ "$rc" = 0 ] && [ "$nfail" = 0 ] && [ "$npass" -ge 12 ]
