"""Weak Python scalars (SPEC section 6, NEP 50) and the deprecated axis= alias, in every function."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import exact
import sqdiff
from optional_modules import require


def bits(array):
    array = np.asarray(array)
    return array.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[array.dtype.itemsize])


# Around the rounding-to-infinity thresholds too: float16's 65520 and float32's 2**128 - 2**103.
F32_THRESHOLD = math.ldexp(2.0 ** 24 - 0.5, 104)
FLOAT_CASES = [0.5, 0.1, -3.0, 1e-30, 1e300, 70000.0, 2.0 ** -20, True, 3, -(2 ** 60) - 1, 2 ** 200 + 1,
               65519.99, -65520.0, 65520, F32_THRESHOLD, -math.nextafter(F32_THRESHOLD, 0), 2 ** 128 - 2 ** 103 - 1,
               math.inf, -math.inf]


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
@pytest.mark.parametrize("scalar", FLOAT_CASES)
def test_python_scalar_takes_the_float_type_rounded_once(name, scalar):
    """The scalar is the exact value rounded once into the array's type (the oracle
    rounds the Fraction), and the call equals the one with that NumPy scalar."""
    x = np.array([1.0, -2.0, 0.25], dtype=name)
    infinite = isinstance(scalar, float) and math.isinf(scalar)
    rounded = scalar if infinite else exact.round_to_format(Fraction(scalar), name)
    strong = np.array(rounded, dtype=name)
    for op in (sqdiff.squared_difference, sqdiff.subtract):
        got = op(x, scalar)
        assert got.dtype == np.dtype(name)
        assert np.array_equal(bits(got), bits(op(x, strong)))
        got = op(scalar, x)
        assert np.array_equal(bits(got), bits(op(strong, x)))
    got = sqdiff.sum_squared_difference(x, scalar)
    assert got.dtype == np.dtype(name) and bits(got) == bits(sqdiff.sum_squared_difference(x, strong))


@pytest.mark.parametrize("scalar", FLOAT_CASES + [1.00390625, 1.0 + 2 ** -9 + 2 ** -30, -0.0])
def test_python_scalar_with_bfloat16_bits(scalar):
    x = sqdiff.to_bfloat16_bits([1.0, 2.5])
    rounded = scalar if math.isinf(scalar) else exact.round_to_format(Fraction(scalar), "bfloat16")
    strong = exact.float_bits(rounded, "bfloat16")
    got = sqdiff.squared_difference(x, scalar, dtype="bfloat16")
    assert got.dtype == np.uint16
    assert np.array_equal(got, sqdiff.squared_difference(x, strong, dtype="bfloat16"))
    got = sqdiff.mean_squared_difference(x, scalar, dtype="bfloat16")
    assert got == sqdiff.mean_squared_difference(x, strong, dtype="bfloat16")


def test_the_documented_example_computes_in_float32():
    x = np.array([1.0, 2.0], dtype=np.float32)
    got = sqdiff.squared_difference(x, 0.5)
    assert got.dtype == np.float32 and got.tolist() == [0.25, 2.25]
    # 0.1 is rounded to float32 first: (1 - f32(0.1))**2 in float32.
    one = sqdiff.squared_difference(np.float32(1), 0.1)
    d = np.float32(1) - np.float32(0.1)
    assert bits(one) == bits(np.float32(d * d))


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_python_int_with_integer_arrays(name):
    info = np.iinfo(name)
    x = np.array([0, 1, 2], dtype=name)
    for value in [int(info.min), int(info.max), 0, 1, True, False]:
        got = sqdiff.subtract(x, value)
        assert got.dtype == np.dtype(name)
        assert np.array_equal(got, sqdiff.subtract(x, np.array(int(value), dtype=name)))
    for value in [int(info.min) - 1, int(info.max) + 1, 2 ** 70]:
        with pytest.raises(sqdiff.Error, match=rf"^subtract: the Python int {value} does not fit {name} "):
            sqdiff.subtract(x, value)
        with pytest.raises(sqdiff.Error, match=rf"the Python int {value} does not fit {name}"):
            sqdiff.sum_squared_difference(value, x)


def test_the_spec_errors():
    with pytest.raises(sqdiff.Error, match=r"^squared_difference: the Python int 300 does not fit uint8 \(range 0 to "
                                           r"255\), the dtype of the other operand$"):
        sqdiff.squared_difference(np.array([1], dtype=np.uint8), 300)
    with pytest.raises(sqdiff.Error, match=r"^subtract: the Python float 0.5 cannot be combined with a int32 array"):
        sqdiff.subtract(np.array([1], dtype=np.int32), 0.5)
    with pytest.raises(sqdiff.Error, match=r"the Python float 1.0 cannot be combined with a uint64 array"):
        sqdiff.mean_squared_difference(1.0, np.array([1], dtype=np.uint64))
    # Nothing written when refused.
    out = np.array([7], dtype=np.uint8)
    with pytest.raises(sqdiff.Error):
        sqdiff.subtract(np.array([1], dtype=np.uint8), -1, out=out)
    assert out.tolist() == [7]


def test_two_python_scalars_take_numpy_2_defaults():
    got = sqdiff.squared_difference(3, 1)
    assert got.dtype == np.int64 and got == 4
    got = sqdiff.subtract(1, 0.5)
    assert got.dtype == np.float64 and got == 0.5
    got = sqdiff.subtract(True, 2)
    assert got.dtype == np.int64 and got == -1
    got = sqdiff.sum_squared_difference(2.5, 0.5)
    assert got.dtype == np.float64 and got == 4.0
    got = sqdiff.mean_squared_difference(7, 4)
    assert got.dtype == np.float64 and got == 9.0
    with pytest.raises(sqdiff.Error, match=r"the Python int 9223372036854775808 does not fit int64"):
        sqdiff.subtract(2 ** 63, 0)
    with pytest.raises(sqdiff.Error, match=r"unsupported dtype of a: bool"):
        sqdiff.subtract(True, False)
    # With dtype= naming the input type, two scalars take it.
    got = sqdiff.squared_difference(1, 0.25, dtype="float32")
    assert got.dtype == np.float32 and got == 0.5625


def test_numpy_scalars_and_arrays_are_strong():
    # Strong: their dtype promotes with the array's (NumPy 2; NumPy 1's value-based casting
    # would keep float32 and uint8 here), where a Python scalar would take the array's dtype.
    got = sqdiff.squared_difference(np.ones(2, dtype=np.float32), np.float64(0.1))
    assert got.dtype == np.float64 and got.tolist() == [(1 - 0.1) ** 2] * 2
    got = sqdiff.sum_squared_difference(np.ones(2, dtype=np.float32), np.array(0.1))
    assert got.dtype == np.float64 and got == sqdiff.sum_squared_difference(np.ones(2), np.array(0.1))
    got = sqdiff.subtract(np.ones(2, dtype=np.uint8), [1, 2])  # a list is an array of int64, not a scalar
    assert got.dtype == np.int64 and got.tolist() == [0, -1]


def test_scalars_in_the_gradients():
    a = np.array([1.0, 2.0], dtype=np.float32)
    grad_a, grad_b = sqdiff.squared_difference_backward(a, 0.5, np.ones(2, np.float32), need="a")
    assert grad_b is None and grad_a.dtype == np.float32 and grad_a.tolist() == [1.0, 3.0]
    grad_a, grad_b = sqdiff.squared_difference_backward(np.array(2, np.float32), 0.5, 2.0)
    assert grad_a.dtype == np.float32 and grad_a == 6.0 and grad_b == -6.0
    grad_a, grad_b = sqdiff.squared_difference_backward(a, np.float32(0.5), np.ones(2, np.float32))
    assert grad_b.shape == () and grad_b == -4.0  # summed over the dim b was stretched along
    grad_a, grad_b = sqdiff.subtract_backward(2.0, (), ())
    assert grad_a.dtype == np.float64 and grad_a == 2.0 and grad_b == -2.0


def test_big_endian_arrays_give_their_dtype():
    x = np.array([1.0, 2.0], dtype=">f4")
    got = sqdiff.squared_difference(x, 0.5)
    assert got.dtype == np.float32 and got.tolist() == [0.25, 2.25]


@pytest.mark.parametrize("op", ["squared_difference", "subtract"])
def test_axis_is_a_deprecated_alias_of_broadcast_axis(op):
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.array([1, 2], dtype=np.int32)
    want = getattr(sqdiff, op)(a, b, broadcast="pdpd", broadcast_axis=0)
    with pytest.warns(DeprecationWarning, match=rf"^{op}: axis= is deprecated for the pdpd alignment; use "
                                                 r"broadcast_axis=$") as record:
        got = getattr(sqdiff, op)(a, b, broadcast="pdpd", axis=0)
    assert np.array_equal(got, want)
    assert record[0].filename == __file__  # the warning points at the caller's line
    with pytest.raises(TypeError, match=rf"^{op}: pass the pdpd alignment as broadcast_axis only"):
        getattr(sqdiff, op)(a, b, broadcast="pdpd", axis=0, broadcast_axis=0)
    with pytest.raises(TypeError, match=rf"^{op}: pass the pdpd alignment as broadcast_axis only"):
        getattr(sqdiff, op)(a, b, broadcast="pdpd", axis=0, broadcast_axis=-1)  # even the default, if explicit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(sqdiff, op)(a, b, broadcast="pdpd", broadcast_axis=0)  # no warning


def test_broadcast_shape_axis_alias():
    with pytest.warns(DeprecationWarning, match=r"^broadcast_shape: axis= is deprecated"):
        assert sqdiff.broadcast_shape((2, 3), (2,), "pdpd", axis=0) == (2, 3)
    assert sqdiff.broadcast_shape((2, 3), (2,), "pdpd", 0) == (2, 3)  # positional is broadcast_axis


def test_broadcast_axis_everywhere():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    b = np.array([1.0, 2.0])
    got = sqdiff.sum_squared_difference(a, b, axis=1, broadcast="pdpd", broadcast_axis=0)
    assert got.tolist() == [1 + 0 + 1, 1 + 4 + 9]
    grad_a, grad_b = sqdiff.squared_difference_backward(a, b, np.ones((2, 3)), broadcast="pdpd", broadcast_axis=0)
    assert grad_b.tolist() == [-2 * (-1 + 0 + 1), -2 * (1 + 2 + 3)]
    _, grad_b = sqdiff.subtract_backward(np.ones((2, 3)), (2, 3), (2,), broadcast="pdpd", broadcast_axis=0)
    assert grad_b.tolist() == [-3.0, -3.0]
    with pytest.raises(TypeError, match=r"^sum_squared_difference: broadcast_axis must be an int, not float$"):
        sqdiff.sum_squared_difference(a, b, broadcast="pdpd", broadcast_axis=0.0)


class _ArraySubclass(np.ndarray):
    """An ndarray subclass: _weak_scalars.resolve's shortcut (ndarrays only) lets it
    through to the general path."""


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "int8", "uint8", "int64", "uint64"])
def test_the_shortcut_for_an_array_and_a_scalar_is_the_general_path(name):
    """resolve's shortcut (an ndarray beside an exact bool/int/float) converts every
    scalar, or refuses it, exactly as the general path does for a subclass."""
    from sqdiff import _weak_scalars

    x = np.array([1, 2], dtype=name)
    general = x.view(_ArraySubclass)
    for scalar in FLOAT_CASES + [0, -1, 255, 256, 2 ** 63, -(2 ** 63), 2 ** 64, False]:
        for order in ((0, 1), (1, 0)):
            def resolved(array):
                values = (array, scalar) if order == (0, 1) else (scalar, array)
                try:
                    return _weak_scalars.resolve("op", values)[order[1]]
                except sqdiff.Error as error:
                    return str(error)

            fast, slow = resolved(x), resolved(general)
            if isinstance(slow, str):
                assert fast == slow, (scalar, order)
            else:
                assert fast.dtype == slow.dtype == x.dtype and fast.tobytes() == slow.tobytes(), (scalar, order)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_the_compiled_float_shortcut_is_the_python_rule(name):
    """A Python float beside a float32/float64 ndarray is converted in the compiled
    part; the result has the bits of the one _weak_scalars.resolve gives, for random
    doubles of every magnitude (fixed seed), NaNs and the rounding-to-inf edges."""
    from sqdiff import _weak_scalars

    rng = np.random.default_rng(50)
    doubles = rng.integers(0, 2 ** 64, size=400, dtype=np.uint64).view(np.float64).tolist()
    doubles += [math.nan, -math.nan, 0.0, -0.0, 5e-324, F32_THRESHOLD, math.nextafter(F32_THRESHOLD, 0),
                -F32_THRESHOLD, float(np.finfo(np.float32).max), 1.5 * 2.0 ** -149, 2.0 ** -150]
    x = np.zeros(1, dtype=name)
    for value in doubles:
        reference = _weak_scalars.resolve("subtract", (x, value))[1]
        assert bits(sqdiff.subtract(value, x)) == bits(reference), value
        assert bits(sqdiff.subtract(x, value)) == bits(sqdiff.subtract(x, reference)), value


# Python ints at float64's rounding-to-infinity edge: 2**1024 - 2**970 is the largest double plus
# half an ulp, so it (a tie, to the even "2**1024") and everything beyond rounds to inf; one less
# rounds to the largest double. float(int) raises OverflowError from the edge on.
F64_INF_EDGE = 2 ** 1024 - 2 ** 970
BEYOND_FLOAT64 = {"2**1024-2**970": F64_INF_EDGE, "2**1024-2**970+1": F64_INF_EDGE + 1, "2**1024": 2 ** 1024,
                  "10**400": 10 ** 400}
BELOW_THE_EDGE = {"2**1024-2**970-1": F64_INF_EDGE - 1, "2**1024-2**971": 2 ** 1024 - 2 ** 971}  # the largest double


def test_the_float64_edge_as_the_oracle_rounds_it():
    largest = float(np.finfo(np.float64).max)
    for value in BEYOND_FLOAT64.values():
        assert exact.round_to_format(Fraction(value), "float64") == math.inf
        assert exact.round_to_format(Fraction(-value), "float64") == -math.inf
    for value in BELOW_THE_EDGE.values():
        assert exact.round_to_format(Fraction(value), "float64") == largest
        assert exact.round_to_format(Fraction(-value), "float64") == -largest


@pytest.mark.parametrize("sign", [1, -1], ids=["+", "-"])
@pytest.mark.parametrize("name", list(BEYOND_FLOAT64) + list(BELOW_THE_EDGE))
def test_python_ints_beyond_float64_round_once_in_every_function(name, sign):
    """Beside float64 (an array, a Python float, dtype=float64): the int's exact value
    rounded once, inf from the edge on, in the element-wise functions, the reductions
    and the gradients, as the calls with that float64 give (docs/python.md's table)."""
    value = sign * {**BEYOND_FLOAT64, **BELOW_THE_EDGE}[name]
    rounded = exact.round_to_format(Fraction(value), "float64")
    strong = np.array(rounded)  # float64
    x = np.array([1.0, -2.0, 0.25])
    g = np.array([0.5, -1.0, 2.0])
    same = []
    for op in (sqdiff.subtract, sqdiff.squared_difference):
        same += [(op(x, value), op(x, strong)), (op(value, x), op(strong, x)),
                 (op(value, 1.5), op(strong, np.float64(1.5))), (op(-0.5, value), op(np.float64(-0.5), strong)),
                 (op(value, 1, dtype=np.float64), op(strong, np.float64(1)))]
    for reduce in (sqdiff.sum_squared_difference, sqdiff.mean_squared_difference):
        same += [(reduce(x, value), reduce(x, strong)), (reduce(value, x, 0), reduce(strong, x, 0))]
    same += list(zip(sqdiff.squared_difference_backward(x, value, g), sqdiff.squared_difference_backward(x, strong, g)))
    same += list(zip(sqdiff.squared_difference_backward(value, 2.0, 0.5),
                     sqdiff.squared_difference_backward(strong, np.float64(2.0), np.float64(0.5))))
    same += list(zip(sqdiff.subtract_backward(value, (), (), dtype=np.float64),
                     sqdiff.subtract_backward(strong, (), ())))
    for got, want in same:
        assert got.dtype == np.float64 and want.dtype == np.float64
        assert np.array_equal(bits(got), bits(want))
    assert sqdiff.subtract(value, 0.0) == rounded and sqdiff.subtract(x, value).tolist() == [-rounded] * 3


def test_python_ints_beyond_float64_in_sqdiff_dask():
    da = require("dask.array")
    import sqdiff.dask

    x = np.array([1.0, -2.0, 0.25, 8.0])
    lazy = da.from_array(x, chunks=2)
    for value in (10 ** 400, -F64_INF_EDGE, F64_INF_EDGE - 1):
        strong = np.array(exact.round_to_format(Fraction(value), "float64"))
        for name in ("subtract", "squared_difference", "sum_squared_difference", "mean_squared_difference"):
            got = getattr(sqdiff.dask, name)(lazy, value).compute()
            assert np.array_equal(bits(got), bits(getattr(sqdiff, name)(x, strong))), (name, value)
