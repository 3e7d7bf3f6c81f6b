#!/usr/bin/env bash
# The software cache (device/softcache.cuh) on every sample (issue 9): each
# of stream_table, thrash_pair, stencil1d, spmv and l2_reuse rewritten with
# the cache gives the plain kernels' outputs bit for bit, with the cache in
# use (tests/gpu/device/softcache_samples_test.cu), and the checksum of the
# rewrite's outputs equals the `checksum:` line of the sample binary itself
# ($CA_BUILD_DIR/samples/<name>, run with its defaults, as the test is).
# Exit 77 without a GPU or without the test program.
set -u
: "${CA_BUILD_DIR:?set by ctest}"
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU: skipped"; exit 77; }
bin="$CA_BUILD_DIR/device/softcache_samples_test"
[ -x "$bin" ] || { echo "$bin not built (CACHEADVISE_CUDA=OFF?): skipped"; exit 77; }
out=$(mktemp)
sample_out=$(mktemp)
trap 'rm -f "$out" "$sample_out"' EXIT
"$bin" >"$out" 2>&1
rc=$?
cat "$out"
[ -n "${CA_TEST_OUT:-}" ] && cp "$out" "$CA_TEST_OUT/softcache_samples_test.log"
[ "$rc" = 77 ] && exit 77
npass=$(grep -c '^PASS' "$out")
nfail=$(grep -c '^FAIL' "$out")

for s in stream_table thrash_pair stencil1d spmv l2_reuse; do
	want=$(sed -n "s/^$s software-cache checksum: //p" "$out" | head -n1)
	got=
	if [ -x "$CA_BUILD_DIR/samples/$s" ]; then
		timeout 300 "$CA_BUILD_DIR/samples/$s" >"$sample_out" 2>&1
		echo "samples/$s: exit $?, $(grep '^checksum: ' "$sample_out" || echo 'no checksum line')"
		got=$(sed -n 's/^checksum: //p' "$sample_out" | head -n1)
	else
		echo "samples/$s: not built at $CA_BUILD_DIR/samples/$s"
	fi
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		echo "PASS: $s: samples/$s prints the software-cache rewrite's checksum"
		echo "RESULT: $s checksum: samples/$s == softcache rewrite ($got)"
		npass=$((npass + 1))
	else
		tail -n 5 "$sample_out"
		echo "FAIL: $s: samples/$s prints '${got:-no checksum}', the software-cache rewrite '${want:-none}'"
		echo "RESULT: $s checksum: DIFFERENT: sample '${got:-none}', softcache '${want:-none}'"
		nfail=$((nfail + 1))
	fi
done

echo "$npass passed, $nfail failed (exit $rc)"
# 27 checks at least: stream_table (3), thrash_pair (5), stencil1d (4),
# spmv (5), l2_reuse (5) from the program, and five checksum comparisons
[ "$rc" = 0 ] && [ "$nfail" = 0 ] && [ "$npass" -ge 27 ]
