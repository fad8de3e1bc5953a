# Sourced by the scripts that run the peers (compatibility.sh, peer_speed.sh), with build_dir and
# venv set: builds sqdiff's Python module and program in build_dir when missing, brings the venv of
# Debian's /usr/bin/python3 with the pinned peers of requirements/peers.txt up to date, and puts the
# module and peers/ on PYTHONPATH.

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
echo "peers: installed in $((SECONDS - start)) s"

build_path="$(cd "$build_dir" && pwd)"
export PYTHONPATH="$build_path/python:$repo_root/peers${PYTHONPATH:+:$PYTHONPATH}"
