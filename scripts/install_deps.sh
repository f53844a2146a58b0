#!/usr/bin/env bash
# Installs every Debian package the project needs (idempotent; uses sudo when not root). clang and its
# runtimes build the sanitizer and fuzzing job (scripts/run_sanitizers.sh); clang-format, black and
# flake8 check the formatting (scripts/check_format.sh); iproute2 (ip, tc) and util-linux (unshare)
# make the simulated hosts of the multi-host tests (caffe2.distributed.simulated_hosts). matplotlib
# draws the training plots (caffe2.python.tools.plot_log); nbclient, nbformat and ipykernel run the
# notebooks (notebooks/, tests/python/notebooks) and scripts/install_kernel.sh's kernel.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libprotobuf-dev protobuf-compiler python3-protobuf
  libeigen3-dev liblmdb-dev libleveldb-dev zlib1g-dev libopencv-dev python3-opencv dataset-fashion-mnist
  libgtest-dev libgmock-dev
  python3 python3-dev python3-venv python3-pip python3-setuptools python3-wheel
  pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-hypothesis
  python3-networkx python3-pydot graphviz libhiredis-dev redis-server
  python3-torch libtcmalloc-minimal4 libgloo-dev libdnnl-dev libgoogle-glog-dev
  libopenmpi-dev openmpi-bin
  iproute2 util-linux
  clang libclang-rt-14-dev
  clang-format black flake8
  python3-matplotlib python3-nbclient python3-nbformat python3-ipykernel
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
