"""NumPy's type promotion in every Python function (issue 24): inputs of two dtypes are computed
in numpy.result_type's dtype, bit for bit what NumPy's (a - b)**2 gives in that dtype (float16 as
SPEC computes it: in float32, rounded once); large calls convert a block at a time."""

import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pytest

import exact
import sqdiff
from sqdiff import _promotion
from support import oracle
from test_reduce import assert_same_bits

TYPES = [np.dtype(t) for t in ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
                                "uint16", "uint32", "uint64")]
PAIRS = [(x, y) for x in TYPES for y in TYPES if x != y]


def values(rng, dtype, shape):
    """Random values of a type, with extremes and (for floats) specials."""
    if dtype.kind == "f":
        x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(dtype)
        flat = x.reshape(-1)
        if flat.size >= 6:
            flat[:4] = [np.inf, -np.inf, np.nan, -0.0]
            flat[4] = np.finfo(dtype).max
        return x
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def numpy_result(op, a, b, target):
    """NumPy's a - b or (a - b)**2 in the promoted dtype (float16: SPEC's, through float32)."""
    name = target.name
    return oracle(op, a.astype(target), b.astype(target), name)


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind == "f":
        width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
        nan = np.isnan(got) & np.isnan(want)
        assert np.array_equal(np.where(nan, 0, got.view(width)), np.where(nan, 0, want.view(width)))
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("op", ["subtract", "squared_difference"])
@pytest.mark.parametrize("type_a, type_b", PAIRS, ids=[f"{x.name}-{y.name}" for x, y in PAIRS])
def test_every_pair_of_dtypes_promotes_as_numpy(op, type_a, type_b):
    rng = np.random.default_rng(TYPES.index(type_a) * 16 + TYPES.index(type_b))
    a = values(rng, type_a, (4, 7))
    b = values(rng, type_b, (7,))
    target = np.promote_types(type_a, type_b)
    with np.errstate(all="ignore"):
        want = numpy_result(op, a, b, target)
        got = getattr(sqdiff, op)(a, b)
    assert got.dtype == target
    same_bits(got, want)
    if target.kind in "iu" or target.itemsize >= 4:  # NumPy's own arithmetic in the promoted type
        with np.errstate(all="ignore"):
            d = a.astype(target) - b.astype(target)
            same_bits(got, d if op == "subtract" else d ** 2)


def test_lists_and_int_with_float_arrays():
    x = np.array([1.0, 2.0], dtype=np.float32)
    got = sqdiff.squared_difference(x, [1, 2.5])  # a list is an array of its own dtype: float64
    assert got.dtype == np.float64 and got.tolist() == [0.0, 0.25]
    got = sqdiff.subtract(np.arange(3, dtype=np.int32), np.float32([0.5, 0.5, 0.5]))  # int32 with float32: float64
    assert got.dtype == np.float64 and got.tolist() == [-0.5, 0.5, 1.5]
    got = sqdiff.squared_difference(np.int8([-128, 127]), np.uint8([255, 0]))  # int16: no wrap-around here
    assert got.dtype == np.int16 and got.tolist() == [(-383) ** 2 - 2 * 65536, 127 ** 2]  # int16 wraps, as NumPy
    got = sqdiff.subtract(np.int64([1]), np.uint64([2]))  # NumPy: float64
    assert got.dtype == np.float64 and got.tolist() == [-1.0]


def test_python_scalars_stay_weak_and_take_the_promoted_type():
    """NEP 50: a Python float beside float32 and float64 arrays is float64's value, never
    float32's (which would round it first)."""
    a = np.ones(3, dtype=np.float32)
    b = np.zeros(3, dtype=np.float64)
    grad_a, grad_b = sqdiff.squared_difference_backward(a, b, 0.1)
    assert grad_a.dtype == np.float64 and grad_a.tolist() == [2 * 0.1] * 3
    assert sqdiff.subtract(np.float16(1), 0.1).dtype == np.float16  # one array: its dtype, as before


def test_no_numpy_value_based_casting():
    """A NumPy scalar or 0-d array is strong, as in NumPy 2: float32 with a float64 scalar is
    float64 (NumPy 1.24's value-based casting would give float32)."""
    got = sqdiff.subtract(np.ones(2, dtype=np.float32), np.float64(0.1))
    assert got.dtype == np.float64 and got.tolist() == [1 - 0.1] * 2
    got = sqdiff.subtract(np.ones(2, dtype=np.uint8), np.array(300, dtype=np.int64))
    assert got.dtype == np.int64 and got.tolist() == [-299, -299]


# --- large calls: converted a block at a time -----------------------------------

LARGE = [  # (a shape, a dtype, b shape, b dtype, mode, axis)
    ((300, 1000), "float32", (1000,), "float64", "numpy", -1),
    ((70001,), "float64", (70001,), "float32", "numpy", -1),
    ((2, 3, 70000), "int16", (3, 1), "int8", "pdpd", 1),
    ((5, 1, 30000), "uint8", (4, 1), "float16", "numpy", -1),
    ((400, 300), "float32", (400, 300), "int32", "none", -1),
    ((1, 200000), "int64", (3, 1), "float32", "numpy", -1),
]


@pytest.mark.parametrize("op", ["subtract", "squared_difference"])
@pytest.mark.parametrize("case", LARGE, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}-{c[4]}" for c in LARGE])
def test_large_mixed_calls_equal_numpy(op, case):
    shape_a, type_a, shape_b, type_b, mode, axis = case
    rng = np.random.default_rng(len(shape_a) + len(shape_b))
    a = values(rng, np.dtype(type_a), shape_a)
    b = values(rng, np.dtype(type_b), shape_b)
    target = np.promote_types(a.dtype, b.dtype)
    b_aligned = b.reshape(b.shape + (1,) * (a.ndim - axis - b.ndim)) if mode == "pdpd" else b
    with np.errstate(all="ignore"):
        want = numpy_result(op, a, b_aligned, target)
        got = getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis)
        same_bits(got, want)
        out = np.empty(want.shape, target)  # C-contiguous: written block by block
        assert getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis, out=out) is out
        same_bits(out, want)
        out_t = np.empty(want.shape[::-1], target).T  # any other layout: the library's one call
        assert getattr(sqdiff, op)(a, b, broadcast=mode, broadcast_axis=axis, out=out_t) is out_t
        same_bits(out_t, want)


def test_blocks_cover_the_result_once_in_c_order():
    for shape in [(7, 70000), (3, 5, 30000), (1 << 17,), (2, 1, 3, 1 << 16), (200, 300, 3)]:
        seen = np.zeros(shape, dtype=np.int8)
        last = -1
        for index in _promotion._blocks(shape):
            block = seen[index]
            assert 0 < block.size <= max(_promotion.CHUNK, shape[-1])
            first = np.ravel_multi_index(tuple(s.start or 0 for s in index) + (0,) * (len(shape) - len(index)), shape)
            assert first > last
            last = first
            block += 1
        assert (seen == 1).all(), shape


def test_a_large_mixed_call_makes_no_full_size_temporary():
    n = 1 << 21  # 16 MiB as float64
    a = np.ones(n, dtype=np.float32)
    b = np.zeros(n, dtype=np.float64)
    out = np.empty(n)
    tracemalloc.start()
    sqdiff.squared_difference(a, b, out=out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * _promotion.CHUNK * 8, peak  # a few blocks, never 8 MiB of converted a
    assert (out == 1).all()


def test_out_aliasing_an_input_is_as_if_the_inputs_were_read_first():
    rng = np.random.default_rng(3)
    a = rng.standard_normal(200000)  # float64, the promoted type: may be out=
    b = rng.standard_normal(200000).astype(np.float32)
    want = (a - b.astype(np.float64)) ** 2
    assert sqdiff.squared_difference(a, b, out=a) is a
    same_bits(a, want)
    c = rng.standard_normal(200001)
    want = c[1:] - b.astype(np.float64)[:200000]
    sqdiff.subtract(c[1:], b, out=c[:-1])  # out overlaps c shifted by one element
    same_bits(c[:-1], want)


def test_errors_of_a_mixed_call_write_nothing():
    a = np.ones((300, 1000), dtype=np.float32)
    b = np.ones(1000, dtype=np.float64)
    out = np.full((300, 1000), 7.0, dtype=np.float32)  # the inputs' dtype, not the promoted one
    with pytest.raises(sqdiff.Error, match=r"^squared_difference: output type f32 differs from input type f64 \(the "
                                           r"inputs' float32 and float64 promoted to float64, as numpy.result_type "
                                           r"does\)$"):
        sqdiff.squared_difference(a, b, out=out)
    assert (out == 7).all()
    with pytest.raises(sqdiff.Error, match=r"^subtract: cannot broadcast \[300,1000\] with \[999\] \(numpy\)"):
        sqdiff.subtract(a, np.ones(999))
    with pytest.raises(sqdiff.Error, match=r"output shape \[300,999\] differs from the broadcast shape"):
        sqdiff.subtract(a, b, out=np.zeros((300, 999)))
    with pytest.raises(sqdiff.Error, match=r"^subtract: out is read-only$"):
        sqdiff.subtract(a, b, out=np.broadcast_to(np.zeros(1000), (300, 1000)))
    with pytest.raises(TypeError, match=r"^subtract: out must be a numpy\.ndarray, not list$"):
        sqdiff.subtract(a, b, out=[])
    bits = sqdiff.to_bfloat16_bits([1.0, 2.0])
    with pytest.raises(sqdiff.Error, match=r"dtype=\"bfloat16\" takes uint16 arrays of bfloat16 bits, but b has "
                                           r"dtype float32"):
        sqdiff.subtract(bits, np.float32([1, 2]), dtype="bfloat16")  # bits are never promoted
    assert (out == 7).all()


# --- reductions and gradients ----------------------------------------------------

@pytest.mark.parametrize("mean", [False, True])
def test_reductions_promote(mean):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((30, 40)).astype(np.float32)
    b = rng.standard_normal(40)
    function = sqdiff.mean_squared_difference if mean else sqdiff.sum_squared_difference
    for axis in (None, 0, 1):
        got = function(a, b, axis)
        want = exact.reduce(a.astype(np.float64), b, "float64", axis=axis, mean=mean)
        assert_same_bits(got, want)
    got = function(np.arange(5, dtype=np.int8), np.arange(5, dtype=np.uint8) * 50)  # int16 inputs
    want = function(np.arange(5, dtype=np.int16), np.arange(5, dtype=np.int16) * 50)
    assert got.dtype == want.dtype and got == want
    got = function(a, b, dtype=np.float32)  # dtype= is the output type: promotion still applies
    assert_same_bits(got, exact.reduce(a.astype(np.float64), b, "float64", mean=mean, out_name="float32"))
    got = function(a, np.float64(0.5))  # a NumPy scalar: strong
    assert got.dtype == np.float64


def test_gradients_promote():
    rng = np.random.default_rng(10)
    a = rng.standard_normal((3, 4)).astype(np.float16)
    b = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal((3, 4))
    got_a, got_b = sqdiff.squared_difference_backward(a, b, g)
    want_a, want_b = exact.squared_difference_backward(a.astype(np.float64), b.astype(np.float64), g, "float64")
    assert_same_bits(got_a, want_a)
    assert_same_bits(got_b, want_b)
    got_a, got_b = sqdiff.subtract_backward([1, 2.5], (2, 2), (2,))
    assert got_a.dtype == np.float64 and got_b.tolist() == [-2.0, -5.0]


# --- sqdiff.dask -------------------------------------------------------------------

def test_dask_promotes_lazily():
    da = pytest.importorskip("dask.array")
    import sqdiff.dask as sd

    rng = np.random.default_rng(11)
    a = rng.standard_normal((40, 30)).astype(np.float32)
    b = rng.integers(-5, 5, 30).astype(np.int32)
    lazy_a = da.from_array(a, chunks=(7, 11))
    for op in ("squared_difference", "subtract"):
        got = getattr(sd, op)(lazy_a, b)
        assert got.dtype == np.float64
        same_bits(got.compute(), getattr(sqdiff, op)(a, b))
    for op in ("sum_squared_difference", "mean_squared_difference"):
        got = getattr(sd, op)(lazy_a, da.from_array(b, chunks=4), axis=0)
        assert got.dtype == np.float64
        assert_same_bits(got.compute(), getattr(sqdiff, op)(a, b, axis=0))
    got = sd.sum_squared_difference(lazy_a, np.float64(0.5))  # a NumPy scalar: strong
    assert got.dtype == np.float64 and got.compute() == sqdiff.sum_squared_difference(a, np.float64(0.5))


# --- bfloat16 (ml_dtypes) ------------------------------------------------------------

def test_ml_dtypes_bfloat16_follows_its_result_type():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    x = np.array([1.5, -3.0, 0.1], dtype=bf16)
    got = sqdiff.squared_difference(x, np.float32([1.0, 1.0, 1.0]))
    assert got.dtype == np.float32
    same_bits(got, (x.astype(np.float32) - np.float32(1)) ** 2)
    got = sqdiff.subtract(x, np.int8([1, 2, 3]))  # ml_dtypes: bfloat16 with int8 is bfloat16
    assert got.dtype == bf16
    same_bits(got, sqdiff.subtract(x, np.int8([1, 2, 3]).astype(bf16)))
    for other in (np.float16, np.int16, np.uint32):
        with pytest.raises(sqdiff.Error, match=rf"^subtract: NumPy has no common dtype for bfloat16 and "
                                               rf"{np.dtype(other).name} \(numpy.result_type raises\)"):
            sqdiff.subtract(x, np.ones(3, dtype=other))


FAKE_TORCH = '''
"""A stand-in for PyTorch's bfloat16 tensors (the venv has ml_dtypes but no torch): the
names sqdiff looks up, and int16 bits exported through NumPy's own DLPack."""
import numpy as np

int16 = "torch.int16"


class dtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class Tensor:
    def __init__(self, bits):
        self.bits = bits
        self.dtype = dtype("torch.bfloat16")

    def view(self, target):
        assert target == int16
        return self.bits.view(np.int16)

    def __dlpack__(self, stream=None):
        raise BufferError("Unsupported dtype in DLTensor")  # NumPy's refusal of DLPack's bfloat16

    def __dlpack_device__(self):
        return (1, 0)
'''

FAKE_TORCH_CHECK = '''
import numpy as np, ml_dtypes, torch, sqdiff
x = np.array([1.5, -3.0, 0.25], dtype=ml_dtypes.bfloat16)
t = torch.Tensor(x.view(np.uint16))
got = sqdiff.squared_difference(t, np.ones(3, dtype=ml_dtypes.bfloat16))
assert got.dtype == ml_dtypes.bfloat16 and got.astype(np.float32).tolist() == [0.25, 16.0, 0.5625], got
assert sqdiff.sum_squared_difference(t, t) == 0
print("ok")
'''


def test_a_torch_bfloat16_tensor_is_read_as_ml_dtypes_bfloat16(tmp_path):
    pytest.importorskip("ml_dtypes")
    package = tmp_path / "torch"
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(FAKE_TORCH))
    env_path = [str(tmp_path)] + sys.path
    result = subprocess.run([sys.executable, "-c", FAKE_TORCH_CHECK], capture_output=True, text=True,
                            env={"PYTHONPATH": ":".join(p for p in env_path if p), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr
