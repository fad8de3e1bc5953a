#!/usr/bin/env bash
# Installs the Debian 12 packages that sqdiff needs and that are missing.
#
# Checks each package with dpkg-query first; only when something is missing does
# it run `apt-get update` once and `apt-get install` for exactly those packages.
# Uses sudo only when not already root. Safe to run any number of times.
# `install-deps.sh --list` prints the package names and installs nothing
# (scripts/build_packages.py checks that they cover every package a build read).
set -euo pipefail

# Needed now: compiler, CMake, Highway (SIMD), GoogleTest.
# Also installed for work that is planned (threads, benchmarks, CLI, IR files,
# Python binding), so that one run sets a machine up for good.
packages=(
  build-essential
  cmake
  ninja-build
  clang-14            # the fuzzers (fuzz/, scripts/fuzz.sh): libFuzzer comes with clang
  libclang-rt-14-dev  # libFuzzer's and the sanitizers' runtimes for clang
  llvm-14             # llvm-symbolizer: file and line in the fuzzers' reports
  libhwy-dev
  libgtest-dev
  libgmock-dev       # gmock/gmock.h: the tests' matchers (googletest ships only its sources)
  googletest
  libbenchmark-dev
  libeigen3-dev
  libxnnpack-dev     # XNNPACK, an in-run peer of the C++ bench (bench/xnnpack_peer.cpp)
  libpthreadpool-dev # pthreadpool.h: XNNPACK runs its operators on a pthreadpool
  libdnnl-dev        # oneDNN, an in-run peer of the C++ bench (bench/onednn_peer.cpp)
  ocl-icd-opencl-dev # OpenCL, which Debian's dnnl-config.cmake requires (libdnnl-dev only recommends it)
  libcli11-dev
  libpugixml-dev
  libflatbuffers-dev     # flatbuffers/*.h: `sqdiff tflite` reads .tflite files (tools/tflite/)
  flatbuffers-compiler   # flatc: generates the .tflite reader from tools/tflite/tflite_subset.fbs
  zlib1g-dev     # zlib.h: `sqdiff compare` reads the deflated members of .npz files (numpy.savez_compressed)
  libgmp-dev
  pybind11-dev
  python3-pybind11
  python3-numpy
  python3-pandas
  python3-pytest
  python3-hypothesis
  python3-torch  # PyTorch, a peer of the compatibility suite (scripts/compatibility.sh)
  python3-dask         # Debian 12's Dask 2022.12, the oldest sqdiff.dask supports: the release
  python3-distributed  # build's Python tests run sqdiff.dask on it (scripts/test.sh; the ASan
  python3-zarr         # build's hide it, SQDIFF_TEST_WITHOUT, so both cases stay covered)
  python3-venv   # the suite's venv (build-peers/venv), and scripts/test.sh's "python venv" stage (build-venv)
  python3-mypy   # python/tests/test_typing.py in the CMake stage
  python3-dev
)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

is_installed() {
  # shellcheck disable=SC2016  # ${db:Status-Abbrev} is a dpkg-query field, not a shell variable
  [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == "ii"* ]]
}

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install-deps: dpkg-query not found; this script is for Debian 12 (install the packages by hand:" >&2
  echo "  ${packages[*]})" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! is_installed "$package"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} Debian packages are already installed"
  exit 0
fi

echo "install-deps: missing: ${missing[*]}"

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "install-deps: not root and sudo is not available; install as root:" >&2
    echo "  apt-get install -y --no-install-recommends ${missing[*]}" >&2
    exit 1
  fi
  as_root=(sudo)
fi

run() {
  printf '+ %s\n' "$*"
  "$@"
}

run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
run "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${#missing[@]} package(s)"
