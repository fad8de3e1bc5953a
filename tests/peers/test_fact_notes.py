"""The notes written from a run's facts (peers/fact_notes.py) state a rule only when the facts bear
it out.

Starts from the facts docs/compatibility.json records and changes one figure the way a future
peer might: the rule's sentence must then give way to the figures. Needs no peer: runs in the venv
of requirements/peers.txt with the other tests of tests/peers (scripts/compatibility.sh --check).
"""

import copy
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import fact_notes  # noqa: E402

RECORDED = json.loads((ROOT / "docs" / "compatibility.json").read_text())
EQUAL = "rank(b) == rank(a)"


def _facts(config):
    return copy.deepcopy(RECORDED["facts"][config])


def _prose(text):
    return " ".join(text.split())


def test_u8_subtract_states_the_rank_rule_only_while_equal_ranks_saturate():
    facts = _facts("openvino")
    assert "only when rank(b) < rank(a)" in _prose(fact_notes.u8_subtract(facts))
    equal = facts["pdpd by rank"]["by op and type"]["subtract u8"][EQUAL]
    equal["wrapped"], equal["saturated"] = equal["saturated"], 0  # a plugin that wraps there too
    text = _prose(fact_notes.u8_subtract(facts))
    assert "only when" not in text
    assert f"with equal ranks: wraps {equal['wrapped']}/{equal['out_of_range']}" in text


def test_i8_subtract_states_the_formula_only_while_every_result_follows_it():
    facts = _facts("openvino")
    assert "the plugin computes `sat(a + sat(-b))`" in _prose(fact_notes.i8_subtract(facts))
    counts = facts["i8 subtract as sat(a + sat(-b))"]["none"]
    counts["equal to sat(a + sat(-b))"] -= 1
    counts["other integer with b = -128"] -= 1  # one 'other integer' difference with another b
    text = _prose(fact_notes.i8_subtract(facts))
    assert "the plugin computes" not in text and "Every one of the" not in text
    assert "have b = -128" in text


def test_pow_note_states_the_shape_rule_only_while_the_shapes_follow_it():
    facts = _facts("onnxruntime-pow")
    rule = "exactly when d = a - b has one element or its last dimension is 1"
    assert rule in _prose(fact_notes.pow_overflow(facts))
    found = facts["overflowing squares by shape of d"]["i32"]
    found["shapes"]["minimum"].append("[3]")  # INT_MIN in a d whose last dimension is 3
    found["minimum exactly where d has one element or its last dimension is 1"] = False
    text = _prose(fact_notes.pow_overflow(facts))
    assert rule not in text
    assert "does not tell them apart" in text and "`[3]`" in text
