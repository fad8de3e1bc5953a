#!/usr/bin/env bash
# Compares sqdiff with the real peers (OpenVINO, ONNX Runtime, NumPy, PyTorch, LiteRT, TFLite-Micro)
# on the same inputs (issues 15 and 25), and runs `sqdiff tflite` on models it did not write: a
# corpus TensorFlow's converter makes here, and a pinned mediapipe wheel's (issue 32). One command:
#
#   scripts/compatibility.sh            regenerate docs/COMPATIBILITY.md and docs/compatibility.json
#   scripts/compatibility.sh --check    run tests/peers (fails when any classification changed)
#
# Uses sqdiff's Python module from BUILD_DIR (default: build, as scripts/setup.sh and test.sh's
# release stage leave it; built here when missing), and a venv of Debian's /usr/bin/python3 with
# the pinned peers of requirements/peers.txt in build-peers/venv (SQDIFF_PEERS_VENV), created or
# brought up to date on every run. NumPy and PyTorch come from Debian (scripts/install-deps.sh --tests).
# scripts/converter_corpus.sh makes the other models (TensorFlow in build-peers/converter-venv).
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

# shellcheck source=scripts/peers_env.sh
source scripts/peers_env.sh

# The .tflite files the project did not write (issue 32): the converter-made corpus (TensorFlow
# in a venv of its own) and the published models (a pinned mediapipe wheel's), in build dirs.
corpus="${SQDIFF_CORPUS_DIR:-$repo_root/build-peers/corpus}"
published="${SQDIFF_PUBLISHED_DIR:-$repo_root/build-peers/published}"
start=$SECONDS
run bash scripts/converter_corpus.sh "$corpus" "$published"
echo "converter corpus and published models: ready in $((SECONDS - start)) s"
export SQDIFF_CORPUS_DIR="$corpus" SQDIFF_PUBLISHED_DIR="$published"

if [[ "$mode" == check ]]; then
  run "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/peers
else
  run "$venv/bin/python" peers/generate.py
fi
