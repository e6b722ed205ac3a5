#!/usr/bin/env bash
# Installs every Debian 12 package ke needs to build and test. Idempotent: when all
# packages are present it prints nothing and touches nothing (no apt-get update).
#
# Packages install with --no-install-recommends, so anything ke needs that a
# package only recommends is listed here by name (audited with
# `apt-cache depends PKG | grep Recommends` for every entry; the ones ke needs
# say so below). Recommends ke does not need: cmake's gcc and make (clang-22
# depends on binutils, libc6-dev and libstdc++-12-dev; Ninja builds),
# clang-22's clang-tools-22, qemu-user's qemu-user-binfmt (tests call
# qemu-aarch64 by name) and python3-pip's build-essential and python3-dev (pip
# only unpacks a binary wheel). test/fresh-root/check-fresh-root.sh proves the list on a
# minimal Debian 12 root in CI.
set -euo pipefail

packages=(
  # Toolchain: clang-22 builds ke (faster and leaner than g++ on MLIR headers) and the fuzzer.
  cmake ninja-build ccache clang-22 lld-22 libclang-rt-22-dev
  # LLVM/MLIR 22 static libraries, tools (mlir-tblgen) and lit/FileCheck for tests.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # lld's ELF linker as a library: ke-opt links GPU models into shared objects itself.
  liblld-22-dev
  # Static link dependencies and packaging.
  libzstd-dev zlib1g-dev xz-utils
  # The tuning database: SQLite, linked statically from libsqlite3.a.
  libsqlite3-dev
  # The cost model: XGBoost's C API header; ke-opt dlopens libxgboost.so.0 when present.
  libxgboost-dev
  # A64FX without the hardware: links cross-compiled AArch64 objects statically (test/a64fx).
  # The AArch64 glibc headers and libraries are only a Recommends of the compiler.
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross
  # qemu-aarch64 -cpu a64fx runs them (and -cpu cortex-a57, without SVE, must trap).
  qemu-user
  # ROCm device libraries (ocml, ockl bitcode) linked into HSACO when kernels call math functions.
  rocm-device-libs
  # LLVM's OpenMP runtime: tuned CPU kernels run their parallel loops on it
  # (the JIT loads it), and package-ke-opt carries it to the GPU machines.
  libomp-22-dev
  # `mpirun -n N ke-opt tune` (issue #18): OpenMPI's headers at build time (ke-opt opens
  # libmpi.so.40 at run time) and mpirun for its tests.
  libopenmpi-dev openmpi-bin
  # Welch's t-test of droplet search (Boost.Math, header-only).
  libboost-dev
  # Vendor baselines of benchmarks/cpu (ke-baselines): oneDNN and OpenBLAS. Debian's
  # oneDNN config requires OpenCL's headers and loader, only a Recommends of libdnnl-dev
  # (without them benchmarks/CMakeLists.txt skips ke-baselines with a message).
  libdnnl-dev libopenblas-dev ocl-icd-opencl-dev
  # Unit tests; lit runs on python3; pip fetches ptxas where no CUDA is installed.
  libgtest-dev python3 python3-pip
  # The venv of the Python package's tests (scripts/setup-python.sh).
  python3-venv
  # CMake reads the git revision that `ke-opt --version` and benchmark reports cite.
  git
  # `ke-opt tune --proposer-url` reaches chat endpoints through curl (and its test
  # runs one on loopback).
  curl
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "ke setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "ke setup: done" >&2
