"""sqdiff.compare: the report of `sqdiff compare --json` on arrays and dicts of arrays.

The program is the oracle of the report's form: for the same data, to_dict() must equal the
program's JSON (json.loads) without its file paths, key for key and value for value; the values
themselves are checked against NumPy here and against exact oracles in tests/tools/compare_test.py.
"""

import json
import math
import os
import subprocess
import sysconfig

import numpy as np
import pytest

import sqdiff
from optional_modules import require

# The program that came with this module: the build tree's beside it (<build>/python/sqdiff/_sqdiff*.so ->
# <build>/tools/sqdiff), or the one pip installed with the wheel (the environment's scripts directory).
_CANDIDATES = [
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(sqdiff._sqdiff.__file__)))),
                 "tools", "sqdiff"),
    os.path.join(sysconfig.get_path("scripts"), "sqdiff"),
]
PROGRAM = next((p for p in _CANDIDATES if os.access(p, os.X_OK)), _CANDIDATES[0])
needs_program = pytest.mark.skipif(not os.access(PROGRAM, os.X_OK), reason="the sqdiff program is not built")


def program_report(tmp_path, a, b, *args):
    if isinstance(a, dict):
        a_path, b_path = str(tmp_path / "a.npz"), str(tmp_path / "b.npz")
        np.savez(a_path, **a)
        np.savez_compressed(b_path, **b)
    else:
        a_path, b_path = str(tmp_path / "a.npy"), str(tmp_path / "b.npy")
        np.save(a_path, a)
        np.save(b_path, b)
    result = subprocess.run([PROGRAM, "compare", a_path, b_path, "--json", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=120)
    assert result.returncode in (0, 3), result.stderr
    report = json.loads(result.stdout)
    assert report.pop("a") == a_path and report.pop("b") == b_path
    assert report["passed"] == (result.returncode == 0)
    return report


CASES = [
    ("plain", np.array([[0, 0.5], [1, 1]], np.float32), np.array([[0, 0.25], [1, 3]], np.float32)),
    ("specials", np.array([np.nan, np.inf, -np.inf, 1.0, np.nan]), np.array([np.nan, np.inf, np.inf, 1.5, 2.0])),
    ("integers", np.array([[0, 255], [7, 9]], np.uint8), np.array([[1, 0], [7, 9]], np.uint8)),
    ("int64 extremes", np.array([np.iinfo(np.int64).min, 3]), np.array([np.iinfo(np.int64).max, 3])),
    ("empty", np.zeros((0, 3), np.float16), np.zeros((0, 3), np.float16)),
    ("half", np.arange(12, dtype=np.float16).reshape(3, 4), np.arange(12, dtype=np.float16).reshape(3, 4)[::-1]),
]
OPTIONS = [
    ({}, []),
    ({"atol": 0.1}, ["--atol", "0.1"]),
    ({"rtol": 1e-3, "equal_nan": True}, ["--rtol", "0.001", "--equal-nan"]),
    ({"atol": 0.0, "rtol": 0.0, "peak": 1.0, "fail_above": 0.5}, ["--atol", "0", "--rtol", "0", "--peak", "1",
                                                                  "--fail-above", "0.5"]),
]


@needs_program
@pytest.mark.parametrize("name,a,b", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("kwargs,args", OPTIONS, ids=["none", "atol", "rtol", "all"])
def test_report_equals_the_programs_json(tmp_path, name, a, b, kwargs, args):
    report = sqdiff.compare(a, b, **kwargs)
    assert report.to_dict() == program_report(tmp_path, a, b, *args)
    assert json.loads(json.dumps(report.to_dict(), allow_nan=False)) == report.to_dict()  # valid JSON as is


@needs_program
def test_sets_equal_the_programs_json(tmp_path):
    a = {"logits": np.ones((2, 3), np.float32), "boxes": np.arange(4.0), "only_a": np.zeros(1)}
    b = {"logits": np.full((2, 3), 1.5, np.float32), "boxes": np.arange(4.0), "only_b": np.zeros(1)}
    report = sqdiff.compare(a, b, atol=0.1)
    assert report.to_dict() == program_report(tmp_path, a, b, "--atol", "0.1")
    assert not report.passed
    assert [t.name for t in report.tensors] == ["boxes", "logits"]
    assert [t.passed for t in report.tensors] == [True, False]
    assert report.missing == [{"name": "only_a"}] and report.extra == [{"name": "only_b"}]
    assert sqdiff.compare({"x": np.ones(2)}, {"x": np.ones(2)}, atol=0).passed


@needs_program
def test_broadcast_equals_the_program(tmp_path):
    a, b = np.arange(6.0).reshape(2, 3), np.array([0.0, 1.0, 2.5])
    with pytest.raises(sqdiff.Error, match=r"compare: cannot broadcast \[2,3\] with \[3\] \(none\).*broadcast=True"):
        sqdiff.compare(a, b)
    report = sqdiff.compare(a, b, broadcast=True)
    assert report.broadcasted and report.shape == [2, 3]
    assert report.to_dict() == program_report(tmp_path, a, b, "--broadcast", "numpy")


def bfloat16_pair(ml_dtypes):
    """Two ml_dtypes.bfloat16 arrays: mixed magnitudes, bf16 subnormals, signed zeros, NaN and
    infinities, equal and differing pairs."""
    rng = np.random.default_rng(31)
    a = (rng.standard_normal((6, 50)) * np.exp2(rng.integers(-20, 20, (6, 50)))).astype(np.float32)
    b = a + (rng.standard_normal((6, 50)) * np.exp2(rng.integers(-30, 5, (6, 50)))).astype(np.float32)
    a[0, :6] = [np.nan, np.inf, -np.inf, -0.0, 1e-39, 3.0e38]
    b[0, :6] = [1.0, np.inf, np.inf, 0.0, -1e-39, -3.0e38]
    b[1, ::3] = a[1, ::3]
    return a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)


@needs_program
@pytest.mark.parametrize("kwargs,args", OPTIONS, ids=["none", "atol", "rtol", "all"])
def test_ml_dtypes_bfloat16_equals_the_programs_bf16_report(tmp_path, kwargs, args):
    """ml_dtypes.bfloat16 arrays are bf16 here, as `sqdiff compare --dtype bf16` reads them: the
    same report, statistics and all, from files np.save wrote of the arrays themselves ('<V2') and
    of their bits (uint16), also broadcast."""
    ml_dtypes = require("ml_dtypes")
    a, b = bfloat16_pair(ml_dtypes)
    report = sqdiff.compare(a, b, **kwargs)
    assert report.dtype == "bf16"
    assert report.to_dict() == program_report(tmp_path, a, b, "--dtype", "bf16", *args)
    assert report.to_dict() == program_report(tmp_path, a.view(np.uint16), b.view(np.uint16), "--dtype", "bf16",
                                              *args)
    report = sqdiff.compare(a, b[2], broadcast=True, **kwargs)
    assert report.to_dict() == program_report(tmp_path, a.view(np.uint16), b[2].view(np.uint16), "--dtype", "bf16",
                                              "--broadcast", "numpy", *args)


def test_byte_swapped_and_unaligned_inputs_give_the_native_arrays_report():
    """The compare core reads the host's own types: a byte-swapped or unaligned array is read
    through a native copy, as the element-wise functions read it, never as raw bytes."""
    rng = np.random.default_rng(32)
    a = rng.standard_normal((3, 40)).astype(np.float32)
    b = a + rng.standard_normal((3, 40)).astype(np.float32) * np.float32(1e-3)
    want = sqdiff.compare(a, b, atol=1e-4).to_dict()
    swapped = a.astype(a.dtype.newbyteorder(">"))
    assert sqdiff.compare(swapped, b, atol=1e-4).to_dict() == want
    assert sqdiff.compare(a, b.astype(">f4"), atol=1e-4).to_dict() == want
    packed = np.zeros(a.shape, dtype=[("pad", "u1"), ("x", "<f4")])  # the field starts at byte 1
    packed["x"] = b
    assert not packed["x"].flags.aligned
    assert sqdiff.compare(a, packed["x"], atol=1e-4).to_dict() == want
    x = np.arange(-5, 5, dtype=np.int16)
    assert sqdiff.compare(x.astype(">i2"), x[::-1]).to_dict() == sqdiff.compare(x, x[::-1]).to_dict()
    big = np.broadcast_to(np.array(2.0, dtype=">f8"), (4, 5))  # a broadcast view stays one element
    assert sqdiff.compare(big, np.full((4, 5), 2.5)).to_dict() == sqdiff.compare(np.full((4, 5), 2.0),
                                                                                np.full((4, 5), 2.5)).to_dict()


def test_byte_swapped_ml_dtypes_bfloat16_gives_the_native_arrays_report():
    ml_dtypes = require("ml_dtypes")
    a, b = bfloat16_pair(ml_dtypes)
    swapped = a.astype(a.dtype.newbyteorder(">"))
    assert sqdiff.compare(swapped, b, rtol=1e-2).to_dict() == sqdiff.compare(a, b, rtol=1e-2).to_dict()


def test_attributes_restore_non_finite_floats():
    a = np.array([np.nan, 1.0, 2.0, 3.0])
    b = np.array([0.0, 1.0, 2.5, np.inf])
    report = sqdiff.compare(a, b, atol=0.1)
    fields = report.to_dict()
    assert fields["mse"] is None and fields["nonfinite"]["mse"] == "nan"
    assert math.isnan(report.mse) and math.isnan(report.sum_of_squares)
    assert report.max_abs_diff == math.inf and report.max_abs_diff_index == [3]
    assert report.first_nan == {"a": [0], "b": None} and report.first_inf == {"a": None, "b": [3]}
    assert (report.finite.elements, report.finite.sum_of_squares, report.finite.max_abs_diff) == (2, 0.25, 0.5)
    tolerance = report.tolerance
    assert (tolerance.out_of_tolerance, tolerance.worst_index) == (3, [0])  # a NaN difference ranks first
    assert math.isnan(tolerance.worst_abs_error)
    assert not report.passed
    with pytest.raises(AttributeError):
        report.nonfinite  # noqa: B018 - the map is to_dict()'s, the attributes restore the floats
    assert "mse" in dir(report)


def test_tolerance_agrees_with_numpy_isclose():
    rng = np.random.default_rng(5)
    for _ in range(20):
        a = rng.standard_normal(50)
        b = a + rng.standard_normal(50) * 1e-4
        b[rng.random(50) < 0.1] = np.nan
        atol, rtol = 10.0 ** rng.integers(-6, -2), 10.0 ** rng.integers(-6, -2)
        for equal_nan in (False, True):
            report = sqdiff.compare(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan)
            close = np.isclose(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan)
            assert report.tolerance.out_of_tolerance == int((~close).sum())
            assert report.passed == bool(close.all()) == np.allclose(a, b, atol=atol, rtol=rtol, equal_nan=equal_nan)


def test_errors():
    with pytest.raises(sqdiff.Error, match="mixed dtypes: a is float32, b is float64"):
        sqdiff.compare(np.ones(2, np.float32), np.ones(2))
    with pytest.raises(sqdiff.Error, match="equal_nan applies to the tolerance gate"):
        sqdiff.compare(np.ones(2), np.ones(2), equal_nan=True)
    with pytest.raises(sqdiff.Error, match="atol must be a finite number"):
        sqdiff.compare(np.ones(2), np.ones(2), atol=-1.0)
    with pytest.raises(TypeError, match="both be dicts"):
        sqdiff.compare({"x": np.ones(2)}, np.ones(2))
    with pytest.raises(sqdiff.Error, match=r"compare: tensor x: mixed dtypes"):
        sqdiff.compare({"x": np.ones(2)}, {"x": np.ones(2, np.int32)})
