"""squared_difference_backward and subtract_backward (SPEC section 8) against the exact oracle,
finite differences, and their errors."""

import math

import numpy as np
import pytest

import exact
import sqdiff
from support import dtype_keyword
from test_reduce import assert_same_bits, random_values

FLOATS = ["float16", "bfloat16", "float32", "float64"]

SHAPES = {  # mode -> list of (a shape, b shape, broadcast_axis)
    "numpy": [((3, 4), (3, 4), -1), ((3, 4), (4,), -1), ((2, 1, 5), (3, 1), -1), ((4,), (2, 3, 1), -1),
              ((), (3,), -1), ((0, 3), (3,), -1)],
    "none": [((2, 3, 2), (2, 3, 2), -1)],
    "pdpd": [((2, 3, 4), (3,), 1), ((2, 3, 4), (3, 1), 1), ((2, 3, 4), (4,), -1), ((2, 3), (2, 1), 0)],
}
CASES = [(mode, *shapes) for mode, entries in SHAPES.items() for shapes in entries]


def broadcast_of(a_shape, b_shape, mode, axis):
    return sqdiff.broadcast_shape(a_shape, b_shape, mode, axis)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("mode, a_shape, b_shape, axis", CASES)
def test_squared_difference_backward_against_oracle(name, mode, a_shape, b_shape, axis):
    rng = np.random.default_rng(2000 + FLOATS.index(name) * 100 + CASES.index((mode, a_shape, b_shape, axis)))
    a = random_values(rng, name, a_shape)
    b = random_values(rng, name, b_shape)
    g = random_values(rng, name, broadcast_of(a_shape, b_shape, mode, axis))
    want_a, want_b = exact.squared_difference_backward(a, b, g, name, mode, axis)
    got_a, got_b = sqdiff.squared_difference_backward(a, b, g, broadcast=mode, broadcast_axis=axis,
                                                      dtype=dtype_keyword(name))
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)
    for need, (index_none, index_kept) in [("a", (1, 0)), (("b",), (0, 1))]:
        got = sqdiff.squared_difference_backward(a, b, g, broadcast=mode, broadcast_axis=axis, need=need,
                                                 dtype=dtype_keyword(name), threads=3)
        assert got[index_none] is None
        assert_same_bits(got[index_kept], (want_a, want_b)[index_kept])


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("mode, a_shape, b_shape, axis", CASES)
def test_subtract_backward_against_oracle(name, mode, a_shape, b_shape, axis):
    rng = np.random.default_rng(2500 + FLOATS.index(name) * 100 + CASES.index((mode, a_shape, b_shape, axis)))
    g = random_values(rng, name, broadcast_of(a_shape, b_shape, mode, axis))
    want_a, want_b = exact.subtract_backward(g, a_shape, b_shape, name, mode, axis)
    got_a, got_b = sqdiff.subtract_backward(g, a_shape, b_shape, broadcast=mode, broadcast_axis=axis,
                                            dtype=dtype_keyword(name))
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)
    got = sqdiff.subtract_backward(g, a_shape, b_shape, broadcast=mode, broadcast_axis=axis, need=(),
                                   dtype=dtype_keyword(name))
    assert got == (None, None)
    # grad_a alone: b's shape must not constrain the call (pdpd at an axis).
    only_a, no_b = sqdiff.subtract_backward(g, a_shape, b_shape, broadcast=mode, broadcast_axis=axis, need=("a",),
                                            dtype=dtype_keyword(name))
    assert no_b is None
    assert_same_bits(only_a, want_a)


def test_layouts_and_threads_give_the_same_bits():
    rng = np.random.default_rng(2900)
    a = random_values(rng, "float32", (6, 5, 4))
    b = random_values(rng, "float32", (5, 1))
    g = random_values(rng, "float32", (6, 5, 4))
    want = sqdiff.squared_difference_backward(a, b, g, threads=1)
    big = np.zeros((6, 5, 8), dtype=np.float32)
    big[:, :, ::2] = g
    for threads in [1, 2, 3, 7]:
        for va, vg in [(a[::-1][::-1], big[:, :, ::2]), (np.asfortranarray(a), np.asfortranarray(g))]:
            got = sqdiff.squared_difference_backward(va, b[::-1][::-1], vg, threads=threads)
            assert_same_bits(got[0], want[0])
            assert_same_bits(got[1], want[1])


def test_against_finite_differences_in_float64():
    """The loss L = sum(g * (a - b)**2); its exact gradient in a and b against central
    differences (L is quadratic, so those are exact up to the rounding of L itself)."""
    rng = np.random.default_rng(3000)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))
    g = rng.standard_normal((3, 4))

    def loss(x, y):
        return float(np.sum(g * (x - y) ** 2))

    grad_a, grad_b = sqdiff.squared_difference_backward(a, b, g)
    h = 1e-5
    for index in np.ndindex(a.shape):
        step = np.zeros_like(a)
        step[index] = h
        numeric = (loss(a + step, b) - loss(a - step, b)) / (2 * h)
        assert math.isclose(grad_a[index], numeric, rel_tol=1e-6, abs_tol=1e-8), index
    for index in np.ndindex(b.shape):
        step = np.zeros_like(b)
        step[index] = h
        numeric = (loss(a, b + step) - loss(a, b - step)) / (2 * h)
        assert math.isclose(grad_b[index], numeric, rel_tol=1e-6, abs_tol=1e-8), index


def test_signed_zeros_and_specials():
    f = np.float64
    # One term per element: IEEE's own 2 (a - b) g: a - b = +0, g = -1 gives -0.
    grad_a, grad_b = sqdiff.squared_difference_backward(np.array([1.0]), np.array([1.0]), np.array([-1.0]))
    assert math.copysign(1, grad_a[0]) == -1 and math.copysign(1, grad_b[0]) == 1
    # subtract: grad_b = -g, so +0 gives -0, and a sum of -0 terms stays -0.
    grad_a, grad_b = sqdiff.subtract_backward(np.zeros((2, 2)), (2, 2), (2,))
    assert math.copysign(1, grad_a[0, 0]) == 1 and all(math.copysign(1, v) == -1 for v in grad_b)
    # inf * 0 is NaN; inf - inf is NaN; an inf term gives inf.
    grad_a, _ = sqdiff.squared_difference_backward(np.array([np.inf, np.inf, 1.0]), np.array([1.0, np.inf, 0.0]),
                                                   np.array([0.0, 1.0, np.inf]))
    assert np.isnan(grad_a[0]) and np.isnan(grad_a[1]) and grad_a[2] == np.inf
    # float16: 2 (a - b) g beyond float16's range is inf, as the exact value rounded.
    grad_a, _ = sqdiff.squared_difference_backward(np.float16(300), np.float16(0), np.float16(200))
    assert grad_a == np.inf and grad_a.dtype == np.float16
    assert f(1).dtype == np.float64


def test_errors():
    a = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(sqdiff.Error, match=r"^squared_difference_backward: .*i32"):
        sqdiff.squared_difference_backward(a.astype(np.int32), a.astype(np.int32), a.astype(np.int32))
    with pytest.raises(sqdiff.Error, match=r"^subtract_backward: .*u16"):
        sqdiff.subtract_backward(np.ones(3, np.uint16), (3,), (3,))
    with pytest.raises(sqdiff.Error, match=r"grad_out has shape \[3\], not the broadcast shape \[2,3\]"):
        sqdiff.squared_difference_backward(a, a, a[0])
    with pytest.raises(sqdiff.Error, match=r"^subtract_backward: grad has shape \[2,3\], not the broadcast shape "
                                           r"\[3,3\] of a_shape \[3,1\] and b_shape \[3\]$"):
        sqdiff.subtract_backward(a, (3, 1), (3,), need="b")
    with pytest.raises(sqdiff.Error, match=r"cannot broadcast \[2\] with \[3\]"):
        sqdiff.subtract_backward(a, (2,), (3,))
    with pytest.raises(sqdiff.Error, match=r"need holds 'a' and/or 'b', not 'c'"):
        sqdiff.squared_difference_backward(a, a, a, need=("a", "c"))
    with pytest.raises(sqdiff.Error, match=r"input types differ|is f64|f64"):
        sqdiff.squared_difference_backward(a, a, a.astype(np.float64))
    with pytest.raises(TypeError, match=r"a_shape must be a sequence of ints"):
        sqdiff.subtract_backward(a, "23", (3,))
    with pytest.raises(sqdiff.Error, match=r"unknown broadcast mode"):
        sqdiff.subtract_backward(a, (2, 3), (3,), broadcast="bad")
