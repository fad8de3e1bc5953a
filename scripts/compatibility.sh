#!/usr/bin/env bash
# Compares sqdiff with the real peers (OpenVINO, ONNX Runtime, NumPy, PyTorch, LiteRT) on the same
# inputs (issue 15). One command:
#
#   scripts/compatibility.sh            regenerate docs/COMPATIBILITY.md and docs/compatibility.json
#   scripts/compatibility.sh --check    run tests/peers (fails when any classification changed)
#
# Uses sqdiff's Python module from BUILD_DIR (default: build, as scripts/setup.sh and test.sh's
# release stage leave it; built here when missing), and a venv of Debian's /usr/bin/python3 with
# the pinned peers of requirements/peers.txt in build-peers/venv (SQDIFF_PEERS_VENV), created or
# brought up to date on every run. NumPy and PyTorch come from Debian (scripts/install-deps.sh).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

mode=generate
if [[ "${1:-}" == "--check" ]]; then
  mode=check
  shift
fi
build_dir="${1:-build}"
venv="${SQDIFF_PEERS_VENV:-build-peers/venv}"

run() {
  printf '+ %s\n' "$*"
  "$@"
}

# The Python module and the sqdiff program (for the IR files), built when missing.
if ! compgen -G "$build_dir/python/sqdiff/_sqdiff*.so" >/dev/null || [[ ! -x "$build_dir/tools/sqdiff" ]]; then
  generator=()
  if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  run cmake -S . -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
  run cmake --build "$build_dir" --parallel "$(nproc 2>/dev/null || echo 2)" --target sqdiff_python sqdiff_cli
fi

if [[ ! -x "$venv/bin/python" ]]; then
  run /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
start=$SECONDS
run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements/peers.txt
echo "compatibility: peers installed in $((SECONDS - start)) s"

build_path="$(cd "$build_dir" && pwd)"
export PYTHONPATH="$build_path/python:$repo_root/peers${PYTHONPATH:+:$PYTHONPATH}"
if [[ "$mode" == check ]]; then
  run "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/peers
else
  run "$venv/bin/python" peers/generate.py
fi
