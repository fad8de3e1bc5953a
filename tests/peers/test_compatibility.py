"""sqdiff's agreement with the real peers has not changed.

Reruns every peer of docs/compatibility.json (OpenVINO, ONNX Runtime, NumPy, PyTorch, LiteRT,
OpenVINO's IR files, LiteRT's and TFLite-Micro's quantized kernels) on the same inputs and
compares each group's classification (identical, or how many elements differ in which way, max
ulps, what the peer refuses) and the facts the notes state (peers/findings.py) with the recorded
ones. A failure lists each changed group: a change in
sqdiff, in a peer's version, or in the peer's kernels on another CPU. If the change is intended,
regenerate with scripts/compatibility.sh and reread the notes of docs/COMPATIBILITY.md
(peers/notes.py). Three facts the page once got wrong (issue 21) are also checked on their own
against the same run, and against what the page says.

Run by scripts/test.sh's "peers" stage, in the venv of requirements/peers.txt.
"""

import json
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import generate  # noqa: E402
from cases import DTYPES, OPS, shape_cases  # noqa: E402

EXPECTED = json.loads((ROOT / "docs" / "compatibility.json").read_text())
PAGE = (ROOT / "docs" / "COMPATIBILITY.md").read_text()
PROSE = " ".join(PAGE.split())  # the page's text with its line breaks as spaces
LOWER, EQUAL = "rank(b) < rank(a)", "rank(b) == rank(a)"


@pytest.fixture(scope="module")
def run():
    """One run of every recorded peer, as docs/compatibility.json holds one (sorted JSON)."""
    summary = generate.collect(list(EXPECTED["versions"]))
    return json.loads(json.dumps(summary, sort_keys=True))


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
            if "version" in key or key in ("openvino", "onnxruntime", "onnx", "numpy", "torch", "ai-edge-litert",
                                           "tflite-micro"):
                assert now.get(key) == value, f"{peer}: {key} is {now.get(key)}, recorded {value}"


def test_classifications_are_unchanged(run):
    changes = _changes(generate.signature(EXPECTED), generate.signature(run))
    assert not changes, f"{len(changes)} classification(s) changed:\n" + "\n".join(changes)


def test_the_page_is_generated_from_the_recorded_run():
    assert PAGE == generate.markdown(EXPECTED), "docs/COMPATIBILITY.md is stale: run scripts/compatibility.sh"


def test_openvino_u8_subtract_with_pdpd_wraps_only_when_b_has_the_lower_rank(run):
    """Issue 21 item 11: with pdpd broadcasting, OpenVINO's u8 Subtract wraps (as sqdiff) when
    rank(b) < rank(a), and saturates when the ranks are equal ([5, 5] with [1, 5])."""
    equal_rank = [(c.shape_a, c.shape_b) for c in shape_cases(("pdpd",)) if len(c.shape_a) == len(c.shape_b)]
    assert ((5, 5), (1, 5)) in equal_rank and len(equal_rank) >= 4
    by_rank = run["facts"]["openvino"]["pdpd by rank"]
    assert len(by_rank["cases"][EQUAL]) == len(equal_rank)
    for op in OPS:  # every type and both ops ran the equal-rank cases, or the plugin refused them
        for dtype in DTYPES:
            entry = by_rank["by op and type"][f"{op} {dtype}"][EQUAL]
            assert entry["cases"] + len(entry["refused"]) == len(equal_rank), (op, dtype)
    u8 = by_rank["by op and type"]["subtract u8"]
    lower, equal = u8[LOWER], u8[EQUAL]
    assert lower["out_of_range"] > 0 and lower["wrapped"] == lower["out_of_range"], lower
    assert equal["out_of_range"] > 0 and equal["saturated"] == equal["out_of_range"], equal
    assert equal["saturating cases"] == equal["cases"] == len(equal_rank)
    # The classification counts the same elements, all saturation.
    assert run["results"]["openvino"]["subtract u8 pdpd"]["categories"] == {"saturation": equal["saturated"]}
    assert "With pdpd broadcasting it wraps, identical to sqdiff, only when rank(b) < rank(a)" in PROSE
    assert "u8 with pdpd broadcasting runs another kernel of the plugin, which wraps" not in PROSE


def test_onnxruntime_pow_gives_int_min_only_for_one_element_or_last_dimension_one(run):
    """Issue 21 item 12: ONNX Runtime's Pow(d, 2) on i32/i64 gives INT_MIN for an overflowing
    square only when d has one element or its last dimension is 1; otherwise it wraps."""
    found = run["facts"]["onnxruntime-pow"]["overflowing squares by shape of d"]
    assert sorted(found) == ["i32", "i64"]
    for dtype, entry in found.items():
        assert entry["minimum exactly where d has one element or its last dimension is 1"], dtype
        assert entry["minimum"] > 0 and entry["wrapped"] > 0 and entry["other"] == 0, dtype
        assert {"[]", "[1]", "[1, 1]", "[5, 1]", "[2, 3, 1]"} <= set(entry["shapes"]["minimum"]), dtype
        assert {"[3]", "[4, 2]", "[4, 3]", "[1000]"} <= set(entry["shapes"]["wraps"]), dtype
        assert "mixed" not in entry["shapes"], dtype
        # Every difference from sqdiff is one of those INT_MINs.
        records = run["results"]["onnxruntime-pow"]
        differing = [records[f"squared_difference {dtype} {mode}"].get("differing", 0) for mode in ("none", "numpy")]
        assert sum(differing) == entry["minimum"], dtype
    assert ("gives the type's minimum (INT_MIN) instead of wrapping exactly when d = a - b has one element "
            "or its last dimension is 1") in PROSE
    assert "converts back, so a square that overflows gives INT_MIN instead of wrapping" not in PROSE


def test_openvino_i8_subtract_is_the_saturated_sum_with_the_saturated_negation(run):
    """Issue 21 item 13: OpenVINO's i8 Subtract computes sat(a + sat(-b)), so every 'other
    integer' difference has b = -128."""
    found = run["facts"]["openvino"]["i8 subtract as sat(a + sat(-b))"]
    assert sorted(found) == ["none", "numpy", "pdpd"]
    for mode, counts in found.items():
        assert counts["equal to sat(a + sat(-b))"] == counts["elements"] > 0, mode
        assert counts["other integer with b = -128"] == counts["other integer"] > 0, mode
        record = run["results"]["openvino"][f"subtract i8 {mode}"]
        assert record["categories"]["integer_other"] == counts["other integer"], mode
    total = sum(counts["other integer"] for counts in found.values())
    assert "the plugin computes `sat(a + sat(-b))`" in PROSE
    assert f"Every one of the {total} *other integer* differences has b = -128" in PROSE
