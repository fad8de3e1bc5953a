"""bfloat16 as a dtype: ml_dtypes.bfloat16 arrays go in without a copy and
come out as ml_dtypes.bfloat16 arrays, with the same bits as the uint16-bits
path (dtype="bfloat16") and as an oracle that computes in float32 and rounds
with ml_dtypes' own conversion. Skipped only where ml_dtypes is not installed
(Debian has no package of it; the venv stage installs it from
requirements/test.txt)."""

import re
import tracemalloc

import numpy as np
import pytest

import sqdiff
from optional_modules import require
from support import source_dir

ml_dtypes = require("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
OPS = ["subtract", "squared_difference"]


def random_bf16(rng, shape):
    """Finite bfloat16 values of many magnitudes (no NaN: its bits are compared below)."""
    values = rng.standard_normal(shape).astype(np.float32) * np.float32(2.0) ** rng.integers(-20, 20, shape)
    return values.astype(BF16)


def oracle(op, a, b):
    """SPEC: widen to float32, compute there, round once to bfloat16 (ml_dtypes rounds to nearest even)."""
    d = a.astype(np.float32) - b.astype(np.float32)
    return (d if op == "subtract" else d * d).astype(BF16)


def same_bits(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x.view(np.uint16), y.view(np.uint16))


@pytest.mark.parametrize("op", OPS)
def test_results_are_bfloat16_arrays_with_the_oracles_bits(op):
    rng = np.random.default_rng(14)
    a, b = random_bf16(rng, (5, 7)), random_bf16(rng, (7,))
    with np.errstate(over="ignore"):
        expected = oracle(op, a, b)
    result = getattr(sqdiff, op)(a, b)
    assert result.dtype == BF16
    assert same_bits(result, expected)


@pytest.mark.parametrize("op", OPS)
def test_arithmetic_equals_the_uint16_bits_path(op):
    rng = np.random.default_rng(15)
    a, b = random_bf16(rng, (3, 1, 6)), random_bf16(rng, (4, 6))
    a = np.concatenate([a, np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38], BF16).reshape(1, 1, 6)])
    as_dtype = getattr(sqdiff, op)(a, b)
    as_bits = getattr(sqdiff, op)(a.view(np.uint16), b.view(np.uint16), dtype="bfloat16")
    assert as_bits.dtype == np.uint16
    assert np.array_equal(as_dtype.view(np.uint16), as_bits)


def test_round_trip_keeps_every_value():
    every = np.arange(2**16, dtype=np.uint16).view(BF16)
    finite = every[np.isfinite(every.astype(np.float32))]
    result = sqdiff.subtract(finite, np.zeros((), BF16))
    assert result.dtype == BF16
    # x - 0 is x, and -0 - 0 is -0: every finite bfloat16 comes back bit for bit.
    assert same_bits(result, finite)


def test_strided_and_reversed_views_are_read_in_place():
    rng = np.random.default_rng(16)
    a = random_bf16(rng, (6, 8))
    view, column = a[::-2, 1::3].T, a[0, ::-3].reshape(3, 1)  # both (3, 3) and (3, 1) views of a
    assert not view.flags.c_contiguous and not column.flags.c_contiguous
    assert same_bits(sqdiff.squared_difference(view, column), oracle("squared_difference", view, column))


def test_input_is_not_copied():
    a = np.ones(2**22, BF16)  # 8 MiB
    out = np.empty_like(a)
    tracemalloc.start()
    try:
        sqdiff.subtract(a, a, out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < a.nbytes // 8, peak


@pytest.mark.parametrize("op", OPS)
def test_out_takes_bfloat16_arrays(op):
    rng = np.random.default_rng(17)
    a, b = random_bf16(rng, (4, 5)), random_bf16(rng, (4, 5))
    expected = oracle(op, a, b)
    out = np.full((4, 5), 7, BF16)
    assert getattr(sqdiff, op)(a, b, out=out) is out
    assert same_bits(out, expected)
    # In place, and through a strided (but aligned) view of a bigger array.
    target = np.zeros((4, 10), BF16)[:, ::2]
    getattr(sqdiff, op)(a, b, out=target)
    assert same_bits(np.ascontiguousarray(target), expected)
    getattr(sqdiff, op)(a, b, out=a)
    assert same_bits(a, expected)


def test_byte_swapped_out_is_written_as_bfloat16_values():
    a = np.array([1.5, 3.0], BF16)
    out = np.zeros(2, BF16.newbyteorder(">"))
    sqdiff.squared_difference(a, np.ones(2, BF16), out=out)
    assert out.astype(np.float32).tolist() == [0.25, 4.0]


def test_dtype_bfloat16_takes_bfloat16_arrays_too():
    a = np.array([1.5, 3.0], BF16)
    result = sqdiff.squared_difference(a, np.array([1.0, 1.0], BF16), dtype="bfloat16")
    assert result.dtype == BF16
    assert result.astype(np.float32).tolist() == [0.25, 4.0]


def test_bfloat16_and_uint16_bits_do_not_mix_silently():
    a = np.array([1.5], BF16)
    with pytest.raises(sqdiff.Error, match=r"^subtract: NumPy has no common dtype for bfloat16 and uint16"):
        sqdiff.subtract(a, np.array([1], np.uint16))  # never promoted: ml_dtypes has no rule for them
    with pytest.raises(sqdiff.Error, match=r"out"):
        sqdiff.subtract(a, a, out=np.zeros(1, np.float32))


def test_gradients_of_bfloat16_arrays_are_bfloat16_arrays():
    rng = np.random.default_rng(19)
    a, b, grad = random_bf16(rng, (2, 5)), random_bf16(rng, (5,)), random_bf16(rng, (2, 5))
    as_dtype = sqdiff.squared_difference_backward(a, b, grad)
    as_bits = sqdiff.squared_difference_backward(a.view(np.uint16), b.view(np.uint16), grad.view(np.uint16),
                                                 dtype="bfloat16")
    for got, bits in zip(as_dtype, as_bits):
        assert got.dtype == BF16 and np.array_equal(got.view(np.uint16), bits)
    grad_a, grad_b = sqdiff.subtract_backward(grad, (2, 5), (5,))
    assert grad_a.dtype == BF16 and same_bits(grad_a, grad)
    assert grad_b.dtype == BF16 and grad_b.shape == (5,)


def test_reductions_take_bfloat16_arrays():
    rng = np.random.default_rng(18)
    a, b = random_bf16(rng, (3, 9)), random_bf16(rng, (3, 9))
    for function in (sqdiff.sum_squared_difference, sqdiff.mean_squared_difference):
        as_dtype = function(a, b, axis=1)
        as_bits = function(a.view(np.uint16), b.view(np.uint16), axis=1, dtype="bfloat16")
        # A bfloat16 result, as the bits path gives it in uint16.
        assert as_dtype.dtype == BF16 and as_bits.dtype == np.uint16
        assert np.array_equal(as_dtype.view(np.uint16), as_bits)
        assert np.all(np.isfinite(as_dtype.astype(np.float32)))


def test_the_docs_example_runs():
    text = (source_dir() / "docs" / "python.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- bf16 example[^>]*-->\n```python\n(.*?)```\n<!-- end of the bf16 example -->", text, re.S)
    assert match, "docs/python.md lost its bf16 example"
    exec(compile(match.group(1), "docs/python.md (bf16 example)", "exec"), {})
