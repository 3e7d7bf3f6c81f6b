#!/usr/bin/env bash
# A kernel the program compiles at run time with NVRTC and loads from
# memory (cuModuleLoadData): its line info names a source string, not a
# file, so the hints must not send the user looking for one ("pass
# --source-root") nor tell them to rebuild with nvcc; they say what the
# module is and that run --plan applies the advice. The PTX is NVRTC's own
# (libnvrtc, no GPU needed). Needs the CUDA toolkit's NVRTC.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

CUDA=${CUDA_HOME:-/usr/local/cuda}
[ -f "$CUDA/include/nvrtc.h" ] && ls "$CUDA"/lib64/libnvrtc.so* >/dev/null 2>&1 ||
	{ echo "no NVRTC: skipped"; exit 77; }
command -v python3 >/dev/null && command -v cc >/dev/null || { echo "no python3 or cc: skipped"; exit 77; }

cat >"$TMP/rtc.c" <<'C'
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

static const char src[] =
	"extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\ty[i] = a * x[i] + y[i];\n"
	"}\n";

int main(int argc, char **argv)
{
	const char *opts[] = { "-arch=compute_90", "-lineinfo" };
	nvrtcProgram p;
	size_t n;
	char *ptx;
	FILE *f;

	if (nvrtcCreateProgram(&p, src, "saxpy_rtc.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
	    nvrtcCompileProgram(p, argc > 2 ? 2 : 1, opts) != NVRTC_SUCCESS ||
	    nvrtcGetPTXSize(p, &n) != NVRTC_SUCCESS || !(ptx = malloc(n)) ||
	    nvrtcGetPTX(p, ptx) != NVRTC_SUCCESS || !(f = fopen(argv[1], "w")))
		return 1;
	fwrite(ptx, 1, n - 1, f);
	return fclose(f) != 0;
}
C
cc -o "$TMP/rtc" "$TMP/rtc.c" -I"$CUDA/include" -L"$CUDA/lib64" -lnvrtc 2>"$TMP/cc.err" ||
	{ not_ok "cc: $(head -3 "$TMP/cc.err")"; finish; }
LD_LIBRARY_PATH="$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$TMP/rtc" "$TMP/lines.ptx" lineinfo &&
	LD_LIBRARY_PATH="$CUDA/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$TMP/rtc" "$TMP/plain.ptx" ||
	{ not_ok "NVRTC did not compile the kernel"; finish; }
# NVRTC names the string's file under the current directory, which holds no such file
expect_grep '\.file\s+1 "[^"]*saxpy_rtc\.cu"' "$TMP/lines.ptx"

for kind in lines plain; do
	mkdir -p "$TMP/$kind"
	python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$TMP/$kind" \
		--forms "L1::no_allocate" --origin cuModuleLoadData --program ./app -- "$TMP/$kind.ptx" >/dev/null
	"$CACHEADVISE" report "$TMP/$kind" >"$TMP/$kind.txt" 2>&1
done
expect_grep "cannot read '[^']*saxpy_rtc\.cu': the program loaded this module from memory at run time \(cuModuleLoadData#0\), as it does NVRTC's output: where 'saxpy_rtc\.cu' is the name of a source string, there is no file to patch and cacheadvise run --plan applies the advice" "$TMP/lines.txt"
expect_grep 'no source line: the program loaded this module from memory at run time \(cuModuleLoadData#0\) without line info; compiled by NVRTC, pass "-lineinfo" to nvrtcCompileProgram' "$TMP/plain.txt"
expect_no_grep 'rebuild with nvcc' "$TMP/plain.txt"
# a module of the program's own fatbin without line info: rebuild with nvcc, as before
sed -i 's/"origin": "cuModuleLoadData#0"/"origin": "app#fatbin0"/' "$TMP/plain/capture.json"
"$CACHEADVISE" report "$TMP/plain" >"$TMP/fatbin.txt" 2>&1
expect_grep 'rebuild with nvcc -lineinfo' "$TMP/fatbin.txt"
finish
