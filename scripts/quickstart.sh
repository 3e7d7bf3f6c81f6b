#!/usr/bin/env bash
# Installs what cacheadvise needs, builds it, and runs the main job on a
# bundled sample: with a GPU, `cacheadvise profile` of samples/stream_table;
# without one, it says so and shows what needs no GPU: `inspect` of the
# sample and the report of a capture recorded on a real GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/cuda/bin:$PATH"
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCACHEADVISE_WERROR=OFF >/dev/null
cmake --build build -j"$(nproc)"
ca=build/bin/cacheadvise
sample=build/samples/stream_table
echo
if nvidia-smi -L >/dev/null 2>&1; then
	echo "== cacheadvise profile $sample"
	"$ca" profile --out cacheadvise-out/quickstart-stream_table "$sample"
	echo
	"$ca" report cacheadvise-out/quickstart-stream_table
else
	echo "No GPU here (nvidia-smi finds none): profiling needs one. What works without a GPU:"
	echo
	echo "== cacheadvise inspect $sample"
	"$ca" inspect "$sample"
	echo
	fixture=tests/fixtures/capture-real
	echo "== cacheadvise report $fixture   (a capture recorded on an NVIDIA H200)"
	"$ca" report "$fixture"
	"$ca" report "$fixture" --format html -o cacheadvise-quickstart-report.html
	echo
	echo "The same report as HTML: cacheadvise-quickstart-report.html"
fi
