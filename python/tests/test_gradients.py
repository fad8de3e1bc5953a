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
    with pytest.raises(sqdiff.Error, match=r"grad_out has shape \[2\], not the broadcast shape \[2,3\]"):
        sqdiff.squared_difference_backward(a, a, a[:, 0])  # [2] does not broadcast to [2,3]
    with pytest.raises(sqdiff.Error, match=r"^subtract_backward: grad has shape \[2,3\], not the broadcast shape "
                                           r"\[3,3\] of a_shape \[3,1\] and b_shape \[3\]$"):
        sqdiff.subtract_backward(a, (3, 1), (3,), need="b")
    with pytest.raises(sqdiff.Error, match=r"cannot broadcast \[2\] with \[3\]"):
        sqdiff.subtract_backward(a, (2,), (3,))
    with pytest.raises(sqdiff.Error, match=r"need holds 'a' and/or 'b', not 'c'"):
        sqdiff.squared_difference_backward(a, a, a, need=("a", "c"))
    with pytest.raises(sqdiff.Error, match=r"b has dtype float16, but dtype=float32 was asked for"):  # not promoted
        sqdiff.squared_difference_backward(a, a.astype(np.float16), a, dtype=np.float32)
    with pytest.raises(TypeError, match=r"a_shape must be a sequence of ints"):
        sqdiff.subtract_backward(a, "23", (3,))
    with pytest.raises(sqdiff.Error, match=r"unknown broadcast mode"):
        sqdiff.subtract_backward(a, (2, 3), (3,), broadcast="bad")


# --- broadcast upstream gradients (issue 24) ---------------------------------

UPSTREAM_CASES = [  # (a shape, b shape, grad shape): grad broadcasts to the output shape by NumPy's rules
    ((3, 4), (4,), ()), ((3, 4), (4,), (4,)), ((3, 4), (3, 1), (3, 1)), ((2, 1, 5), (3, 1), (1, 3, 1)),
    ((0, 3), (3,), ()),
]


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("a_shape, b_shape, grad_shape", UPSTREAM_CASES)
def test_a_broadcastable_upstream_gradient_is_broadcast(name, a_shape, b_shape, grad_shape):
    """The result is the full-shape gradient's (the oracle on np.broadcast_to(g)), bit for bit."""
    rng = np.random.default_rng(77 + FLOATS.index(name) * 10 + UPSTREAM_CASES.index((a_shape, b_shape, grad_shape)))
    a = random_values(rng, name, a_shape)
    b = random_values(rng, name, b_shape)
    g = random_values(rng, name, grad_shape)
    full = np.broadcast_to(g, broadcast_of(a_shape, b_shape, "numpy", -1))
    want_a, want_b = exact.squared_difference_backward(a, b, full, name)
    got_a, got_b = sqdiff.squared_difference_backward(a, b, g, dtype=dtype_keyword(name))
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)
    want_a, want_b = exact.subtract_backward(full, a_shape, b_shape, name)
    got_a, got_b = sqdiff.subtract_backward(g, a_shape, b_shape, dtype=dtype_keyword(name))
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)


def test_scalar_upstream_gradients():
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    b = np.array([0.5, 0.0, 1.0], dtype=np.float32)
    grad_a, grad_b = sqdiff.squared_difference_backward(a, b, 0.25)  # weak: float32's 0.25
    assert grad_a.dtype == np.float32 and grad_a.tolist() == (0.5 * (a - b)).tolist()
    assert grad_b.tolist() == (-0.5 * (a - b)).sum(0).tolist()
    grad_a, grad_b = sqdiff.squared_difference_backward(a, b, np.float32(0.25))  # a NumPy scalar, the same
    assert grad_a.tolist() == (0.5 * (a - b)).tolist()
    grad_a, grad_b = sqdiff.subtract_backward(2.0, (2, 3), (2, 1))
    assert grad_a.dtype == np.float64 and grad_a.tolist() == [[2.0] * 3] * 2 and grad_b.tolist() == [[-6.0]] * 2
    grad_a, grad_b = sqdiff.subtract_backward(np.float16(1), (4,), (), need="b")
    assert grad_a is None and grad_b.dtype == np.float16 and grad_b == -4
    # A list broadcasts too (an array of its own dtype, float64 here: a and b promote with it).
    grad_a, _ = sqdiff.squared_difference_backward(a, b, [1.0, 0.0, 2.0])
    assert grad_a.dtype == np.float64 and grad_a.tolist() == (2 * (a - b) * [1.0, 0.0, 2.0]).tolist()


def test_an_upstream_gradient_that_does_not_broadcast_is_an_error():
    a = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(sqdiff.Error, match=r"^squared_difference_backward: grad_out has shape \[2\], not the broadcast "
                                           r"shape \[2,3\]"):
        sqdiff.squared_difference_backward(a, a, np.ones(2, dtype=np.float32))
    with pytest.raises(sqdiff.Error, match=r"^subtract_backward: grad has shape \[4\], not the broadcast shape \[2,3\]"):
        sqdiff.subtract_backward(np.ones(4, dtype=np.float32), (2, 3), (3,))


def test_a_broadcast_upstream_gradient_is_not_copied():
    import tracemalloc
    a = np.ones((1000, 1000), dtype=np.float32)
    b = np.zeros(1000, dtype=np.float32)
    tracemalloc.start()
    _, grad_b = sqdiff.squared_difference_backward(a, b, np.float32(1), need="b")  # grad_b: 1000 floats
    assert grad_b.tolist() == [-2000.0] * 1000
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100_000, peak  # never the 4 MB of a full-shape grad


# --- mean_squared_difference_backward (issue 24) --------------------------------

MSE_CASES = CASES + [("numpy", (3, 7), (3, 7), -1), ("numpy", (5, 1), (1, 6), -1), ("numpy", (16,), (16,), -1),
                     ("numpy", (4, 8), (8,), -1)]


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("mode, a_shape, b_shape, axis", MSE_CASES)
def test_mean_squared_difference_backward_against_oracle(name, mode, a_shape, b_shape, axis):
    """The exact 2 (a - b) / n summed to each shape, rounded once: odd n (21, 30, 3...) through the
    library's division, powers of two (16, 32) through the scaled kernel, the same bits."""
    rng = np.random.default_rng(5000 + FLOATS.index(name) * 100 + MSE_CASES.index((mode, a_shape, b_shape, axis)))
    a = random_values(rng, name, a_shape)
    b = random_values(rng, name, b_shape)
    want_a, want_b = exact.squared_difference_backward(a, b, None, name, mode, axis, mean=True)
    got_a, got_b = sqdiff.mean_squared_difference_backward(a, b, broadcast=mode, broadcast_axis=axis,
                                                           dtype=dtype_keyword(name))
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)


def test_mean_squared_difference_backward_rounds_once():
    """2 (a - b) / 3 rounded once differs from 2 (a - b) times 1/3 rounded first."""
    a = np.array([1.0, 5.0, 7.0], dtype=np.float32)
    b = np.zeros(3, dtype=np.float32)
    got, _ = sqdiff.mean_squared_difference_backward(a, b, need="a")
    want = [np.float32(float(2 * x) / 3) for x in a]  # float64's quotient, exact enough to round once here
    assert got.tolist() == [float(w) for w in want]
    scaled, _ = sqdiff.squared_difference_backward(a, b, np.float32(1 / 3), need="a")
    assert scaled.tolist() != got.tolist()  # 1/3 rounded to float32 first: another result
    # The gradient of the loss mean_squared_difference computes, checked by a finite difference.
    x = np.linspace(-1, 1, 7)
    y = np.cos(x)
    grad_x, grad_y = sqdiff.mean_squared_difference_backward(x, y)
    h = 1e-6
    for i in range(7):
        step = np.zeros(7)
        step[i] = h
        numeric = (sqdiff.mean_squared_difference(x + step, y) - sqdiff.mean_squared_difference(x - step, y)) / (2 * h)
        assert math.isclose(grad_x[i], numeric, rel_tol=1e-6, abs_tol=1e-9)
    assert np.array_equal(grad_y, -grad_x)


def test_mean_squared_difference_backward_promotes_and_refuses():
    grad_a, grad_b = sqdiff.mean_squared_difference_backward(np.float32([1, 2, 4]), [0.0, 0.5, 1.0])
    assert grad_a.dtype == grad_b.dtype == np.float64
    assert grad_a.tolist() == [2 * 1 / 3, 2 * 1.5 / 3, 2 * 3 / 3]
    grad_a, grad_b = sqdiff.mean_squared_difference_backward(np.zeros((3, 0)), np.zeros(0))
    assert grad_a.shape == (3, 0) and grad_b.tolist() == []
    grad_a, _ = sqdiff.mean_squared_difference_backward(np.ones((2, 1)), np.zeros(0), need="a")
    assert grad_a.tolist() == [[0.0], [0.0]]  # no terms: zeros, not 0/0
    with pytest.raises(sqdiff.Error, match=r"^mean_squared_difference_backward: a is i32: gradients take float types"):
        sqdiff.mean_squared_difference_backward(np.ones(2, np.int32), np.ones(2, np.int32))
    with pytest.raises(sqdiff.Error, match=r"^mean_squared_difference_backward: cannot broadcast \[2\] with \[3\]"):
        sqdiff.mean_squared_difference_backward(np.ones(2), np.ones(3))
    with pytest.raises(sqdiff.Error, match=r"need holds 'a' and/or 'b', not 'x'"):
        sqdiff.mean_squared_difference_backward(np.ones(2), np.ones(2), need="x")
