#!/usr/bin/env bash
# Validates the bundled samples on a GPU machine (H100/H200, nvcc 13, ncu):
# builds every sample with nvcc directly, runs each with its defaults
# (checksum, kernel times, peak GPU memory), and measures the per-load
# variants of stream_table and thrash_pair, built with the samples' own
# macros that turn chosen loads into ld.global.L1::no_allocate (inline PTX),
# by kernel time (cudaEvents, median) and under ncu (L1 hits, L2 sectors,
# DRAM bytes).
#
#   samples/tune/validate.sh tune     call 1: sweeps sizes and shapes
#   samples/tune/validate.sh confirm  call 2: the defaults, A/B repeated
#
# Run from the repository root. Writes logs and tables under $OUT (default
# /tmp/validate-out); BUILD=DIR picks the build folder, SKIP_BUILD=1 reuses
# it. The figures of the committed samples are in bench/results/samples.md.
# The tune mode's stream_table sweeps pass rec=128 (the default when call 1
# ran), so they reproduce that call.
set -u
mode=${1:-confirm}
OUT=${OUT:-/tmp/validate-out}
B=${BUILD:-/tmp/samples-build}
mkdir -p "$OUT" "$B"
log="$OUT/validate.log"
summary="$OUT/summary.txt"
: >"$log"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

say "== validate.sh $mode, $(date -u +%Y-%m-%dT%H:%MZ)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader | tee -a "$summary"
nvcc --version | tail -1 | tee -a "$summary"

# --- build ------------------------------------------------------------------
build() { # OUTNAME SOURCE [NVCC FLAGS...]
	local out=$1 src=$2
	shift 2
	nvcc -O3 -arch=sm_90 -lineinfo "$@" -o "$B/$out" "samples/$src.cu" >"$B/$out.buildlog" 2>&1 ||
		{ echo "BUILD FAILED: $out"; cat "$B/$out.buildlog"; }
}
t0=$(date +%s)
[ "${SKIP_BUILD:-0}" = 1 ] || {
for s in stream_table thrash_pair stencil1d records l2_reuse spmv; do build "$s" "$s" & done
build stream_table.na stream_table -DSTREAM_NA=1 &
build stream_table.tna stream_table -DTABLE_NA=1 &
build stream_table.allna stream_table -DSTREAM_NA=1 -DTABLE_NA=1 &
build thrash_pair.bna thrash_pair -DB_NA=1 &
build thrash_pair.ana thrash_pair -DA_NA=1 &
build thrash_pair.abna thrash_pair -DA_NA=1 -DB_NA=1 &
build thrash_pair.bcna thrash_pair -DB_NA=1 -DC_NA=1 &
wait
}
say "built in $(($(date +%s) - t0)) s"
# The variants differ only in the chosen loads' SASS: LDG.E.NA.
for v in stream_table stream_table.na stream_table.tna thrash_pair thrash_pair.bna thrash_pair.abna; do
	say "sass $v: LDG.E.NA x$(cuobjdump -sass "$B/$v" | grep -c 'LDG\.E\.NA'), LDG x$(cuobjdump -sass "$B/$v" | grep -c 'LDG')"
done

# The macro variant is what the tool would deploy: patching the default
# build's PTX (the chosen ld.global lines get .L1::no_allocate) gives the same
# SASS as the inline-PTX build, apart from register numbers and addresses.
ptx_vs_macro() { # SAMPLE KERNEL LDREGEX MACRO
	local s=$1 k=$2 re=$3 mac=$4 d="$B/pvm-$1"
	mkdir -p "$d"
	nvcc -arch=sm_90 -lineinfo -ptx -o "$d/orig.ptx" "samples/$s.cu" &&
	python3 - "$d/orig.ptx" "$d/patched.ptx" "$k" "$re" <<'EOF' &&
import re, sys
src, dst, kernel, pat = sys.argv[1:]
out, inside, n = [], False, 0
for line in open(src):
    if line.startswith('.visible .entry'):
        inside = kernel in line
    if inside and re.search(pat, line):
        line = line.replace('ld.global.', 'ld.global.L1::no_allocate.', 1)
        n += 1
    out.append(line)
open(dst, 'w').writelines(out)
print('patched %d load(s)' % n)
EOF
	ptxas -arch=sm_90 -o "$d/patched.cubin" "$d/patched.ptx" &&
	nvcc -arch=sm_90 -lineinfo -cubin "-D$mac=1" -o "$d/macro.cubin" "samples/$s.cu" || return
	for c in patched macro; do
		cuobjdump -sass "$d/$c.cubin" | sed -n "/Function : .*$k/,/Function :/p" |
			grep -oE '/\*[0-9a-f]{4}\*/ +(@!?U?P[T0-9]+ +)?[A-Z][A-Z0-9._]*' | awk '{print $NF}' >"$d/$c.ops"
	done
	say "$s: PTX-patched vs -D$mac SASS of $k: $(wc -l <"$d/patched.ops") vs $(wc -l <"$d/macro.ops") instructions, NA loads $(grep -c 'LDG.*NA' "$d/patched.ops") vs $(grep -c 'LDG.*NA' "$d/macro.ops"), opcode sequences $(cmp -s "$d/patched.ops" "$d/macro.ops" && echo identical || echo differ)"
}
ptx_vs_macro stream_table decode_keys 'ld\.global\.v4\.u32' STREAM_NA
ptx_vs_macro thrash_pair correlate 'ld\.global\.v2\.f32' B_NA

# --- helpers ----------------------------------------------------------------
# kt BIN KERNEL ARGS...: runs BIN, logs its output, prints KERNEL's median ms
kt() {
	local bin=$1 k=$2
	shift 2
	local o
	o=$("$B/$bin" "$@" 2>&1)
	local rc=$?
	printf '$ %s %s\n%s\n' "$bin" "$*" "$o" >>"$log"
	[ $rc = 0 ] || { echo "FAIL($rc)"; return; }
	echo "$o" | sed -n "s/^kernel $k: \([0-9.]*\) ms/\1/p"
}
ck() { grep -o 'checksum: [0-9a-f]*' | cut -d' ' -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.3f", a / b; else printf "-" }'; }
NCU_METRICS=launch__shared_mem_config_size,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,gpu__time_duration.sum
# prof LABEL BIN KERNEL ARGS...: one launch (the second) under ncu
prof() {
	local label=$1 bin=$2 k=$3
	shift 3
	local m
	for m in "$NCU_METRICS" "${NCU_METRICS#*,}"; do
		ncu --clock-control none --cache-control none --metrics "$m" \
			--kernel-name "regex:^$k\$" --launch-skip 1 --launch-count 1 \
			--csv --page raw --print-units base "$B/$bin" "$@" >"$OUT/ncu.tmp" 2>>"$log"
		grep -q 'gpu__time_duration' "$OUT/ncu.tmp" && break
	done
	cat "$OUT/ncu.tmp" >>"$log"
	python3 - "$label" "$OUT/ncu.tmp" <<'EOF' | tee -a "$summary"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[2])) if len(r) > 5]
if len(rows) < 3:
    print('%-34s ncu: no data' % sys.argv[1]); sys.exit()
h = rows[0]
v = [r for r in rows if len(r) == len(h)][-1]
g = lambda m: float(v[h.index(m)].replace(',', '')) if m in h else float('nan')
sec = g('l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum')
hit = g('l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum')
print('%-34s smem %3.0fK L1 sectors %8.2fM hits %8.2fM (%5.1f%%) L2 rd %8.2fM DRAM rd %7.1fMB time %8.3f ms' % (
    sys.argv[1], g('launch__shared_mem_config_size') / 1024, sec / 1e6, hit / 1e6, 100 * hit / max(sec, 1),
    g('lts__t_sectors_srcunit_tex_op_read.sum') / 1e6,
    g('dram__bytes_read.sum') / 1e6, g('gpu__time_duration.sum') / 1e6))
EOF
}

# --- every sample with its defaults ------------------------------------------
say ""
say "== defaults (wall time, checksum, kernel medians)"
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 >"$OUT/mem.txt" &
smi=$!
for s in stream_table thrash_pair stencil1d records l2_reuse spmv; do
	t0=$(date +%s.%N)
	o=$("$B/$s" 2>&1)
	rc=$?
	t1=$(date +%s.%N)
	printf '$ %s\n%s\n' "$s" "$o" >>"$log"
	say "$s: rc=$rc wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')s $(echo "$o" | grep -E '^(kernel|checksum)' | tr '\n' ' ')"
done
kill $smi 2>/dev/null
say "peak GPU memory used while the defaults ran: $(sort -n "$OUT/mem.txt" | tail -1) MiB"

if [ "$mode" = tune ]; then
	# --- stream_table: where does the table stop fitting? (ncu hit counts)
	say ""
	say "== stream_table: table size vs L1 hits (threads=256 steps=2 mb=256 rec=128)"
	for tk in 16 32 48 64; do
		for v in stream_table stream_table.na; do
			prof "$v table_kb=$tk" "$v" decode_keys mb=256 rec=128 iters=1 table_kb=$tk
		done
	done
	# --- stream_table: shape sweep, default vs key-bypassed (ms)
	say ""
	say "== stream_table timing sweep (mb=512 passes=2 iters=5 rec=128): D=default N=key NA W=table NA"
	for thr in 128 256 512 1024; do
		for st in 1 2 4; do
			for tk in 32 44 52; do
				a="mb=512 passes=2 iters=5 rec=128 threads=$thr steps=$st table_kb=$tk"
				d=$(kt stream_table decode_keys $a)
				n=$(kt stream_table.na decode_keys $a)
				say "st thr=$thr steps=$st table=$tk D=$d N=$n D/N=$(ratio "$d" "$n")"
			done
		done
	done
	for thr in 256 1024; do
		for st in 1 2; do
			a="mb=24 passes=64 iters=5 rec=128 threads=$thr steps=$st table_kb=44"
			d=$(kt stream_table decode_keys $a)
			n=$(kt stream_table.na decode_keys $a)
			w=$(kt stream_table.tna decode_keys $a)
			say "st L2-resident thr=$thr steps=$st D=$d N=$n W=$w D/N=$(ratio "$d" "$n")"
		done
	done
	for rec in 16 64; do
		a="mb=512 passes=2 iters=5 rec=$rec"
		d=$(kt stream_table decode_keys $a)
		n=$(kt stream_table.na decode_keys $a)
		say "st rec=$rec D=$d N=$n D/N=$(ratio "$d" "$n")"
	done

	# --- thrash_pair: sizes and variants (ms)
	say ""
	say "== thrash_pair sweep (iters=5): D=default, cA=cache A bypass B, cB=cache B bypass A, none=both bypassed"
	for thr in 512 1024; do
		for ap in 70 85 95; do
			for bp in 40 60; do
				a="iters=5 threads=$thr a_pct=$ap b_pct=$bp"
				d=$(kt thrash_pair correlate $a)
				x=$(kt thrash_pair.bna correlate $a)
				y=$(kt thrash_pair.ana correlate $a)
				z=$(kt thrash_pair.abna correlate $a)
				say "tp thr=$thr a=$ap% b=$bp% D=$d cA=$x cB=$y none=$z D/cA=$(ratio "$d" "$x")"
			done
		done
	done
	for sk in 100 132 228; do
		a="iters=5 shared_kb=$sk"
		d=$(kt thrash_pair correlate $a)
		x=$(kt thrash_pair.bna correlate $a)
		say "tp shared=$sk D=$d cA=$x D/cA=$(ratio "$d" "$x")"
	done
	say ""
	say "== thrash_pair under ncu (defaults, rpt=4)"
	for v in thrash_pair thrash_pair.bna thrash_pair.ana thrash_pair.abna; do
		prof "$v" "$v" correlate iters=1 rpt=4
	done
	say ""
	say "== stream_table under ncu (mb=256 rec=128)"
	for v in stream_table stream_table.na stream_table.tna stream_table.allna; do
		prof "$v" "$v" decode_keys iters=1 mb=256 rec=128
	done
	say ""
	say "== l2_reuse: guide's persisting window off / on"
	for w in 0 1 0 1; do
		o=$("$B/l2_reuse" window=$w 2>&1)
		printf '$ l2_reuse window=%s\n%s\n' "$w" "$o" >>"$log"
		say "l2_reuse window=$w $(echo "$o" | grep -E '^(kernel|checksum)' | tr '\n' ' ')"
	done
fi

if [ "$mode" = confirm ]; then
	say ""
	say "== stream_table defaults, alternating A/B rounds: D=default N=key NA"
	for r in 1 2 3 4 5; do
		d=$(kt stream_table decode_keys)
		n=$(kt stream_table.na decode_keys)
		say "st round $r: D=$d N=$n D/N=$(ratio "$d" "$n")"
	done
	say "st W(table NA)=$(kt stream_table.tna decode_keys) X(both NA)=$(kt stream_table.allna decode_keys)"
	for tk in 32 56; do
		d=$(kt stream_table decode_keys table_kb=$tk)
		n=$(kt stream_table.na decode_keys table_kb=$tk)
		say "st table_kb=$tk D=$d N=$n D/N=$(ratio "$d" "$n")"
	done
	d=$(kt stream_table decode_keys rec=128 mb=2048)
	n=$(kt stream_table.na decode_keys rec=128 mb=2048)
	say "st rec=128 mb=2048 D=$d N=$n D/N=$(ratio "$d" "$n")"
	for v in stream_table stream_table.na stream_table.tna stream_table.allna; do
		say "checksum $v: $("$B/$v" iters=1 | ck)"
	done
	say ""
	say "== thrash_pair defaults, alternating A/B rounds: D=default cA=cache A bypass B"
	for r in 1 2 3 4 5; do
		d=$(kt thrash_pair correlate)
		x=$(kt thrash_pair.bna correlate)
		say "tp round $r: D=$d cA=$x D/cA=$(ratio "$d" "$x")"
	done
	say "tp cB(cache B bypass A)=$(kt thrash_pair.ana correlate) none=$(kt thrash_pair.abna correlate) cA+c_NA=$(kt thrash_pair.bcna correlate)"
	for v in thrash_pair thrash_pair.bna thrash_pair.ana thrash_pair.abna thrash_pair.bcna; do
		say "checksum $v: $("$B/$v" iters=1 | ck)"
	done
	say ""
	say "== thrash_pair shared_kb=90 (two blocks per SM), alternating A/B rounds"
	for r in 1 2 3; do
		d=$(kt thrash_pair correlate shared_kb=90)
		x=$(kt thrash_pair.bna correlate shared_kb=90)
		say "tp90 round $r: D=$d cA=$x D/cA=$(ratio "$d" "$x")"
	done
	say "tp90 cB=$(kt thrash_pair.ana correlate shared_kb=90) none=$(kt thrash_pair.abna correlate shared_kb=90)"
	grep -A4 '^\$ thrash_pair shared_kb=90' "$log" | grep -E 'launch|A:|L1 left' | head -3 | tee -a "$summary"
	say ""
	say "== under ncu (stream_table mb=256, thrash_pair rpt=4, others smaller inputs)"
	for v in stream_table stream_table.na stream_table.tna stream_table.allna; do
		prof "$v" "$v" decode_keys iters=1 mb=256
	done
	for v in thrash_pair thrash_pair.bna thrash_pair.ana thrash_pair.abna; do
		prof "$v" "$v" correlate iters=1 rpt=4
	done
	for v in thrash_pair thrash_pair.bna thrash_pair.ana thrash_pair.abna; do
		prof "$v shared_kb=90" "$v" correlate iters=1 rpt=4 shared_kb=90
	done
	prof "stencil1d stencil_global n=64" stencil1d stencil_global iters=1 n=64
	prof "stencil1d stencil_shared n=64" stencil1d stencil_shared iters=1 n=64
	prof "records process_records" records process_records iters=1
	prof "spmv spmv_scalar rows=2" spmv spmv_scalar iters=1 rows=2
	prof "spmv spmv_warp rows=2" spmv spmv_warp iters=1 rows=2
	prof "l2_reuse gather_mix" l2_reuse gather_mix iters=1
	prof "l2_reuse stream_scale" l2_reuse stream_scale iters=1
	say ""
	say "== l2_reuse: guide's persisting window off / on"
	for w in 0 1 0 1; do
		o=$("$B/l2_reuse" window=$w 2>&1)
		printf '$ l2_reuse window=%s\n%s\n' "$w" "$o" >>"$log"
		say "l2_reuse window=$w $(echo "$o" | grep -E '^(kernel|checksum)' | tr '\n' ' ')"
	done
	say ""
	say "== compute-sanitizer on small inputs (memcheck; racecheck for the shared-memory kernels)"
	san() { # TOOL BIN ARGS...
		local tool=$1 bin=$2
		shift 2
		local o
		o=$(timeout 40 compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/$bin" "$@" 2>&1)
		local rc=$?
		printf '$ compute-sanitizer --tool %s %s %s\n%s\n' "$tool" "$bin" "$*" "$o" >>"$log"
		say "$tool $bin $*: rc=$rc $(echo "$o" | grep -E '(ERROR|RACECHECK) SUMMARY' | tail -1)"
	}
	san memcheck stream_table mb=8 iters=1
	san memcheck stream_table.na mb=8 iters=1 rec=128
	san memcheck thrash_pair rpt=1 steps=8 iters=1
	san memcheck stencil1d n=1 iters=1 k=7
	san memcheck records per_thread=8 iters=1
	san memcheck l2_reuse hot_mb=1 cold_mb=8 iters=1 window=1
	san memcheck spmv rows=1 iters=1
	san racecheck stencil1d n=1 iters=1
	san racecheck thrash_pair rpt=1 steps=8 iters=1 shared_kb=16
	san racecheck stream_table mb=1 iters=1 shared_kb=16
fi
say ""
say "== done $(date -u +%H:%M:%S)"
