"""SPEC's examples and tables, special values, array kinds (0-d, empty, lists, subclasses,
high rank), aliasing, the no-copy promise, and the few cases that do copy."""

import tracemalloc

import numpy as np
import pytest

import sqdiff
from support import (DTYPE_NAMES, OPS, assert_same_bits, dtype_keyword, f32_to_bf16, oracle,
                     random_values, storage)

# SPEC section 3: numpy table (valid rows) and pdpd table (valid rows).
NUMPY_TABLE = [
    ((), (), ()),
    ((2, 3), (1,), (2, 3)),
    ((3,), (2, 3), (2, 3)),
    ((2, 3, 5), (), (2, 3, 5)),
    ((2, 1, 5), (1, 4, 5), (2, 4, 5)),
    ((6, 5), (2, 1, 5), (2, 6, 5)),
    ((2, 1, 5), (4, 1), (2, 4, 5)),
    ((3, 2, 1, 4), (5, 4), (3, 2, 5, 4)),
    ((1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3)),
    ((8, 1, 6, 1), (7, 1, 5), (8, 7, 6, 5)),
    ((1, 0, 3), (3,), (1, 0, 3)),
]
PDPD_TABLE = [
    ((2, 3, 4, 5), (3, 4), 1),
    ((2, 3, 4, 5), (3, 1), 1),
    ((2, 3, 4, 5), (4, 5), -1),
    ((2, 3, 4, 5), (4, 5), 2),
    ((2, 3, 4, 5), (1, 3), 0),
    ((2, 3, 4, 5), (), -1),
    ((2, 3, 4, 5), (5,), -1),
    ((2, 3, 4, 5), (5,), 3),
    ((2, 3, 4, 5), (3, 1, 5), 1),
    ((8, 7, 6, 5), (7, 1, 5), -1),
]


@pytest.mark.parametrize("shape_a, shape_b, want", NUMPY_TABLE)
def test_numpy_table(shape_a, shape_b, want):
    assert sqdiff.broadcast_shape(shape_a, shape_b) == want
    assert sqdiff.broadcast_shape(list(shape_a), list(shape_b), "numpy", 5) == want
    a = np.arange(np.prod(shape_a, dtype=int), dtype=np.float32).reshape(shape_a)
    b = (np.arange(np.prod(shape_b, dtype=int)) * 0.5).astype(np.float32).reshape(shape_b)
    for op in OPS:
        assert_same_bits(getattr(sqdiff, op)(a, b), oracle(op, a, b, "float32"), "float32")


@pytest.mark.parametrize("shape_a, shape_b, axis", PDPD_TABLE)
def test_pdpd_table(shape_a, shape_b, axis):
    assert sqdiff.broadcast_shape(shape_a, shape_b, "pdpd", axis) == shape_a
    a = np.arange(np.prod(shape_a), dtype=np.int32).reshape(shape_a)
    b = (np.arange(np.prod(shape_b, dtype=int)) * 3).astype(np.int32).reshape(shape_b)
    for op in OPS:
        got = getattr(sqdiff, op)(a, b, broadcast="pdpd", broadcast_axis=axis)
        assert_same_bits(got, oracle(op, a, b, "int32", "pdpd", axis), "int32")


def test_none_mode_takes_identical_shapes():
    a = np.arange(12, dtype=np.int64).reshape(3, 4)
    assert sqdiff.broadcast_shape((3, 4), (3, 4), "none") == (3, 4)
    assert (sqdiff.subtract(a, a[::-1], broadcast="none") == a - a[::-1]).all()


def test_the_specs_example_8_1_6_1_with_7_1_5():
    a = np.arange(8 * 6, dtype=np.float32).reshape(8, 1, 6, 1)
    b = np.arange(7 * 5, dtype=np.float32).reshape(7, 1, 5) / 4
    got = sqdiff.squared_difference(a, b)
    assert got.shape == (8, 7, 6, 5)
    assert_same_bits(got, (a - b) * (a - b), "float32")
    assert_same_bits(sqdiff.subtract(a, b), a - b, "float32")


def test_spec_integer_examples():
    u8 = np.uint8
    assert sqdiff.subtract(u8(0), u8(1)) == 255
    assert sqdiff.squared_difference(u8(0), u8(255)) == 1
    assert sqdiff.squared_difference(u8(0), u8(16)) == 0
    assert sqdiff.squared_difference(np.int8(-128), np.int8(127)) == 1
    assert sqdiff.subtract(np.int32(-2**31), np.int32(1)) == 2**31 - 1
    assert sqdiff.subtract(np.uint64(0), np.uint64(1)) == 2**64 - 1
    assert sqdiff.squared_difference(np.int64(2**32), np.int64(0)) == 0  # 2**64 wraps to 0
    got = sqdiff.squared_difference(np.zeros(4, dtype=u8), np.array([255, 16, 15, 128], dtype=u8))
    assert got.tolist() == [1, 0, 225, 0]


def test_spec_half_examples():
    # (256 - 0)**2 = 65536 is above float16's largest finite value, 65504: +inf.
    got = sqdiff.squared_difference(np.float16(256), np.float16(0))
    assert got.dtype == np.float16 and got.shape == () and np.isposinf(got)
    # The seed example: f16 [4] with a scalar -0.5.
    a = np.array([0, 1, 2.5, 256], dtype=np.float16)
    b = np.float16(-0.5)
    assert sqdiff.subtract(a, b).tolist() == [0.5, 1.5, 3.0, 256.5]
    assert sqdiff.squared_difference(a, b).tolist() == [0.25, 2.25, 9.0, np.inf]
    # One rounding, not two: 1 - 2**-12 squared in float32, then rounded (OpenVINO's
    # reference rounds the difference to 1.0 first and gets 1.0).
    assert sqdiff.squared_difference(np.float16(1), np.float16(2**-12)) == np.float16(1 - 2**-11)
    # 255.875**2 = 65472.015625 rounds to 65472: still finite.
    assert sqdiff.squared_difference(np.float16(255.875), np.float16(0)) == np.float16(65472)


def test_bfloat16_examples():
    bits = f32_to_bf16(np.array([1.5, 3.0, 0.0, 1e38, -1e38], dtype=np.float32))
    one = f32_to_bf16(np.array([1.0], dtype=np.float32)).reshape(())
    got = sqdiff.squared_difference(bits, one, dtype="bfloat16")
    assert got.dtype == np.uint16
    values = sqdiff.from_bfloat16_bits(got)
    assert values[:3].tolist() == [0.25, 4.0, 1.0] and np.isposinf(values[3:]).all()
    got = sqdiff.subtract(bits, one, dtype="bf16")
    assert sqdiff.from_bfloat16_bits(got)[:3].tolist() == [0.5, 2.0, -1.0]
    # Without dtype="bfloat16", uint16 is uint16.
    assert sqdiff.subtract(np.uint16(0x3F80), np.uint16(1)) == 0x3F7F


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16", "float32", "float64"])
def test_ieee_special_values(dtype_name):
    def enc(values):
        f = np.array(values, dtype=np.float32)
        return f32_to_bf16(f) if dtype_name == "bfloat16" else f.astype(dtype_name)

    def dec(values):
        return sqdiff.from_bfloat16_bits(values) if dtype_name == "bfloat16" else values

    inf, nan = np.inf, np.nan
    a = enc([inf, -inf, inf, nan, -0.0, 0.0, -0.0, 1.0])
    b = enc([inf, -inf, -inf, 1.0, 0.0, -0.0, -0.0, nan])
    kw = {"dtype": dtype_keyword(dtype_name)}
    d = dec(sqdiff.subtract(a, b, **kw)).astype(np.float64)
    s = dec(sqdiff.squared_difference(a, b, **kw)).astype(np.float64)
    assert np.isnan(d[[0, 1, 3, 7]]).all() and d[2] == inf
    assert np.isnan(s[[0, 1, 3, 7]]).all() and s[2] == inf
    # (-0) - 0 = -0; 0 - (-0) = +0; (-0) - (-0) = +0; every square of a zero is +0.
    assert np.signbit(d[4]) and not np.signbit(d[5]) and not np.signbit(d[6])
    assert not np.signbit(s[4:7]).any() and (s[4:7] == 0).all()
    # (-inf)**2 = +inf
    assert dec(sqdiff.squared_difference(enc([-inf]), enc([0.0]), **kw)).tolist() == [inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_subnormals_are_kept_and_overflow_is_inf(dtype):
    info = np.finfo(dtype)
    tiny = info.smallest_subnormal
    a = np.array([2 * tiny, np.sqrt(info.tiny) / 4, info.max], dtype=dtype)
    b = np.array([tiny, 0, -info.max], dtype=dtype)
    d = sqdiff.subtract(a, b)
    s = sqdiff.squared_difference(a, b)
    assert d[0] == tiny  # no flush-to-zero
    assert 0 < s[1] < info.tiny  # a subnormal result, not flushed
    assert np.isposinf(d[2]) and np.isposinf(s[2])
    with np.errstate(all="ignore"):
        assert_same_bits(s, (a - b) * (a - b), np.dtype(dtype).name)


def test_zero_d_results_are_arrays_not_scalars():
    for a, b in [(np.array(3.0), np.array(1.0)), (np.float32(3), np.float32(1)), (3, 1), (3.0, 1.5),
                 (np.array(3, dtype=np.int8), np.int8(1))]:
        for op in OPS:
            got = getattr(sqdiff, op)(a, b)
            assert type(got) is np.ndarray and got.ndim == 0, (a, b, op, got)
    assert sqdiff.squared_difference(3, 1).dtype == np.int64
    assert sqdiff.squared_difference(3.0, 1.5).dtype == np.float64
    assert sqdiff.squared_difference(3, 1) == 4
    out = np.zeros((), dtype=np.float32)
    assert sqdiff.subtract(np.float32(5), np.float32(2), out=out) is out and out == 3


def test_lists_and_python_scalars_go_through_asarray():
    got = sqdiff.squared_difference([1, 2, 3], [1, 1, 1])
    assert got.dtype == np.int64 and got.tolist() == [0, 1, 4]
    got = sqdiff.subtract([[1.5], [2.5]], 0.5)
    assert got.dtype == np.float64 and got.tolist() == [[1.0], [2.0]]
    got = sqdiff.subtract((1, 2), np.array([3, 4]))
    assert got.tolist() == [-2, -2]


def test_ndarray_subclasses():
    class Tagged(np.ndarray):
        pass

    a = np.arange(4, dtype=np.float32).view(Tagged)
    got = sqdiff.squared_difference(a, np.float32(1))
    assert type(got) is np.ndarray and got.tolist() == [1, 0, 1, 4]
    out = np.zeros(4, dtype=np.float32).view(Tagged)
    assert sqdiff.subtract(a, a, out=out) is out
    # Masked arrays are refused rather than unmasked (test_errors.py).


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_empty_arrays(dtype_name):
    dtype = storage(dtype_name)
    kw = {"dtype": dtype_keyword(dtype_name)}
    for shape_a, shape_b in [((0,), (0,)), ((0,), (1,)), ((2, 0, 3), (3,)), ((1, 0), (5, 1)), ((0,), ())]:
        a = np.zeros(shape_a, dtype=dtype)
        b = np.ones(shape_b, dtype=dtype)
        got = sqdiff.squared_difference(a, b, **kw)
        assert got.shape == np.broadcast_shapes(shape_a, shape_b) and got.dtype == dtype and got.size == 0
        out = np.empty(got.shape, dtype=dtype)
        assert sqdiff.subtract(a, b, out=out, **kw) is out
    # A non-empty input with an empty output: nothing is read.
    assert sqdiff.subtract(np.zeros((0, 3), dtype=dtype), np.ones(3, dtype=dtype), **kw).shape == (0, 3)


def test_high_rank():
    a = np.arange(6, dtype=np.int16).reshape((1,) * 29 + (2, 1, 3))
    b = np.arange(4, dtype=np.int16).reshape(4, 1)
    got = sqdiff.subtract(a, b)
    assert got.shape == (1,) * 29 + (2, 4, 3)
    assert (got == a - b).all()


@pytest.mark.parametrize("op", OPS)
def test_in_place(op):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.arange(4, dtype=np.float32)
    want = oracle(op, a, b, "float32")
    assert getattr(sqdiff, op)(a, b, out=a) is a
    assert_same_bits(a, want, "float32")

    a = np.arange(4, dtype=np.int32)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::-1]  # b is a reversed view, and the output
    want = oracle(op, a, b, "int32")
    assert getattr(sqdiff, op)(a, b, out=b) is b
    assert_same_bits(b, want, "int32")


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype_name", ["float32", "uint8", "float16", "bfloat16", "int64"])
def test_partly_overlapping_out(op, dtype_name):
    """Any overlap other than exact aliasing: as if the inputs were read first."""
    rng = np.random.default_rng(7)
    kw = {"dtype": dtype_keyword(dtype_name)}
    n = 1000
    for make in [
        lambda base: (base[:-1], base[1:]),          # out one element ahead of a
        lambda base: (base[1:], base[:-1]),          # out one element behind a
        lambda base: (base[:-1], base[:-1][::-1]),   # out is a reversed
        lambda base: (base[::2][:-1], base[1:n]),    # interleaved
    ]:
        base = random_values(rng, dtype_name, (2 * n,))
        a, out = make(base)
        out = out[: a.shape[0]]
        b = random_values(rng, dtype_name, a.shape)
        want = oracle(op, a.copy(), b, dtype_name)
        assert getattr(sqdiff, op)(a, b, out=out, **kw) is out
        assert_same_bits(out, want, dtype_name)


def test_views_are_not_copied():
    """Sliced, reversed, transposed and broadcast views are read in place: the binding
    allocates no NumPy memory when out= is given (tracemalloc sees NumPy's buffers)."""
    n = 1 << 20
    base = np.arange(2 * n, dtype=np.float32)
    square = base[: 1 << 20].reshape(1024, 1024)
    cases = [
        (base[::2], base[1::2]),
        (base[::-2], base[n:]),
        (square.T, square),
        (np.broadcast_to(np.float32(3), (n,)), base[:n]),
        (np.broadcast_to(base[:1024], (1024, 1024)), square[::-1]),
    ]
    for a, b in cases:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype=np.float32)
        want = oracle("squared_difference", a, b, "float32")
        tracemalloc.start()
        try:
            sqdiff.squared_difference(a, b, out=out)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 64 * 1024, f"{peak} bytes allocated for {a.strides} / {b.strides}"
        assert_same_bits(out, want, "float32")


def test_copies_only_what_cannot_be_addressed():
    """Unaligned memory and non-native byte order are the only inputs copied (values
    unchanged); such an out= is written through a temporary."""
    n = 257
    packed = np.zeros(n, dtype=np.dtype([("tag", np.uint8), ("x", np.float32)], align=False))
    packed["x"] = np.arange(n, dtype=np.float32) / 3
    unaligned = packed["x"]  # stride 5 bytes, address odd: not addressable as float32
    assert not unaligned.flags.aligned
    swapped = (np.arange(n, dtype=np.float32) * 2).astype(">f4")
    raw = np.zeros(6 * n, dtype=np.uint8)
    odd_stride = np.lib.stride_tricks.as_strided(raw[:4].view(np.float32), (n,), (6,))  # 6-byte steps
    odd_stride[...] = np.arange(n, dtype=np.float32) - 100
    assert not odd_stride.flags.aligned
    for a in [unaligned, swapped, odd_stride]:
        b = np.float32(1.5)
        want = oracle("subtract", np.asarray(a, dtype=np.float32), b, "float32")
        assert_same_bits(sqdiff.subtract(a, b), want, "float32")
    # An unaligned and a byte-swapped out=.
    a = np.arange(n, dtype=np.float32)
    want = oracle("squared_difference", a, np.float32(2), "float32")
    out = packed["x"]
    assert sqdiff.squared_difference(a, np.float32(2), out=out) is out
    assert_same_bits(np.asarray(out, dtype=np.float32), want, "float32")
    assert (packed["tag"] == 0).all()
    out = np.zeros(n, dtype=">f4")
    assert sqdiff.squared_difference(a, np.float32(2), out=out) is out
    assert_same_bits(out.astype(np.float32), want, "float32")
    # A broadcast view of unaligned memory: only the small source is copied.
    one = np.zeros(1, dtype=np.dtype([("tag", np.uint8), ("x", ">f8")], align=False))
    one["x"] = 2.5
    huge = np.broadcast_to(one["x"].reshape(1, 1), (1000, 1000))
    out = np.zeros((1000, 1000))
    tracemalloc.start()
    try:
        sqdiff.subtract(huge, np.float64(0.5), out=out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (out == 2.0).all() and peak < 64 * 1024, peak
    # Errors still come from the library, with nothing written.
    out = np.full(n + 1, 9, dtype=">f4")
    with pytest.raises(sqdiff.Error, match="output shape"):
        sqdiff.squared_difference(a, a, out=out)
    assert (out == 9).all()


@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_large_arrays_and_thread_counts(dtype_name):
    """Long rows (whole SIMD vectors, tails) and every thread count give the same bits."""
    rng = np.random.default_rng(2024)
    a = random_values(rng, dtype_name, (3, 100_003))
    b = random_values(rng, dtype_name, (100_003,))
    kw = {"dtype": dtype_keyword(dtype_name)}
    for op in OPS:
        want = oracle(op, a, b, dtype_name)
        for threads in [None, 1, 2, 4]:
            assert_same_bits(getattr(sqdiff, op)(a, b, threads=threads, **kw), want, dtype_name)
        assert_same_bits(getattr(sqdiff, op)(a[:, ::-1], b[::-1], **kw), want[:, ::-1], dtype_name)


def test_bfloat16_helpers_match_the_oracle():
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**32, size=100_000, dtype=np.uint32, endpoint=False)
    bits[:8] = [0x7F800000, 0xFF800000, 0x7FC00001, 0x7F800001, 0x3F808000, 0x3F818000, 0x7F7FFFFF, 0x00008000]
    f = bits.view(np.float32)
    got = sqdiff.to_bfloat16_bits(f)
    want = f32_to_bf16(f)
    assert_same_bits(got, want, "bfloat16")
    assert got[4] == 0x3F80 and got[5] == 0x3F82 and got[6] == 0x7F80  # ties to even; overflow to inf
    back = sqdiff.from_bfloat16_bits(want)
    assert (back.view(np.uint32) == want.astype(np.uint32) << 16).all()
    assert sqdiff.to_bfloat16_bits(1.0).shape == () and sqdiff.from_bfloat16_bits(np.uint16(0)).shape == ()
    with pytest.raises(sqdiff.Error, match="takes uint16"):
        sqdiff.from_bfloat16_bits(np.zeros(2, dtype=np.int16))
