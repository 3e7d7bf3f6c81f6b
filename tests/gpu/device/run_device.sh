#!/usr/bin/env bash
# Builds and runs every GPU test and benchmark of device/ on a GPU machine,
# from the repository root:
#
#     bash tests/gpu/device/run_device.sh
#
# Builds with nvcc directly (the GPU machine has no jansson or GLPK headers,
# so the CLI cannot be built there: it is taken from $CACHEADVISE, else
# build-device/bin/cacheadvise, built on a development machine and carried
# along). Logs go to $OUT (at most 8 files): build.log, tests.log,
# bench.log, device.json, probe-summary.txt, gpu.txt, summary.txt. The
# short table printed last is summary.txt.
set -u
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/device-out}
B=${B:-/tmp/cacheadvise-device-build}
T=$B/test-out
mkdir -p "$OUT" "$B/bin" "$B/device" "$B/samples" "$T"
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s)

nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm --format=csv >"$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n1)

# ---------------------------------------------------------------- build
SC_SAMPLES="stream_table thrash_pair stencil1d spmv l2_reuse"
NV="nvcc -O3 -std=c++17 -arch=sm_90 -I."
{
	nvcc --version | tail -n 2
	gcc -O2 -Wall -Wextra -I. -I/usr/local/cuda/include -c device/l2window.c -o "$B/l2window.o" 2>&1 ||
		echo "BUILD FAILED: l2window.o"
	pids=()
	$NV -o "$B/bin/cacheadvise-probe" device/probe.cu >"$B/build-probe.log" 2>&1 &
	pids+=($!)
	for f in tests/gpu/device/*.cu; do
		n=$(basename "$f" .cu)
		$NV -o "$B/device/$n" "$f" "$B/l2window.o" >"$B/build-$n.log" 2>&1 &
		pids+=($!)
	done
	nvcc -O3 -arch=sm_90 -lineinfo -o "$B/records" samples/records.cu >"$B/build-records.log" 2>&1 &
	pids+=($!)
	# the samples t_device_softcache_samples.sh compares with ($CA_BUILD_DIR/samples)
	for s in $SC_SAMPLES; do
		nvcc -O3 -arch=sm_90 -lineinfo -o "$B/samples/$s" "samples/$s.cu" >"$B/build-sample-$s.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	cat "$B"/build-*.log
	for x in "$B/bin/cacheadvise-probe" "$B"/device/* "$B/records" "$B"/samples/*; do
		[ -x "$x" ] && echo "built $x" || echo "BUILD FAILED: $x"
	done
	cli=${CACHEADVISE:-build-device/bin/cacheadvise}
	if [ -x "$cli" ]; then
		cp "$cli" "$B/bin/cacheadvise"
		ldd "$B/bin/cacheadvise" | grep -i "not found" && echo "CLI: missing libraries"
		"$B/bin/cacheadvise" --version
	else
		echo "no CLI at $cli: the probe test will be skipped"
	fi
} >"$OUT/build.log" 2>&1
echo "build: $(( $(date +%s) - t0 )) s"
grep -E "BUILD FAILED|error" "$OUT/build.log" | head -n 20

# ---------------------------------------------------------------- tests
export CA_SOURCE_DIR=$PWD CA_BUILD_DIR=$B CACHEADVISE=$B/bin/cacheadvise CA_TEST_OUT=$T
declare -A result
: >"$OUT/tests.log"
for t in softcache softcache_samples regcache l2window probe; do
	s=$(date +%s)
	timeout 200 bash "tests/gpu/t_device_$t.sh" >"$T/t_$t.log" 2>&1
	rc=$?
	case $rc in 0) r=PASS ;; 77) r=SKIP ;; *) r="FAIL($rc)" ;; esac
	result[$t]="$r $(grep -E '^[0-9]+ passed, [0-9]+ failed' "$T/t_$t.log" | tail -n1) ($(( $(date +%s) - s )) s)"
	{ echo "=== t_device_$t.sh: ${result[$t]}"; cat "$T/t_$t.log"; echo; } >>"$OUT/tests.log"
	echo "t_device_$t: ${result[$t]}"
done
[ -f "$T/device.json" ] && cp "$T/device.json" "$OUT/device.json"
[ -f "$T/probe-summary.txt" ] && cp "$T/probe-summary.txt" "$OUT/probe-summary.txt"

# ---------------------------------------------------------------- bench
{
	echo "=== samples/records (the sample itself)"
	"$B/records"
	echo
	echo "=== softcache_bench"
	"$B/device/softcache_bench" 15
	echo
	echo "=== regcache_test --bench"
	"$B/device/regcache_test" --bench 134217728 20
	echo
	echo "=== l2window_test (window measurement)"
	grep -A5 "^window measurement" "$T/l2window_test.log"
	echo
	if command -v ncu >/dev/null 2>&1; then
		m=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum
		m=$m,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
		m=$m,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
		m=$m,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,smsp__inst_executed.sum
		echo "=== ncu: records, plain vs software cache (per_thread=256)"
		timeout 120 ncu --clock-control none --cache-control none --metrics "$m" -k regex:process_records \
			"$B/device/softcache_bench" --once 256 2>&1 | grep -vE "^==PROF==|^ *-+ *-+"
		echo
		echo "=== ncu: 4-stencil, plain / shared memory / register cache"
		timeout 120 ncu --clock-control none --cache-control none --metrics "$m" -k regex:stencil \
			"$B/device/regcache_test" --once 4 2>&1 | grep -vE "^==PROF==|^ *-+ *-+"
	fi
} >"$OUT/bench.log" 2>&1

# ---------------------------------------------------------------- table
sample_sum=$(sed -n 's/^checksum: //p' "$OUT/bench.log" | head -n1)
sc_sum=$(sed -n 's/^records per_thread=256 software-cache checksum: //p' "$T/t_softcache.log" | head -n1)
{
	echo "device/ on $gpu, $(date -u +%Y-%m-%d), $(( $(date +%s) - t0 )) s"
	printf '%-29s %s\n' "test" "result"
	for t in softcache softcache_samples regcache l2window probe; do
		printf '%-29s %s\n' "t_device_$t" "${result[$t]}"
	done
	if [ -n "$sample_sum" ] && [ "$sample_sum" = "$sc_sum" ]; then
		printf '%-29s %s\n' "records checksum" "samples/records == softcache rewrite ($sample_sum)"
	else
		printf '%-29s %s\n' "records checksum" "DIFFERENT: sample '$sample_sum', softcache '$sc_sum'"
	fi
	# t_device_softcache_samples.sh compared each sample binary with its rewrite
	for s in $SC_SAMPLES; do
		line=$(sed -n "s/^RESULT: $s checksum: //p" "$T/t_softcache_samples.log" 2>/dev/null | head -n1)
		printf '%-29s %s\n' "$s checksum" "${line:-not compared (see tests.log)}"
	done
	echo
	sed -n '/^=== softcache_bench/,/^$/p' "$OUT/bench.log" | sed -n '/^per_thread/,$p'
	echo
	sed -n '/^=== regcache_test/,/^$/p' "$OUT/bench.log" | sed -n '/^k /,$p'
	echo
	[ -f "$OUT/probe-summary.txt" ] && cat "$OUT/probe-summary.txt"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
