#!/usr/bin/env bash
# Makes the .tflite files that tests/peers/test_converter_corpus.py and test_published_models.py
# run (issue 32, item 4), inside build dirs only:
#
#   scripts/converter_corpus.sh [CORPUS_DIR] [PUBLISHED_DIR]
#
# 1. The converter-made corpus: a venv of Debian's /usr/bin/python3 (SQDIFF_CONVERTER_VENV,
#    default build-peers/converter-venv; its own, since TensorFlow needs NumPy >= 1.26 and the
#    peers' venv has Debian's 1.24) with the pinned TensorFlow of requirements/converter.txt, then
#    peers/converter_corpus.py writes the models and their manifest into CORPUS_DIR (default
#    build-peers/corpus) from a fixed seed, in one process (two, each importing TensorFlow, took
#    longer: 7.9 s against 6.5 s on 2 cores). The files are the same on
#    every run; they are made again only when the generator or the pins changed (CORPUS_DIR/stamp).
# 2. The published models: the mediapipe wheel pinned in requirements/published_models.txt,
#    downloaded (not installed) into PUBLISHED_DIR/wheel (default build-peers/published), and
#    its .tflite files extracted into PUBLISHED_DIR/models.
#
# scripts/compatibility.sh runs it and passes both folders to tests/peers and peers/generate.py
# as SQDIFF_CORPUS_DIR and SQDIFF_PUBLISHED_DIR.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
corpus="${1:-build-peers/corpus}"
published="${2:-build-peers/published}"
venv="${SQDIFF_CONVERTER_VENV:-build-peers/converter-venv}"

run() {
  printf '+ %s\n' "$*"
  "$@"
}

start=$SECONDS
if [[ ! -x "$venv/bin/python" ]]; then
  run /usr/bin/python3 -m venv "$venv"
fi
run "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements/converter.txt
echo "converter: installed in $((SECONDS - start)) s"

start=$SECONDS
stamp="$(cat peers/converter_corpus.py requirements/converter.txt | sha256sum | cut -d' ' -f1)"
if [[ -f "$corpus/manifest.json" && "$(cat "$corpus/stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "converter: $corpus is up to date (stamp $stamp)"
else
  rm -f "$corpus/stamp"
  run "$venv/bin/python" peers/converter_corpus.py "$corpus" --jobs 1
  echo "$stamp" >"$corpus/stamp"
fi
echo "converter: corpus in $((SECONDS - start)) s"

start=$SECONDS
version="$(sed -n 's/^mediapipe==\([^ ]*\).*/\1/p' requirements/published_models.txt)"
if ! compgen -G "$published/wheel/mediapipe-$version-*.whl" >/dev/null; then
  rm -rf "$published/wheel"
  run "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$published/wheel" -r requirements/published_models.txt
fi
# Every .tflite file of the wheel into PUBLISHED_DIR/models, under its folder below mediapipe/modules/.
rm -rf "$published/models"
run "$venv/bin/python" - "$published" <<'PY'
import pathlib, sys, zipfile
out = pathlib.Path(sys.argv[1])
[wheel] = sorted((out / "wheel").glob("mediapipe-*.whl"))
with zipfile.ZipFile(wheel) as archive:
    names = [n for n in archive.namelist() if n.endswith(".tflite")]
    for name in names:
        target = out / "models" / name.removeprefix("mediapipe/modules/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(name))
print(f"published: {len(names)} .tflite files of {wheel.name} in {out / 'models'}")
PY
echo "published: fetched in $((SECONDS - start)) s"
