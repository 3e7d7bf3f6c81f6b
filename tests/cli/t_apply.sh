# `cacheadvise apply` and source.patch on every committed capture whose
# sources are in the tree (tests/fixtures/capture-*/source-root.txt): the
# patch passes `git apply --check`, --dry-run changes nothing, apply
# rewrites the loads, the result compiles with nvcc into the intended PTX,
# a second apply is a no-op, and a source changed since the capture is
# refused with exit 2.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

sha() { sha256sum "$1" | cut -c1-64; }
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
PTXAS=$(command -v ptxas || { [ -x /usr/local/cuda/bin/ptxas ] && echo /usr/local/cuda/bin/ptxas; })

expect_status 0 "$CACHEADVISE" apply --help
expect_grep '^usage: cacheadvise apply DIR' "$TMP/out"
expect_grep '^EXAMPLES' "$TMP/out"
expect_status 1 "$CACHEADVISE" apply
expect_status 1 "$CACHEADVISE" apply a b
expect_status 1 "$CACHEADVISE" apply --frobnicate x
expect_status 2 "$CACHEADVISE" apply "$TMP/nothing-here"
expect_grep 'not a capture directory' "$TMP/err"

tested=0
for fixture in "$CA_SOURCE_DIR"/tests/fixtures/capture-*/; do
	[ -f "$fixture/source-root.txt" ] || continue
	tested=$((tested + 1))
	name=$(basename "$fixture")
	cap="$TMP/$name" src="$TMP/$name-src"
	cp -r "$fixture" "$cap"
	cp -r "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")" "$src"
	expect_status 0 "$CACHEADVISE" report "$cap" --all --source-root "$src"
	[ -s "$cap/source.patch" ] || { not_ok "$name: empty source.patch"; continue; }

	# The patch applies with git, as written.
	if git -C "$src" apply --check "$cap/source.patch" 2>"$TMP/git.err"; then ok; else
		not_ok "$name: git apply --check: $(cat "$TMP/git.err")"; fi
	# Every file it names is listed in sources.json with its current SHA-256.
	for f in $(sed -n 's|^+++ b/||p' "$cap/source.patch"); do
		want=$(python3 -c "import json,sys; print([x['sha256'] for x in json.load(open(sys.argv[1]))['files'] if x['path']==sys.argv[2]][0])" "$cap/sources.json" "$f")
		[ "$want" = "$(sha "$src/$f")" ] && ok || not_ok "$name: sources.json hash of $f"
	done

	# --dry-run prints the patch and changes nothing.
	before=$(cd "$src" && find . -type f -exec sha256sum {} + | sort)
	expect_status 0 "$CACHEADVISE" apply "$cap" --dry-run --source-root "$src"
	cmp -s "$TMP/out" "$cap/source.patch" && ok || not_ok "$name: --dry-run does not print source.patch"
	expect_grep 'applies cleanly' "$TMP/err"
	after=$(cd "$src" && find . -type f -exec sha256sum {} + | sort)
	[ "$before" = "$after" ] && ok || not_ok "$name: --dry-run changed the sources"

	# apply: the files become what sources.json says they will.
	expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
	for f in $(sed -n 's|^+++ b/||p' "$cap/source.patch"); do
		want=$(python3 -c "import json,sys; print([x['patched_sha256'] for x in json.load(open(sys.argv[1]))['files'] if x['path']==sys.argv[2]][0])" "$cap/sources.json" "$f")
		[ "$want" = "$(sha "$src/$f")" ] && ok || not_ok "$name: $f after apply is not the promised file"
		if [ -n "$NVCC" ] && [ -n "$PTXAS" ] && [ "${f%.cu}" != "$f" ]; then
			if (cd "$src" && "$NVCC" -ptx -arch=sm_90 -lineinfo "$f" -o "$TMP/patched.ptx" 2>"$TMP/nvcc.err"); then
				ok
				"$PTXAS" -arch=sm_90 "$TMP/patched.ptx" -o "$TMP/patched.cubin" && ok || not_ok "$name: ptxas rejects the patched $f"
				if grep -q 'warning' "$TMP/nvcc.err"; then not_ok "$name: nvcc warns on the patched $f: $(cat "$TMP/nvcc.err")"; else ok; fi
				cp "$TMP/patched.ptx" "$TMP/$name-$(basename "$f").ptx"
			else
				not_ok "$name: nvcc cannot compile the patched $f: $(head -c 600 "$TMP/nvcc.err")"
			fi
		fi
	done
	# Applying twice is a no-op that says so.
	expect_status 0 "$CACHEADVISE" apply "$cap" --source-root "$src"
	expect_grep 'already applied' "$TMP/err"

	# A source edited since the capture is refused, and left alone.
	f=$(sed -n 's|^+++ b/||p' "$cap/source.patch" | head -1)
	cp -r "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")" "$src.2"
	echo "// edited after the capture" >> "$src.2/$f"
	before=$(sha "$src.2/$f")
	expect_status 2 "$CACHEADVISE" apply "$cap" --source-root "$src.2"
	expect_grep "'$src.2/$f' changed since the capture" "$TMP/err"
	[ "$before" = "$(sha "$src.2/$f")" ] && ok || not_ok "$name: a refused apply changed $f"
	rm "$src.2/$f"
	expect_status 2 "$CACHEADVISE" apply "$cap" --source-root "$src.2"
	expect_grep "cannot read '$src.2/$f'" "$TMP/err"
	expect_status 2 "$CACHEADVISE" apply "$cap" --source-root "$TMP/no-such-root"
	expect_grep 'is not a directory' "$TMP/err"

	# Without source.patch, apply writes one from the sources as they are;
	# a dry run only prints it.
	rm -rf "$cap.3" "$src.3"
	cp -r "$fixture" "$cap.3"
	cp -r "$CA_SOURCE_DIR/$(cat "$fixture/source-root.txt")" "$src.3"
	had_patch=$([ -e "$cap.3/source.patch" ] && echo yes)
	# A dry run prints that patch and writes nothing (issue 16).
	expect_status 0 "$CACHEADVISE" apply "$cap.3" --dry-run --source-root "$src.3"
	cmp -s "$TMP/out" "$cap/source.patch" && ok || not_ok "$name: the dry run's patch differs from report --all's"
	[ -n "$had_patch" ] || [ ! -e "$cap.3/source.patch" ] && ok || not_ok "$name: --dry-run wrote source.patch"
	expect_status 0 "$CACHEADVISE" apply "$cap.3" --source-root "$src.3"
	[ -s "$cap.3/source.patch" ] && [ -s "$cap.3/sources.json" ] && ok || not_ok "$name: apply did not write source.patch"
	cmp -s "$cap.3/source.patch" "$cap/source.patch" && ok || not_ok "$name: the written patch differs from report --all's"
done
[ "$tested" -gt 0 ] || { echo "no capture with its sources in the tree"; exit 77; }

# The hand-made capture: the PTX of the patched source carries the advice.
ptx="$TMP/capture-handmade-stencil.cu.ptx"
if [ -f "$ptx" ]; then
	for want in 'ld.global.nc.L1::no_allocate.f32' 'ld.global.nc.L1::no_allocate.s32' \
		    'ld.global.L1::no_allocate.f32'; do
		expect_grep "$want" "$ptx"
	done
	# Six rewritten loads: a[i], idx[i], row[1] (row points into a),
	# p[i].x, *(q + i + k), x[i].
	n=$(grep -c 'L1::no_allocate' "$ptx")
	[ "$n" = 6 ] && ok || not_ok "patched stencil.cu has $n no_allocate loads, want 6"
	expect_grep 's \+= ca_ldg_na\(&row\[1\]\);' "$TMP/capture-handmade-src/stencil.cu"
	expect_grep 'ca_ld_na\(&x\[i\]\)' "$TMP/capture-handmade-src/stencil.cu"
	expect_grep 's \+= a\[i \+ k\] \* a\[i \+ 2 \* k\];' "$TMP/capture-handmade-src/stencil.cu"
fi

# The real capture (issue 17): load 2 is `return *p;` in the inlined helper
# load_key (line 92), whose other call (load 1, line 130) stays cached: the
# call at line 135 gets its own copy, load_key_na, and the patched PTX has
# both bypasses (load 0 and load 2) and load 1 still plain.
ptx="$TMP/capture-real-stream_table.cu.ptx"
if [ -f "$ptx" ]; then
	psrc="$TMP/capture-real-src/stream_table.cu"
	expect_grep 'nxt = load_key_na\(keys \+ \(r \+ nthreads\) \* stride\);' "$psrc"
	expect_grep 'cur = load_key\(keys \+ r \* stride\);' "$psrc"
	expect_grep '^static __device__ __forceinline__ uint4 load_key_na\(const uint4 \*p\)' "$psrc"
	expect_grep 'return ca_ld_na_ro\(p\);' "$psrc"
	n=$(sed -n '/^.visible .entry _Z11decode_keys/,/^}/p' "$ptx" | grep -c 'ld.global.L1::no_allocate')
	[ "$n" = 2 ] && ok || not_ok "patched stream_table.cu: decode_keys has $n no_allocate loads, want 2"
	n=$(sed -n '/^.visible .entry _Z11decode_keys/,/^}/p' "$ptx" | grep -c 'ld.global.v4.u32')
	[ "$n" = 1 ] && ok || not_ok "patched stream_table.cu: decode_keys has $n plain v4 loads, want 1 (load 1 stays cached)"
fi
finish
