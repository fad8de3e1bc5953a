#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, docs/fuzzing.md) in build-fuzz/ with
# clang and ASan+UBSan, then runs each for a chosen time and prints, per
# target: executions, executions per second, coverage (libFuzzer's final cov:
# and ft:), corpus size and crashes. Exits non-zero if any target crashed,
# with the crash file's path in the output.
#
#   scripts/fuzz.sh                  every target, 60 s each
#   scripts/fuzz.sh 600              every target, 10 minutes each
#   scripts/fuzz.sh 60 --target fuzz_api --target fuzz_npy
#   scripts/fuzz.sh 60 --jobs 1      one target at a time (default: one per core)
#
# Each run starts from a fresh copy of fuzz/corpus/<target>/ in
# build-fuzz/run/<target>/corpus/ (the committed seeds never grow); crash
# files go to build-fuzz/run/<target>/artifacts/, the log to
# build-fuzz/run/<target>/fuzz.log. Environment: CXX (default clang++-14),
# FUZZ_BUILD_DIR (default build-fuzz).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

all_targets=(fuzz_npy fuzz_npz fuzz_ir fuzz_tflite fuzz_partial_shape fuzz_api fuzz_compare)
# Inputs longer than these add nothing the format can express (a .npy header
# and a little data, a zip of a few such members, a model of a few layers, a
# shape, a call and its arena).
declare -A max_len=([fuzz_npy]=4096 [fuzz_npz]=4096 [fuzz_ir]=8192 [fuzz_tflite]=4096 [fuzz_partial_shape]=256 [fuzz_api]=2048 [fuzz_compare]=1024)
# Per-target libFuzzer options. fuzz_npz: an archive of max_len bytes holds at
# most 1032 times that once inflated (about 4 MiB), so any single allocation
# above 64 MiB came from a size the file forged.
declare -A extra_options=([fuzz_npz]="-malloc_limit_mb=64")

usage() {
  echo "usage: scripts/fuzz.sh [SECONDS] [--jobs N] [--target NAME]...   (NAME: ${all_targets[*]})" >&2
  exit 2
}

seconds=60
jobs="$(nproc 2>/dev/null || echo 2)"
targets=()
while (($#)); do
  case "$1" in
    --target)
      (($# >= 2)) || usage
      [[ -v "max_len[$2]" ]] || { echo "fuzz.sh: unknown target '$2'" >&2; usage; }
      targets+=("$2")
      shift 2
      ;;
    --target=*)
      name="${1#--target=}"
      [[ -v "max_len[$name]" ]] || { echo "fuzz.sh: unknown target '$name'" >&2; usage; }
      targets+=("$name")
      shift
      ;;
    --jobs)
      (($# >= 2)) && [[ "$2" =~ ^[0-9]+$ && "$2" -gt 0 ]] || usage
      jobs="$2"
      shift 2
      ;;
    -h | --help) usage ;;
    *)
      [[ "$1" =~ ^[0-9]+$ && "$1" -gt 0 ]] || { echo "fuzz.sh: '$1' is not a number of seconds" >&2; usage; }
      seconds="$1"
      shift
      ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")

build_dir="${FUZZ_BUILD_DIR:-build-fuzz}"
cxx="${CXX:-clang++-14}"
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz.sh: $cxx not found (Debian: scripts/install-deps.sh --tests installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi

generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi
echo "== fuzz: build ($build_dir, $cxx)"
cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSQDIFF_BUILD_FUZZERS=ON -DSQDIFF_BUILD_TESTS=OFF -DSQDIFF_BUILD_PYTHON=OFF -DSQDIFF_BUILD_EXAMPLES=OFF \
  -DSQDIFF_BUILD_BENCH=OFF >/dev/null
cmake --build "$build_dir" --parallel "$jobs" --target "${targets[@]}"

# Sanitizer findings stop the run and are saved as crash files.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# stat NAME LOG: a value of libFuzzer's -print_final_stats block.
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }
# last_status FIELD LOG: FIELD (cov, ft, corp) from the last status line.
# (None when the target crashed before its first status line.)
last_status() { { grep -E "^#[0-9]+.* $1: " "$2" || true; } | tail -n 1 | sed -E "s/.* $1: ([^ ]+).*/\1/"; }

# fuzz_target NAME: runs one target; its summary line goes to
# build-fuzz/run/NAME/summary, with "crashed" in build-fuzz/run/NAME/crashed if it did.
fuzz_target() {
  local target="$1"
  local work="$build_dir/run/$target"
  local log="$work/fuzz.log"
  local status=0
  local options=()
  [[ -v "extra_options[$target]" ]] && read -r -a options <<<"${extra_options[$target]}"
  "$build_dir/fuzz/$target" "$work/corpus" -dict="fuzz/$target.dict" -max_len="${max_len[$target]}" "${options[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" >"$log" 2>&1 || status=$?
  local executions per_second cov ft corpus_files crash_files=()
  executions="$(stat number_of_executed_units "$log")"
  per_second="$(stat average_exec_per_sec "$log")"
  cov="$(last_status cov "$log")"
  ft="$(last_status ft "$log")"
  corpus_files="$(find "$work/corpus" -type f | wc -l)"
  mapfile -t crash_files < <(find "$work/artifacts" -type f | sort)
  local line="$target: ${executions:-?} executions, ${per_second:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus $corpus_files files, crashes ${#crash_files[@]}"
  if ((status != 0 || ${#crash_files[@]} > 0)); then
    line+=" (exit status $status)"
    local file
    for file in "${crash_files[@]}"; do line+=$'\n'"    crash file: $file"; done
    ((${#crash_files[@]})) || line+=$'\n'"    no crash file written: see $log"
    echo crashed >"$work/crashed"
  fi
  echo "$line" >"$work/summary"
}

# Each target is one process on one core: as many run at once as there are
# cores (--jobs), each for the full time.
running=0
for target in "${targets[@]}"; do
  work="$build_dir/run/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp fuzz/corpus/"$target"/* "$work/corpus/"
  echo "== fuzz: $target for ${seconds}s (log: $work/fuzz.log)"
  fuzz_target "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
done
wait

summary=()
crashed=()
for target in "${targets[@]}"; do
  work="$build_dir/run/$target"
  if [[ -f "$work/crashed" ]]; then
    echo "== fuzz: $target crashed; the end of its log:"
    tail -n 40 "$work/fuzz.log"
    crashed+=("$target")
  fi
  summary+=("$(cat "$work/summary")")
done

echo "== fuzz: summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
if ((${#crashed[@]})); then
  echo "fuzz.sh: FAILED: ${crashed[*]} crashed; reproduce with $build_dir/fuzz/TARGET CRASH_FILE (docs/fuzzing.md)"
  exit 1
fi
echo "fuzz.sh: PASSED: no crashes"
