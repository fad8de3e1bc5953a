"""sqdiff's quantized ops are LiteRT's reference kernels bit for bit (issue 25, SPEC 9).

Runs the random single-op quantized models of peers/quantized_models.py through LiteRT's builtin
reference kernels and TFLite-Micro (peers/litert_quantized_peer.py) and fails on a single
differing bit, and on any model where sqdiff and the runtime part ways other than as SPEC 9 says
(LiteRT aborts where the output multiplier is 1 or more; sqdiff refuses subtract there). The
figures of docs/COMPATIBILITY.md are checked by test_compatibility.py, from the same run.

Run by scripts/compatibility.sh --check, in the venv of requirements/peers.txt.
"""

import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import litert_quantized_peer as peer  # noqa: E402
import quantized_models  # noqa: E402

# What SPEC 9 allows besides "both compute the same", for models whose output multiplier is 1 or
# more: LiteRT's squared difference aborts (sqdiff computes it), its subtract runs or refuses
# (sqdiff refuses it), TFLite-Micro's subtract aborts.
ALLOWED = {"runtime aborts, sqdiff computes", "runtime runs, sqdiff refuses", "runtime refuses, sqdiff refuses",
           "runtime aborts, sqdiff refuses"}


@pytest.fixture(scope="module")
def run():
    return peer.collect()


def test_every_set_ran_and_compared_elements(run):
    assert set(run) == set(peer.RUNTIMES)
    for runtime, groups in run.items():
        sets = peer.LITERT_SETS if runtime.startswith("litert") else peer.TFLM_SETS
        assert sorted(groups) == sorted(peer.set_name(op, dtype, pot) for op, dtype, pot, _ in sets)
        for name, record in groups.items():
            assert record["elements"] > 10000, (runtime, name, record["elements"])


@pytest.mark.parametrize("runtime", ["litert-reference", "tflite-micro"])
def test_no_element_differs_by_one_bit(run, runtime):
    """Every element is identical, but where TFLite-Micro's int32 product overflows and wraps, which
    SPEC 9 saturates (the harness checks sqdiff gives the type's maximum there)."""
    for name, record in run[runtime].items():
        assert record["differing"] == 0 and record["identical"] + record["int32_wrapped"] == record["elements"], (
            f"{runtime} {name}: {record['differing']} of {record['elements']} elements differ, "
            f"max {record['max_step']} steps, e.g. {record['examples']}")
    if runtime == "litert-reference":  # LiteRT aborts before any such product
        assert all(record["int32_wrapped"] == 0 for record in run[runtime].values())


def test_tflite_micro_wraps_where_spec_9_saturates(run):
    """The random squared-difference models past the output bound reach the overflow: the harness
    finds it, and only there does TFLite-Micro part from sqdiff."""
    record = run["tflite-micro"]
    assert sum(r["int32_wrapped"] for n, r in record.items() if n.startswith("squared_difference")) > 0
    assert all(r["int32_wrapped"] == 0 for n, r in record.items() if n.startswith("subtract"))


def test_litert_reference_kernels_agree_at_every_rank_to_8():
    """Broadcasts that no runtime can fold into fewer dimensions, ranks 4 to 8."""
    for name, verdicts in peer.collect_ranks()["litert-reference"].items():
        assert verdicts == {str(r): "identical" for r in peer.RANKS}, (name, verdicts)


def test_runtimes_and_sqdiff_part_only_where_spec_9_says(run):
    for runtime, groups in run.items():
        for name, record in groups.items():
            outcomes = dict(record["outcomes"])
            assert set(outcomes) <= ALLOWED, (runtime, name, outcomes)
            # Every abort and every refusal by sqdiff is a model past the output-stage bound,
            # except int16 power-of-two scales of a form that LiteRT refuses too.
            beyond = record["output_multiplier_at_least_one"]
            for outcome in ("runtime aborts, sqdiff computes", "runtime aborts, sqdiff refuses",
                            "runtime runs, sqdiff refuses"):
                assert outcomes.get(outcome, 0) == beyond.get(outcome, 0), (runtime, name, outcome)
            if name.startswith("squared_difference"):
                # sqdiff computes every squared difference; where LiteRT runs it at all, identically.
                assert not any(o.endswith("sqdiff refuses") for o in outcomes), (runtime, name, outcomes)


def test_litert_aborts_only_on_squared_difference_past_the_bound(run):
    record = run["litert-reference"]["squared_difference i8"]
    aborts = record["outcomes"].get("runtime aborts, sqdiff computes", 0)
    assert aborts > 0 and record["output_multiplier_at_least_one"] == {"runtime aborts, sqdiff computes": aborts}
    # TFLite-Micro runs such models, and agrees with sqdiff on them (no differing element above).
    for name in ("squared_difference i8", "squared_difference i16"):
        assert run["tflite-micro"][name]["output_multiplier_at_least_one"].get("both compute", 0) > 0, name


def test_an_abort_ends_only_its_model():
    """The isolation the figures rely on: a model LiteRT aborts on is recorded and the next one
    runs. The aborting one (output multiplier 2) is what sqdiff and TFLite-Micro compute alike."""
    aborting = quantized_models.Config("squared_difference", "i8", (4,), (4,), (1 / 64, 0), (1 / 64, 0),
                                       (2.0**-25, -128))
    running = quantized_models.Config("subtract", "i8", (4,), (4,), (0.5, 0), (0.5, 0), (0.5, 0))
    a = np.array([0, 1, -1, 127], dtype=np.int8)
    b = np.array([0, 0, 0, -128], dtype=np.int8)
    jobs = [(peer.model_of(aborting), a, b), (peer.model_of(running), a, b)]
    results = peer.run_isolated("litert-reference", jobs)
    assert [kind for kind, *_ in results] == ["aborted", "ran"]
    assert results[0][1].startswith("signal 6")
    assert results[1][1].tolist() == [0, 1, -1, 127]  # 127 - (-128) saturates
    # (a - b)^2 in steps of 2^-25 from -128: 0 stays -128, 1/64^2 = 2^13 steps saturates.
    expected = [-128, 127, 127, 127]
    kind, ours = peer.sqdiff_run(aborting, a, b)
    assert kind == "ran" and ours.dtype == np.int8 and ours.tolist() == expected
    [(kind, micro, _)] = peer.run_isolated("tflite-micro", jobs[:1])
    assert kind == "ran" and micro.tolist() == expected
