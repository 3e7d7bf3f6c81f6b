# `cacheadvise check --build` (issue 38 item 3): the program as the user
# will build it, without touching the user's tree. The committed real
# capture's source.patch is applied to a private copy of the sources (as
# sources.json records them), the build command runs there, and the static
# check finds every advised load in the program the copy's build made; the
# user's sources and program stay as they were. A build that fails, or
# that does not remake the program, and a program outside the sources'
# root that shares no folder with them are refused, each with its reason. Without a GPU the timed part
# (the original command as the baseline) exits 4 after the static check.
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
[ -n "$NVCC" ] || { echo "no nvcc: skipped"; exit 77; }
sha() { sha256sum "$1" | cut -c1-64; }
# sources_at DIR: the capture's sources.json says they are read from DIR now
sources_at() {
	python3 - "$cap/sources.json" "$1" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["read_from"] = sys.argv[2]
json.dump(j, open(sys.argv[1], "w"))
PY
}

cap="$TMP/cap" src="$TMP/app"
cp -r "$CA_SOURCE_DIR/tests/fixtures/capture-real" "$cap"
cp -r "$CA_SOURCE_DIR/samples" "$src"
# sources.json names where the sources are now (the committed source.patch
# is the one applied)
sources_at "$src"
BUILD="$NVCC -gencode arch=compute_90,code=[sm_90,compute_90] -lineinfo -O3 stream_table.cu -o stream_table"
if (cd "$src" && sh -c "$BUILD") 2>"$TMP/nvcc.err"; then ok; else
	not_ok "nvcc cannot compile stream_table.cu: $(head -c 600 "$TMP/nvcc.err")"; finish; fi
before_src=$(sha "$src/stream_table.cu") before_bin=$(sha "$src/stream_table")

expect_status 0 "$CACHEADVISE" check "$cap" --static --build "$BUILD" -- "$src/stream_table"
expect_grep "^REBUILT IN A COPY: source.patch applied to 1 file of a copy of '$src', built there with" "$TMP/out"
expect_grep '^  decode_keys +load 0 +L1::no_allocate +found' "$TMP/out"
expect_grep '2 advised loads: 2 carry the advised form, 0 do not, 0 not in source.patch' "$TMP/out"
# the user's tree is as it was, and no copy is left behind
[ "$(sha "$src/stream_table.cu")" = "$before_src" ] && ok || not_ok "check --build changed the user's source"
[ "$(sha "$src/stream_table")" = "$before_bin" ] && ok || not_ok "check --build changed the user's program"
ls /tmp | grep -q "^cacheadvise-rebuild-" && ls -d /tmp/cacheadvise-rebuild-* | while read -r d; do
	[ "$d" -nt "$TMP/nvcc.err" ] && echo "$d"; done | grep -q . &&
	not_ok "a private copy was left in /tmp" || ok

# the same from the program's folder, by a relative path: it runs in the copy
(cd "$src" && "$CACHEADVISE" check "$cap" --static --build "$BUILD" -- ./stream_table) >"$TMP/out" 2>"$TMP/err"
[ $? = 0 ] && ok || not_ok "check --build from the sources' folder: $(head -c 400 "$TMP/err")"
expect_grep '2 carry the advised form' "$TMP/out"

# sources in src/, the program built into build/ beside them: the tree
# copied is their common folder, and the build runs at its top (the folder
# the command runs in is outside it)
tree="$TMP/tree"
mkdir -p "$tree/build"
cp -r "$CA_SOURCE_DIR/samples" "$tree/src"
sources_at "$tree/src"
TREE_BUILD="$NVCC -gencode arch=compute_90,code=[sm_90,compute_90] -lineinfo -O3 src/stream_table.cu -o build/stream_table"
(cd "$tree" && sh -c "$TREE_BUILD") 2>"$TMP/nvcc.err" && ok || not_ok "nvcc: $(head -c 400 "$TMP/nvcc.err")"
expect_status 0 "$CACHEADVISE" check "$cap" --static --build "$TREE_BUILD" -- "$tree/build/stream_table"
expect_grep "^REBUILT IN A COPY: source.patch applied to 1 file of a copy of '$tree'" "$TMP/out"
expect_grep '2 advised loads: 2 carry the advised form' "$TMP/out"
sources_at "$src"

# a build that fails: its exit and its last lines
expect_status 3 "$CACHEADVISE" check "$cap" --static --build 'echo no compiler here >&2; exit 7' -- "$src/stream_table"
expect_grep "the build command 'echo no compiler here >&2; exit 7' failed in the copy of the sources: ...no compiler here" "$TMP/err"
# a build that does not remake the program: the copy's program is the original's
expect_status 2 "$CACHEADVISE" check "$cap" --static --build true -- "$src/stream_table"
expect_grep "the build command 'true' did not remake '$src/stream_table' in the copy" "$TMP/err"
# the tree copied holds the sources and the program's folder, never all
# of "/": a program that shares no folder with the sources is refused
expect_status 2 "$CACHEADVISE" check "$cap" --static --build "$BUILD" -- /bin/true
expect_grep "the sources \('$src'\) and the program \('/bin/true'\) share no folder short of '/'" "$TMP/err"
expect_status 1 "$CACHEADVISE" check "$cap" --build '' -- "$src/stream_table"
expect_status 1 "$CACHEADVISE" check "$cap" --static --in-copy -- python3 "$src/app.py"
expect_grep "compiles its patched .py when it runs: --in-copy or --build needs the timed check" "$TMP/err"
# a wrapper script is not what a build remakes: refused before the build
printf '#!/bin/sh\nexec ./stream_table "$@"\n' >"$src/run.sh"
chmod +x "$src/run.sh"
expect_status 2 "$CACHEADVISE" check "$cap" --static --build 'exit 9' -- "$src/run.sh"
expect_grep "'$src/run.sh' is a script: .*name the binary it runs" "$TMP/err"

# a source.patch that is not what cacheadvise makes from the plan (one added
# line changed, with sources.json made to agree, as a hostile capture
# would) is never built and run unread
bad="$TMP/bad"
cp -r "$cap" "$bad"
sed -i 's|^\(+ \* intrinsic for L1::no_allocate or L1::evict_last)\)\. See .*|\1 */ static int injected; /*|' "$bad/source.patch"
grep -q 'static int injected' "$bad/source.patch" && ok || not_ok "the test could not alter the patch"
python3 - "$bad" "$src" <<'PY'
import hashlib, json, os, shutil, subprocess, sys
bad, src = sys.argv[1:3]
work = os.path.join(bad, "work")
shutil.copytree(src, work)
subprocess.run(["git", "apply", os.path.join(bad, "source.patch")], cwd=work, check=True)
j = json.load(open(os.path.join(bad, "sources.json")))
for f in j["files"]:
    f["patched_sha256"] = hashlib.sha256(open(os.path.join(work, f["path"]), "rb").read()).hexdigest()
json.dump(j, open(os.path.join(bad, "sources.json"), "w"))
shutil.rmtree(work)
PY
expect_status 2 "$CACHEADVISE" check "$bad" --static --build "$BUILD" -- "$src/stream_table"
expect_grep "source.patch' is not the patch cacheadvise makes from the capture's plan and these sources, so it is not built and run unread" "$TMP/err"
[ "$(sha "$src/stream_table.cu")" = "$before_src" ] && ok || not_ok "a refused patch changed the user's source"
if grep -q "^REBUILT IN A COPY" "$TMP/out"; then not_ok "the refused patch was built"; else ok; fi

# the timed part needs no --baseline (the original command is the
# baseline) and, without a GPU, exits 4 after the static check
if ! nvidia-smi -L >/dev/null 2>&1; then
	expect_status 4 "$CACHEADVISE" check "$cap" --build "$BUILD" -- "$src/stream_table"
	expect_grep '2 carry the advised form' "$TMP/out"
	expect_grep 'the static check above passed; timing the rebuilt program needs a GPU' "$TMP/err"
fi
finish
