#!/usr/bin/env bash
# sqdiff's speed side by side with the Python-level peers (NumPy, PyTorch, ONNX Runtime,
# OpenVINO), in one run (issue 15; bench/peers/peer_speed.py says how each is timed). One command,
# not part of CI:
#
#   scripts/peer_speed.sh              full run; writes the table into docs/PERFORMANCE.md
#                                      (between the peer-speed markers) and prints it
#   scripts/peer_speed.sh --quick ...  fewer, shorter rounds; other arguments go to peer_speed.py
#                                      (--filter REGEX); --quick and filtered runs leave docs/ alone
#
# The C++ peers (Eigen, XNNPACK, oneDNN) are in the C++ benchmark: scripts/bench.sh.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

build_dir="${SQDIFF_BUILD_DIR:-build}"
venv="${SQDIFF_PEERS_VENV:-build-peers/venv}"
# shellcheck source=scripts/peers_env.sh
source scripts/peers_env.sh

table="$build_path/peer-speed.md"
run "$venv/bin/python" bench/peers/peer_speed.py --markdown "$table" "$@"
if [[ $# -eq 0 ]]; then
  run "$venv/bin/python" - "$table" docs/PERFORMANCE.md <<'PY'
import sys
table, page = open(sys.argv[1]).read(), open(sys.argv[2]).read()
begin, end = "<!-- peer-speed:begin -->", "<!-- peer-speed:end -->"
if begin in page:
    head, rest = page.split(begin, 1)
    page = head + begin + "\n" + table + rest[rest.index(end):]
else:
    page += f"\n## Peers at the Python level\n\n{begin}\n{table}{end}\n"
open(sys.argv[2], "w").write(page)
print(f"peer_speed: table written into {sys.argv[2]}")
PY
fi
