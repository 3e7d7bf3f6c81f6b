#!/usr/bin/env bash
# The source patch on real third-party code (issue 25: "make it hold for
# programs in general"): the six programs of ../shared/corpus (Rodinia,
# Parboil, PolyBench), each compiled to PTX with -lineinfo in one folder,
# its loads given the forms of a plan in turn (L1, L2 and both), and
# report --all run against a copy of its sources elsewhere (--source-root
# the top of the copy, as a user holding the sources but not the build
# folder would). The patch must apply, the patched sources must compile,
# and `check --static` must find every rewritten load in its advised form.
# Defects this found: no bool overload (bfs), an #include "./k.cu" path git
# cannot apply (lavaMD), a long member the compiler reads as .s32 (lavaMD),
# the sources found only at the build root's depth, check's reasons read
# from the patched sources. Needs nvcc and the corpus (skipped without).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

CORPUS=${CA_CORPUS_DIR:-$CA_SOURCE_DIR/../shared/corpus}
[ -d "$CORPUS/bfs/src" ] || { echo "no corpus at $CORPUS: skipped"; exit 77; }
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
FORMS="L1::no_allocate,L1::evict_last+L2::evict_last,L1::no_allocate+L2::evict_first,L2::evict_last,L1::evict_first"
# CUDA 13 dropped cudaThreadSynchronize, which three of them call
NVFLAGS="-O3 -lineinfo -arch=sm_90 -ptx -DcudaThreadSynchronize=cudaDeviceSynchronize"

# app  source folder  file to compile  [nvcc flags]
run_app() {
	local app=$1 dir=$2 file=$3
	shift 3
	local build="$TMP/build/$app" user="$TMP/user/$app" cap="$TMP/cap/$app"
	mkdir -p "$build" "$TMP/user" "$cap"
	cp -r "$CORPUS/$dir" "$build/src"
	cp -r "$CORPUS/$dir" "$user"
	(cd "$build/src" && "$NVCC" $NVFLAGS "$@" "$file" -o "$build/orig.ptx") 2>"$TMP/$app.nvcc" ||
		{ not_ok "$app: nvcc: $(head -3 "$TMP/$app.nvcc")"; return; }
	python3 "$CA_SOURCE_DIR/tests/cli/capture_from_ptx.py" "$CACHEADVISE" "$cap" \
		--forms "$FORMS" --program ./app -- "$build/orig.ptx" >/dev/null
	"$CACHEADVISE" report "$cap" --all --source-root "$user" >"$TMP/$app.report" 2>&1 ||
		{ not_ok "$app: report --all: $(tail -3 "$TMP/$app.report")"; return; }
	"$CACHEADVISE" report "$cap" --source-root "$user" >"$TMP/$app.txt" 2>&1
	"$CACHEADVISE" apply "$cap" --source-root "$user" >"$TMP/$app.apply" 2>&1 &&
		ok || { not_ok "$app: apply: $(tail -3 "$TMP/$app.apply")"; return; }
	(cd "$user" && "$NVCC" $NVFLAGS "$@" "$file" -o "$build/patched.ptx") 2>"$TMP/$app.nvcc2" &&
		ok || { not_ok "$app: the patched sources do not compile: $(grep error "$TMP/$app.nvcc2" | head -3)"; return; }
	"$CACHEADVISE" check "$cap" --static --source-root "$user" -- "$build/patched.ptx" \
		>"$TMP/$app.check" 2>&1 &&
		ok || not_ok "$app: check --static: $(grep -v ' found (\|not in source.patch' "$TMP/$app.check" | head -5)"
	expect_grep '^  [0-9]+ advised loads: [1-9][0-9]* carry the advised form, 0 do not, ' "$TMP/$app.check"
}

run_app bfs bfs/src cuda/bfs/bfs.cu
run_app particlefilter particlefilter/src cuda/particlefilter/ex_particle_CUDA_float_seq.cu
run_app lud lud/src cuda/lud/cuda/lud_kernel.cu
run_app stencil stencil/src benchmarks/stencil/src/cuda/kernels.cu -I benchmarks/stencil/src/cuda
run_app atax atax/src CUDA/ATAX/atax.cu -I common
run_app lavaMD lavaMD/src cuda/lavaMD/kernel/kernel_gpu_cuda_wrapper.cu

# bfs reads bool arrays: the helpers have a bool overload
expect_grep '^\+    if\( tid<no_of_nodes && ca_ld_na\(&g_graph_mask\[tid\]\)\)|ca_ld_na\(&g_graph_mask\[tid\]\)' "$TMP/cap/bfs/source.patch"
expect_grep 'bool ca_ld_na\(const bool \*p\)' "$TMP/cap/bfs/source.patch"
# the sources were found under the copy at their depth in the tree
expect_grep '^\+\+\+ b/cuda/bfs/kernel\.cu$' "$TMP/cap/bfs/source.patch"
# lavaMD's kernel is #include "./kernel_gpu_cuda.cu": a path git can apply
expect_grep '^\+\+\+ b/cuda/lavaMD/kernel/kernel_gpu_cuda\.cu$' "$TMP/cap/lavaMD/source.patch"
# its box_str.offset is a long the compiler reads as .s32: not rewritten, and why
expect_grep "member 'offset' of struct 'box_str' is a long but the load reads \.s32 \(the compiler reads part of it\)" "$TMP/lavaMD.txt"
# lavaMD reads its arrays through local pointers into them (qB = &d_qv_gpu[first_j]):
# rewritten through the pointer, and the hint says so
expect_line '+				qB_shared[wtx] = ca_ld_el_l2el_ro(&qB[wtx]);' "$TMP/cap/lavaMD/source.patch"
expect_grep "the line reads 'd_qv_gpu' through 'qB', a pointer into it" "$TMP/lavaMD.txt"
# check gives the reasons the patch was written with, not what the patched
# sources say (they begin with the helpers now, so lines moved)
expect_grep "not in source.patch: not rewritten: the line reads 'g_graph_nodes' 3 times" "$TMP/bfs.check"
expect_no_grep 'is outside the body of kernel .Kernel.' "$TMP/bfs.check"
finish
