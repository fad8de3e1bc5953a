"""The private partial-sum helpers behind sqdiff.dask: a reduction split into chunks, each summed
exactly, combined and finished, equals the single call bit for bit; states that are not the
library's own (zeroed, garbage, another version's or type's, negative, impossible flags) and
combinations past a state's capacity are sqdiff.Error, with nothing written."""

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
    want = WORDS.get(name, 4)  # integers: 3 limbs and the tag word
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


# --- states are checked (issue 21) ------------------------------------------

def float32_states():
    """Two float32 states, of 1**2 and 2**2: shape (2, 11), the tag word last."""
    return sqdiff._partial_sum_squared_difference(np.float32([[1], [2]]), np.float32(0), axis=1)


def test_the_tag_word():
    tag = int(float32_states()[1, -1])
    assert tag >> 40 == 0x535144  # "SQD"
    assert (tag >> 32) & 0xFF == 1  # the layout's version
    assert tag & 0xFF == 8 | 16  # terms were added, not every one -0


def test_combining_past_the_capacity_is_an_error_not_a_wrap():
    # (2**64 - 1)**2, the largest uint64 square, doubled by adding the state to
    # itself: 2**63 of them fit below 2**191, the capacity of an integer
    # state; one more doubling once wrapped into a negative sum (-3.4e38).
    state = sqdiff._partial_sum_squared_difference(np.uint64([[2 ** 64 - 1]]), np.uint64(0), axis=1)
    for _ in range(63):
        sqdiff._combine_partial_sums(np.uint64, state, state)
    full = state.copy()
    overflow = (r"combine_partial_sums: the sum of state 0 of into and from reaches 2\^191, beyond what a state "
                r"of integer inputs holds .*nothing was written")
    with pytest.raises(sqdiff.Error, match=overflow):
        sqdiff._combine_partial_sums(np.uint64, state, state)
    assert (state == full).all()
    got = sqdiff._finish_partial_sums(np.uint64, state, 1, mean=False, out_dtype=np.float64)
    assert got.tolist() == [float((2 ** 64 - 1) ** 2 * 2 ** 63)]  # exact, rounded once
    # Two outputs, the second full: the first is not written either.
    two = np.concatenate([sqdiff._partial_sum_squared_difference(np.uint64([[3]]), np.uint64(0), axis=1), full])
    before = two.copy()
    with pytest.raises(sqdiff.Error, match=r"state 1 of into and from reaches 2\^191"):
        sqdiff._combine_partial_sums(np.uint64, two, before.copy())
    assert (two == before).all()
    # float32 states: the same, at their own capacity (2**341, far beyond any float32 sum).
    big = sqdiff._partial_sum_squared_difference(np.float32([[3.4e38]]), np.float32(-3.4e38), axis=1)
    with pytest.raises(sqdiff.Error, match=r"reaches 2\^341"):
        for _ in range(100):
            sqdiff._combine_partial_sums(np.float32, big, big)


def set_bits(word, mask):
    return np.uint64(int(word) | mask)


BAD_FLOAT32_STATES = {
    "zeroed": (lambda s: np.zeros_like(s), r"is not a partial state: its last word, 0x0000000000000000, lacks"),
    "garbage": (lambda s: np.full_like(s, 0x5A5A5A5A5A5A5A5A), r"is not a partial state"),
    "the old flags word": (lambda s: np.concatenate([s[:-1], [np.uint64(24)]]), r"is not a partial state"),
    "shifted a word": (lambda s: np.roll(s, 1), r"is not a partial state"),
    "version 2": (lambda s: np.concatenate([s[:-1], [np.uint64(int(s[-1]) ^ (3 << 32))]]),
                  r"is a state of layout version 2, which this library does not read"),
    "negative": (lambda s: np.concatenate([s[:-2], [set_bits(s[-2], 1 << 63)], s[-1:]]), r"holds a negative sum"),
    "-inf": (lambda s: np.concatenate([s[:-1], [set_bits(s[-1], 4)]]), r"is flagged -inf"),
    "an unknown flag": (lambda s: np.concatenate([s[:-1], [set_bits(s[-1], 0x80)]]), r"has unknown flag bits"),
    "no terms": (lambda s: np.concatenate([s[:-1], [np.uint64(int(s[-1]) & ~24)]]),
                 r"holds a sum but is flagged as having no terms"),
}


@pytest.mark.parametrize("case", sorted(BAD_FLOAT32_STATES))
def test_a_bad_state_is_an_error_and_nothing_is_written(case):
    make, message = BAD_FLOAT32_STATES[case]
    good = float32_states()
    bad = good.copy()
    bad[1] = make(good[1])
    origin = r"; a state must come from partial_sum_squared_difference or combine_partial_sums of this library"
    with pytest.raises(sqdiff.Error, match=r"finish_partial_sums: state 1 " + message):
        sqdiff._finish_partial_sums(np.float32, bad, 1, mean=False)
    with pytest.raises(sqdiff.Error, match=origin):
        sqdiff._finish_partial_sums(np.float32, bad, 1, mean=True, out_dtype=np.float64)
    into = good.copy()
    with pytest.raises(sqdiff.Error, match=r"combine_partial_sums: from's state 1 " + message):
        sqdiff._combine_partial_sums(np.float32, into, bad)
    assert (into == good).all()
    into = bad.copy()
    with pytest.raises(sqdiff.Error, match=r"combine_partial_sums: into's state 1 " + message):
        sqdiff._combine_partial_sums(np.float32, into, good)
    assert (into == bad).all()


@pytest.mark.parametrize("flag, name", [(1, "NaN"), (2, r"\+inf")])
def test_a_special_flag_on_an_integer_state_is_a_sqdiff_error(flag, name):
    # Once a std::logic_error from the rounding (Python's RuntimeError).
    state = sqdiff._partial_sum_squared_difference(np.int16([[1, 2]]), np.int16(0), axis=1)
    state[0, -1] = set_bits(state[0, -1], flag)
    with pytest.raises(sqdiff.Error, match=r"state 0 is flagged " + name + r", which a sum of integer squares never"):
        sqdiff._finish_partial_sums(np.int16, state, 2, mean=False)
    with pytest.raises(sqdiff.Error, match=r"is flagged " + name):  # once a NaN or inf mean
        sqdiff._finish_partial_sums(np.int16, state, 2, mean=True)
    into = state.copy()
    with pytest.raises(sqdiff.Error, match=r"into's state 0 is flagged " + name):
        sqdiff._combine_partial_sums(np.int16, into, state)
    assert (into == state).all()


def test_a_state_of_another_type_is_an_error():
    # bfloat16 and float32 states have 11 words each, float16 and integer ones 4:
    # the tag word's format tells them apart.
    bf16 = sqdiff._partial_sum_squared_difference(sqdiff.to_bfloat16_bits([[1.0]]), sqdiff.to_bfloat16_bits(0.0),
                                                  axis=1, dtype="bfloat16")
    with pytest.raises(sqdiff.Error, match=r"state 0 is a state of bf16 inputs \(10 limbs from 2\^-266\), "
                                           r"not of f32 inputs"):
        sqdiff._finish_partial_sums(np.float32, bf16, 1, mean=False)
    f16 = sqdiff._partial_sum_squared_difference(np.float16([[1.0]]), np.float16(0), axis=1)
    into = sqdiff._partial_sum_squared_difference(np.int16([[1]]), np.int16(0), axis=1)
    before = into.copy()
    with pytest.raises(sqdiff.Error, match=r"from's state 0 is a state of f16 inputs .*, not of integer inputs"):
        sqdiff._combine_partial_sums(np.int16, into, f16)
    assert (into == before).all()


def test_a_state_of_the_wrong_size_is_an_error():
    good = float32_states()
    with pytest.raises(sqdiff.Error, match=r"partials has shape \[2,10\]; its last dim must be 11"):
        sqdiff._finish_partial_sums(np.float32, good[:, :-1], 1, mean=False)
    with pytest.raises(sqdiff.Error, match=r"frm has shape \[2,10\]; its last dim must be 11"):
        sqdiff._combine_partial_sums(np.float32, good.copy(), good[:, 1:])
    # 68 words of a float64 state read as 17 float16 states of 4: word 3 is a limb, not a tag.
    f64 = sqdiff._partial_sum_squared_difference(np.float64([[1.0]]), 0.0, axis=1)
    with pytest.raises(sqdiff.Error, match=r"finish_partial_sums: state 0 is not a partial state"):
        sqdiff._finish_partial_sums(np.float16, f64.reshape(17, 4), 1, mean=False)
