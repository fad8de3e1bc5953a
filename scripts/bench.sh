#!/usr/bin/env bash
# Builds the benchmark (Release, build-bench/), runs it, and regenerates
# docs/PERFORMANCE.md from the run (see that page for the method).
#
#   scripts/bench.sh                 full run (about 0.6 s of measuring per benchmark, a few minutes)
#   scripts/bench.sh --quick         shorter budget per benchmark, more scatter
#   scripts/bench.sh --filter REGEX  only the matching benchmarks; results and table go to
#                                    build-bench/bench-filtered.{json,md}, docs/ is left alone
#   scripts/bench.sh ... -- ARGS     extra arguments for sqdiff_bench (Google Benchmark's, and
#                                    --sqdiff_budget=S, --sqdiff_min_rounds=N, --sqdiff_samples=N)
#   scripts/bench.sh --reductions-only
#                                    only the reduce/ and grad/ cases (issue 13) except the pairwise ones;
#                                    writes just the "Reductions and gradients" section of
#                                    docs/PERFORMANCE.md (perf_table.py --reductions-into), the rest of
#                                    the page is kept
#   scripts/bench.sh --pairwise-only
#                                    only the pairwise squared distances (issue 23): the C++
#                                    reduce/pairwise/ cases, then bench/python/bench_pairwise.py (SciPy's
#                                    cdist, NumPy's GEMM expansion) in build-bench/venv-python; writes
#                                    just the "Pairwise squared distances" section of the page
#                                    (perf_table.py --pairwise-into), the rest is kept
#   scripts/bench.sh --partials-only
#                                    only the partial sums behind sqdiff.dask and `sqdiff compare`
#                                    (issue 23, item 1): builds the program and the NumPy binding in
#                                    build-bench/ and runs bench/python/bench_partials.py with Debian's
#                                    /usr/bin/python3 and Dask (python3-dask), its Dask case again in
#                                    build-bench/venv-dask with the Dask requirements/test.txt pins,
#                                    and writes just its section of docs/PERFORMANCE.md ("Partial
#                                    sums: ..."), the rest kept
#   scripts/bench.sh --quantized-only
#                                    only the quantized ops' cases (quant/, issue 25: i8/u8/i16 subtract and
#                                    squared difference beside their bound loops and XNNPACK's qs8/qu8
#                                    subtract); writes just the "Quantized ops" section of the page
#                                    (scripts/quantized_perf_section.py), the rest is kept
#   scripts/bench.sh --python        also builds the NumPy binding and runs the Python peers
#                                    (bench/python/bench_reductions.py: NumPy, PyTorch) twice:
#                                    with Debian's /usr/bin/python3 (python3-torch) and
#                                    in build-bench/venv-python, NumPy's OpenBLAS wheel over it
#                                    (bench/python/requirements.txt: NumPy, SciPy, threadpoolctl), then
#                                    bench/python/bench_pairwise.py in the venv alone (Debian's NumPy
#                                    has the Netlib reference BLAS and Debian's Python no SciPy);
#                                    into build-bench/bench-python-*.json and the page
#   scripts/bench.sh --peers         the whole speed comparison in one command: the C++ run above
#                                    three times over (each case's median of three), then
#                                    scripts/peer_speed.sh (NumPy, PyTorch, ONNX Runtime and
#                                    OpenVINO from Python, pinned in requirements/peers.txt), whose
#                                    table goes into the same page
#
# The raw results of a full or quick run are kept in build-bench/bench-results.json.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

mode=full
budget=0.6
min_rounds=5
filter=""
with_python=OFF
reductions_only=0
pairwise_only=0
partials_only=0
quantized_only=0
with_peers=0
extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) mode=quick; budget=0.2; min_rounds=3; shift ;;
    --filter) filter="$2"; shift 2 ;;
    --filter=*) filter="${1#--filter=}"; shift ;;
    --python) with_python=ON; shift ;;
    --peers) with_peers=1; shift ;;
    --reductions-only) reductions_only=1; shift ;;
    --pairwise-only) pairwise_only=1; shift ;;
    --partials-only) partials_only=1; shift ;;
    --quantized-only) quantized_only=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,48p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

build_dir=build-bench
results="$build_dir/bench-results.json"
output=docs/PERFORMANCE.md

if [[ "$reductions_only" == 1 && "$pairwise_only" == 1 ]]; then
  echo "bench.sh: --reductions-only and --pairwise-only do not go together (each writes its own section)" >&2
  exit 2
fi
if [[ "$quantized_only" == 1 ]]; then
  if [[ "$reductions_only" == 1 || "$pairwise_only" == 1 || "$partials_only" == 1 || "$with_peers" == 1 ||
        -n "$filter" || "$with_python" == ON ]]; then
    echo "bench.sh: --quantized-only goes alone (it writes its own section)" >&2
    exit 2
  fi
  filter='^quant/'
  results="$build_dir/bench-quantized.json"
  with_python=ON  # LiteRT's kernels are timed from Python, beside sqdiff's binding
elif [[ "$reductions_only" == 1 ]]; then
  [[ -z "$filter" ]] || { echo "bench.sh: --reductions-only and --filter do not go together" >&2; exit 2; }
  [[ "$with_peers" == 0 ]] || { echo "bench.sh: --peers needs the whole run, not --reductions-only" >&2; exit 2; }
  # Every reduce/ kind but pairwise, named (the benchmark's filter has no negative look-ahead).
  filter='^(reduce/(all|rows|columns|per_channel)|grad)/'
  results="$build_dir/bench-reductions.json"
elif [[ "$pairwise_only" == 1 ]]; then
  [[ -z "$filter" ]] || { echo "bench.sh: --pairwise-only and --filter do not go together" >&2; exit 2; }
  [[ "$with_peers" == 0 ]] || { echo "bench.sh: --peers needs the whole run, not --pairwise-only" >&2; exit 2; }
  filter='^reduce/pairwise/'
  results="$build_dir/bench-pairwise.json"
  with_python=ON  # the section's peers are Python's (SciPy, NumPy's BLAS)
elif [[ -n "$filter" ]]; then
  [[ "$with_peers" == 0 ]] || { echo "bench.sh: --peers needs the whole run, not --filter" >&2; exit 2; }
  results="$build_dir/bench-filtered.json"
  output="$build_dir/bench-filtered.md"
fi

run() {
  printf '+ %s\n' "$*"
  "$@"
}

# One benchmark run at a time on this machine: two runs time each other's load, and each
# reconfigures build-bench/ (with or without the Python module) under the other.
exec 9>/tmp/sqdiff-bench.lock
if ! flock -n 9; then
  echo "bench.sh: another scripts/bench.sh is running; waiting for it" >&2
  flock 9
fi

generator=()
if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
  generator=(-G Ninja)
fi

if [[ "$partials_only" == 1 ]]; then
  if [[ "$reductions_only" == 1 || "$pairwise_only" == 1 || "$with_peers" == 1 || -n "$filter" ]]; then
    echo "bench.sh: --partials-only goes alone (it writes its own section)" >&2
    exit 2
  fi
  run cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSQDIFF_BUILD_BENCH=ON \
    -DSQDIFF_BUILD_TESTS=OFF -DSQDIFF_BUILD_EXAMPLES=OFF -DSQDIFF_BUILD_TOOLS=ON -DSQDIFF_BUILD_PYTHON=ON
  run cmake --build "$build_dir" --parallel 2 --target sqdiff_cli sqdiff_python
  # sqdiff.dask is timed with Debian's Dask and again with the newest, the one
  # requirements/test.txt pins, in a venv of Debian's Python (the module's ABI).
  dask_venv="$build_dir/venv-dask"
  [[ -x "$dask_venv/bin/python" ]] || run /usr/bin/python3 -m venv "$dask_venv"
  mapfile -t dask_pins < <(grep -E '^(numpy|dask\[array\])==' requirements/test.txt)
  run "$dask_venv/bin/pip" install --quiet "${dask_pins[@]}"
  run env PYTHONPATH="$build_dir/python" /usr/bin/python3 bench/python/bench_partials.py \
    --sqdiff "$build_dir/tools/sqdiff" --json "$build_dir/bench-partials.json" --into "$output" \
    --newest-dask "$dask_venv/bin/python" --command "scripts/bench.sh --partials-only"
  exit 0
fi
# Only the library and the benchmark: tests, examples, tools and the Python
# binding are built elsewhere.
run cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DSQDIFF_BUILD_BENCH=ON \
  -DSQDIFF_BUILD_TESTS=OFF -DSQDIFF_BUILD_EXAMPLES=OFF -DSQDIFF_BUILD_TOOLS=OFF -DSQDIFF_BUILD_PYTHON="$with_python"
run cmake --build "$build_dir" --parallel 2 --target sqdiff_bench
[[ "$with_python" == ON ]] && run cmake --build "$build_dir" --parallel 2 --target sqdiff_python

command_text="scripts/bench.sh"
[[ "$mode" == quick ]] && command_text+=" --quick"
if [[ "$reductions_only" == 1 ]]; then
  command_text+=" --reductions-only"
elif [[ "$pairwise_only" == 1 ]]; then
  command_text+=" --pairwise-only"
elif [[ "$quantized_only" == 1 ]]; then
  command_text+=" --quantized-only"
elif [[ -n "$filter" ]]; then
  command_text+=" --filter '$filter'"
fi
[[ "$with_python" == ON && "$pairwise_only" == 0 && "$quantized_only" == 0 ]] && command_text+=" --python"
git_rev="$(git describe --always --dirty 2>/dev/null || echo unknown)"

bench_args=(
  --benchmark_out="$results" --benchmark_out_format=json
  --sqdiff_budget="$budget" --sqdiff_min_rounds="$min_rounds"
  --sqdiff_note=mode="$mode" --sqdiff_note=command="$command_text" --sqdiff_note=git="$git_rev"
)
if [[ -n "$filter" ]]; then
  bench_args+=(--benchmark_filter="$filter" --sqdiff_note=filter="$filter")
fi
if [[ "$with_peers" == 1 ]]; then
  # Every case three times, the repetitions interleaved at random with the
  # other cases' over the whole run; the page takes the median of the three.
  # From memory a peer's ratio moved by up to 3% between single runs, more
  # than sqdiff timed twice moves within one.
  bench_args+=(--benchmark_repetitions=3 --benchmark_enable_random_interleaving=true)
fi
start=$SECONDS
run "$build_dir/bench/sqdiff_bench" "${bench_args[@]}" "${extra[@]}"
echo "bench.sh: benchmark run took $((SECONDS - start)) s"

if [[ "$quantized_only" == 1 ]]; then
  # LiteRT (ai-edge-litert, pinned in the compatibility suite's venv, scripts/compatibility.sh) beside
  # sqdiff's Python call, right after the C++ run.
  section_args=("$results" --into "$output" --command "$command_text")
  peers_venv="${SQDIFF_PEERS_VENV:-build-peers/venv}"
  if "$peers_venv/bin/python" -c "import ai_edge_litert" 2>/dev/null; then
    litert_results="$build_dir/bench-quantized-litert.json"
    run env PYTHONPATH="$build_dir/python" "$peers_venv/bin/python" bench/python/bench_quantized.py \
      --json "$litert_results"
    section_args+=(--litert "$litert_results")
  else
    echo "bench.sh: no $peers_venv with ai-edge-litert (scripts/compatibility.sh makes it): LiteRT not timed" >&2
  fi
  run /usr/bin/python3 scripts/quantized_perf_section.py "${section_args[@]}"
  echo "bench.sh: wrote the quantized section of $output (raw results: $results)"
  exit 0
fi
table_args=("$results" --output "$output")
[[ "$reductions_only" == 1 ]] && table_args=("$results" --reductions-into "$output" --binary "$build_dir/bench/sqdiff_bench")
[[ "$pairwise_only" == 1 ]] && table_args=("$results" --pairwise-into "$output")
if [[ "$with_python" == ON ]]; then
  venv="$build_dir/venv-python"
  if [[ ! -x "$venv/bin/python" ]]; then
    run /usr/bin/python3 -m venv --system-site-packages "$venv"
  fi
  run "$venv/bin/pip" install --quiet -r bench/python/requirements.txt
  if [[ "$pairwise_only" == 0 ]]; then
    for interpreter in debian:/usr/bin/python3 wheel:"$venv/bin/python"; do
      python_results="$build_dir/bench-python-${interpreter%%:*}.json"
      run env PYTHONPATH="$build_dir/python" "${interpreter#*:}" bench/python/bench_reductions.py --json "$python_results"
      table_args+=(--python "$python_results")
    done
  fi
  if [[ "$reductions_only" == 0 ]]; then
    # The same run as the C++ pairwise rows, right after them.
    pairwise_results="$build_dir/bench-python-pairwise.json"
    run env PYTHONPATH="$build_dir/python" "$venv/bin/python" bench/python/bench_pairwise.py --json "$pairwise_results"
    table_args+=(--pairwise-python "$pairwise_results")
  fi
fi
run /usr/bin/python3 scripts/perf_table.py "${table_args[@]}"
echo "bench.sh: wrote $output (raw results: $results)"
if [[ "$with_peers" == 1 ]]; then
  run bash scripts/peer_speed.sh
fi
