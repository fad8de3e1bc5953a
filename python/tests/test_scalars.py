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
    # SPEC 6's "a float scalar with an integer array is an error" is superseded by NumPy 2's rule
    # (docs/SPEC_DECISIONS.md): float64, as the tests below check in full.
    got = sqdiff.subtract(np.array([1], dtype=np.int32), 0.5)
    assert got.dtype == np.float64 and got.tolist() == [0.5]
    got = sqdiff.mean_squared_difference(1.0, np.array([2 ** 64 - 1], dtype=np.uint64))
    assert got.dtype == np.float64 and got == (1.0 - float(2 ** 64 - 1)) ** 2  # the uint64 rounded to 2.0**64
    # Nothing written when refused.
    out = np.array([7], dtype=np.uint8)
    with pytest.raises(sqdiff.Error):
        sqdiff.subtract(np.array([1], dtype=np.uint8), -1, out=out)
    assert out.tolist() == [7]


# --- a Python float beside integer arrays: float64, as in NumPy 2 (NEP 50) ---------------------

INTEGER_NAMES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
# Exact and inexact in float64, beyond every integer type, a signed zero and the specials.
FLOATS_BESIDE_INTEGERS = [0.5, -0.1, 3.0, 1e300, -0.0, 2.0 ** 64, math.inf, -math.inf, math.nan]


def integer_extremes(name):
    """The type's extremes and its values next to float64's 2**53 (int64 and uint64 values that
    float64 must round: the array is converted as NumPy's astype converts it)."""
    info = np.iinfo(name)
    values = [int(info.min), int(info.min) + 1, 0, 1, 7, int(info.max) - 1, int(info.max)]
    values += [v for v in (2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 63 + 1025) if info.min <= v <= info.max]
    return np.array(values, dtype=name)


def same_float64_bits(got, want):
    """Float64 results equal bit for bit (NaN payloads are not promised)."""
    assert got.dtype == np.float64 and want.dtype == np.float64 and got.shape == want.shape, (got, want)
    nan = np.isnan(got) & np.isnan(want)
    assert np.array_equal(np.where(nan, 0, got.view(np.uint64)), np.where(nan, 0, want.view(np.uint64))), (got, want)


@pytest.mark.parametrize("name", INTEGER_NAMES)
def test_a_python_float_beside_an_integer_array_computes_in_float64(name):
    """NumPy 2's result_type(integer array, float) is float64: the array converted to float64 as
    NumPy converts it, the scalar a float64, both orders (also `0.5 - x`)."""
    x = integer_extremes(name)
    wide = x.astype(np.float64)
    for scalar in FLOATS_BESIDE_INTEGERS:
        s = np.float64(scalar)
        with np.errstate(all="ignore"):
            want = {"subtract": (wide - s, s - wide), "squared_difference": ((wide - s) * (wide - s),
                                                                           (s - wide) * (s - wide))}
            numpy_2 = {"subtract": (x - scalar, scalar - x), "squared_difference": ((x - scalar) ** 2,
                                                                                  (scalar - x) ** 2)}
        for op, (forward, backward) in want.items():
            same_float64_bits(getattr(sqdiff, op)(x, scalar), forward)
            same_float64_bits(getattr(sqdiff, op)(scalar, x), backward)
            if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # NumPy 2 itself, NEP 50
                assert np.result_type(x, scalar) == np.float64
                same_float64_bits(getattr(sqdiff, op)(x, scalar), numpy_2[op][0])
                same_float64_bits(getattr(sqdiff, op)(scalar, x), numpy_2[op][1])
        # The shortcut of the compiled part (0-d and large arrays take the same rule).
        same_float64_bits(sqdiff.squared_difference(x[1], scalar), want["squared_difference"][0][1])


def test_a_python_float_beside_a_large_integer_array_is_converted_in_blocks():
    """More than one block of _promotion.CHUNK: the block-wise conversion of two dtypes."""
    x = np.arange(-150_000, 150_000, 3, dtype=np.int32).reshape(100, 1000)
    out = np.empty((100, 1000))
    got = sqdiff.squared_difference(0.1, x, out=out)
    assert got is out
    same_float64_bits(got, (0.1 - x.astype(np.float64)) ** 2)
    same_float64_bits(sqdiff.subtract(x, 0.1), x.astype(np.float64) - 0.1)


@pytest.mark.parametrize("mean", [False, True], ids=["sum", "mean"])
@pytest.mark.parametrize("name", INTEGER_NAMES)
def test_reductions_of_an_integer_array_and_a_python_float_are_float64(name, mean):
    """The inputs float64, the default output float64, each result the exact value rounded once."""
    function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
    x = integer_extremes(name)[:6].reshape(2, 3)
    wide = x.astype(np.float64)
    for scalar in (0.1, -2.5, 1e300):
        for axis in (None, 0, 1):
            got = function(x, scalar, axis)
            want = exact.reduce(wide, np.float64(scalar), "float64", axis=axis, mean=mean)
            assert got.dtype == np.float64 and np.array_equal(bits(got), bits(want)), (scalar, axis)
            got = function(scalar, x, axis)
            want = exact.reduce(np.float64(scalar), wide, "float64", axis=axis, mean=mean)
            assert got.dtype == np.float64 and np.array_equal(bits(got), bits(want)), (scalar, axis)
        got = function(x, scalar, dtype=np.float32)  # float64 inputs may give float32
        want = exact.reduce(wide, np.float64(scalar), "float64", mean=mean, out_name="float32")
        assert got.dtype == np.float32 and bits(got) == bits(want)


def test_gradients_of_integer_arrays_and_a_python_float_are_float64():
    x = np.array([[-3, 0, 7], [120, -128, 1]], dtype=np.int8)
    wide = x.astype(np.float64)
    got = sqdiff.squared_difference_backward(x, 0.1, 1.0)
    want = exact.squared_difference_backward(wide, np.float64(0.1), np.ones(x.shape), "float64")
    for g, w in zip(got, want):
        same_float64_bits(g, w)
    got = sqdiff.mean_squared_difference_backward(0.3, x)
    want = exact.squared_difference_backward(np.float64(0.3), wide, None, "float64", mean=True)
    for g, w in zip(got, want):
        same_float64_bits(g, w)
    # Two integer dtypes and a float: numpy.result_type(int8, uint8, 0.5) is float64 as well.
    y = np.array([255, 0, 3], dtype=np.uint8)
    got = sqdiff.squared_difference_backward(x, y, 0.5)
    want = exact.squared_difference_backward(wide, y.astype(np.float64), np.full(x.shape, 0.5), "float64")
    for g, w in zip(got, want):
        same_float64_bits(g, w)


def test_out_and_dtype_beside_a_python_float_and_an_integer_array():
    for size in (5, 300_000):  # one call, and the block-wise path (out= of another dtype: one call too)
        x = np.arange(size, dtype=np.int32)
        out = np.full(size, 7, dtype=np.int32)
        with pytest.raises(sqdiff.Error, match=r"^squared_difference: output type i32 differs from input type f64 "
                                               r"\(the inputs' int32 and a Python float promoted to float64, as "
                                               r"NumPy 2 promotes a Python scalar \(NEP 50\)\)$"):
            sqdiff.squared_difference(x, 0.5, out=out)
        with pytest.raises(sqdiff.Error, match=r"^subtract: output type i32 differs from input type f64 \(the "
                                               r"inputs' a Python float and int32 promoted to float64"):
            sqdiff.subtract(0.5, x, out=out)
        assert (out == 7).all()
    out = np.full((), 7, dtype=np.int64)
    with pytest.raises(sqdiff.Error, match=r"^sum_squared_difference: output type i64 is not one for f64 inputs "
                                           r"\(f64 or f32\) \(the inputs' int32 and a Python float promoted to "
                                           r"float64, as NumPy 2 promotes a Python scalar \(NEP 50\)\)$"):
        sqdiff.sum_squared_difference(x, 0.5, out=out)
    assert out == 7
    # dtype= keeps an element-wise call in the type it names: a float cannot be int32.
    with pytest.raises(sqdiff.Error, match=r"^subtract: the Python float 0.5 cannot be computed in int32, the "
                                           r"dtype= asked for: NumPy 2 computes a float beside integers in "
                                           r"float64; drop dtype= to compute in float64, or pass an int$"):
        sqdiff.subtract(x, 0.5, dtype=np.int32)
    with pytest.raises(sqdiff.Error, match=r"^subtract: a has dtype int32, but dtype=float64 was asked for"):
        sqdiff.subtract(x, 0.5, dtype=np.float64)  # dtype= checks, never converts
    with pytest.raises(sqdiff.Error, match=r"the Python float 0.5 cannot be computed in int32"):
        sqdiff.squared_difference(1, 0.5, dtype=np.int32)


def test_a_python_float_beside_bool_or_quantized_integers_stays_an_error():
    """bool arrays stay unsupported (NumPy would give float64); the quantized functions take
    int8/uint8/int16 tensors of one type, never a float."""
    flags = np.array([True, False])
    with pytest.raises(sqdiff.Error, match=r"^subtract: unsupported dtype of a: bool"):
        sqdiff.subtract(flags, 0.5)
    with pytest.raises(sqdiff.Error, match=r"unsupported dtype of b: bool"):
        sqdiff.sum_squared_difference(0.5, flags)
    q = np.array([1, 2], dtype=np.int8)
    quant = dict(a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0))
    with pytest.raises(sqdiff.Error, match=r"^quantized_squared_difference: b has type f64; quantized tensors are "
                                           r"i8, u8 or i16$"):
        sqdiff.quantized_squared_difference(q, 0.5, **quant)
    with pytest.raises(sqdiff.Error, match=r"^quantized_subtract: a has type f64; quantized tensors are i8, u8 or "
                                           r"i16$"):
        sqdiff.quantized_subtract(0.5, q, **quant)


def test_a_python_float_beside_an_integer_dask_array_is_float64_lazily():
    """sqdiff.dask's dtype is the eager call's when the graph is built, and its values the
    eager ones."""
    da = require("dask.array")
    import sqdiff.dask

    x = integer_extremes("int64")[:6].reshape(2, 3)
    lazy = da.from_array(x, chunks=(1, 2))
    for name in ("subtract", "squared_difference", "sum_squared_difference", "mean_squared_difference"):
        for a, b, eager_a, eager_b in ((lazy, 0.1, x, 0.1), (-2.5, lazy, -2.5, x)):
            got = getattr(sqdiff.dask, name)(a, b)
            assert got.dtype == np.float64, name
            same_float64_bits(got.compute(), getattr(sqdiff, name)(eager_a, eager_b))


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
            # A Python float beside integers is float64 (NEP 50), the integer array left to promotion.
            want = np.dtype(np.float64) if isinstance(scalar, float) and x.dtype.kind in "iu" else x.dtype
            if isinstance(slow, str):
                assert fast == slow, (scalar, order)
            else:
                assert fast.dtype == slow.dtype == want and fast.tobytes() == slow.tobytes(), (scalar, order)


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
