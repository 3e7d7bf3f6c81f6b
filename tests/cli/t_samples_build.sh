#!/usr/bin/env bash
# Every bundled sample is built into $CA_BUILD_DIR/samples/<name>, carries an
# ELF .nv_fatbin section, and its source compiles to PTX that defines the
# sample's kernels. Where python3 is present, the fatbin itself is read: it
# must hold sm_90 SASS and compute_90 PTX; where zstd is present too, the
# embedded (compressed) PTX must target sm_90, define the kernels and carry
# line information (-lineinfo).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

cache="$CA_BUILD_DIR/CMakeCache.txt"
if grep -q '^CACHEADVISE_CUDA:BOOL=OFF' "$cache" 2>/dev/null; then
	echo "skipped: this build has CACHEADVISE_CUDA=OFF (no samples)"
	exit 77
fi
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null)
[ -x "$nvcc" ] || nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$nvcc" ]; then
	echo "skipped: no nvcc"
	exit 77
fi

# name: kernels it must define
samples="stream_table:decode_keys
thrash_pair:correlate
stencil1d:stencil_global,stencil_shared
records:process_records
l2_reuse:gather_mix,stream_scale
spmv:spmv_scalar,spmv_warp
decode_iter:decode_step
deposit:deposit_step
cfd_iter:copy_state,step_factor,compute_flux,time_step
carveout_bad:gather_table
wide_iter:assemble,jacobi_sweep
rownorm:rownorm
gather_stream:gather_add
helper_loads:produce,consume"

# fatbin_entries BINARY OUTDIR: prints "kind arch" per fatbin entry of the
# .nv_fatbin section and writes each PTX entry's payload to OUTDIR/ptxN.zst
# (its compressed length taken from the entry header when it is set).
fatbin_entries() {
	objcopy -O binary --only-section=.nv_fatbin "$1" "$2/fatbin" || return 1
	python3 - "$2/fatbin" "$2" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
off = n = 0
while off + 16 <= len(data):
    magic, _ver, hsize, psize = struct.unpack_from('<IHHQ', data, off)
    if magic != 0xBA55ED50:
        off += 8
        continue
    e, end = off + hsize, off + hsize + psize
    while e + 32 <= end:
        kind, _flags, ehsize, epsize = struct.unpack_from('<HHIQ', data, e)
        arch = struct.unpack_from('<I', data, e + 0x1c)[0]
        print(kind, arch)
        payload = data[e + ehsize:e + ehsize + epsize]
        if kind == 1:
            clen = struct.unpack_from('<I', data, e + 0x10)[0]
            if 0 < clen <= len(payload):
                payload = payload[:clen]
            open('%s/ptx%d.zst' % (sys.argv[2], n), 'wb').write(payload)
            n += 1
        e += ehsize + epsize
    off = end
EOF
}

for line in $samples; do
	name=${line%%:*}
	kernels=${line#*:}
	bin="$CA_BUILD_DIR/samples/$name"
	src="$CA_SOURCE_DIR/samples/$name.cu"
	if [ ! -x "$bin" ]; then
		not_ok "$bin is missing (build the sample_$name target)"
		continue
	fi
	ok
	if readelf -S -W "$bin" | grep -q '\.nv_fatbin'; then ok; else
		not_ok "$name has no .nv_fatbin section"
	fi

	"$nvcc" -arch=sm_90 -lineinfo -ptx -o "$TMP/$name.ptx" "$src" 2>"$TMP/nvcc.err" ||
		not_ok "nvcc -ptx $src failed: $(head -c 400 "$TMP/nvcc.err")"
	grep '\.entry' "$TMP/$name.ptx" >"$TMP/$name.entries"
	for k in ${kernels//,/ }; do
		expect_grep "\.entry _Z[0-9]+${k}" "$TMP/$name.entries"
	done
	# The sample's kernels have global loads for cacheadvise to advise on.
	if [ "$(grep -c 'ld\.global' "$TMP/$name.ptx")" -gt 0 ]; then ok; else
		not_ok "$name: PTX has no ld.global"
	fi

	command -v python3 >/dev/null 2>&1 || continue
	mkdir -p "$TMP/fb-$name"
	fatbin_entries "$bin" "$TMP/fb-$name" >"$TMP/fb-$name/list" ||
		not_ok "$name: cannot read its .nv_fatbin"
	expect_grep '^2 90$' "$TMP/fb-$name/list"   # sm_90 cubin
	expect_grep '^1 90$' "$TMP/fb-$name/list"   # compute_90 PTX

	command -v zstd >/dev/null 2>&1 || continue
	: >"$TMP/fb-$name/all.ptx"
	for z in "$TMP/fb-$name"/ptx*.zst; do
		[ -e "$z" ] || continue
		zstd -q -d -c "$z" >>"$TMP/fb-$name/all.ptx" 2>/dev/null ||
			not_ok "$name: embedded PTX $(basename "$z") does not decompress"
	done
	expect_grep '^\.target sm_90' "$TMP/fb-$name/all.ptx"
	expect_grep "^\.file.*samples/$name\.cu" "$TMP/fb-$name/all.ptx"
	expect_grep '^[[:space:]]*\.loc' "$TMP/fb-$name/all.ptx"
	for k in ${kernels//,/ }; do
		expect_grep "\.entry _Z[0-9]+${k}" "$TMP/fb-$name/all.ptx"
	done
done

# The MPI sample (samples/mpi, issue 29): built where CMake finds MPI, and
# then a CUDA program linked with MPI whose gather kernel has its loads.
if command -v mpicc >/dev/null 2>&1; then
	bin="$CA_BUILD_DIR/samples/mpi_gather"
	if [ -x "$bin" ]; then
		ok
		if readelf -d "$bin" | grep -q 'libmpi'; then ok; else not_ok "mpi_gather does not link MPI"; fi
		expect_status 0 "$CACHEADVISE" inspect "$bin"
		expect_grep 'kernel _Z6gatherPK5uint4mPKjjPj .*5 global loads' "$TMP/out"
	else
		not_ok "$bin is missing though mpicc is installed (build the sample_mpi_gather target)"
	fi
fi

# Every sample source is in the list above.
for src in "$CA_SOURCE_DIR"/samples/*.cu; do
	name=$(basename "$src" .cu)
	if printf '%s\n' "$samples" | grep -q "^$name:"; then ok; else
		not_ok "samples/$name.cu is not checked by this test"
	fi
done
finish
