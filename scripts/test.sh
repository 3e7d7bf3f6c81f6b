#!/usr/bin/env bash
# Builds and runs every test: the developer build (warnings are errors) with
# unit, cli and gpu tests (gpu tests skip where there is no GPU), then a
# sanitizer build (ASan + UBSan) running the unit and cli tests, then short
# libFuzzer runs of the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
bash scripts/install-deps.sh
jobs=$(nproc)

cmake -S . -B build -DCMAKE_BUILD_TYPE=Debug -DCACHEADVISE_WERROR=ON
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCACHEADVISE_SANITIZE=ON \
	-DCACHEADVISE_CUDA=OFF
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --output-on-failure -j"$jobs" -L 'unit|cli')

if command -v clang >/dev/null 2>&1; then
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug \
		-DCACHEADVISE_FUZZ=ON -DCACHEADVISE_CUDA=OFF -DCACHEADVISE_WERROR=OFF
	# only the fuzz targets: the rest is built and tested above
	targets=$(for f in tests/fuzz/fuzz_*.c; do basename "$f" .c; done)
	cmake --build build-fuzz -j"$jobs" --target $targets
	for f in build-fuzz/tests/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		corpus="tests/fuzz/corpus/${name#fuzz_}"
		mkdir -p "build-fuzz/corpus-$name"
		echo "fuzzing $name for 30 s"
		"$f" -max_total_time=30 -rss_limit_mb=2048 "build-fuzz/corpus-$name" \
			$( [ -d "$corpus" ] && echo "$corpus" ) 2>&1 | tail -n 3
	done
fi
