"""The private partial-sum helpers behind sqdiff.dask: a reduction split into chunks, each summed
exactly, combined and finished, equals the single call bit for bit."""

import numpy as np
import pytest

import exact
import sqdiff
from support import DTYPE_NAMES, dtype_keyword
from test_reduce import assert_same_bits, random_values

WORDS = {"float16": 4, "bfloat16": 11, "float32": 11, "float64": 68}  # partial_sums.hpp's counts


def input_dtype(name):
    return "bfloat16" if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_words(name):
    want = WORDS.get(name, 4)  # integers: 3 limbs and the flags word
    assert sqdiff._partial_sum_words(input_dtype(name)) == want
    if name != "bfloat16":
        assert sqdiff._partial_sum_words(name) == want


def split_points(rng, length, pieces):
    return sorted(rng.choice(np.arange(1, length), size=min(pieces, length - 1), replace=False).tolist())


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("mean", [False, True])
def test_chunks_combine_to_the_single_call(name, mean):
    rng = np.random.default_rng(4000 + DTYPE_NAMES.index(name) * 2 + mean)
    dtype = input_dtype(name)
    keyword = dtype_keyword(name)
    a = random_values(rng, name, (9, 4, 7), wide=False)
    b = random_values(rng, name, (4, 1), wide=False)
    function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
    for axis, keepdims in [((0, 2), False), (0, True), (None, False)]:
        want = function(a, b, axis, keepdims=keepdims, dtype=keyword)
        assert_same_bits(want, exact.reduce(a, b, name, axis, keepdims, mean))
        # Chunks along axis 0 (reduced in every case here) and, separately, axis 2.
        for split_axis in (0, 2):
            if axis == 0 and split_axis == 2:
                continue  # axis 2 is kept there: chunks would be separate outputs
            cuts = split_points(rng, a.shape[split_axis], 3)
            chunks = np.split(a, cuts, axis=split_axis)
            b_chunks = [b] * len(chunks)
            total = None
            for chunk, b_chunk in zip(chunks, b_chunks):
                part = sqdiff._partial_sum_squared_difference(chunk, b_chunk, axis, keepdims=keepdims, dtype=keyword,
                                                              threads=2)
                assert part.dtype == np.uint64 and part.shape == want.shape + (WORDS.get(name, 4),)
                total = part if total is None else sqdiff._combine_partial_sums(dtype, total, part)
            count = a.size // max(1, want.size)
            got = sqdiff._finish_partial_sums(dtype, total, count, mean=mean)
            assert_same_bits(got, want)


def test_combine_is_in_place_and_exact():
    a = np.array([[1e30, 1.0, -1e30]], dtype=np.float64)
    parts = [sqdiff._partial_sum_squared_difference(a[:, i:i + 1], 0.0, axis=1) for i in range(3)]
    into = parts[0].copy()
    assert sqdiff._combine_partial_sums(np.float64, into, parts[1]) is into
    sqdiff._combine_partial_sums(np.float64, into, parts[2])
    assert_same_bits(sqdiff._finish_partial_sums(np.float64, into, 3, mean=False),
                     sqdiff.sum_squared_difference(a, 0.0, axis=1))
    # A state added to itself doubles it, exactly.
    doubled = parts[1].copy()
    sqdiff._combine_partial_sums(np.float64, doubled, doubled)
    assert sqdiff._finish_partial_sums(np.float64, doubled, 1, mean=False).tolist() == [2.0]


def test_finish_output_types_and_specials():
    x = np.array([[1, 2], [3, 4]], dtype=np.int16)
    part = sqdiff._partial_sum_squared_difference(x, np.int16(0), axis=1)
    assert_same_bits(sqdiff._finish_partial_sums(np.int16, part, 2, mean=False), np.array([5, 25], dtype=np.int64))
    assert_same_bits(sqdiff._finish_partial_sums(np.int16, part, 2, mean=True), np.array([2.5, 12.5]))
    assert_same_bits(sqdiff._finish_partial_sums(np.int16, part, 2, mean=True, out_dtype=np.float32),
                     np.array([2.5, 12.5], dtype=np.float32))
    bits = sqdiff.to_bfloat16_bits([[1.0, np.nan], [np.inf, 2.0]])
    part = sqdiff._partial_sum_squared_difference(bits, sqdiff.to_bfloat16_bits(0.0), axis=1, dtype="bfloat16")
    got = sqdiff._finish_partial_sums("bfloat16", part, 2, mean=False)
    assert got.dtype == np.uint16
    values = sqdiff.from_bfloat16_bits(got)
    assert np.isnan(values[0]) and values[1] == np.inf
    # Mean over no terms: NaN; a 0-d result for a fully reduced state.
    empty = sqdiff._partial_sum_squared_difference(np.zeros(0, np.float32), np.float32(0))
    assert empty.shape == (11,)
    got = sqdiff._finish_partial_sums(np.float32, empty, 0, mean=True)
    assert got.shape == () and got.dtype == np.float32 and np.isnan(got)


def test_errors():
    part = sqdiff._partial_sum_squared_difference(np.ones((2, 3), np.float32), np.float32(0), axis=1)
    with pytest.raises(sqdiff.Error, match=r"its last dim must be 68"):
        sqdiff._combine_partial_sums(np.float64, np.zeros((2, 68), np.uint64), part)
    with pytest.raises(sqdiff.Error, match=r"into has shape \[3,11\] but frm has \[2,11\]"):
        sqdiff._combine_partial_sums(np.float32, np.zeros((3, 11), np.uint64), part)
    with pytest.raises(sqdiff.Error, match=r"into must be C-contiguous"):
        sqdiff._combine_partial_sums(np.float32, np.zeros((2, 22), np.uint64)[:, ::2], part)
    with pytest.raises(sqdiff.Error, match=r"into is read-only"):
        frozen = part.copy()
        frozen.flags.writeable = False
        sqdiff._combine_partial_sums(np.float32, frozen, part)
    with pytest.raises(sqdiff.Error, match=r"partials must be a uint64 array, not int64"):
        sqdiff._finish_partial_sums(np.float32, part.astype(np.int64), 3, mean=False)
    with pytest.raises(sqdiff.Error, match=r"output type i64 is not one for f32"):
        sqdiff._finish_partial_sums(np.float32, part, 3, mean=False, out_dtype=np.int64)
    with pytest.raises(sqdiff.Error, match=r"dtype \(the inputs' element type\) is required"):
        sqdiff._partial_sum_words(None)
    with pytest.raises(sqdiff.Error, match=r"does not fit i64"):
        big = np.array([[2 ** 62, -(2 ** 62)]], dtype=np.int64)
        state = sqdiff._partial_sum_squared_difference(big, np.int64(0), axis=1)
        sqdiff._finish_partial_sums(np.int64, state, 2, mean=False)
    with pytest.raises(sqdiff.Error, match=r"axis -2 of shape \[2,3\] is listed twice"):
        sqdiff._partial_sum_squared_difference(np.ones((2, 3), np.float32), np.float32(0), axis=(0, -2))
