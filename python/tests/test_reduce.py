"""sum_squared_difference and mean_squared_difference (SPEC section 7) against the exact oracle.

Every float result must equal, bit for bit, the exact value rounded once
(exact.py); integer sums must equal Python's exact integers and NumPy's int64
arithmetic where that cannot overflow.
"""

import math

import numpy as np
import pytest

import exact
import sqdiff
from support import DTYPE_NAMES, dtype_keyword, storage

FLOATS = ["float16", "bfloat16", "float32", "float64"]
REDUCTIONS = {"sum": sqdiff.sum_squared_difference, "mean": sqdiff.mean_squared_difference}


def assert_same_bits(got, want):
    assert isinstance(got, np.ndarray), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind == "f":
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        nan = np.isnan(got) & np.isnan(want)  # NaN payloads are not promised
        assert np.array_equal(np.where(nan, 0, got.view(width)), np.where(nan, 0, want.view(width))), (got, want)
    else:
        assert np.array_equal(got, want), (got, want)


def random_values(rng, dtype_name, shape, wide=True):
    """Random values of a type: floats of mixed magnitudes (some subnormal, some
    repeated so that sums cancel and tie), integers over the whole range (or a
    range whose sums fit int64/uint64 when `wide` is False)."""
    size = math.prod(shape)
    if dtype_name in FLOATS:
        precision, emin, emax = exact.FORMATS[dtype_name]
        exponent_span = min(emax, 30) if dtype_name != "float16" else 6
        mantissas = rng.integers(-(2 ** min(precision, 20)), 2 ** min(precision, 20), size)
        exponents = rng.integers(-exponent_span, exponent_span, size) - min(precision, 20)
        values = np.ldexp(mantissas.astype(np.float64), exponents)
        if size > 3:
            values[rng.integers(0, size)] = np.ldexp(1.0, emin - 2)  # a subnormal
        if dtype_name == "bfloat16":
            f32 = values.astype(np.float32)
            return (f32.view(np.uint32) >> np.uint32(16)).astype(np.uint16).reshape(shape)  # truncation: exact bits
        return values.astype(dtype_name).reshape(shape)
    info = np.iinfo(dtype_name)
    if not wide and info.bits >= 32:  # sums of squares that fit int64/uint64
        low, high = (-(2 ** 24), 2 ** 24) if info.min < 0 else (0, 2 ** 25)
    else:
        low, high = int(info.min), int(info.max)
    return rng.integers(low, high, size, dtype=dtype_name, endpoint=True).reshape(shape)


AXES_CASES = [None, 0, -1, (0, 2), (2, 0), (), (1,), (-3, -2, -1)]


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
@pytest.mark.parametrize("kind", ["sum", "mean"])
def test_random_against_exact_oracle(dtype_name, kind):
    rng = np.random.default_rng(1300 + DTYPE_NAMES.index(dtype_name) * 2 + (kind == "mean"))
    function = REDUCTIONS[kind]
    keyword = dtype_keyword(dtype_name)
    for case in range(24):
        axis = AXES_CASES[case % len(AXES_CASES)]
        keepdims = case % 3 == 0
        a = random_values(rng, dtype_name, (3, 4, 5), wide=False)
        b = random_values(rng, dtype_name, (4, 1) if case % 2 else (3, 4, 5), wide=False)
        want = exact.reduce(a, b, dtype_name, axis, keepdims, kind == "mean")
        got = function(a, b, axis, keepdims=keepdims, dtype=keyword)
        assert_same_bits(got, want)


@pytest.mark.parametrize("dtype_name", FLOATS)
@pytest.mark.parametrize("kind", ["sum", "mean"])
@pytest.mark.parametrize("out_name", ["float32", "float64"])
def test_wider_float_outputs(dtype_name, kind, out_name):
    rng = np.random.default_rng(1400 + FLOATS.index(dtype_name))
    a = random_values(rng, dtype_name, (6, 7))
    b = random_values(rng, dtype_name, (7,))
    want = exact.reduce(a, b, dtype_name, 1, False, kind == "mean", out_name)
    if dtype_name == "bfloat16":  # dtype= marks the bits; out's dtype picks the output type
        got = REDUCTIONS[kind](a, b, axis=1, dtype="bfloat16", out=np.empty(6, dtype=out_name))
    else:
        got = REDUCTIONS[kind](a, b, axis=1, dtype=out_name)
    assert_same_bits(got, want)


@pytest.mark.parametrize("dtype_name", ["int8", "int32", "uint16", "uint64"])
def test_integer_outputs_as_float(dtype_name):
    rng = np.random.default_rng(1450)
    a = random_values(rng, dtype_name, (5, 9))
    b = random_values(rng, dtype_name, (5, 9))
    for kind, out_name in [("sum", "float64"), ("mean", "float32"), ("mean", "float64")]:
        want = exact.reduce(a, b, dtype_name, -1, False, kind == "mean", out_name)
        assert_same_bits(REDUCTIONS[kind](a, b, axis=-1, dtype=out_name), want)


@pytest.mark.parametrize("dtype_name", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_integer_sums_equal_numpy_int64(dtype_name):
    """Narrow integers' exact sums fit int64 arithmetic, so NumPy is an exact second oracle."""
    rng = np.random.default_rng(1500)
    a = random_values(rng, dtype_name, (8, 3, 6), wide=dtype_name != "int32" and dtype_name != "uint32")
    b = random_values(rng, dtype_name, (3, 1), wide=dtype_name != "int32" and dtype_name != "uint32")
    d = a.astype(np.int64) - b.astype(np.int64)
    want = (d * d).sum(axis=(0, 2)).astype(np.int64 if dtype_name.startswith("int") else np.uint64)
    assert_same_bits(sqdiff.sum_squared_difference(a, b, axis=(0, 2)), want)
    assert sqdiff.mean_squared_difference(a, b, axis=(0, 2)).tolist() == [
        exact.round_to_format(exact.Fraction(int(s), 48), "float64") for s in want.tolist()]


@pytest.mark.parametrize("dtype_name", FLOATS + ["int16", "uint32", "int64"])
def test_layouts_give_the_same_bits(dtype_name):
    """Reversed, strided, transposed and broadcast views of the same values; threads 1, 2, 3, 7."""
    rng = np.random.default_rng(1600)
    a = random_values(rng, dtype_name, (6, 8, 5), wide=False)
    b = random_values(rng, dtype_name, (6, 8, 5), wide=False)
    keyword = dtype_keyword(dtype_name)
    for kind, function in REDUCTIONS.items():
        for axis in [None, 1, (0, 2)]:
            want = exact.reduce(a, b, dtype_name, axis, False, kind == "mean")
            big_a = np.zeros((12, 8, 15), dtype=a.dtype)
            big_a[::2, :, ::3] = a
            views = [
                (a[::-1, ::-1][::-1, ::-1], b),
                (big_a[::2, :, ::3], b),
                (np.ascontiguousarray(a.transpose(2, 0, 1)).transpose(1, 2, 0), np.asfortranarray(b)),
            ]
            for va, vb in views:
                for threads in [1, 2, 3, 7]:
                    assert_same_bits(function(va, vb, axis, dtype=keyword, threads=threads), want)


@pytest.mark.parametrize("dtype_name", ["float32", "int32", "bfloat16"])
def test_broadcast_modes(dtype_name):
    rng = np.random.default_rng(1700)
    keyword = dtype_keyword(dtype_name)
    a = random_values(rng, dtype_name, (4, 3, 5), wide=False)
    b = random_values(rng, dtype_name, (3, 1), wide=False)
    for kind, function in REDUCTIONS.items():
        got = function(a, b, (0, 1), broadcast="pdpd", broadcast_axis=1, dtype=keyword)
        assert_same_bits(got, exact.reduce(a, b, dtype_name, (0, 1), False, kind == "mean",
                                           broadcast="pdpd", broadcast_axis=1))
        c = random_values(rng, dtype_name, (4, 3, 5), wide=False)
        got = function(a, c, -1, keepdims=True, broadcast="none", dtype=keyword)
        assert_same_bits(got, exact.reduce(a, c, dtype_name, -1, True, kind == "mean"))
        with pytest.raises(sqdiff.Error, match=r"\(none\)"):
            function(a, b, broadcast="none", dtype=keyword)


def test_pairwise_distances():
    rng = np.random.default_rng(1800)
    x = random_values(rng, "float32", (7, 1, 16))
    y = random_values(rng, "float32", (1, 9, 16))
    got = sqdiff.sum_squared_difference(x, y, axis=-1)
    assert got.shape == (7, 9)
    assert_same_bits(got, exact.reduce(x, y, "float32", -1))


def test_results_are_0d_arrays_and_outputs():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    got = sqdiff.sum_squared_difference(a, 1.0)
    assert type(got) is np.ndarray and got.shape == () and got == 31.0
    out = np.zeros((), dtype=np.float64)
    assert sqdiff.mean_squared_difference(a, 1.0, out=out) is out and out == 31.0 / 6
    out = np.full((1, 3), -1.0)
    assert sqdiff.sum_squared_difference(a, 0.0, axis=0, keepdims=True, out=out) is out
    assert out.tolist() == [[9.0, 17.0, 29.0]]
    strided = np.zeros((3, 2))[:, 0]
    assert sqdiff.sum_squared_difference(a, 0.0, axis=0, out=strided) is strided
    assert strided.tolist() == [9.0, 17.0, 29.0]
    # out's dtype is the output type when dtype= is not given, as in NumPy.
    out = np.zeros(2, dtype=np.float64)
    sqdiff.sum_squared_difference(a.astype(np.float32), np.float32(0), axis=1, out=out)
    assert out.tolist() == [5.0, 50.0]


def test_byte_swapped_and_unaligned():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    want = sqdiff.sum_squared_difference(a, np.float32(1), axis=1)
    swapped = a.astype(a.dtype.newbyteorder())
    assert_same_bits(sqdiff.sum_squared_difference(swapped, np.float32(1), axis=1), want)
    out = np.zeros(3, dtype=np.dtype(np.float32).newbyteorder())
    assert sqdiff.sum_squared_difference(a, np.float32(1), axis=1, out=out) is out
    assert out.tolist() == want.tolist()
    packed = np.zeros(3, dtype=[("pad", "u1"), ("x", "<f4")])
    unaligned = packed["x"]
    assert sqdiff.sum_squared_difference(a, np.float32(1), axis=1, out=unaligned) is unaligned
    assert unaligned.tolist() == want.tolist()


def test_specials():
    f16 = np.float16
    # Squares beyond float16's range are fine when the result fits (SPEC 7).
    assert_same_bits(sqdiff.mean_squared_difference(np.array([256, 0], dtype=f16), f16(0)),
                     np.array(32768, dtype=f16))
    assert_same_bits(sqdiff.sum_squared_difference(np.array([256, 0], dtype=f16), f16(0)), np.array(np.inf, dtype=f16))
    nan = np.array([1.0, np.nan, 2.0])
    assert np.isnan(sqdiff.sum_squared_difference(nan, 0.0))
    assert np.isnan(sqdiff.sum_squared_difference(np.array([np.inf]), np.array([np.inf])))
    assert sqdiff.sum_squared_difference(np.array([np.inf, 1.0]), 0.0) == np.inf
    assert sqdiff.sum_squared_difference(np.array([-np.inf]), 0.0) == np.inf
    # f64: a single square beyond f64's range is inf even where the exact mean would fit.
    assert sqdiff.mean_squared_difference(np.array([1e200, 0.0]), -1e200) == np.inf
    below = np.array([2.0 ** 512 - 2.0 ** 459, 0.0])  # its square is just under 2**1024 - 2**970
    for function, mean in [(sqdiff.sum_squared_difference, False), (sqdiff.mean_squared_difference, True)]:
        got = function(below, 0.0)
        assert np.isfinite(got)
        assert_same_bits(got, exact.reduce(below, np.float64(0), "float64", mean=mean))
    assert sqdiff.mean_squared_difference(np.array([2.0 ** 512, 0.0]), 0.0) == np.inf  # 2**1024: at the limit
    # Empty: sum +0, mean NaN.
    empty = np.zeros((0, 3), dtype=np.float32)
    assert_same_bits(sqdiff.sum_squared_difference(empty, empty), np.array(0.0, dtype=np.float32))
    assert_same_bits(sqdiff.sum_squared_difference(empty, empty, axis=0), np.zeros(3, dtype=np.float32))
    assert np.isnan(sqdiff.mean_squared_difference(empty, empty))
    assert sqdiff.mean_squared_difference(empty, empty, axis=1).shape == (0,)


def test_integer_extremes():
    u64 = np.array([np.iinfo(np.uint64).max], dtype=np.uint64)
    want = (2 ** 64 - 1) ** 2
    assert sqdiff.sum_squared_difference(u64, np.uint64(0), dtype="float64") == float(want)
    with pytest.raises(sqdiff.Error, match=r"does not fit u64; nothing was written"):
        sqdiff.sum_squared_difference(u64, np.uint64(0))
    i64 = np.array([np.iinfo(np.int64).min], dtype=np.int64)
    got = sqdiff.mean_squared_difference(i64, np.int64(np.iinfo(np.int64).max))
    assert got == float((2 ** 64 - 1) ** 2)
    fits = np.array([3037000499], dtype=np.int64)  # the largest n with n**2 < 2**63
    assert sqdiff.sum_squared_difference(fits, np.int64(0)) == 3037000499 ** 2
    out = np.full(2, 7, dtype=np.int64)
    with pytest.raises(sqdiff.Error, match=r"output element 1 \(in row-major order\) does not fit i64"):
        sqdiff.sum_squared_difference(np.array([[1], [2 ** 32]], dtype=np.int64), np.int64(0), axis=1, out=out)
    assert out.tolist() == [7, 7]


def test_near_a_rounding_midpoint():
    """Sums built to lie within a hair of a float32 midpoint: only exact arithmetic rounds them right."""
    one = np.float32(1)
    half_ulp = 2.0 ** -24  # 1 + 2**-24 is the midpoint between 1 and 1 + 2**-23
    # (1)**2 + (2**-12)**2 = 1 + 2**-24 exactly: a tie, to even (1).
    a = np.array([1, 2 ** -12], dtype=np.float32)
    assert_same_bits(sqdiff.sum_squared_difference(a, np.float32(0)), np.array(one))
    # plus a tiny square: just above the midpoint, so up.
    a = np.array([1, 2 ** -12, 2 ** -60], dtype=np.float32)
    assert_same_bits(sqdiff.sum_squared_difference(a, np.float32(0)), np.array(np.float32(1 + 2 * half_ulp)))
    # minus: the tie broken down by a term of opposite sense is not possible with squares, so
    # compare 1 + 3 * 2**-25 + tiny against the oracle.
    a = np.array([1, 2 ** -12, 2 ** -13, 2 ** -70, 2 ** -71], dtype=np.float32)
    assert_same_bits(sqdiff.sum_squared_difference(a, np.float32(0)), exact.reduce(a, np.float32(0), "float32"))


def test_errors_leave_out_untouched():
    a = np.ones((2, 3), dtype=np.float32)
    out = np.full(2, 5.0, dtype=np.float32)
    cases = [
        (dict(axis=(0, 0)), r"listed twice"),
        (dict(axis=2), r"out of range|range"),
        (dict(axis=1, dtype="float16"), r"output type f16 is not one for f32|out has dtype"),
        (dict(axis=0), r"output shape \[2\] differs from the reduced shape \[3\]"),
        (dict(axis=1, dtype="int64"), r"out has dtype float32, but dtype=int64"),
    ]
    for kwargs, message in cases:
        with pytest.raises(sqdiff.Error, match=message):
            sqdiff.sum_squared_difference(a, a, out=out, **kwargs)
        assert out.tolist() == [5.0, 5.0]
    with pytest.raises(sqdiff.Error, match=r"^sum_squared_difference: out is read-only$"):
        sqdiff.sum_squared_difference(a, a, axis=1, out=np.broadcast_to(np.float32(0), (2,)))
    with pytest.raises(sqdiff.Error, match=r"axis"):
        sqdiff.mean_squared_difference(a, a, axis=-3)
    with pytest.raises(sqdiff.Error, match=r"output shape \[2\] differs from the reduced shape \[3\]"):
        sqdiff.sum_squared_difference(a, a.astype(np.float64), axis=0, out=out)  # promoted, then checked
    with pytest.raises(sqdiff.Error, match=r"output type i64 is not one for f32"):
        sqdiff.sum_squared_difference(a, a, dtype=np.int64)
    with pytest.raises(sqdiff.Error, match=r"output type f16 is not one for i32"):
        sqdiff.mean_squared_difference(a.astype(np.int32), a.astype(np.int32), dtype=np.float16)
    with pytest.raises(sqdiff.Error, match=r"unknown dtype"):
        sqdiff.sum_squared_difference(a, a, dtype="float99")
    with pytest.raises(TypeError, match=r"axis must be None, an int or a tuple of ints, not str"):
        sqdiff.sum_squared_difference(a, a, axis="0")
    with pytest.raises(TypeError, match=r"out must be a numpy.ndarray"):
        sqdiff.sum_squared_difference(a, a, out=[0.0])
    with pytest.raises(sqdiff.Error, match=r"unknown broadcast mode"):
        sqdiff.sum_squared_difference(a, a, broadcast="xyz")
    with pytest.raises(sqdiff.Error, match=r"cannot broadcast \[2,3\] with \[2\]"):
        sqdiff.sum_squared_difference(a, a[:, 0])


def test_out_may_alias_an_input():
    a = np.arange(6, dtype=np.float64)
    view = a[:3]
    want = exact.reduce(a.reshape(3, 2), np.float64(1), "float64", 1)
    got = sqdiff.sum_squared_difference(a.reshape(3, 2), np.float64(1), axis=1, out=view)
    assert got is view
    assert_same_bits(np.ascontiguousarray(view), want)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from support import examples  # noqa: E402


@settings(max_examples=examples(60))
@given(data=st.data())
def test_any_shape_axes_and_layout_against_oracle(data):
    """Hypothesis draws the type, the shapes (b right-aligned with 1s), the axes (any
    order, negative or not), keepdims, the kind, a reversed or strided view and the
    thread count; the result must be the oracle's bits."""
    name = data.draw(st.sampled_from(DTYPE_NAMES), label="dtype")
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=0, max_size=4), label="shape"))
    b_shape = tuple(d if data.draw(st.booleans()) else 1 for d in shape[len(shape) - data.draw(
        st.integers(0, len(shape))):])
    rank = len(shape)
    if rank and data.draw(st.booleans(), label="axis list"):
        chosen = data.draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank), label="axes")
        axis = tuple(x - rank if data.draw(st.booleans()) else x for x in chosen)
    else:
        axis = None
    keepdims = data.draw(st.booleans(), label="keepdims")
    mean = data.draw(st.booleans(), label="mean")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    a = random_values(rng, name, shape, wide=False)
    b = random_values(rng, name, b_shape, wide=False)
    if data.draw(st.booleans(), label="reversed a") and rank:
        a = np.ascontiguousarray(a[::-1])[::-1]
    want = exact.reduce(a, b, name, axis, keepdims, mean)
    function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
    threads = data.draw(st.sampled_from([None, 1, 2, 3]), label="threads")
    assert_same_bits(function(a, b, axis, keepdims=keepdims, dtype=dtype_keyword(name), threads=threads), want)


def test_the_gil_is_released_while_reducing():
    """As test_threads.py does for the element-wise ops: with the switch interval at an
    hour, a counting thread that yields after every step only advances while the main
    thread waits outside the interpreter, here inside the reduction or the gradient."""
    import sys
    import threading
    import time

    a = np.ones(1 << 22, dtype=np.float32)
    calls = [
        lambda: sqdiff.sum_squared_difference(a, a[::-1], threads=1),
        lambda: sqdiff.squared_difference_backward(a, a[::-1], a, threads=1),
    ]
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)

    old_interval = sys.getswitchinterval()
    thread = threading.Thread(target=count)
    advanced = {0: [], 1: []}
    sys.setswitchinterval(3600)
    try:
        thread.start()
        time.sleep(0.01)
        for index, call in enumerate(calls):
            for _ in range(20):
                before = counter[0]
                call()
                advanced[index].append(counter[0] - before)
                if advanced[index][-1] > 0:
                    break
    finally:
        stop.set()
        sys.setswitchinterval(old_interval)
        thread.join()
    assert advanced[0][-1] > 0 and advanced[1][-1] > 0, advanced


@pytest.mark.parametrize("name, magnitudes", [
    ("float64", [2.0 ** 500, 2.0 ** -500, 2.0 ** -1074, 1.0, 2.0 ** 511]),
    ("float32", [1e38, 1e19, 1e-38, 1e-45, 1.0]),
    ("float16", [65504.0, 2.0 ** -24, 1.0, 300.0]),
])
def test_huge_and_tiny_together(name, magnitudes):
    """Terms hundreds of binades apart: the tiny ones still decide the rounding only an
    exact sum gets right."""
    rng = np.random.default_rng(1900)
    for case in range(40):
        values = rng.choice(magnitudes, size=(3, 6)) * rng.choice([-1.0, 1.0], size=(3, 6))
        a = values.astype(name)
        b = (rng.choice(magnitudes, size=6) * rng.choice([-1.0, 0.0, 1.0], size=6)).astype(name)
        mean = case % 2 == 1
        function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
        outputs = [name, "float64"] if name != "float64" else ["float64", "float32"]
        for out_name in outputs:
            want = exact.reduce(a, b, name, 1 if case % 4 < 2 else None, False, mean, out_name)
            got = function(a, b, 1 if case % 4 < 2 else None, dtype=out_name)
            assert_same_bits(got, want)
