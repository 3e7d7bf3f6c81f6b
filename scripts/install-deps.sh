#!/usr/bin/env bash
# Installs what cacheadvise needs to build and test on a fresh Debian/Ubuntu
# machine (run as root, or with sudo available). The CUDA Toolkit (nvcc,
# CUPTI) is expected under /usr/local/cuda; it is not an apt package here.
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
pkgs=(build-essential cmake pkg-config git
      libglpk-dev libzstd-dev libelf-dev libjansson-dev libssl-dev zlib1g-dev python3 zstd
      clang patch
      # MPI and Slurm jobs (issue 29): a real mpirun, and Slurm's daemons with
      # munge, which tests/cli/t_slurm.sh starts and stops itself,
      # and MPI's headers for the MPI sample (samples/mpi, built when found)
      openmpi-bin libopenmpi-dev slurm-wlm munge)
# Headless browser for the HTML report test (optional: skipped if missing).
[ "${CACHEADVISE_NO_BROWSER:-0}" = 1 ] || pkgs+=(chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
	echo "note: add /usr/local/cuda/bin to PATH" >&2
fi
