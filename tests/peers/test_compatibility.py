"""sqdiff's agreement with the real peers has not changed.

Reruns every peer of docs/compatibility.json (OpenVINO, ONNX Runtime, NumPy, PyTorch, LiteRT,
OpenVINO's IR files) on the same inputs and compares each group's classification (identical, or
how many elements differ in which way, max ulps, what the peer refuses) with the recorded one.
A failure lists each changed group: a change in sqdiff, in a peer's version, or in the peer's
kernels on another CPU. If the change is intended, regenerate with scripts/compatibility.sh and
reread the notes of docs/COMPATIBILITY.md (peers/notes.py).

Run by scripts/test.sh's "peers" stage, in the venv of requirements/peers.txt.
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import generate  # noqa: E402

EXPECTED = json.loads((ROOT / "docs" / "compatibility.json").read_text())


def _changes(expected, actual):
    lines = []
    for key in sorted(set(expected) | set(actual)):
        if expected.get(key) != actual.get(key):
            lines.append(f"{key}:\n    recorded {expected.get(key)}\n    now      {actual.get(key)}")
    return lines


def test_every_peer_is_installed_at_the_recorded_version():
    for peer, recorded in EXPECTED["versions"].items():
        module = __import__(generate.MODULES[peer])
        now = module.versions()
        for key, value in recorded.items():
            if "version" in key or key in ("openvino", "onnxruntime", "onnx", "numpy", "torch", "ai-edge-litert"):
                assert now.get(key) == value, f"{peer}: {key} is {now.get(key)}, recorded {value}"


def test_classifications_are_unchanged():
    summary = generate.collect(list(EXPECTED["versions"]))
    changes = _changes(generate.signature(EXPECTED), generate.signature(summary))
    assert not changes, f"{len(changes)} classification(s) changed:\n" + "\n".join(changes)


def test_the_page_is_generated_from_the_recorded_run():
    page = (ROOT / "docs" / "COMPATIBILITY.md").read_text()
    assert page == generate.markdown(EXPECTED), "docs/COMPATIBILITY.md is stale: run scripts/compatibility.sh"
