#!/usr/bin/env bash
# Copies a build folder into a smaller one to carry to the GPU machine
# (the device tool carries 64 MiB with the working tree): no object files,
# no CMake state, binaries stripped of debug sections. The tests find
# everything through CA_BUILD_DIR, so the copy runs where it lands.
#
#   tests/gpu/pack.sh [BUILD [DEST]]    default build-gpu -> build-gpu-carry
set -euo pipefail
src=${1:-build-gpu}
dest=${2:-build-gpu-carry}
[ -d "$src/bin" ] || { echo "pack.sh: no build at '$src' (build it first)" >&2; exit 2; }
rm -rf "$dest"
mkdir -p "$dest"
tar -C "$src" -cf - --exclude=CMakeFiles --exclude='*.o' --exclude='*.a' \
	--exclude=Makefile --exclude=cmake_install.cmake --exclude=CMakeCache.txt \
	--exclude=Testing --exclude='./tests/test_*' --exclude='./bench/bench_*' . | tar -C "$dest" -xf -
find "$dest" -type f -perm -u+x | while read -r f; do
	case "$(head -c 4 "$f" | od -An -c | tr -d ' ')" in
	177ELF) strip --strip-debug "$f" ;;
	esac
done
du -sh "$dest"
