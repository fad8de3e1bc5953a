#!/usr/bin/env bash
# Installs the Debian 12 packages that sqdiff needs and that are missing.
#
#   install-deps.sh                  the main job's packages: what scripts/setup.sh needs to
#                                    configure build/ with the tests and the benchmark off, build
#                                    the library, the `sqdiff` program, the Python module and the
#                                    examples, install the module for /usr/bin/python3 and run the
#                                    main job
#   install-deps.sh --tests          those and the tests' packages (scripts/test.sh): GoogleTest,
#                                    GMP, the benchmark and its peers, clang for the fuzzers, the
#                                    Python suite's modules
#   install-deps.sh --list [--tests] prints the package names of that set, one a line, and installs
#                                    nothing (scripts/build_packages.py checks that `--list --tests`
#                                    covers every package a build of scripts/test.sh read)
#
# Checks each package with dpkg-query first; only when something is missing does
# it run `apt-get update` once and `apt-get install` for exactly those packages.
# Uses sudo only when not already root. Safe to run any number of times.
set -euo pipefail

# usage: the commands listed at the top of this file.
usage() {
  sed -n '/^#   install-deps.sh /,/^#$/{/^#$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
}

# The main job's packages. A package goes here only when a configure with
# SQDIFF_BUILD_TESTS=OFF and SQDIFF_BUILD_BENCH=OFF (scripts/setup.sh) finds it,
# its build includes or runs it, or the main job imports it: everything else is
# a test package below, so that the first command on a fresh machine installs
# no more than it uses.
main_packages=(
  build-essential
  cmake
  ninja-build
  libhwy-dev     # Highway (SIMD): the library's one dependency (find_package(hwy) in CMakeLists.txt)
  libcli11-dev   # the `sqdiff` program's command line (tools/, tools/ir/, tools/tflite/)
  libpugixml-dev # `sqdiff ir` reads OpenVINO IR .xml files (tools/ir/)
  libflatbuffers-dev     # flatbuffers/*.h: `sqdiff tflite` reads .tflite files (tools/tflite/)
  flatbuffers-compiler   # flatc: generates the .tflite reader from tools/tflite/tflite_subset.fbs
  zlib1g-dev     # zlib.h: `sqdiff compare` reads the deflated members of .npz files (numpy.savez_compressed)
  pybind11-dev   # the Python module (python/): pybind11's headers and CMake config
  python3-dev    # Python.h, for the module built for Debian's /usr/bin/python3
  python3-numpy  # `import sqdiff` imports NumPy (setup.sh imports the installed module)
)

# What the tests, the benchmark, the fuzzers and the compatibility suite add
# (scripts/test.sh builds and runs all of them).
test_packages=(
  clang-14            # the fuzzers (fuzz/, scripts/fuzz.sh): libFuzzer comes with clang
  libclang-rt-14-dev  # libFuzzer's and the sanitizers' runtimes for clang
  llvm-14             # llvm-symbolizer: file and line in the fuzzers' reports
  libgtest-dev
  libgmock-dev       # gmock/gmock.h: the tests' matchers (googletest ships only its sources)
  googletest
  libgmp-dev         # the tests' exact oracle of the reductions (tests/reduce/gmp_oracle.hpp) and fuzz_api's
  libbenchmark-dev   # the C++ bench (bench/, SQDIFF_BUILD_BENCH=ON; test.sh builds it and runs its smoke test)
  libeigen3-dev      # Eigen, an in-run peer of the C++ bench
  libxnnpack-dev     # XNNPACK, an in-run peer of the C++ bench (bench/xnnpack_peer.cpp)
  libpthreadpool-dev # pthreadpool.h: XNNPACK runs its operators on a pthreadpool
  libdnnl-dev        # oneDNN, an in-run peer of the C++ bench (bench/onednn_peer.cpp)
  ocl-icd-opencl-dev # OpenCL, which Debian's dnnl-config.cmake requires (libdnnl-dev only recommends it)
  python3-pybind11   # pybind11 as a Python package; no build reads it (pybind11-dev has the headers and CMake config)
  python3-pandas     # python/tests: the tests that refuse pandas objects
  python3-pytest
  python3-hypothesis
  python3-torch  # PyTorch: python/tests/test_torch_tensors.py (a real DLPack producer), and a peer of the compatibility suite (scripts/compatibility.sh)
  python3-dask         # Debian 12's Dask 2022.12, the oldest sqdiff.dask supports: the release
  python3-distributed  # build's Python tests run sqdiff.dask on it (scripts/test.sh; the ASan
  python3-zarr         # build's hide it, SQDIFF_TEST_WITHOUT, so both cases stay covered)
  python3-venv   # the suite's venv (build-peers/venv), and scripts/test.sh's "python venv" stage (build-venv)
  python3-mypy   # python/tests/test_typing.py in the CMake stage
  ccache         # scripts/test.sh: the wheel's compile of the library reuses the release build's objects
)

list_only=0
with_tests=0
for argument in "$@"; do
  case "$argument" in
    --list) list_only=1 ;;
    --tests) with_tests=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "install-deps: unknown argument '$argument'" >&2
      usage >&2
      exit 2
      ;;
  esac
done

packages=("${main_packages[@]}")
what="the main job's"
if ((with_tests)); then
  packages+=("${test_packages[@]}")
  what="the main job's and the tests'"
fi

if ((list_only)); then
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
  echo "install-deps: all ${#packages[@]} of $what Debian packages are already installed"
  exit 0
fi

echo "install-deps: missing ($what packages): ${missing[*]}"

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
