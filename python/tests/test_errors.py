"""Every error of SPEC sections 2, 3 and 6, and the binding's own: each raises sqdiff.Error
(a ValueError) with the library's message, and leaves out= untouched."""

import numpy as np
import pytest

import sqdiff
from support import OPS


def call(op, *args, **kwargs):
    return getattr(sqdiff, op)(*args, **kwargs)


def test_error_is_a_value_error():
    assert issubclass(sqdiff.Error, ValueError)
    assert sqdiff.Error.__module__ == "sqdiff" and sqdiff.Error.__name__ == "Error"
    assert sqdiff.Error.__doc__


# (shape a, shape b, mode, axis, what the message says) for every error row of SPEC section 3.
BROADCAST_ERRORS = [
    ((3,), (2,), "numpy", -1, "dimension 0 is 3 vs 2"),
    ((3, 1, 5), (4, 4, 5), "numpy", -1, "dimension 0 is 3 vs 4"),
    ((2, 3), (3, 2), "numpy", -1, "dimension 0 is 2 vs 3"),
    ((0,), (5,), "numpy", -1, "0 vs 5"),
    ((3, 5, 6), (4, 10, 12), "numpy", -1, "dimension 0 is 3 vs 4"),
    ((2, 4), (1, 2, 4), "none", -1, "ranks differ, 2 vs 3"),
    ((3, 4), (3, 1), "none", -1, "dimension 1 is 4 vs 1"),
    ((2, 3, 4, 5), (3, 1), "pdpd", -1, "dimension 2 of a is 4 vs 3"),
    ((2, 3, 4, 5), (3, 1), "pdpd", -2, "axis -2 is less than -1"),
    ((2, 3, 4, 1), (2, 3, 4, 5), "pdpd", -1, "dimension 3 of a is 1 vs 5"),
    ((8, 1, 6, 1), (7, 1, 5), "pdpd", 1, "dimension 1 of a is 1 vs 7"),
    ((2, 3), (1, 2, 3), "pdpd", -1, "b has rank 3, more than rank 2 of a"),
    ((2, 3), (3,), "pdpd", 2, "axis 2 plus rank 1 of b exceeds rank 2 of a"),
]


def mode_text(mode, axis):
    return f"(pdpd, axis {axis})" if mode == "pdpd" else f"({mode})"


def shape_text(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


@pytest.mark.parametrize("shape_a, shape_b, mode, axis, reason", BROADCAST_ERRORS)
def test_broadcast_errors(shape_a, shape_b, mode, axis, reason):
    head = f"cannot broadcast {shape_text(shape_a)} with {shape_text(shape_b)} {mode_text(mode, axis)}: "
    with pytest.raises(sqdiff.Error) as info:
        sqdiff.broadcast_shape(shape_a, shape_b, mode, axis)
    assert str(info.value).startswith("broadcast_shape: " + head) and reason in str(info.value)

    a = np.ones(shape_a, dtype=np.float32)
    b = np.ones(shape_b, dtype=np.float32)
    for op in OPS:
        with pytest.raises(sqdiff.Error) as info:
            call(op, a, b, broadcast=mode, broadcast_axis=axis)
        assert str(info.value).startswith(f"{op}: " + head) and reason in str(info.value)
        # With an out= of a's shape: the same error, and out is not written.
        out = np.full(shape_a, 7, dtype=np.float32)
        with pytest.raises(sqdiff.Error, match=f"^{op}: cannot broadcast"):
            call(op, a, b, broadcast=mode, broadcast_axis=axis, out=out)
        assert (out == 7).all()


def test_negative_dim_and_int64_overflow():
    with pytest.raises(sqdiff.Error, match=r"dimension 0 of a is negative"):
        sqdiff.broadcast_shape((-1,), (1,))
    with pytest.raises(sqdiff.Error, match=r"the element count of a overflows int64"):
        sqdiff.broadcast_shape((2**62, 4), (1,))
    with pytest.raises(sqdiff.Error, match=r"does not fit in int64"):
        sqdiff.broadcast_shape((2**64,), (1,))
    # Counted as NumPy counts: a zero dim makes the shape empty, but the
    # other dims must still fit (NumPy refuses to make such an array, too).
    with pytest.raises(ValueError, match="array is too big"):
        np.empty((2**62, 4, 0), dtype=np.uint8)
    with pytest.raises(sqdiff.Error, match=r"the element count of a overflows int64"):
        sqdiff.broadcast_shape((2**62, 4, 0), (1,))
    assert sqdiff.broadcast_shape((2**62, 1, 0), (1,)) == (2**62, 1, 0)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("type_a, type_b, names", [
    (np.float32, np.float64, "a is f32, b is f64"),
    (np.int32, np.uint32, "a is i32, b is u32"),
    (np.float16, np.uint16, "a is f16, b is u16"),
    (np.int64, np.float64, "a is i64, b is f64"),
    (np.uint8, np.int8, "a is u8, b is i8"),
])
def test_mixed_dtypes(op, type_a, type_b, names):
    """Mixed dtypes are promoted (test_promotion.py); an out= of an input's dtype that is not
    the promoted one, and a dtype= check, stay errors, with nothing written."""
    promoted = np.result_type(type_a, type_b)
    out = np.zeros(3, dtype=type_a)
    with pytest.raises(sqdiff.Error, match=rf"^{op}: output type .* differs from input type .*promoted to "
                                           rf"{promoted.name}, as numpy.result_type does\)$"):
        call(op, np.ones(3, dtype=type_a), np.ones(3, dtype=type_b), out=out)
    assert (out == 0).all()
    with pytest.raises(sqdiff.Error, match=rf"^{op}: b has dtype {np.dtype(type_b).name}, but "
                                           rf"dtype={np.dtype(type_a).name} was asked for \(sqdiff never converts\)$"):
        call(op, np.ones(3, dtype=type_a), np.ones(3, dtype=type_b), dtype=type_a)
    assert call(op, np.ones(3, dtype=type_a), np.ones(3, dtype=type_b)).dtype == promoted


def test_numpy_scalars_are_not_converted_to_the_array_type():
    """NumPy scalars are strong (arrays of their dtype, promoted with the other's as NumPy 2
    does); Python scalars are weak (test_scalars.py)."""
    assert sqdiff.squared_difference(np.ones(3, dtype=np.float32), np.float64(2.0)).dtype == np.float64
    assert sqdiff.subtract(np.int64(1), np.ones(3, dtype=np.int8)).dtype == np.int64


UNSUPPORTED = [
    (np.array([True, False]), "bool"),
    (np.array([1 + 2j, 3j]), "complex128"),
    (np.array([1, 2], dtype=np.complex64), "complex64"),
    (np.array([1, "x"], dtype=object), "object"),
    (np.array(["ab", "cd"]), "<U2"),
    (np.array([b"ab", b"cd"]), "|S2"),
    (np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[D]"), "datetime64[D]"),
    (np.array([1, 2], dtype="timedelta64[s]"), "timedelta64[s]"),
    (np.array([1, 2], dtype=np.longdouble), str(np.dtype(np.longdouble))),
    (np.zeros(2, dtype=[("x", np.float32)]), "[('x', '<f4')]"),
    ([True, False], "bool"),
    ([None, None], "object"),
]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("value, name", UNSUPPORTED, ids=[name for _, name in UNSUPPORTED])
def test_unsupported_dtypes(op, value, name):
    good = np.zeros(2, dtype=np.float32)
    with pytest.raises(sqdiff.Error) as info:
        call(op, value, good)
    assert str(info.value).startswith(f"{op}: unsupported dtype of a: {name}; supported: float16")
    with pytest.raises(sqdiff.Error, match=f"^{op}: unsupported dtype of b: "):
        call(op, good, value)
    if isinstance(value, np.ndarray):
        with pytest.raises(sqdiff.Error, match=f"^{op}: unsupported dtype of out: "):
            call(op, good, good, out=value)


@pytest.mark.parametrize("op", OPS)
def test_wrong_out_shape(op):
    a = np.ones((2, 3), dtype=np.int16)
    for shape in [(3, 2), (6,), (2, 3, 1), (1, 2, 3), (), (2, 1)]:
        out = np.full(shape, 5, dtype=np.int16)
        with pytest.raises(sqdiff.Error,
                           match=rf"^{op}: output shape \[.*\] differs from the broadcast shape \[2,3\]"):
            call(op, a, a, out=out)
        assert (out == 5).all()


@pytest.mark.parametrize("op", OPS)
def test_wrong_out_dtype(op):
    a = np.ones(3, dtype=np.float32)
    for dtype, name in [(np.float64, "f64"), (np.float16, "f16"), (np.int32, "i32"), (np.uint16, "u16")]:
        out = np.zeros(3, dtype=dtype)
        with pytest.raises(sqdiff.Error, match=rf"^{op}: output type {name} differs from input type f32$"):
            call(op, a, a, out=out)
        assert (out == 0).all()
    bits = np.zeros(3, dtype=np.uint16)
    with pytest.raises(sqdiff.Error, match="output type f32 differs from input type bf16"):
        call(op, bits, bits, dtype="bfloat16", out=np.zeros(3, dtype=np.float32))


@pytest.mark.parametrize("op", OPS)
def test_read_only_out(op):
    a = np.ones(4, dtype=np.float64)
    frozen = np.zeros(4)
    frozen.setflags(write=False)
    for out in [frozen, np.broadcast_to(np.float64(0), (4,)), np.frombuffer(bytes(32), dtype=np.float64)]:
        with pytest.raises(sqdiff.Error, match=f"^{op}: out is read-only$"):
            call(op, a, a, out=out)
    assert (frozen == 0).all()


@pytest.mark.parametrize("op", OPS)
def test_self_overlapping_out(op):
    a = np.ones(4, dtype=np.float64)
    out = np.lib.stride_tricks.as_strided(np.zeros(4), (4,), (0,))  # writable, all one element
    with pytest.raises(sqdiff.Error, match="may reach one element from two indices"):
        call(op, a, a, out=out)


def _unaligned(values):
    """A copy of ``values`` whose data starts one byte off alignment."""
    raw = np.zeros(values.nbytes + 1, dtype=np.uint8)
    view = raw[1:].view(values.dtype).reshape(values.shape)
    view[...] = values
    assert not view.flags.aligned
    return view


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("layout", ["byte-swapped", "unaligned"])
def test_self_overlapping_out_written_through_a_temporary(op, layout):
    """An out= the library cannot address (byte-swapped, unaligned) is computed into a
    temporary and copied back; its own layout must still be checked, or a stride-0 out
    would silently keep whichever element was copied last."""
    a = np.arange(4, dtype=np.float32)
    if layout == "byte-swapped":
        base = np.zeros(4, dtype=">f4")
    else:
        base = _unaligned(np.zeros(4, dtype=np.float32))
    out = np.lib.stride_tricks.as_strided(base, (4,), (0,))
    with pytest.raises(sqdiff.Error, match="may reach one element from two indices"):
        getattr(sqdiff, op)(a.astype(out.dtype), a.astype(out.dtype), out=out)
    assert np.all(base == 0)  # nothing written
    # Strides that do not nest are refused too; nesting ones are fine.
    out = np.lib.stride_tricks.as_strided(base, (2, 2), (4, 4))
    with pytest.raises(sqdiff.Error, match="may reach one element from two indices"):
        getattr(sqdiff, op)(a[:2].astype(out.dtype), a[:2].astype(out.dtype), out=out)
    out = np.lib.stride_tricks.as_strided(base, (2, 2), (8, 4))
    getattr(sqdiff, op)(a.reshape(2, 2).astype(out.dtype), np.float32(1).astype(out.dtype), out=out)
    assert np.array_equal(out, getattr(sqdiff, op)(a.reshape(2, 2), np.float32(1)))


@pytest.mark.parametrize("op", OPS)
def test_masked_arrays_are_refused_not_unmasked(op):
    """np.asarray would drop the mask and compute on whatever the masked elements hold."""
    masked = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    with pytest.raises(sqdiff.Error, match=r"a is a numpy.ma.MaskedArray, whose mask sqdiff would ignore; "
                                           r"pass a.filled\(value\) or a.data"):
        getattr(sqdiff, op)(masked, np.float64(1))
    with pytest.raises(sqdiff.Error, match=r"b is a numpy.ma.MaskedArray"):
        getattr(sqdiff, op)(np.float64(1), masked)
    out = np.ma.masked_array([0.0, 0.0], mask=[False, True])
    with pytest.raises(sqdiff.Error, match=r"out is a numpy.ma.MaskedArray, whose mask sqdiff would ignore; "
                                           r"pass out.data"):
        getattr(sqdiff, op)(np.zeros(2), np.ones(2), out=out)
    assert np.array_equal(out.data, [0.0, 0.0])
    # What the message suggests works.
    assert np.array_equal(getattr(sqdiff, op)(masked.filled(1.0), np.float64(1)), [0.0, 0.0])


@pytest.mark.parametrize("op", OPS)
def test_pandas_objects_are_refused_not_used_by_position(op):
    """A Series is aligned by its index in pandas arithmetic; np.asarray would pair its
    values by position instead, silently giving another answer."""
    pd = pytest.importorskip("pandas", reason="pandas is installed by scripts/install-deps.sh --tests")
    x = pd.Series([1.0, 2.0, 3.0], index=[2, 1, 0])
    y = pd.Series([1.0, 2.0, 3.0], index=[0, 1, 2])
    with pytest.raises(sqdiff.Error, match=r"a is a pandas(\.core\.series)?\.Series, which sqdiff would use by "
                                           r"position, not by its labels; align it first, then pass a.to_numpy\(\)"):
        getattr(sqdiff, op)(x, y)
    with pytest.raises(sqdiff.Error, match=r"b is a pandas(\.core\.frame)?\.DataFrame"):
        getattr(sqdiff, op)(np.zeros((3, 1)), pd.DataFrame({"c": [1.0, 2.0, 3.0]}))
    x, y = x.align(y)
    want = (x - y) ** 2 if op == "squared_difference" else x - y
    assert np.array_equal(getattr(sqdiff, op)(x.to_numpy(), y.to_numpy()), want.to_numpy())


@pytest.mark.parametrize("op", OPS)
def test_out_must_be_an_array(op):
    with pytest.raises(TypeError, match=f"^{op}: out must be a numpy.ndarray, not list$"):
        call(op, [1, 2], [3, 4], out=[0, 0])


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", ["NUMPY", "Numpy", "explicit", "", "numpy ", None, 1, b"numpy"])
def test_unknown_broadcast_mode(op, mode):
    a = np.ones(2, dtype=np.float32)
    with pytest.raises(sqdiff.Error, match=rf"^{op}: unknown broadcast mode .*; use 'numpy', 'none' or 'pdpd'$"):
        call(op, a, a, broadcast=mode)
    with pytest.raises(sqdiff.Error, match=r"^broadcast_shape: unknown broadcast mode"):
        sqdiff.broadcast_shape((2,), (2,), mode)


@pytest.mark.parametrize("op", OPS)
def test_unknown_or_unsupported_dtype_name(op):
    a = np.ones(2, dtype=np.float32)
    for name in ["bfloat", "f32x", "brain", "bfloat16 ", "f32", "i8x"]:
        with pytest.raises(sqdiff.Error, match=rf"^{op}: unknown dtype '{name}'"):
            call(op, a, a, dtype=name)
    for name in ["bool", "complex64", np.longdouble, object]:
        with pytest.raises(sqdiff.Error, match=rf"^{op}: unsupported dtype "):
            call(op, a, a, dtype=name)


@pytest.mark.parametrize("op", OPS)
def test_dtype_keyword_checks_and_never_converts(op):
    a = np.ones(2, dtype=np.float64)
    with pytest.raises(sqdiff.Error, match=rf"^{op}: a has dtype float64, but dtype=float32 was asked for"):
        call(op, a, a, dtype="float32")
    with pytest.raises(sqdiff.Error, match=r"b has dtype int64, but dtype=float64"):
        call(op, a, [1, 2], dtype=np.float64)
    with pytest.raises(sqdiff.Error, match=r'dtype="bfloat16" takes uint16 arrays of bfloat16 bits, but a has dtype float64'):
        call(op, a, a, dtype="bfloat16")
    with pytest.raises(sqdiff.Error, match=r'dtype="bfloat16" takes uint16 arrays .* but b has dtype int16'):
        call(op, np.ones(2, dtype=np.uint16), np.ones(2, dtype=np.int16), dtype="bf16")


# What every function says of a thread count it refuses: None is Python's default (the
# library's own message names 0, its C++ default).
THREADS_ADVICE = "use None for the library default or a positive count"


@pytest.mark.parametrize("op", OPS)
def test_threads(op):
    a = np.ones(2, dtype=np.float32)
    out = np.zeros(2, dtype=np.float32)
    with pytest.raises(sqdiff.Error, match=rf"^{op}: threads is -1; {THREADS_ADVICE}$"):
        call(op, a, a, threads=-1, out=out)
    assert (out == 0).all()
    with pytest.raises(sqdiff.Error, match=r"threads is -5"):
        call(op, a, a, threads=-5)
    with pytest.raises(sqdiff.Error, match=r"threads is 1099511627776"):
        call(op, a, a, threads=2**40)
    for bad in ["2", 2.0, [2]]:
        with pytest.raises(TypeError, match=rf"^{op}: threads must be an int"):
            call(op, a, a, threads=bad)
    for good in [None, 0, 1, 2, 64, np.int64(3)]:
        assert call(op, a, a, threads=good).shape == (2,)


def test_threads_refused_in_one_wording_by_every_function():
    """Negative counts and counts beyond int alike, whichever function is called."""
    x = np.ones((2, 3))
    calls = {
        "squared_difference": lambda threads: sqdiff.squared_difference(x, x, threads=threads),
        "subtract": lambda threads: sqdiff.subtract(x, x, threads=threads),
        "sum_squared_difference": lambda threads: sqdiff.sum_squared_difference(x, x, threads=threads),
        "mean_squared_difference": lambda threads: sqdiff.mean_squared_difference(x, x, 1, threads=threads),
        "squared_difference_backward": lambda threads: sqdiff.squared_difference_backward(x, x, x, threads=threads),
        "subtract_backward": lambda threads: sqdiff.subtract_backward(x, (2, 3), (3,), threads=threads),
    }
    for op, run in calls.items():
        for count in (-1, -7, -2**40, 2**31, 2**40):
            with pytest.raises(sqdiff.Error) as raised:
                run(count)
            assert str(raised.value) == f"{op}: threads is {count}; {THREADS_ADVICE}"
        for count in (None, 0, 1, 3):
            run(count)


@pytest.mark.parametrize("op", OPS)
def test_axis(op):
    a = np.ones((2, 3), dtype=np.float32)
    with pytest.raises(TypeError, match=rf"^{op}: broadcast_axis must be an int, not float$"):
        call(op, a, a, broadcast_axis=1.0)
    with pytest.raises(sqdiff.Error, match=r"does not fit in int64"):
        call(op, a, a, broadcast="pdpd", broadcast_axis=2**70)
    # numpy and none ignore the alignment, whatever it is.
    assert call(op, a, a, broadcast="numpy", broadcast_axis=-7).shape == (2, 3)
    assert call(op, a, a, broadcast="none", broadcast_axis=99).shape == (2, 3)


@pytest.mark.parametrize("op", OPS)
def test_not_an_array(op):
    with pytest.raises(sqdiff.Error, match=rf"^{op}: b is not an array: "):
        call(op, [1, 2], [3, [4]])


def test_broadcast_shape_argument_types():
    for bad in ["12", b"12", 2.0, None, [1.5], [None]]:
        with pytest.raises(TypeError, match=r"^broadcast_shape: shape_a"):
            sqdiff.broadcast_shape(bad, (1,))
    with pytest.raises(TypeError, match=r"^broadcast_shape: broadcast_axis must be an int"):
        sqdiff.broadcast_shape((1,), (1,), "pdpd", 0.5)
