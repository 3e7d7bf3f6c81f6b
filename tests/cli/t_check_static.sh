# `cacheadvise check` on a program rebuilt from the committed real capture's
# source.patch (issue 17): apply the patch to a copy of samples/, compile
# stream_table.cu with the flags of samples/CMakeLists.txt, and the static
# check finds every advised load in the rebuilt binary with its advised
# form, stream_table's load 2 (inside the inlined helper load_key) included.
# Without a GPU, the timed part exits 4 after the static check was printed.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }

expect_status 0 "$CACHEADVISE" check --help
expect_grep '^usage: cacheadvise check DIR' "$TMP/out"
expect_grep '^EXAMPLES' "$TMP/out"
expect_status 1 "$CACHEADVISE" check
expect_status 1 "$CACHEADVISE" check "$TMP"
expect_status 1 "$CACHEADVISE" check --repeat 0 "$TMP" -- ./app
expect_status 2 "$CACHEADVISE" check "$TMP/nothing-here" --static -- ./app
expect_grep 'not a capture directory' "$TMP/err"
# the timed check runs only programs the user names: the capture's never
expect_status 1 "$CACHEADVISE" check "$TMP/nothing-here" -- ./app
expect_grep 'needs the original program to time against: --baseline ORIGINAL' "$TMP/err"
expect_status 1 "$CACHEADVISE" check "$TMP/nothing-here" --baseline '' -- ./app

cap="$TMP/cap" src="$TMP/src"
cp -r "$CA_SOURCE_DIR/tests/fixtures/capture-real" "$cap"
cp -r "$CA_SOURCE_DIR/samples" "$src"
expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
build() { # build SRC OUT: as samples/CMakeLists.txt builds the samples
	"$NVCC" -gencode arch=compute_90,code=[sm_90,compute_90] -lineinfo -O3 "$1" -o "$2" \
		2>"$TMP/nvcc.err"
}
if build "$src/stream_table.cu" "$TMP/stream_table"; then ok; else
	not_ok "nvcc cannot compile the patched stream_table.cu: $(head -c 600 "$TMP/nvcc.err")"; finish; fi

expect_status 0 "$CACHEADVISE" check "$cap" --static -- "$TMP/stream_table"
expect_grep '^STATIC CHECK' "$TMP/out"
expect_grep '^  decode_keys +load 0 +L1::no_allocate +found \(ld.global.L1::no_allocate.u32' "$TMP/out"
expect_grep '^  decode_keys +load 2 +L1::no_allocate +found \(ld.global.L1::no_allocate.v4.u32' "$TMP/out"
expect_grep '2 advised loads: 2 carry the advised form, 0 do not, 0 not in source.patch' "$TMP/out"

# The timed part needs a GPU: without one, exit 4 after the static check.
if ! nvidia-smi -L >/dev/null 2>&1; then
	expect_status 4 "$CACHEADVISE" check "$cap" --baseline "$TMP/stream_table" -- "$TMP/stream_table"
	expect_grep '2 carry the advised form' "$TMP/out"
	expect_grep 'the static check above passed; timing the rebuilt program needs a GPU' "$TMP/err"
fi

# The program as it was (not rebuilt from the patch): the advised loads are
# not there, exit 2.
if build "$CA_SOURCE_DIR/samples/stream_table.cu" "$TMP/original"; then ok; else
	not_ok "nvcc cannot compile stream_table.cu"; fi
expect_status 2 "$CACHEADVISE" check "$cap" --static -- "$TMP/original"
expect_grep '2 advised loads: 0 carry the advised form, 2 do not' "$TMP/out"
expect_grep 'not in the rebuilt' "$TMP/err"

# A rebuilt binary whose patch left the bypass of load 2 out (the copy's
# line back to a plain load): load 2 has the wrong form.
mkdir -p "$TMP/partial-src"
sed 's/^\treturn ca_ld_na_ro(p);$/\treturn *p;/' "$src/stream_table.cu" > "$TMP/partial-src/stream_table.cu"
if build "$TMP/partial-src/stream_table.cu" "$TMP/partial"; then ok; else
	not_ok "nvcc cannot compile the partial stream_table.cu"; fi
expect_status 2 "$CACHEADVISE" check "$cap" --static -- "$TMP/partial"
expect_grep '^  decode_keys +load 0 +L1::no_allocate +found' "$TMP/out"
expect_grep '^  decode_keys +load 2 +L1::no_allocate +wrong form \(ld.global.v4.u32' "$TMP/out"
finish
