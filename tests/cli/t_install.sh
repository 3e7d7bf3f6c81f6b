#!/usr/bin/env bash
# An installed cacheadvise (issue 28): `cmake --install` into a fresh prefix
# puts there everything the tool needs at run time, and the installed copy
# alone (the build tree out of its way) inspects, reports, applies, finds
# its injection library and headers, and answers `doctor`; the register-
# cache patch compiles with nvcc against the installed headers. The .deb
# and .tar.gz that CPack makes hold the same files and name their
# dependencies (dpkg-deb where it is installed).
. "$CA_SOURCE_DIR/tests/cli/lib.sh"

command -v cmake >/dev/null || { echo "no cmake: skipped"; exit 77; }
prefix="$TMP/prefix"
if cmake --install "$CA_BUILD_DIR" --prefix "$prefix" >"$TMP/install.log" 2>&1; then ok; else
	not_ok "cmake --install: $(tail -5 "$TMP/install.log")"; finish; fi
for f in bin/cacheadvise lib/cacheadvise/libcacheadvise_inject.so include/cacheadvise/regcache.cuh \
	 include/cacheadvise/softcache.cuh include/cacheadvise/l2window.h share/doc/cacheadvise/README.md \
	 share/doc/cacheadvise/docs/plan-json.md; do
	[ -e "$prefix/$f" ] && ok || not_ok "$f is not installed"
done
if grep -q '^CACHEADVISE_CUDA:BOOL=OFF' "$CA_BUILD_DIR/CMakeCache.txt"; then :; else
	for f in bin/cacheadvise-probe lib/cacheadvise/libcacheadvise_device.a; do
		[ -e "$prefix/$f" ] && ok || not_ok "$f is not installed"
	done
fi
ca="$prefix/bin/cacheadvise"
# nothing of the build tree in the installed files' run paths
if readelf -d "$ca" "$prefix/lib/cacheadvise/libcacheadvise_inject.so" | grep -E 'R(UN)?PATH' |
	grep -q "$CA_BUILD_DIR"; then not_ok "an installed file's run path names the build tree"; else ok; fi

# the installed copy alone
expect_status 0 "$ca" inspect "$CA_SOURCE_DIR/tests/fixtures/ptx/loop.ptx"
cp -r "$CA_SOURCE_DIR/tests/fixtures/capture-handmade" "$TMP/cap"
expect_status 0 "$ca" report "$TMP/cap" --source-root "$CA_SOURCE_DIR/tests/fixtures/sources"
expect_grep 'What to change' "$TMP/out"
"$ca" doctor >"$TMP/doctor" 2>&1
rc=$?
# doctor finds the injection library of the installed copy, not the build's
expect_grep "ok +injection +$prefix/lib/cacheadvise/libcacheadvise_inject\.so" "$TMP/doctor"
if nvidia-smi -L >/dev/null 2>&1; then
	[ "$rc" = 0 ] || [ "$rc" = 4 ] && ok || not_ok "doctor exited $rc on a GPU machine"
else
	[ "$rc" = 4 ] && ok || not_ok "doctor exited $rc without a GPU, want 4"
	expect_grep 'FAIL +driver' "$TMP/doctor"
	expect_grep 'profile cannot run here: no usable GPU' "$TMP/doctor"
fi
# an install without its injection library says so (exit 2)
mv "$prefix/lib/cacheadvise/libcacheadvise_inject.so" "$TMP/inject.so"
expect_status 2 "$ca" doctor
expect_grep 'FAIL +injection .*is missing' "$TMP/out"
mv "$TMP/inject.so" "$prefix/lib/cacheadvise/libcacheadvise_inject.so"

# the register-cache patch includes the installed header and compiles against it
cp -r "$CA_SOURCE_DIR/tests/fixtures/stencil-capture" "$TMP/stencil"
mkdir -p "$TMP/src" && cp "$CA_SOURCE_DIR/samples/stencil1d.cu" "$TMP/src/"
expect_status 0 "$ca" report "$TMP/stencil" --all --source-root "$TMP/src"
expect_grep '^\+#include <cacheadvise/regcache\.cuh>' "$TMP/stencil/regcache.patch"
(cd "$TMP/src" && patch -s -p1 <"$TMP/stencil/regcache.patch") >"$TMP/patch.out" 2>&1 && ok ||
	not_ok "patch -p1: $(cat "$TMP/patch.out")"
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
if [ -n "$NVCC" ]; then
	if "$NVCC" -arch=sm_90 -I"$prefix/include" -c "$TMP/src/stencil1d.cu" -o "$TMP/s.o" \
		2>"$TMP/nvcc.err"; then ok; else
		not_ok "the patched stencil1d.cu does not compile against $prefix/include: $(head -c 600 "$TMP/nvcc.err")"
	fi
fi

# the packages
if command -v cpack >/dev/null; then
	if (cd "$CA_BUILD_DIR" && cpack -G TGZ -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1; then ok; else
		not_ok "cpack TGZ: $(tail -5 "$TMP/cpack.log")"; fi
	tar tzf "$TMP"/pkg/cacheadvise-*.tar.gz >"$TMP/tgz" 2>&1
	expect_grep 'lib/cacheadvise/libcacheadvise_inject\.so$' "$TMP/tgz"
	if command -v dpkg-deb >/dev/null; then
		if (cd "$CA_BUILD_DIR" && cpack -G DEB -B "$TMP/pkg") >"$TMP/cpack.log" 2>&1; then ok; else
			not_ok "cpack DEB: $(tail -5 "$TMP/cpack.log")"; fi
		dpkg-deb -I "$TMP"/pkg/cacheadvise_*.deb >"$TMP/control" 2>&1
		expect_grep '^ Package: cacheadvise$' "$TMP/control"
		expect_grep '^ Depends: .*libjansson4' "$TMP/control"
		expect_no_grep 'Depends: .*cuda' "$TMP/control"
		dpkg-deb -c "$TMP"/pkg/cacheadvise_*.deb >"$TMP/deb" 2>&1
		for f in usr/bin/cacheadvise usr/lib/cacheadvise/libcacheadvise_inject.so \
			 usr/include/cacheadvise/regcache.cuh usr/share/doc/cacheadvise/README.md; do
			expect_grep "\./$f\$" "$TMP/deb"
		done
		# unpacked into a folder, it runs from there
		dpkg-deb -x "$TMP"/pkg/cacheadvise_*.deb "$TMP/root"
		"$TMP/root/usr/bin/cacheadvise" doctor >"$TMP/doctor2" 2>&1
		expect_grep "ok +injection +$TMP/root/usr/lib/cacheadvise/" "$TMP/doctor2"
	fi
fi
finish
