#!/usr/bin/env bash
# First command on a fresh Debian 12 machine: installs the missing Debian
# packages the main job needs (scripts/install-deps.sh without --tests: not the
# tests'), configures and builds a Release build in build/ (what the main job
# needs: the library, the `sqdiff` program, the Python module and the examples;
# not the test programs or the benchmarks, which scripts/test.sh builds in the
# same directory), installs the Python module for /usr/bin/python3, and runs the
# main job (build/examples/seed_examples, then `build/tools/sqdiff ir` on each
# model in examples/ir/). Safe to run again: it only redoes what changed.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

run() {
  printf '+ %s\n' "$*"
  "$@"
}

# Only the main job's packages: the tests' (GoogleTest, GMP, the benchmark's
# peers, clang, PyTorch, Dask, ...) are scripts/test.sh's to install.
echo "== setup: Debian packages"
run bash scripts/install-deps.sh

jobs="$(nproc 2>/dev/null || echo 2)"

# A fresh build dir uses Ninja when it is there; an existing one keeps the
# generator it was configured with (CMake refuses to switch).
generator=()
if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi

echo "== setup: configure and build (Release, build/: library, sqdiff program, Python module, examples)"
# The tests and the benchmark are off here even after scripts/test.sh turned
# them on in the same build directory: the main job needs neither, and the ~30
# test programs are most of a full build's time.
build_started=$SECONDS
run cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSQDIFF_BUILD_TESTS=OFF \
  -DSQDIFF_BUILD_BENCH=OFF
run cmake --build build --parallel "$jobs"
echo "== setup: configured and built in $((SECONDS - build_started)) s"

# The NumPy binding, for Debian's /usr/bin/python3 (docs/python.md): installed
# into /usr/local's site directory, then imported from outside the tree.
echo "== setup: install the Python module"
as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  as_root=(sudo)
fi
run "${as_root[@]}" cmake --install build --component python
run env -C / /usr/bin/python3 -c 'import sqdiff; print("import sqdiff:", sqdiff.__version__, sqdiff.simd_target())'

echo "== setup: main job"
run build/examples/seed_examples

# The OpenVINO IR examples (docs/ir.md): the shape check of each model, then a
# run with deterministic random inputs, writing build/ir-out/<model>/*.npy.
echo "== setup: main job: sqdiff ir on examples/ir/"
models=(examples/ir/*.xml)
for model in "${models[@]}"; do
  run build/tools/sqdiff ir "$model"
done
for model in "${models[@]}"; do
  name="$(basename "$model" .xml)"
  run build/tools/sqdiff ir "$model" --random 1 -o "build/ir-out/$name"
done
echo "== setup: main job passed: seed_examples checks, and ${#models[@]} IR models checked and run" \
     "(outputs in build/ir-out/)"
