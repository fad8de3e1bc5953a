"""sqdiff.quantized_squared_difference and sqdiff.quantized_subtract against an
independent integer oracle written here from SPEC section 9 (and LiteRT's reference
kernels it names): plain Python ints, element by element, never calling sqdiff.

Random configurations from fixed seeds, for each op and type: scales log-uniform over
1e-4..10, zero points with the type's extremes, both roundings, every activation, the
int16 power-of-two and general subtract paths, broadcasting, strided views. Then in
place and out=, errors that write nothing, and sqdiff.dask against the eager calls.
"""

import doctest
import math
import random
import struct
import tracemalloc

import numpy as np
import pytest

import sqdiff
import sqdiff._quantized

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
RANGES = {np.int8: (-128, 127), np.uint8: (0, 255), np.int16: (-32768, 32767)}
DTYPES = list(RANGES)
ACTIVATIONS = [None, "none", "relu", "relu6", "relu_n1_to_1"]
OPS = ["squared_difference", "subtract"]


class Refused(Exception):
    """The oracle's verdict that the call is an error (SPEC 9's list)."""


# --- the oracle: SPEC 9's primitives in Python ints ------------------------------------

def f32(x):
    """x rounded to float32 (to nearest even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def round_half_away(x):
    """std::round: to nearest, ties away from zero (exact for any finite double)."""
    magnitude = abs(x)
    whole = math.floor(magnitude)
    rounded = whole + (1 if magnitude - whole >= 0.5 else 0)  # magnitude - whole is exact
    return int(rounded) if x >= 0 else -int(rounded)


def srdhm(a, b):
    """gemmlowp's SaturatingRoundingDoublingHighMul on int32 values."""
    if a == b == INT32_MIN:
        return INT32_MAX
    product = a * b
    nudge = 2**30 if product >= 0 else 1 - 2**30
    total = product + nudge
    quotient = abs(total) // 2**31  # C++'s division truncates toward zero
    return quotient if total >= 0 else -quotient


def rdbpot(x, exponent):
    """gemmlowp's RoundingDivideByPOT: x / 2**exponent, to nearest, ties away from zero."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def quantize_multiplier(real, rounding):
    """TFLite's QuantizeMultiplier: (multiplier, shift) with real = multiplier * 2**(shift - 31)."""
    if real == 0.0:
        return 0, 0
    fraction, shift = math.frexp(real)
    multiplier = round_half_away(fraction * 2**31)  # exact: a double times a power of two
    if multiplier == 2**31:
        multiplier //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    if rounding == "single" and shift > 30:
        return 2**31 - 1, 30
    return multiplier, shift


def requantize(x, multiplier, rounding):
    """MultiplyByQuantizedMultiplier of the build: double rounding (SRDHM then RDBPOT,
    a left shift first for a shift above 0) or single rounding, in exact integers (SPEC 9:
    where TFLite-Micro's int32 product overflows, the product is taken in 64 bits and the
    clamp saturates the result)."""
    m, shift = multiplier
    if rounding == "single":
        total = 31 - shift
        return (x * m + (1 << (total - 1))) >> total
    return rdbpot(srdhm(x * 2 ** max(shift, 0), m), max(-shift, 0))


def checked_log2(scale):
    """TFLite's CheckedLog2 in float32: (is a power of two within 1e-3 in log2, the rounded log)."""
    x_log2 = f32(f32(math.log(scale)) * f32(1.0 / f32(math.log(2.0))))
    rounded = round_half_away(x_log2)
    return abs(f32(x_log2 - rounded)) < f32(1e-3), rounded


def activation_bounds(activation, scale, zero_point, qmin, qmax):
    """CalculateActivationRangeQuantized: zero_point + round(f / scale) in float32, clipped."""
    def quantize(f):
        quotient = f32(f / scale)  # a float32 division, correctly rounded like the double one rounded once
        return zero_point + round_half_away(quotient)

    if activation in (None, "none"):
        return qmin, qmax
    if activation == "relu":
        return max(qmin, quantize(0.0)), qmax
    if activation == "relu6":
        return max(qmin, quantize(0.0)), min(qmax, quantize(6.0))
    return max(qmin, quantize(-1.0)), min(qmax, quantize(1.0))


def check_quant(dtype, scale, zero_point):
    qmin, qmax = RANGES[dtype]
    if not (math.isfinite(scale) and scale > 0):
        raise Refused("scale")
    if dtype is np.int16 and zero_point != 0:
        raise Refused("int16 zero point")
    if not qmin <= zero_point <= qmax:
        raise Refused("zero point")


def oracle_function(op, dtype, a_quant, b_quant, out_quant, activation=None, pot_scale_int16=True,
                    rounding="double"):
    """The per-element function f(x, y) of one call, or Refused."""
    (sa, za), (sb, zb), (so, zo) = [(f32(s), z) for s, z in (a_quant, b_quant, out_quant)]
    for scale, zero_point in ((sa, za), (sb, zb), (so, zo)):
        check_quant(dtype, scale, zero_point)
    qmin, qmax = RANGES[dtype]
    twice = 2.0 * max(sa, sb)  # exact, as LiteRT's 2 * max of float32 scales
    if op == "squared_difference":
        if activation not in (None, "none"):
            raise Refused("activation")
        shift = 0 if dtype is np.int16 else 7
        ma = quantize_multiplier(sa / twice, rounding)
        mb = quantize_multiplier(sb / twice, rounding)
        mo = quantize_multiplier(twice * twice / (2 ** (2 * shift) * so), rounding)

        def squared_difference(x, y):
            ca = requantize((x - za) * 2**shift, ma, rounding)
            cb = requantize((y - zb) * 2**shift, mb, rounding)
            d = ca - cb
            raw = requantize(d * d, mo, rounding) + zo
            return min(qmax, max(qmin, raw))

        return squared_difference

    lo, hi = activation_bounds(activation, so, zo, qmin, qmax)
    if dtype is np.int16 and pot_scale_int16:
        logs = [checked_log2(s) for s in (sa, sb, so)]
        if all(is_pot for is_pot, _ in logs):
            ea, eb = logs[0][1] - logs[2][1], logs[1][1] - logs[2][1]
            if (ea != 0 and eb != 0) or ea > 0 or eb > 0:
                raise Refused("power-of-two scales")

            def sub16(x, y):
                raw = max(-32768, min(32767, rdbpot(x, -ea) - rdbpot(y, -eb)))
                return min(hi, max(lo, raw))

            return sub16
    shift = 15 if dtype is np.int16 else 20
    real_out = twice / (2**shift * so)
    if real_out >= 1.0:
        raise Refused("output multiplier")
    ma = quantize_multiplier(sa / twice, rounding)
    mb = quantize_multiplier(sb / twice, rounding)
    mo = quantize_multiplier(real_out, rounding)

    def subtract(x, y):
        ca = requantize((x - za) * 2**shift, ma, rounding)
        cb = requantize((y - zb) * 2**shift, mb, rounding)
        raw = requantize(ca - cb, mo, rounding) + zo
        return min(hi, max(lo, raw))

    return subtract


def oracle(function, a, b, shape, dtype):
    """function on every pair of elements of a and b broadcast (numpy rules) to shape."""
    a_full, b_full = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    result = np.empty(shape, dtype=dtype)
    for index in np.ndindex(*shape):
        result[index] = function(int(a_full[index]), int(b_full[index]))
    return result


# --- random configurations ------------------------------------------------------------

def random_scale(rng):
    return 10.0 ** rng.uniform(-4.0, 1.0)


def random_zero_point(rng, dtype):
    if dtype is np.int16:
        return 0
    qmin, qmax = RANGES[dtype]
    return rng.choice([qmin, qmax, 0, rng.randint(qmin, qmax), rng.randint(qmin, qmax)])


def random_shapes(rng):
    """Two shapes that broadcast (numpy rules), ranks 0..4, at most a few dozen elements."""
    rank = rng.randint(0, 4)
    shape = [rng.randint(1, 4) for _ in range(rank)]
    other = [1 if rng.random() < 0.3 else dim for dim in shape][rng.randint(0, rank):]
    return (tuple(shape), tuple(other)) if rng.random() < 0.5 else (tuple(other), tuple(shape))


def random_array(rng, nprng, dtype, shape):
    """Values over the whole type (extremes included), sometimes as a strided view
    (every other element, reversed) of a larger array rather than a dense one."""
    qmin, qmax = RANGES[dtype]
    layout = rng.choice(["dense", "strided", "reversed"])
    if layout == "strided" and shape:
        base = nprng.integers(qmin, qmax, size=tuple(2 * d for d in shape), dtype=dtype, endpoint=True)
        view = base[tuple(slice(None, None, 2) for _ in shape)]
    else:
        view = nprng.integers(qmin, qmax, size=shape, dtype=dtype, endpoint=True)
        if layout == "reversed" and shape:
            view = view[::-1]
    flat = view.reshape(-1) if view.flags.c_contiguous else None
    if flat is not None and flat.size >= 2:
        flat[0], flat[-1] = qmin, qmax
    return view


def random_quant(rng, dtype, power_of_two):
    if power_of_two:
        # Powers of two, some a hair off (CheckedLog2 still counts them), with the
        # shifts LiteRT accepts and, now and then, ones it refuses.
        out_log = rng.randint(-14, 3)
        a_log, b_log = out_log, out_log - rng.randint(0, 20)
        if rng.random() < 0.5:
            a_log, b_log = b_log, a_log
        if rng.random() < 0.1:
            a_log += rng.choice([1, -1])
        scales = [2.0**a_log, 2.0**b_log, 2.0**out_log]
        scales = [s * (1 + rng.choice([0.0, 0.0, 1e-5, -1e-5])) for s in scales]
        return [(s, 0) for s in scales]
    return [(random_scale(rng), random_zero_point(rng, dtype)) for _ in range(3)]


def random_call(rng, op, dtype):
    keywords = {"rounding": rng.choice(["double", "single"])}
    power_of_two = op == "subtract" and dtype is np.int16 and rng.random() < 0.5
    keywords["a_quant"], keywords["b_quant"], keywords["out_quant"] = random_quant(rng, dtype, power_of_two)
    if op == "subtract":
        keywords["activation"] = rng.choice(ACTIVATIONS)
        keywords["pot_scale_int16"] = rng.random() < 0.8
    return keywords


def eager(op):
    return sqdiff.quantized_subtract if op == "subtract" else sqdiff.quantized_squared_difference


CONFIGURATIONS = 300  # per op and type


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("op", OPS)
def test_random_configurations_match_the_oracle(op, dtype):
    rng = random.Random(f"{op}-{dtype.__name__}")
    nprng = np.random.default_rng(rng.randint(0, 2**32))
    computed = refused = 0
    for _ in range(CONFIGURATIONS):
        keywords = random_call(rng, op, dtype)
        shape_a, shape_b = random_shapes(rng)
        a, b = random_array(rng, nprng, dtype, shape_a), random_array(rng, nprng, dtype, shape_b)
        shape = np.broadcast_shapes(shape_a, shape_b)
        sentinel = np.full(shape, 7, dtype=dtype)
        out = sentinel.copy() if rng.random() < 0.3 else None
        try:
            function = oracle_function(op, dtype, **keywords)
        except Refused:
            with pytest.raises(sqdiff.Error):
                eager(op)(a, b, out=out, **keywords)
            if out is not None:
                assert np.array_equal(out, sentinel), keywords  # nothing written
            refused += 1
            continue
        result = eager(op)(a, b, out=out, **keywords)
        expected = oracle(function, a, b, shape, dtype)
        assert result.dtype == dtype and result.shape == shape
        assert np.array_equal(result, expected), (keywords, a, b, result, expected)
        if out is not None:
            assert result is out
        computed += 1
    assert computed >= CONFIGURATIONS * 0.8, (computed, refused)
    if op == "subtract" and dtype is np.int16:
        assert refused > 0  # the power-of-two refusals and the general path's multiplier limit


def test_every_activation_and_rounding_on_the_whole_int8_plane():
    """Every pair of int8 values (65536 elements) for each activation and rounding,
    at scales where the activations clip inside the type."""
    a = np.arange(-128, 128, dtype=np.int8).reshape(-1, 1)
    b = np.arange(-128, 128, dtype=np.int8).reshape(1, -1)
    for rounding in ("double", "single"):
        for activation in ACTIVATIONS:
            keywords = dict(a_quant=(0.02, -3), b_quant=(0.013, 11), out_quant=(0.021, -7), activation=activation,
                            rounding=rounding)
            expected = oracle(oracle_function("subtract", np.int8, **keywords), a, b, (256, 256), np.int8)
            assert np.array_equal(sqdiff.quantized_subtract(a, b, **keywords), expected), (rounding, activation)
        keywords = dict(a_quant=(0.02, -3), b_quant=(0.013, 11), out_quant=(0.005, -128), rounding=rounding)
        expected = oracle(oracle_function("squared_difference", np.int8, **keywords), a, b, (256, 256), np.int8)
        assert np.array_equal(sqdiff.quantized_squared_difference(a, b, **keywords), expected), rounding


def test_the_roundings_differ_somewhere_and_the_oracle_tells_them_apart():
    """A test of the test: single and double rounding give different results on
    some of these elements, and each call matches its own rounding's oracle."""
    a = np.arange(-128, 128, dtype=np.int8).reshape(-1, 1)
    b = np.arange(-128, 128, dtype=np.int8).reshape(1, -1)
    keywords = dict(a_quant=(0.0173, 5), b_quant=(0.0311, -9), out_quant=(0.0007, 0))
    results = {r: sqdiff.quantized_squared_difference(a, b, rounding=r, **keywords) for r in ("double", "single")}
    assert not np.array_equal(results["double"], results["single"])
    for rounding, result in results.items():
        function = oracle_function("squared_difference", np.int8, rounding=rounding, **keywords)
        assert np.array_equal(result, oracle(function, a, b, (256, 256), np.int8)), rounding


def test_every_int16_value_against_zero():
    """Every int16 x in (x - 0)**2, at an output scale found by searching for one where
    QuantizeMultiplier's rounding of the output multiplier (round half away, not
    truncation) decides four elements of the single-rounding result: a one-unit change
    in a 31-bit multiplier shows only on elements that sit within 2**-15 of a tie."""
    x = np.arange(-32768, 32768, dtype=np.int16)
    zero = np.int16([0])
    for rounding in ("double", "single"):
        keywords = dict(a_quant=(1.0, 0), b_quant=(1.0, 0), out_quant=(0.0004296651007327796, 0), rounding=rounding)
        expected = oracle(oracle_function("squared_difference", np.int16, **keywords), x, zero, x.shape, np.int16)
        assert np.array_equal(sqdiff.quantized_squared_difference(x, zero, **keywords), expected), rounding


def test_pdpd_and_none_broadcasting():
    a = np.arange(-60, 60, dtype=np.int8).reshape(2, 3, 4, 5)
    b = np.int8([[7, -8, 9, 100], [-128, 127, 0, 1], [5, 5, 5, 5]])
    keywords = dict(a_quant=(0.1, 3), b_quant=(0.07, -2), out_quant=(0.15, 1))
    function = oracle_function("subtract", np.int8, **keywords)
    result = sqdiff.quantized_subtract(a, b, broadcast="pdpd", broadcast_axis=1, **keywords)
    expected = oracle(function, a, b[None, :, :, None], a.shape, np.int8)
    assert np.array_equal(result, expected)
    same = np.flip(a, axis=2)
    assert np.array_equal(sqdiff.quantized_subtract(a, same, broadcast="none", **keywords),
                          oracle(function, a, same, a.shape, np.int8))
    with pytest.raises(sqdiff.Error, match="quantized_subtract: "):
        sqdiff.quantized_subtract(a, b, broadcast="none", **keywords)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
def test_in_place_into_a_or_b(dtype):
    zero_point = 0 if dtype is np.int16 else RANGES[dtype][0] + 3
    keywords = dict(a_quant=(0.05, zero_point), b_quant=(0.03, zero_point), out_quant=(0.06, zero_point))
    rng = np.random.default_rng(5)
    qmin, qmax = RANGES[dtype]
    a = rng.integers(qmin, qmax, size=(6, 7), dtype=dtype, endpoint=True)
    b = rng.integers(qmin, qmax, size=(6, 7), dtype=dtype, endpoint=True)
    for op in OPS:
        expected = oracle(oracle_function(op, dtype, **keywords), a, b, a.shape, dtype)
        into_a, into_b = a.copy(), b.copy()
        assert eager(op)(into_a, b, out=into_a, **keywords) is into_a
        assert eager(op)(a, into_b, out=into_b, **keywords) is into_b
        assert np.array_equal(into_a, expected) and np.array_equal(into_b, expected), op
        # A strided, reversed view of a as out, a itself being that view (exactly the input).
        base = a.copy()
        view = base.T[::-1]
        expected_view = oracle(oracle_function(op, dtype, **keywords), view.copy(), b.T, view.shape, dtype)
        eager(op)(view, b.T, out=view, **keywords)
        assert np.array_equal(view, expected_view), op


def test_out_strided_and_byte_swapped():
    keywords = dict(a_quant=(0.01, 0), b_quant=(0.02, 0), out_quant=(0.015, 0))
    a = np.arange(-3000, 3000, 100, dtype=np.int16).reshape(6, 10)
    b = np.int16([300, -200, 100, 0, 5, -5, 7, 9, 11, 13])
    function = oracle_function("subtract", np.int16, **keywords)
    expected = oracle(function, a, b, a.shape, np.int16)
    strided = np.zeros((12, 20), dtype=np.int16)
    out = strided[::2, ::-2]
    assert sqdiff.quantized_subtract(a, b, out=out, **keywords) is out
    assert np.array_equal(out, expected)
    assert not strided[1::2].any()  # the rows between were not touched
    swapped = np.zeros((6, 10), dtype=">i2")
    sqdiff.quantized_subtract(a.astype(">i2"), b.astype(">i2"), out=swapped, **keywords)
    assert swapped.dtype == np.dtype(">i2") and np.array_equal(swapped, expected)


def test_strided_inputs_are_read_in_place():
    """Zero-copy: a strided view of 4 MB is read where it is; the call allocates
    nothing near its size (NumPy reports its allocations to tracemalloc)."""
    base = np.arange(8_000_000, dtype=np.int64).astype(np.int8).reshape(4000, 2000)
    a, b = base[::2], base[1::2]  # 2000 x 2000, every other row
    out = np.empty(a.shape, dtype=np.int8)
    keywords = dict(a_quant=(0.1, 0), b_quant=(0.1, 0), out_quant=(0.2, 0))
    tracemalloc.start()
    try:
        sqdiff.quantized_subtract(a, b, out=out, threads=1, **keywords)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    rows = [0, 1, 999, 1999]
    function = oracle_function("subtract", np.int8, **keywords)
    assert np.array_equal(out[rows], oracle(function, a[rows], b[rows], (4, 2000), np.int8))


def test_threads_do_not_change_the_result():
    rng = np.random.default_rng(11)
    a = rng.integers(-128, 127, size=(150, 200), dtype=np.int8, endpoint=True)
    b = rng.integers(-128, 127, size=(200,), dtype=np.int8, endpoint=True)
    keywords = dict(a_quant=(0.0371, -17), b_quant=(0.0213, 40), out_quant=(0.0005, -100))
    function = oracle_function("squared_difference", np.int8, **keywords)
    expected = oracle(function, a, b, a.shape, np.int8)
    for threads in (None, 1, 2, 7):
        assert np.array_equal(sqdiff.quantized_squared_difference(a, b, threads=threads, **keywords), expected)


def test_empty_and_zero_dimensional():
    keywords = dict(a_quant=(0.5, 1), b_quant=(0.25, 2), out_quant=(0.125, 3))
    empty = sqdiff.quantized_subtract(np.zeros((0, 3), np.uint8), np.zeros(3, np.uint8), **keywords)
    assert empty.shape == (0, 3) and empty.dtype == np.uint8
    scalar = sqdiff.quantized_subtract(np.uint8(9), np.uint8(6), **keywords)
    # a = 0.5 * 8 = 4, b = 0.25 * 4 = 1: 3 = 0.125 * (27 - 3)
    assert scalar.shape == () and scalar.dtype == np.uint8 and int(scalar) == 27


# --- errors: sqdiff.Error (or TypeError for the Python types of the arguments), nothing written

GOOD = dict(a_quant=(0.5, 1), b_quant=(0.25, -2), out_quant=(0.125, 3))


def error_cases():
    x = np.int8([1, 2, 3])
    i16 = np.int16([1, 2, 3])
    good16 = dict(a_quant=(0.5, 0), b_quant=(0.25, 0), out_quant=(0.125, 0))
    both = [
        (x, x, dict(GOOD, a_quant=(0.0, 1)), "the scale of a is 0; a scale must be a positive finite float32"),
        (x, x, dict(GOOD, b_quant=(-1.0, 1)), "the scale of b is -1"),
        (x, x, dict(GOOD, out_quant=(float("inf"), 1)), "the scale of out is inf"),
        (x, x, dict(GOOD, out_quant=(float("nan"), 1)), "the scale of out is nan"),
        (x, x, dict(GOOD, a_quant=(1e-50, 1)), "the scale of a_quant 1e-50 is not a positive finite float32"),
        (x, x, dict(GOOD, b_quant=(1e39, 1)), "the scale of b_quant 1e+39 is not a positive finite float32"),
        (x, x, dict(GOOD, out_quant=(0.1, 128)), "the zero point of out is 128, outside the range [-128, 127] of i8"),
        (x, x, dict(GOOD, a_quant=(0.1, 2**40)), "the zero point of a is 1099511627776, outside int32"),
        (i16, i16, dict(good16, b_quant=(0.1, 1)), "int16 tensors are quantized symmetrically (zero point 0)"),
        (x, np.uint8([1, 2, 3]), GOOD, "input types differ: a is i8, b is u8 (no implicit conversion)"),
        (np.int32([1]), np.int32([1]), GOOD, "a has type i32; quantized tensors are i8, u8 or i16"),
        (np.float32([1]), x, GOOD, "a has type f32; quantized tensors are i8, u8 or i16"),
        ([1, 2, 3], x, GOOD, "a has type i64"),  # no conversion of lists either
        (x, x, dict(GOOD, out=np.zeros(3, np.int16)), "output type i16 differs from input type i8"),
        (x, x, dict(GOOD, out=np.zeros(3, np.float64)), "out has type f64"),
        (x, x, dict(GOOD, out=np.zeros(4, np.int8)), "output shape [4] differs"),
        (x, np.int8([1, 2]), GOOD, "cannot broadcast [3] with [2] (numpy)"),
        (x, x, dict(GOOD, rounding="banker"), "unknown rounding 'banker'; use 'double'"),
        (x, x, dict(GOOD, broadcast="bidirectional"), "unknown broadcast mode 'bidirectional'"),
        (x, x, dict(GOOD, threads=-1), "threads is -1"),
    ]
    subtract_only = [
        (x, x, dict(GOOD, activation="sigmoid"), "unknown activation 'sigmoid'; use None, 'none', 'relu'"),
        (i16, i16, dict(a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(1e-7, 0)),
         "the output multiplier 2 max(scale_a, scale_b) / (2^15 scale_out) is 1 or more"),
        (x, x, dict(a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(1e-7, 0)),
         "the output multiplier 2 max(scale_a, scale_b) / (2^20 scale_out) is 1 or more"),
        (i16, i16, dict(a_quant=(2.0**-10, 0), b_quant=(2.0**-8, 0), out_quant=(2.0**-10, 0)),
         "int16 scales that are powers of two (a 2^-10, b 2^-8, out 2^-10)"),
    ]
    for a, b, keywords, message in both:
        yield "squared_difference", a, b, keywords, message
        yield "subtract", a, b, keywords, message
    for a, b, keywords, message in subtract_only:
        yield "subtract", a, b, keywords, message


@pytest.mark.parametrize("op, a, b, keywords, message", list(error_cases()))
def test_errors_name_the_problem_and_write_nothing(op, a, b, keywords, message):
    keywords = dict(keywords)
    out = keywords.pop("out", None)
    if out is None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
        out = np.full(a.shape, 99, dtype=a.dtype)  # a right shape and type: written if anything were
    before = None if out is None else out.copy()
    inputs = [np.copy(a), np.copy(b)]
    with pytest.raises(sqdiff.Error) as raised:
        eager(op)(a, b, out=out, **keywords)
    assert str(raised.value).startswith(f"quantized_{op}: "), raised.value
    assert message in str(raised.value), raised.value
    if out is not None:
        assert np.array_equal(out, before)
    assert np.array_equal(a, inputs[0]) and np.array_equal(b, inputs[1])


def test_the_power_of_two_refusal_is_lifted_by_the_general_path():
    i16 = np.int16([1000, -1000])
    keywords = dict(a_quant=(2.0**-10, 0), b_quant=(2.0**-8, 0), out_quant=(2.0**-10, 0))
    result = sqdiff.quantized_subtract(i16, i16, pot_scale_int16=False, **keywords)
    function = oracle_function("subtract", np.int16, pot_scale_int16=False, **keywords)
    assert np.array_equal(result, oracle(function, i16, i16, (2,), np.int16))


def test_squared_difference_has_no_activation_keyword():
    x = np.int8([1])
    with pytest.raises(TypeError, match="activation"):
        sqdiff.quantized_squared_difference(x, x, activation="relu", **GOOD)


@pytest.mark.parametrize("quant, message", [
    (None, "a_quant must be a (scale, zero_point) tuple such as (0.5, -3), not NoneType"),
    ({"scale": 0.5, "zero_point": 0}, "a_quant must be a (scale, zero_point) tuple such as (0.5, -3), not dict"),
    ((0.5,), "a_quant must be a (scale, zero_point) tuple such as (0.5, -3), not a tuple of length 1"),
    ((0.5, 0, 1), "not a tuple of length 3"),
    (("0.5", 0), "scale of a_quant must be a real number, not str"),
    ((True, 0), "scale of a_quant must be a real number, not bool"),
    ((0.5, 0.0), "zero point of a_quant must be an int, not float"),
    ((0.5, False), "zero point of a_quant must be an int, not bool"),
])
def test_quantization_that_is_not_a_scale_and_zero_point_pair_is_a_type_error(quant, message):
    x = np.int8([1])
    out = np.full(1, 99, np.int8)
    for op in OPS:
        with pytest.raises(TypeError) as raised:
            eager(op)(x, x, a_quant=quant, b_quant=(0.5, 0), out_quant=(0.5, 0), out=out)
        assert message in str(raised.value)
    assert out[0] == 99


def test_pot_scale_int16_must_be_a_bool():
    x = np.int16([1])
    keywords = dict(a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0))
    with pytest.raises(TypeError, match="pot_scale_int16 must be a bool, not str"):
        sqdiff.quantized_subtract(x, x, pot_scale_int16="no", **keywords)
    assert sqdiff.quantized_subtract(x, x, pot_scale_int16=np.False_, **keywords)[0] == 0


def test_scales_and_zero_points_of_numpy_types_and_lists_are_taken():
    """LiteRT reports (float, int); NumPy scalars (as in its quantization_parameters
    arrays) and a list of two are the same parameters. A scale is rounded to float32."""
    x = np.int8([50, -50])
    reference = sqdiff.quantized_subtract(x, x[::-1], a_quant=(0.1, 3), b_quant=(0.2, -1), out_quant=(0.3, 2))
    same = sqdiff.quantized_subtract(x, x[::-1], a_quant=(np.float32(0.1), np.int32(3)),
                                     b_quant=[np.float64(0.2), np.int64(-1)], out_quant=(0.3, np.int8(2)))
    assert np.array_equal(reference, same)
    nearly = sqdiff.quantized_subtract(x, x[::-1], a_quant=(0.1 + 1e-12, 3), b_quant=(0.2, -1), out_quant=(0.3, 2))
    assert np.array_equal(reference, nearly)


def test_docstring_examples():
    result = doctest.testmod(sqdiff._quantized, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted >= 10 and result.failed == 0, result
    for name in ("quantized_squared_difference", "quantized_subtract"):
        assert name in sqdiff.__all__
        assert ">>> " in getattr(sqdiff, name).__doc__


# --- sqdiff.dask --------------------------------------------------------------------------

@pytest.mark.parametrize("op", OPS)
def test_dask_matches_eager_for_several_chunkings(op):
    pytest.importorskip("dask")
    import dask.array as da

    import sqdiff.dask

    rng = random.Random(f"dask-{op}")
    nprng = np.random.default_rng(3)
    lazy = getattr(sqdiff.dask, f"quantized_{op}")
    for dtype in DTYPES:
        qmin, qmax = RANGES[dtype]
        a = nprng.integers(qmin, qmax, size=(7, 5, 6), dtype=dtype, endpoint=True)
        b = nprng.integers(qmin, qmax, size=(5, 1), dtype=dtype, endpoint=True)
        for _ in range(4):
            keywords = random_call(rng, op, dtype)
            try:
                oracle_function(op, dtype, **keywords)
            except Refused:
                with pytest.raises(sqdiff.Error):
                    lazy(da.from_array(a, chunks=3), b, **keywords)  # when the graph is built
                continue
            expected = eager(op)(a, b, **keywords)
            for chunks in ((7, 5, 6), (3, 2, 4), (1, 5, 1), (4, 3, 6)):
                result = lazy(da.from_array(a, chunks=chunks), da.from_array(b, chunks=(2, 1)), **keywords)
                assert result.dtype == dtype and result.shape == expected.shape
                computed = result.compute()
                assert computed.dtype == dtype and np.array_equal(computed, expected), (dtype, chunks, keywords)
            pdpd = lazy(da.from_array(a, chunks=(2, 5, 3)), b, broadcast="pdpd", broadcast_axis=1, **keywords)
            assert np.array_equal(pdpd.compute(),
                                  eager(op)(a, b, broadcast="pdpd", broadcast_axis=1, **keywords)), (dtype, keywords)


def test_dask_checks_when_the_graph_is_built():
    pytest.importorskip("dask")
    import dask.array as da

    import sqdiff.dask

    a = da.from_array(np.int8([[1, 2, 3], [4, 5, 6]]), chunks=1)
    with pytest.raises(sqdiff.Error, match="input types differ: a is i8, b is u8"):
        sqdiff.dask.quantized_subtract(a, np.uint8([1, 2, 3]), **GOOD)
    with pytest.raises(sqdiff.Error, match="cannot broadcast"):
        sqdiff.dask.quantized_squared_difference(a, np.int8([1, 2]), **GOOD)
    with pytest.raises(sqdiff.Error, match="unknown activation"):
        sqdiff.dask.quantized_subtract(a, a, activation="tanh", **GOOD)
    with pytest.raises(TypeError, match="b_quant must be a"):
        sqdiff.dask.quantized_subtract(a, a, a_quant=(0.5, 0), b_quant=0.5, out_quant=(0.5, 0))
    with pytest.raises(sqdiff.Error, match="numpy.ma.MaskedArray"):
        sqdiff.dask.quantized_squared_difference(a, np.ma.masked_array(np.int8([1, 2, 3])), **GOOD)
    # The eager functions refuse Dask arrays, naming these.
    with pytest.raises(sqdiff.Error, match="use sqdiff.dask.quantized_subtract"):
        sqdiff.quantized_subtract(a, a, **GOOD)


# --- type hints -----------------------------------------------------------------------------

TYPED_USE = """\
from typing import Any

import numpy as np
from numpy.typing import NDArray

import sqdiff

x = np.zeros(3, np.int8)
r: NDArray[Any] = sqdiff.quantized_subtract(x, x, a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0),
                                            activation="relu", pot_scale_int16=False, rounding="single", threads=2)
s: NDArray[Any] = sqdiff.quantized_squared_difference(x, x, a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0),
                                                      out=x, broadcast="pdpd", broadcast_axis=0)
sqdiff.quantized_subtract(x, x, a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0), activation="sigmoid")
sqdiff.quantized_squared_difference(x, x, a_quant=0.5, b_quant=(0.5, 0), out_quant=(0.5, 0))
sqdiff.quantized_squared_difference(x, x, a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(0.5, 0), rounding="up")
"""


def test_mypy_sees_the_quantized_signatures(tmp_path):
    pytest.importorskip("mypy")
    from test_typing import run_mypy

    result = run_mypy(tmp_path, TYPED_USE)
    lines = [line for line in result.stdout.splitlines() if ": error:" in line]
    # One error on each misuse line (13-15: an unknown activation, a bare scale, an unknown rounding), none elsewhere.
    assert sorted({int(line.split(":")[1]) for line in lines}) == [13, 14, 15], result.stdout + result.stderr
