"""Property tests: random shapes, broadcast modes, dtypes, memory layouts and out= aliasing,
compared bit for bit with the NumPy oracle of support.py."""

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import sqdiff
from support import (DTYPE_NAMES, OPS, ShapeError, assert_same_bits, assert_untouched_outside,
                     dtype_keyword, examples, expected_shape, oracle, place, random_values)

# Dims: mostly small and non-zero; 0 (an empty tensor) now and then; the last
# dim also longer than a SIMD vector (so that whole vectors and tails both run).
DIM = st.sampled_from([1, 2, 3, 4, 5, 7, 0])
LAST_DIM = st.sampled_from([3, 1, 2, 4, 5, 7, 0, 16, 17, 33, 100])
INPUT_LAYOUTS = ["c", "f", "reversed", "strided", "broadcast"]
OUT_LAYOUTS = ["c", "f", "reversed", "strided"]


def draw_shapes(data, mode):
    """Shapes of a and b that broadcast in `mode`, and the axis to pass."""
    rank = data.draw(st.sampled_from([2, 1, 3, 4, 0]), label="rank")
    shape = tuple(data.draw(DIM if i < rank - 1 else LAST_DIM, label="dim") for i in range(rank))
    if mode == "none":
        return shape, shape, data.draw(st.integers(-2, 3), label="axis (ignored)")
    if mode == "numpy":
        def derive():
            r = data.draw(st.integers(0, rank), label="input rank")
            return tuple(1 if data.draw(st.booleans(), label="stretch") else d for d in shape[rank - r:])
        return derive(), derive(), data.draw(st.integers(-2, 3), label="axis (ignored)")
    rank_b = data.draw(st.integers(0, rank), label="rank b")
    start = data.draw(st.integers(0, rank - rank_b), label="pdpd start")
    b_shape = tuple(1 if data.draw(st.booleans(), label="stretch") else shape[start + i] for i in range(rank_b))
    default = start == rank - rank_b and data.draw(st.booleans(), label="axis -1")
    return shape, b_shape, -1 if default else start


def draw_input(data, rng, dtype_name, shape, name):
    """(view to pass, its values as a plain array, base, inside-mask) in a drawn layout."""
    layout = data.draw(st.sampled_from(INPUT_LAYOUTS), label=f"{name} layout")
    if layout == "broadcast":
        # A stride-0 view: np.broadcast_to of an array with 1s where `shape` is larger.
        source_shape = tuple(1 if data.draw(st.booleans(), label=f"{name} stretched dim") else d for d in shape)
        source = random_values(rng, dtype_name, source_shape)
        inner = data.draw(st.sampled_from(OUT_LAYOUTS), label=f"{name} source layout")
        view, base, inside = place(source, inner, rng)
        return np.broadcast_to(view, shape), np.broadcast_to(source, shape).copy(), base, inside
    values = random_values(rng, dtype_name, shape)
    view, base, inside = place(values, layout, rng)
    return view, values, base, inside


@settings(max_examples=examples(1000))
@given(data=st.data())
def test_matches_oracle(data):
    op = data.draw(st.sampled_from(OPS), label="op")
    dtype_name = data.draw(st.sampled_from(DTYPE_NAMES), label="dtype")
    mode = data.draw(st.sampled_from(["numpy", "none", "pdpd"]), label="broadcast")
    a_shape, b_shape, axis = draw_shapes(data, mode)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a, a_values, a_base, a_inside = draw_input(data, rng, dtype_name, a_shape, "a")
    b, b_values, b_base, b_inside = draw_input(data, rng, dtype_name, b_shape, "b")
    out_shape = expected_shape(a_shape, b_shape, mode, axis)
    expected = oracle(op, a_values, b_values, dtype_name, mode, axis)
    threads = data.draw(st.sampled_from([None, 1, 2, 3]), label="threads")

    # out: a new array, a separate array in some layout, or an input itself.
    target = data.draw(st.sampled_from(["new", "out", "a", "b"]), label="out")
    for name, view, shape in (("a", a, a_shape), ("b", b, b_shape)):
        if target == name and (shape != out_shape or not view.flags.writeable):
            target = "out"  # that input cannot be the output (broadcast, or read-only)
    out = out_base = out_inside = None
    if target == "out":
        layout = data.draw(st.sampled_from(OUT_LAYOUTS), label="out layout")
        out, out_base, out_inside = place(random_values(rng, dtype_name, out_shape), layout, rng)
    elif target == "a":
        out, out_base, out_inside = a, a_base, a_inside
    elif target == "b":
        out, out_base, out_inside = b, b_base, b_inside

    # Shown by --hypothesis-show-statistics: how the examples spread.
    event(f"dtype {dtype_name}")
    event(f"broadcast {mode}")
    event(f"out {target}")
    event("empty" if 0 in out_shape else f"rank {len(out_shape)}")
    result = getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis, out=out, threads=threads,
                                 dtype=dtype_keyword(dtype_name))

    if out is None:
        assert type(result) is np.ndarray
        assert result.flags.c_contiguous
        assert result.shape == out_shape
    else:
        assert result is out
    assert_same_bits(result, expected, dtype_name)
    # Inputs that are not the output are never written; nothing is written outside a view.
    if target != "a":
        assert_same_bits(np.asarray(a), a_values, dtype_name, "input a afterwards", quiet_nans=False)
    if target != "b":
        assert_same_bits(np.asarray(b), b_values, dtype_name, "input b afterwards", quiet_nans=False)
    for base, inside, what in ((a_base, a_inside, "a"), (b_base, b_inside, "b"), (out_base, out_inside, "out")):
        if base is not None:
            assert_untouched_outside(base, inside, what)


@settings(max_examples=examples(500))
@given(data=st.data())
def test_broadcast_shape_matches_oracle(data):
    """Any pair of shapes (valid or not), any mode and axis: the same verdict as the
    oracle, from broadcast_shape and from both ops."""
    mode = data.draw(st.sampled_from(["numpy", "none", "pdpd"]), label="broadcast")
    small = st.sampled_from([1, 2, 3, 0])
    shape_a = tuple(data.draw(st.lists(small, max_size=4), label="shape a"))
    shape_b = tuple(data.draw(st.lists(small, max_size=4), label="shape b"))
    axis = data.draw(st.integers(-3, 5), label="axis")
    try:
        want = expected_shape(shape_a, shape_b, mode, axis)
    except ShapeError:
        want = None
    if mode == "numpy" and want is not None:
        assert want == np.broadcast_shapes(shape_a, shape_b)  # the oracle agrees with NumPy

    if want is None:
        with pytest.raises(sqdiff.Error, match=r"^broadcast_shape: "):
            sqdiff.broadcast_shape(shape_a, shape_b, mode, axis)
    else:
        assert sqdiff.broadcast_shape(shape_a, shape_b, mode, axis) == want

    a = np.zeros(shape_a, dtype=np.int8)
    b = np.zeros(shape_b, dtype=np.int8)
    for op in OPS:
        if want is None:
            with pytest.raises(sqdiff.Error, match=rf"^{op}: "):
                getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis)
        else:
            result = getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis)
            assert result.shape == want and result.dtype == np.int8


@settings(max_examples=examples(300))
@given(data=st.data())
def test_views_equal_copies(data):
    """The same values through any layout (including stride 0) give the same bits,
    and equal the result on contiguous copies."""
    dtype_name = data.draw(st.sampled_from(DTYPE_NAMES), label="dtype")
    op = data.draw(st.sampled_from(OPS), label="op")
    a_shape, b_shape, _ = draw_shapes(data, "numpy")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a, a_values, _, _ = draw_input(data, rng, dtype_name, a_shape, "a")
    b, b_values, _, _ = draw_input(data, rng, dtype_name, b_shape, "b")
    kw = {"dtype": dtype_keyword(dtype_name)}
    on_views = getattr(sqdiff, op)(a, b, **kw)
    on_copies = getattr(sqdiff, op)(np.array(a_values, order="C"), np.array(b_values, order="C"), **kw)
    assert_same_bits(on_views, on_copies, dtype_name)
