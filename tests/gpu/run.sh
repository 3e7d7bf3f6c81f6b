#!/usr/bin/env bash
# Runs every GPU test and benchmark (or the subsets named) on a machine with
# a GPU, with full logs under $OUT and a short table last.
#
#   tests/gpu/run.sh [SUBSET...]     SUBSET: a test name (t_capture), a
#                                    prefix (t_device), or "all" (default);
#                                    tests run in the order of the subsets
#   tests/gpu/run.sh gpu_corpus      the corpus of real programs
#                                    (bench/gpu_corpus.sh; CA_CORPUS_APPS)
#
# CA_TEST_LIMIT (default 420): seconds one test may take before it is
# stopped and counted FAIL(124).
#
# Build on the development machine and carry the build folder (FACTS.md):
#   cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCACHEADVISE_WERROR=OFF
#   cmake --build build-gpu -j
# then on the GPU machine: CA_BUILD_DIR=build-gpu tests/gpu/run.sh
#
# Exit status: 0 when every test selected passed (some may skip), 1 when one
# failed or when all of them skipped (no usable GPU: nothing was tested),
# 2 when the subsets select no test.
set -u
here=$(cd "$(dirname "$0")" && pwd)
CA_SOURCE_DIR=$(cd "$here/../.." && pwd)
if ! CA_BUILD_DIR=$(cd "${CA_BUILD_DIR:-$CA_SOURCE_DIR/build-gpu}" 2>/dev/null && pwd); then
	echo "run.sh: no build folder at ${CA_BUILD_DIR:-$CA_SOURCE_DIR/build-gpu} (set CA_BUILD_DIR)" >&2
	exit 2
fi
export CA_SOURCE_DIR CA_BUILD_DIR
export CACHEADVISE="$CA_BUILD_DIR/bin/cacheadvise"
OUT=${OUT:-/tmp/cacheadvise-gpu-out}
# The device tool brings back at most 8 files: logs travel as one tarball.
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/cacheadvise-gpu-logs.XXXXXX")/logs
mkdir -p "$OUT" "$LOGS"
export CA_GPU_LOGS=$LOGS
subsets=("$@")
[ ${#subsets[@]} -eq 0 ] && subsets=(all)

{
	date -u +"date: %Y-%m-%dT%H:%M:%SZ"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
} >"$LOGS/machine.txt" 2>&1
table=()
nr_run=0
nr_skip=0
tests=()
# in the order the subsets are named (so the ones that matter most run
# first, before a time limit), each test once
for s in "${subsets[@]}"; do
	for t in "$here"/t_*.sh "$CA_SOURCE_DIR"/bench/gpu_*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[ "$s" = all ] || case "$name" in "$s"*) ;; *) continue ;; esac
		case " ${tests[*]-} " in *" $t "*) continue ;; esac
		tests+=("$t")
	done
done
if [ ${#tests[@]} = 0 ]; then
	echo "run.sh: no test matches '${subsets[*]}' (tests: t_*.sh in tests/gpu, gpu_*.sh in bench)" >&2
	exit 2
fi
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	# one test may not take the whole call: past CA_TEST_LIMIT seconds it
	# is stopped (FAIL(124)) and the next one runs
	timeout -k 10 "${CA_TEST_LIMIT:-420}" bash "$t" >"$LOGS/$name.log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	nr_run=$((nr_run + 1))
	case $rc in 0) st=PASS ;; 77) st=SKIP; nr_skip=$((nr_skip + 1)) ;; *) st="FAIL($rc)" ;; esac
	table+=("$(printf '%-28s %-8s %5ss' "$name" "$st" "$secs")")
	while IFS= read -r line; do
		table+=("    ${line#RESULT: }")
	done < <(grep '^RESULT: ' "$LOGS/$name.log")
	# as it goes too, so a run stopped at its time limit still shows what it did
	printf '%-28s %-8s %5ss\n' "$name" "$st" "$secs"
	grep '^RESULT: ' "$LOGS/$name.log" | sed 's/^RESULT: /    /'
	# the logs so far, as one tarball (the device tool brings back 8 files)
	tar czf "$OUT/gpu-logs.tgz" -C "$(dirname "$LOGS")" logs 2>/dev/null
	[ "$st" = PASS ] || [ "$st" = SKIP ] || tail -n 15 "$LOGS/$name.log" | sed 's/^/    | /'
done
echo
cat "$LOGS/machine.txt"
printf '%s\n' "${table[@]}" | tee "$LOGS/summary.txt"
cp "$LOGS/summary.txt" "$OUT/summary.txt"
tar czf "$OUT/gpu-logs.tgz" -C "$(dirname "$LOGS")" logs
grep -q 'FAIL(' "$LOGS/summary.txt" && exit 1
# Every test skips where it finds no GPU: on the GPU machine, all of them
# skipping means nothing was tested (nvidia-smi failed, say), not a pass.
if [ "$nr_skip" = "$nr_run" ]; then
	echo "run.sh: all $nr_run tests skipped: no usable GPU (see machine.txt above)" >&2
	exit 1
fi
exit 0
