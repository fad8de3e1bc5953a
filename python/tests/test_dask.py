"""sqdiff.dask against the eager module: bit for bit, for every dtype, mode and chunking, lazily.

The eager functions are the reference: every result of sqdiff.dask, computed,
must equal theirs on the same (NumPy) data bit for bit, whatever the chunks
and split_every. Building a graph must compute nothing, and must raise the
eager functions' errors with their messages.

scripts/test.sh runs this module with the newest Dask (the Python venv stage,
requirements/test.txt) and with Debian 12's (python3-dask 2022.12, the release
build's stage); the ASan build's stage hides Dask and skips it.
"""

import math
import pickle
import subprocess
import sys

import numpy as np
import pytest

from optional_modules import require  # noqa: E402

dask = require("dask")
import dask.array as da  # noqa: E402

import sqdiff  # noqa: E402
import sqdiff.dask as sd  # noqa: E402
from support import DTYPE_NAMES, OPS, assert_same_bits, random_values, storage  # noqa: E402

REDUCTIONS = ["sum_squared_difference", "mean_squared_difference"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]


def dtype_keyword(dtype_name):
    return "bfloat16" if dtype_name == "bfloat16" else None


def result_name(result, dtype_name):
    """The SPEC type of a result (uint16 results of bfloat16 inputs are bfloat16 bits)."""
    if dtype_name == "bfloat16" and result.dtype == np.uint16:
        return "bfloat16"
    return result.dtype.name


def forbid_compute(*args, **kwargs):
    pytest.fail("a Dask graph was computed while it was being built")


@pytest.fixture
def no_compute():
    """Any computation through Dask's scheduler fails the test."""
    with dask.config.set(scheduler=forbid_compute):
        yield


class Untouchable:
    """Array-like data whose elements must never be read (the laziness tests)."""

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = np.dtype(dtype)
        self.ndim = len(shape)

    def __getitem__(self, index):
        pytest.fail(f"an input block {index} was read while the graph was built")


def untouchable(shape, dtype, chunks):
    return da.from_array(Untouchable(shape, dtype), chunks=chunks, meta=np.empty((0,) * len(shape), dtype))


# --- element-wise -----------------------------------------------------------

# (broadcast, broadcast_axis, a's shape and chunks, b's shape and chunks, the output's chunks)
ELEMENTWISE_CASES = [
    # numpy, both sides broadcast; dim 2 chunked differently in a and b: boundaries of both
    ("numpy", -1, (5, 1, 7), ((2, 3), (1,), (3, 3, 1)), (4, 7), ((1, 3), (2, 5)), ((2, 3), (1, 3), (2, 1, 3, 1))),
    # a stretched along dim 0, b along dim 1
    ("numpy", -1, (1, 6), ((1,), (4, 2)), (3, 1), ((2, 1), (1,)), ((2, 1), (4, 2))),
    # a chunk boundary inside a dim that b broadcasts along (b's (7,) split 2+5, a's 4+3)
    ("numpy", -1, (3, 7), ((1, 2), (4, 3)), (7,), ((2, 5),), ((1, 2), (2, 2, 3))),
    # single-element chunks everywhere
    ("numpy", -1, (4, 3), 1, (3,), 1, ((1, 1, 1, 1), (1, 1, 1))),
    # a 0-d Dask array as b
    ("numpy", -1, (2, 5), ((1, 1), (3, 2)), (), (), ((1, 1), (3, 2))),
    # an empty dim
    ("numpy", -1, (0, 3), ((0,), (2, 1)), (3,), ((3,),), ((0,), (2, 1))),
    # none: equal shapes, mismatched chunks
    ("none", -1, (6, 5), ((4, 2), (2, 3)), (6, 5), ((1, 5), (5,)), ((1, 3, 2), (2, 3))),
    # pdpd: b's dims line up with a's dims 1 and 2; b's 1 stretches along a's dim 2
    ("pdpd", 1, (3, 4, 5, 2), ((1, 2), (2, 2), (5,), (1, 1)), (4, 1), ((3, 1), (1,)),
     ((1, 2), (2, 1, 1), (5,), (1, 1))),
    # pdpd, default alignment: b lines up with a's trailing dims
    ("pdpd", -1, (3, 4, 5, 2), ((1, 2), (2, 2), (5,), (1, 1)), (5, 2), ((2, 3), (2,)),
     ((1, 2), (2, 2), (2, 3), (1, 1))),
    # pdpd at axis 0 with a b of rank 1 (per channel)
    ("pdpd", 0, (4, 3, 2), ((3, 1), (2, 1), (2,)), (4,), ((1, 3),), ((1, 2, 1), (2, 1), (2,))),
]


@pytest.mark.parametrize("case", ELEMENTWISE_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[4]}")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_elementwise_equals_eager_bit_for_bit(dtype_name, op, case):
    broadcast, axis, shape_a, chunks_a, shape_b, chunks_b, out_chunks = case
    rng = np.random.default_rng([len(shape_a), len(shape_b), DTYPE_NAMES.index(dtype_name), OPS.index(op)])
    a = random_values(rng, dtype_name, shape_a)
    b = random_values(rng, dtype_name, shape_b)
    lazy = getattr(sd, op)(da.from_array(a, chunks=chunks_a), da.from_array(b, chunks=chunks_b),
                           broadcast=broadcast, broadcast_axis=axis, dtype=dtype_keyword(dtype_name))
    want = getattr(sqdiff, op)(a, b, broadcast=broadcast, broadcast_axis=axis, dtype=dtype_keyword(dtype_name))
    assert lazy.shape == want.shape and lazy.dtype == want.dtype
    assert lazy.chunks == out_chunks
    got = lazy.compute()
    assert_same_bits(got, want, dtype_name)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_elementwise_with_numpy_and_scalar_operands(dtype_name, op):
    rng = np.random.default_rng(7)
    a = random_values(rng, dtype_name, (5, 4))
    b = random_values(rng, dtype_name, (4,))
    kw = dict(dtype=dtype_keyword(dtype_name))
    cases = [
        (da.from_array(a, chunks=(2, 3)), b),            # a NumPy b: split along a's chunks
        (a, da.from_array(b, chunks=1)),                 # a NumPy a
        (da.from_array(a, chunks=(2, 3)), b[1]),         # a NumPy scalar (strong)
    ]
    if dtype_name in ("float64", "int64"):  # what NumPy makes of a list of Python numbers
        cases.append((da.from_array(a, chunks=(2, 3)), b.tolist()))
    if dtype_name != "bfloat16":
        weak = 3 if np.dtype(dtype_name).kind in "iu" else 0.1  # a Python scalar takes a's dtype
        cases.append((da.from_array(a, chunks=(3, 1)), weak))
        cases.append((weak, da.from_array(a, chunks=(3, 1))))
    for x, y in cases:
        got = getattr(sd, op)(x, y, **kw).compute()
        want = getattr(sqdiff, op)(np.asarray(x) if isinstance(x, da.Array) else x,
                                   np.asarray(y) if isinstance(y, da.Array) else y, **kw)
        assert_same_bits(got, want, dtype_name, what=f"{type(x).__name__} {type(y).__name__}")


# --- reductions --------------------------------------------------------------

def sum_sensitive_values(rng, dtype_name, shape):
    """Values whose sums of squares round differently when summed in pieces in the
    type itself: mixed magnitudes, cancelling pairs of differences, repeated values."""
    size = math.prod(shape)
    if dtype_name in FLOATS:
        low, high = {"float16": (-8, 1), "bfloat16": (-12, 12), "float32": (-12, 12), "float64": (-40, 40)}[dtype_name]
        values = rng.standard_normal(size) * np.exp2(rng.integers(low, high, size))  # float16: sums stay finite
        if size:
            values[rng.integers(0, size, size // 4)] = values[0]  # repeated squares: sums on ties
        if dtype_name == "bfloat16":
            return (values.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16).reshape(shape)
        return values.astype(dtype_name).reshape(shape)
    info = np.iinfo(dtype_name)
    low, high = max(int(info.min), -(2 ** 24)), min(int(info.max), 2 ** 25)  # 2**11 squares fit int64
    return rng.integers(low, high, size, dtype=dtype_name, endpoint=True).reshape(shape)


# (broadcast, broadcast_axis, a's shape and chunks, b's shape and chunks, axis choices)
REDUCTION_CASES = [
    ("numpy", -1, (5, 1, 7), ((2, 3), (1,), (3, 3, 1)), (4, 7), ((1, 3), (2, 5)),
     [None, 0, -1, (0, 2), (2, 0), (), (1,)]),
    ("numpy", -1, (3, 7), 1, (7,), ((2, 5),), [None, 1, (0,)]),
    ("none", -1, (6, 5), ((4, 2), (2, 3)), (6, 5), ((1, 5), (5,)), [None, 0, (-1,)]),
    ("pdpd", 1, (3, 4, 5, 2), ((1, 2), (2, 2), (5,), (1, 1)), (4, 1), ((3, 1), (1,)), [None, (1, 3), 2]),
    ("numpy", -1, (0, 3), ((0,), (2, 1)), (3,), ((3,),), [None, 0, 1, (0, 1)]),  # empty: +0 sums, NaN means
    ("numpy", -1, (), (), (), (), [None, ()]),  # 0-d
]


@pytest.mark.parametrize("case", REDUCTION_CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[4]}")
@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dtype_name", DTYPE_NAMES)
def test_reductions_equal_eager_bit_for_bit(dtype_name, op, case):
    broadcast, baxis, shape_a, chunks_a, shape_b, chunks_b, axes_choices = case
    rng = np.random.default_rng([len(shape_a), len(shape_b), DTYPE_NAMES.index(dtype_name), REDUCTIONS.index(op)])
    a = sum_sensitive_values(rng, dtype_name, shape_a)
    b = sum_sensitive_values(rng, dtype_name, shape_b)
    da_a, da_b = da.from_array(a, chunks=chunks_a), da.from_array(b, chunks=chunks_b)
    for i, axis in enumerate(axes_choices):
        keepdims = i % 2 == 1
        kw = dict(keepdims=keepdims, broadcast=broadcast, broadcast_axis=baxis, dtype=dtype_keyword(dtype_name))
        want = getattr(sqdiff, op)(a, b, axis, **kw)
        for split_every in (2, None):
            lazy = getattr(sd, op)(da_a, da_b, axis, split_every=split_every, **kw)
            assert lazy.shape == want.shape and lazy.dtype == want.dtype, (axis, keepdims)
            got = lazy.compute()
            assert_same_bits(got, want, result_name(want, dtype_name), what=f"axis={axis} keepdims={keepdims}")


# Output types other than the default (SPEC section 7's table). (bfloat16 bits
# name their input type through dtype="bfloat16", which then is the output type.)
OUTPUT_TYPES = [
    ("float16", "sum_squared_difference", np.float64), ("float16", "mean_squared_difference", np.float32),
    ("float32", "mean_squared_difference", np.float64), ("float64", "sum_squared_difference", np.float32),
    ("int8", "sum_squared_difference", np.float64), ("int32", "mean_squared_difference", np.float32),
    ("uint16", "sum_squared_difference", np.float64), ("uint64", "mean_squared_difference", np.float32),
]


@pytest.mark.parametrize("dtype_name, op, out_dtype", OUTPUT_TYPES)
def test_reduction_output_types(dtype_name, op, out_dtype):
    rng = np.random.default_rng(11)
    a = sum_sensitive_values(rng, dtype_name, (9, 6))
    b = sum_sensitive_values(rng, dtype_name, (6,))
    for axis in (None, 0, 1):
        want = getattr(sqdiff, op)(a, b, axis, dtype=out_dtype)
        got = getattr(sd, op)(da.from_array(a, chunks=(4, 5)), b, axis, dtype=out_dtype, split_every=2).compute()
        assert got.dtype == np.dtype(out_dtype)
        assert_same_bits(got, want, want.dtype.name)


# Chunkings of a (40, 37) array: one chunk, rows, uneven, single elements at the
# edges, columns.
CHUNKINGS = [((40,), (37,)), ((1,) * 40, (37,)), ((13, 13, 14), (5, 5, 5, 5, 5, 5, 7)), ((1, 39), (36, 1)),
             ((20, 20), (1,) * 37)]


def as_float64(values, dtype_name):
    values = np.asarray(values)
    if dtype_name == "bfloat16":
        return sqdiff.from_bfloat16_bits(values).astype(np.float64)
    return values.astype(np.float64)


def rounded_per_chunk_sum(a, b, chunks, dtype_name):
    """What adding per-chunk results would give: each chunk's sum rounded to the
    output type, then those added (exactly, then rounded once more)."""
    kw = dict(dtype=dtype_keyword(dtype_name))
    pieces = [sqdiff.sum_squared_difference(a[r0:r1, c0:c1], b[r0:r1, c0:c1], **kw)
              for r0, r1 in bounds(chunks[0]) for c0, c1 in bounds(chunks[1])]
    total = math.fsum(float(as_float64(p, dtype_name)) for p in pieces)
    if dtype_name == "bfloat16":
        return sqdiff.to_bfloat16_bits(np.float32(total))  # double rounding: fine for a naive sum
    return np.asarray(total).astype(pieces[0].dtype)


def bounds(sizes):
    start = 0
    for size in sizes:
        yield start, start + size
        start += size


def rows_on_ties(dtype_name, shape):
    """a with each row's exact sum of squares 1 + 2**-p, half an ulp above 1 (p the
    type's precision): a tie that rounds to 1, so that rounding per row loses
    2**-p a row, which adds up to more than half an ulp of the total."""
    precision = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dtype_name]
    a = np.zeros(shape, dtype=np.float64)
    a[:, 0] = 1.0
    if precision % 2 == 0:
        a[:, 1] = 2.0 ** -(precision // 2)
    else:
        a[:, 1:3] = 2.0 ** -((precision + 1) // 2)  # two squares of 2**-(p+1)
    if dtype_name == "bfloat16":
        return sqdiff.to_bfloat16_bits(a)
    return a.astype(dtype_name)


DATA_TYPES = [(name, "random") for name in FLOATS + ["int64", "uint32"]] + [(name, "ties") for name in FLOATS]


@pytest.mark.parametrize("op", REDUCTIONS)
@pytest.mark.parametrize("dtype_name, data", DATA_TYPES)
def test_reduction_bits_do_not_depend_on_chunking(dtype_name, data, op):
    """Every chunking and split_every gives the eager result; on the "ties" data,
    adding the chunks' rounded sums would not (checked, so that the test can fail)."""
    rng = np.random.default_rng([99, DATA_TYPES.index((dtype_name, data))])
    if data == "ties":
        a = rows_on_ties(dtype_name, (40, 37))
        b = np.zeros_like(a)
    else:
        a = sum_sensitive_values(rng, dtype_name, (40, 37))
        b = sum_sensitive_values(rng, dtype_name, (40, 37))
    kw = dict(dtype=dtype_keyword(dtype_name))
    for axis in (None, 0, 1):
        want = getattr(sqdiff, op)(a, b, axis, **kw)
        for chunks in CHUNKINGS:
            for split_every in (2, 3, 8, None):
                got = getattr(sd, op)(da.from_array(a, chunks=chunks), da.from_array(b, chunks=chunks), axis,
                                      split_every=split_every, **kw).compute()
                assert_same_bits(got, want, result_name(want, dtype_name),
                                 what=f"axis={axis} chunks={chunks} split_every={split_every}")
        # b chunked differently from a: the blocks are the common refinement
        got = getattr(sd, op)(da.from_array(a, chunks=(7, 9)), da.from_array(b, chunks=(10, 4)), axis,
                              **kw).compute()
        assert_same_bits(got, want, result_name(want, dtype_name), what=f"axis={axis} mixed chunks")
    if data == "ties":
        want = sqdiff.sum_squared_difference(a, b, **kw)
        naive = rounded_per_chunk_sum(a, b, CHUNKINGS[1], dtype_name)  # one chunk a row
        assert naive.tobytes() != want.tobytes(), "the data does not tell exact combining from rounding per chunk"


def test_integer_sum_overflow_is_raised_at_compute():
    """The one error that depends on the data: a sum beyond int64."""
    a = np.full((4, 3), -(2 ** 62), dtype=np.int64)
    b = np.full((3,), 2 ** 62, dtype=np.int64)
    with pytest.raises(sqdiff.Error) as eager:
        sqdiff.sum_squared_difference(a, b)
    lazy = sd.sum_squared_difference(da.from_array(a, chunks=2), b)  # builds: nothing is known yet
    with pytest.raises(sqdiff.Error, match="does not fit i64"):
        lazy.compute()
    assert "does not fit i64" in str(eager.value)
    # The same data summed as float64 fits.
    assert sd.sum_squared_difference(da.from_array(a, chunks=2), b, dtype=np.float64).compute() == \
        sqdiff.sum_squared_difference(a, b, dtype=np.float64)


# --- laziness ----------------------------------------------------------------

def test_building_graphs_computes_nothing(no_compute):
    a = untouchable((6, 5), np.float32, (4, 2))
    b = untouchable((5,), np.float32, 3)
    c = untouchable((6, 1), np.int16, 2)
    results = [
        sd.squared_difference(a, b), sd.subtract(a, b, threads=2),
        sd.squared_difference(a + 1, b * 2),  # inputs that are themselves graphs
        sd.subtract(c, np.int16([1, 2, 3, 4, 5]), broadcast="numpy"),
        sd.squared_difference(a, b.reshape(1, 5), broadcast="pdpd"),
        sd.sum_squared_difference(a, b), sd.mean_squared_difference(a, b, axis=0, keepdims=True),
        sd.sum_squared_difference(c, 7, axis=(0, 1), split_every=2),
        sd.mean_squared_difference(c, np.int16(7), dtype=np.float32),
        sd.sum_squared_difference(a, 0.5, axis=()),
    ]
    for result in results:
        assert isinstance(result, da.Array)
        result.__dask_graph__()  # the graph itself can be materialised without data
    # Errors too are found without reading anything.
    with pytest.raises(sqdiff.Error, match="cannot broadcast"):
        sd.squared_difference(a, untouchable((4,), np.float32, 2))
    with pytest.raises(sqdiff.Error, match="out of range"):
        sd.sum_squared_difference(a, b, axis=2)


def test_forbidding_scheduler_is_effective(no_compute):
    """The laziness test's guard works: a computation under it fails."""
    with pytest.raises(pytest.fail.Exception, match="computed while it was being built"):
        sd.squared_difference(da.ones(3, chunks=2), np.float64(1)).compute()
    with pytest.raises(pytest.fail.Exception, match="was read while"):
        with dask.config.set(scheduler="sync"):
            untouchable((3,), np.float32, 2).compute()


# --- errors: the eager messages, at graph build -----------------------------

def f32(*shape):
    return np.zeros(shape, dtype=np.float32)


# (function name, a, b, keywords); a and b as NumPy data: the Dask versions get the
# arrays chunked (scalars stay as they are).
ERROR_CASES = [
    ("squared_difference", f32(3, 5, 6), f32(4, 10, 12), {}),
    ("subtract", f32(3, 4), f32(3, 1), {"broadcast": "none"}),
    ("subtract", f32(3, 4), f32(3, 5, 4), {"broadcast": "pdpd"}),
    ("squared_difference", f32(2, 3, 4), f32(3,), {"broadcast": "pdpd", "broadcast_axis": 2}),
    ("squared_difference", f32(2, 3, 4), f32(2,), {"broadcast": "pdpd", "broadcast_axis": 1}),
    ("squared_difference", f32(2, 3), np.zeros(3), {"dtype": np.float32}),  # dtype= checks: not promoted
    ("squared_difference", np.zeros((2, 3), dtype=bool), np.zeros(3, dtype=bool), {}),
    ("subtract", np.zeros(3, dtype=np.complex64), np.zeros(3, dtype=np.complex64), {}),
    ("squared_difference", f32(3), f32(3), {"broadcast": "nope"}),
    ("squared_difference", f32(3), f32(3), {"dtype": "float33"}),
    ("squared_difference", f32(3), f32(3), {"dtype": np.int8}),
    ("squared_difference", f32(3), f32(3), {"dtype": "bfloat16"}),
    ("squared_difference", f32(3), f32(3), {"threads": -1}),
    ("subtract", f32(3), f32(3), {"threads": "two"}),
    ("subtract", f32(3), f32(3), {"broadcast_axis": "x", "broadcast": "pdpd"}),
    ("subtract", np.zeros(3, dtype=np.uint8), 300, {}),
    ("subtract", np.zeros(3, dtype=np.int32), 0.5, {"dtype": np.int32}),  # without dtype=: float64 (NEP 50)
    ("sum_squared_difference", f32(3, 4), f32(3, 5), {}),
    ("sum_squared_difference", f32(3, 4), f32(4), {"axis": 2}),
    ("sum_squared_difference", f32(3, 4), f32(4), {"axis": (0, -2)}),
    ("mean_squared_difference", f32(3, 4), f32(4), {"axis": -3}),
    ("mean_squared_difference", f32(3, 4), f32(4), {"axis": "0"}),
    ("mean_squared_difference", f32(3, 4), f32(4), {"axis": 1.0}),
    ("sum_squared_difference", np.zeros(3, dtype=np.int32), np.zeros(3, dtype=np.int32), {"dtype": np.float16}),
    ("mean_squared_difference", np.zeros(3, dtype=np.int32), np.zeros(3, dtype=np.int32), {"dtype": np.int64}),
    ("sum_squared_difference", f32(3), np.zeros(3, dtype=np.float16), {"dtype": np.int64}),  # promoted to f32
    ("mean_squared_difference", f32(3), f32(3), {"threads": -2}),
    ("mean_squared_difference", f32(3, 2), f32(2, 3), {"broadcast": "none", "axis": 0}),
    ("sum_squared_difference", f32(2, 3, 4), f32(3, 4), {"broadcast": "pdpd", "broadcast_axis": 2}),
    ("sum_squared_difference", np.zeros(3, dtype=np.uint8), -1, {}),
]


def as_dask(x):
    return da.from_array(x, chunks=2) if isinstance(x, np.ndarray) and x.ndim else x


@pytest.mark.parametrize("name, a, b, keywords", ERROR_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ERROR_CASES)])
def test_errors_are_the_eager_ones_at_graph_build(no_compute, name, a, b, keywords):
    keywords = dict(keywords)
    axis = keywords.pop("axis", None)
    positional = (axis,) if name in REDUCTIONS else ()
    with pytest.raises((sqdiff.Error, TypeError)) as eager:
        getattr(sqdiff, name)(a, b, *positional, **keywords)
    with pytest.raises(type(eager.value)) as lazy:
        getattr(sd, name)(as_dask(a), as_dask(b), *positional, **keywords)
    assert str(lazy.value) == str(eager.value)


def test_unknown_chunk_sizes_are_refused(no_compute):
    x = da.from_array(np.arange(6, dtype=np.float32), chunks=2)
    unknown = x[x > 2]  # chunk sizes known only once computed
    for name in OPS + REDUCTIONS:
        with pytest.raises(sqdiff.Error, match=f"^{name}: a has unknown chunk sizes .*compute_chunk_sizes"):
            getattr(sd, name)(unknown, np.float32(1))


def test_masked_arrays_are_refused_as_the_eager_functions_do(no_compute):
    masked = np.ma.masked_array(f32(3), mask=[0, 1, 0])
    with pytest.raises(sqdiff.Error) as eager:
        sqdiff.squared_difference(f32(3), masked)
    with pytest.raises(sqdiff.Error) as lazy:
        sd.squared_difference(da.from_array(f32(3)), masked)
    assert str(lazy.value) == str(eager.value) and "MaskedArray" in str(lazy.value)


@pytest.mark.parametrize("name", OPS + REDUCTIONS)
def test_eager_functions_refuse_dask_arrays_naming_sqdiff_dask(no_compute, name):
    x = da.ones(4, chunks=2, dtype=np.float32)
    for args in ((x, np.float32(1)), (np.float32(1), x)):
        with pytest.raises(sqdiff.Error, match=rf"sqdiff\.dask\.{name} for a lazy result"):
            getattr(sqdiff, name)(*args)


# --- threads, pickling ---------------------------------------------------------

def test_each_block_runs_with_one_thread_by_default(monkeypatch):
    x = da.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), chunks=2)  # 4 blocks
    default = [sd.squared_difference(x, np.float32(1)), sd.mean_squared_difference(x, np.float32(1))]
    chosen = [sd.squared_difference(x, np.float32(1), threads=2),
              sd.sum_squared_difference(x, np.float32(1), threads=None)]
    calls = []

    def spy(real):
        def call(*args, **kwargs):
            calls.append(kwargs["threads"])
            return real(*args, **kwargs)
        return call

    # The blocks' calls, counted from here on (the graphs are built: no stand-in calls).
    monkeypatch.setitem(sd._EAGER, "squared_difference", spy(sqdiff.squared_difference))
    monkeypatch.setattr(sqdiff, "_bounded_partial_sum_squared_difference",
                        spy(sqdiff._bounded_partial_sum_squared_difference))
    with dask.config.set(scheduler="sync"):
        dask.compute(*default)
        assert calls == [1] * 8, calls
        calls.clear()
        dask.compute(*chosen)
        assert sorted(calls, key=str) == [2] * 4 + [None] * 4, calls  # in any order


PICKLE_CHECK = """
import pickle, sys
import numpy as np
result = pickle.loads(sys.stdin.buffer.read())
sys.stdout.buffer.write(pickle.dumps(np.asarray(result.compute(scheduler="sync"))))
"""


def test_graphs_pickle_and_run_in_a_fresh_interpreter():
    """Plain pickle (not cloudpickle): every task function is importable by name,
    as distributed's workers need."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 6)).astype(np.float32)
    b = rng.standard_normal((6,)).astype(np.float32)
    graphs = {
        "squared_difference": sd.squared_difference(da.from_array(a, chunks=(3, 4)), b),
        "subtract": sd.subtract(da.from_array(a, chunks=2), b, broadcast="pdpd"),
        "sum": sd.sum_squared_difference(da.from_array(a, chunks=(3, 4)), b, axis=0, split_every=2),
        "mean": sd.mean_squared_difference(da.from_array(a, chunks=1), b),
    }
    wants = {
        "squared_difference": sqdiff.squared_difference(a, b), "subtract": sqdiff.subtract(a, b, broadcast="pdpd"),
        "sum": sqdiff.sum_squared_difference(a, b, axis=0), "mean": sqdiff.mean_squared_difference(a, b),
    }
    for name, graph in graphs.items():
        data = pickle.dumps(graph)
        run = subprocess.run([sys.executable, "-c", PICKLE_CHECK], input=data, capture_output=True, check=False,
                             timeout=120)
        assert run.returncode == 0, run.stderr.decode()
        assert_same_bits(pickle.loads(run.stdout), wants[name], "float32", what=name)


def test_ml_dtypes_bfloat16_arrays_equal_the_bits_path():
    """bfloat16 as a dtype (ml_dtypes, requirements/test.txt): the same bits as the
    eager functions and as the uint16-bits path with dtype="bfloat16"."""
    ml_dtypes = require("ml_dtypes")

    rng = np.random.default_rng(3)
    bits_a = random_values(rng, "bfloat16", (6, 5))
    bits_b = random_values(rng, "bfloat16", (5,))
    a, b = bits_a.view(ml_dtypes.bfloat16), bits_b.view(ml_dtypes.bfloat16)
    for op in OPS:
        got = getattr(sd, op)(da.from_array(a, chunks=(4, 2)), b).compute()
        assert got.dtype == np.dtype(ml_dtypes.bfloat16)
        assert_same_bits(got.view(np.uint16), getattr(sqdiff, op)(a, b).view(np.uint16), "bfloat16", what=op)
        bits = getattr(sd, op)(da.from_array(bits_a, chunks=3), bits_b, dtype="bfloat16").compute()
        assert_same_bits(got.view(np.uint16), bits, "bfloat16", what=f"{op} against the bits path")
    a, b = sum_sensitive_values(rng, "bfloat16", (6, 5)), sum_sensitive_values(rng, "bfloat16", (5,))
    for op in REDUCTIONS:
        for axis in (None, 0, 1):
            got = getattr(sd, op)(da.from_array(a.view(ml_dtypes.bfloat16), chunks=(4, 2)),
                                  b.view(ml_dtypes.bfloat16), axis, split_every=2).compute()
            want = getattr(sqdiff, op)(a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16), axis)
            assert got.dtype == want.dtype == np.dtype(ml_dtypes.bfloat16), (got.dtype, want.dtype)
            assert_same_bits(got.view(np.uint16), want.view(np.uint16), "bfloat16", what=f"{op} axis={axis}")
            bits = getattr(sd, op)(da.from_array(a, chunks=3), b, axis, dtype="bfloat16").compute()
            assert_same_bits(got.view(np.uint16), bits, "bfloat16", what=f"{op} axis={axis} bits path")


# --- chunks of length 0 (issue 21) -------------------------------------------

def chunked(values, chunks):
    """values as a Dask array of exactly `chunks`, 0s included: what boolean
    indexing and compute_chunk_sizes() leave where a chunk kept nothing."""
    x = da.from_array(values, chunks=chunks)
    assert x.chunks == tuple(tuple(c) for c in chunks)
    return x


# (broadcast, broadcast_axis, a's shape and chunks, b's shape and chunks): chunks
# of length 0 on size-1 dims that broadcast, on size-1 dims that do not, on
# longer dims, in a, in b, in both; an empty dim.
ZERO_CHUNK_CASES = [
    ("numpy", -1, (1,), ((1, 0),), (4,), ((2, 2),)),                      # the issue's: a (1,0) stretched
    ("numpy", -1, (1,), ((0, 1),), (4,), ((4,),)),
    ("numpy", -1, (1,), ((0, 1, 0),), (4,), ((1, 3),)),
    ("numpy", -1, (4,), ((3, 1),), (1,), ((0, 1, 0),)),                    # b's 1 stretched
    ("numpy", -1, (3, 1), ((2, 0, 1), (0, 1)), (1, 4), ((1, 0), (0, 2, 2))),  # both, both ways
    ("numpy", -1, (1, 1), ((0, 1), (1, 0)), (1, 1), ((1, 0, 0), (0, 1))),  # size-1 dims, nothing stretched
    ("numpy", -1, (2, 3), ((1, 1), (3,)), (3,), ((0, 3, 0),)),             # a longer dim
    ("none", -1, (2, 3), ((0, 2), (1, 0, 2)), (2, 3), ((2, 0), (3,))),
    ("pdpd", 1, (2, 1, 3), ((2,), (1, 0), (0, 3)), (1,), ((0, 1),)),
    ("pdpd", 0, (1, 5), ((0, 1), (5, 0)), (1,), ((1, 0),)),                # per channel, b stretched over a's 5
    ("numpy", -1, (0, 3), ((0, 0), (3, 0)), (1, 3), ((0, 1), (1, 2))),     # an empty dim
]
ZERO_CHUNK_TYPES = ["float32", "bfloat16", "int16", "uint64"]


def assert_no_empty_chunks(lazy):
    for length, sizes in zip(lazy.shape, lazy.chunks):
        assert sum(sizes) == length
        assert all(sizes) or sizes == (0,), f"chunks {lazy.chunks} for shape {lazy.shape}"


@pytest.mark.parametrize("case", ZERO_CHUNK_CASES, ids=lambda c: f"{c[0]}-{c[3]}-{c[5]}")
@pytest.mark.parametrize("dtype_name", ZERO_CHUNK_TYPES)
def test_chunks_of_length_0_give_the_eager_results(dtype_name, case):
    """Every function: the declared shape is the eager one and the computed result
    has it, bit for bit the eager values. Before, a size-1 dim chunked (1, 0)
    gave element-wise results of 2 elements for a shape of (1,) and reductions
    that raised NumPy's ValueError in compute()."""
    broadcast, axis, shape_a, chunks_a, shape_b, chunks_b = case
    rng = np.random.default_rng([len(shape_a), ZERO_CHUNK_CASES.index(case), ZERO_CHUNK_TYPES.index(dtype_name)])
    kw = dict(broadcast=broadcast, broadcast_axis=axis, dtype=dtype_keyword(dtype_name))
    a, b = random_values(rng, dtype_name, shape_a), random_values(rng, dtype_name, shape_b)
    for op in OPS:
        lazy = getattr(sd, op)(chunked(a, chunks_a), chunked(b, chunks_b), **kw)
        want = getattr(sqdiff, op)(a, b, **kw)
        assert lazy.shape == want.shape and lazy.dtype == want.dtype, op
        assert_no_empty_chunks(lazy)
        assert_same_bits(lazy.compute(), want, dtype_name, what=op)
    a, b = sum_sensitive_values(rng, dtype_name, shape_a), sum_sensitive_values(rng, dtype_name, shape_b)
    rank = len(want.shape)
    for op in REDUCTIONS:
        for i, reduced in enumerate([None, 0, -1, tuple(range(rank))]):
            keepdims = i % 2 == 1
            want = getattr(sqdiff, op)(a, b, reduced, keepdims=keepdims, **kw)
            for split_every in (2, None):
                lazy = getattr(sd, op)(chunked(a, chunks_a), chunked(b, chunks_b), reduced,
                                       keepdims=keepdims, split_every=split_every, **kw)
                what = f"{op} axis={reduced} keepdims={keepdims} split_every={split_every}"
                assert lazy.shape == want.shape and lazy.dtype == want.dtype, what
                assert_no_empty_chunks(lazy)
                assert_same_bits(lazy.compute(), want, result_name(want, dtype_name), what=what)


@pytest.mark.parametrize("name", OPS + REDUCTIONS)
def test_the_documented_recipe_for_boolean_indexing(name):
    """x[x > 1], then compute_chunk_sizes() as the docs prescribe: a size-1 dim
    chunked (1, 0), with operands it broadcasts against and ones it does not, as
    a and as b."""
    x = da.from_array(np.float32([2.0, 0.5]), chunks=1)
    y = x[x > 1]
    y.compute_chunk_sizes()
    assert y.shape == (1,) and y.chunks == ((1, 0),)
    values = np.float32([2.0])
    four = np.float32([0.0, 1.0, 4.0, -3.0])
    others = [np.float32([3.0]), np.float32(3.0), four, da.from_array(four, chunks=2), four.reshape(2, 2), y]
    for other in others:
        plain = other.compute() if isinstance(other, da.Array) else other
        for lazy, want in [(getattr(sd, name)(y, other), getattr(sqdiff, name)(values, plain)),
                           (getattr(sd, name)(other, y), getattr(sqdiff, name)(plain, values))]:
            what = f"{name} with {type(other).__name__} {np.shape(other)}"
            assert lazy.shape == want.shape, what
            assert_same_bits(lazy.compute(), want, "float32", what=what)


def test_chunks_without_zeros_are_passed_on_as_they_are():
    """No rechunk (no extra layer in the graph) when there is no chunk of length 0."""
    a = da.from_array(np.ones((4, 3), np.float32), chunks=(2, 3))
    lazy = sd.squared_difference(a, np.float32(1))
    assert len(lazy.dask.layers) == len(a.dask.layers) + 1


def test_dropping_chunks_of_length_0_computes_nothing(no_compute):
    a = untouchable((1, 3), np.float32, ((1, 0), (0, 3)))
    b = untouchable((4, 1), np.float32, ((2, 0, 2), (1,)))
    for name in OPS + REDUCTIONS:
        lazy = getattr(sd, name)(a, b)
        assert_no_empty_chunks(lazy)


@pytest.mark.parametrize("version, refused", [("2022.11.1", True), ("2.30.0", True), ("2022.12.0+dfsg", True),
                                              ("2022.12.1+dfsg", False), ("2026.8.0", False)])
def test_dask_older_than_the_supported_version_is_refused_at_import(version, refused):
    code = f"import dask; dask.__version__ = {version!r}; import sqdiff.dask"
    run = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=False,
                         timeout=120)
    if refused:
        assert run.returncode == 1
        assert run.stderr.strip().splitlines()[-1] == (
            f"ImportError: sqdiff.dask needs Dask 2022.12.1 or later, and this is Dask {version}: "
            'pip install "dask[array]>=2022.12.1" (or pip install "sqdiff[dask]")')
    else:
        assert (run.returncode, run.stderr) == (0, "")


def test_undecided_outputs_take_the_exact_reduction_block_by_block():
    """Float reductions add bounded states; an output block whose bound straddles a
    rounding boundary is summed again exactly, only that block (the fallback counter
    says how many), and the result is still the eager one bit for bit."""
    rng = np.random.default_rng(2028)
    a = rng.standard_normal((12, 64)).astype(np.float32)
    b = rng.standard_normal((12, 64)).astype(np.float32)
    a[[1, 7]] = 0
    b[[1, 7]] = 0
    a[[1, 7], 0] = 4096  # row sums 2**24 + 1: on the midpoint between two float32s
    a[[1, 7], 5] = 1
    for op in REDUCTIONS:
        before = sd._exact_fallbacks
        got = getattr(sd, op)(da.from_array(a, chunks=(2, 16)), da.from_array(b, chunks=(2, 16)), axis=1).compute(
            scheduler="sync")
        assert_same_bits(got, getattr(sqdiff, op)(a, b, axis=1), "float32", what=op)
        assert sd._exact_fallbacks - before == 2, op  # the row blocks 0 and 3, nothing else
    # 2**24 + 1 itself: the sum over all, one block of one output
    before = sd._exact_fallbacks
    got = sd.sum_squared_difference(da.from_array(a[1], chunks=8), np.float32(0)).compute(scheduler="sync")
    assert got == np.float32(2 ** 24) and sd._exact_fallbacks - before == 1
    # random data: every output decided by its bound
    before = sd._exact_fallbacks
    for op in REDUCTIONS:
        for axis in (None, 0, 1):
            got = getattr(sd, op)(da.from_array(b, chunks=(5, 7)), da.from_array(a[::-1], chunks=(3, 30)),
                                  axis=axis).compute(scheduler="sync")
            assert_same_bits(got, getattr(sqdiff, op)(b, a[::-1], axis=axis), "float32", what=f"{op} {axis}")
    assert sd._exact_fallbacks == before


def sqdiff_tasks(lazy):
    """The tasks of sqdiff.dask's own layers in the optimised graph (not the inputs')."""
    graph = dict(dask.optimize(lazy)[0].__dask_graph__())
    return [k for k in graph if (k[0] if isinstance(k, tuple) else k).startswith("sqdiff-")]


@pytest.mark.parametrize("op", REDUCTIONS)
def test_small_states_are_added_by_the_finishing_task(op):
    """Without split_every, an output block's partial states go straight to its
    finishing task where they are small: a task per block and one more for a
    reduction over every axis (a tree of tasks costs the scheduler more than
    the adding); with split_every, the tree Dask builds."""
    rng = np.random.default_rng(35)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    da_a, da_b = da.from_array(a, chunks=(16, 12)), da.from_array(b, chunks=(16, 12))  # 16 blocks
    lazy = getattr(sd, op)(da_a, da_b)
    assert len(sqdiff_tasks(lazy)) == 16 + 1
    assert_same_bits(lazy.compute(), getattr(sqdiff, op)(a, b), "float32", what=op)
    for axis, keepdims, outputs in ((0, False, 4), (1, True, 4), ((0, 1), True, 1)):
        lazy = getattr(sd, op)(da_a, da_b, axis, keepdims=keepdims)
        # the blocks, the finishing tasks, and where there are several, the index of each
        assert len(sqdiff_tasks(lazy)) == 16 + outputs + (outputs if outputs > 1 else 0), (axis, keepdims)
        assert_same_bits(lazy.compute(), getattr(sqdiff, op)(a, b, axis, keepdims=keepdims), "float32",
                         what=f"{op} axis={axis} keepdims={keepdims}")
    assert len(sqdiff_tasks(getattr(sd, op)(da_a, da_b, split_every=2))) > 16 + 1


@pytest.mark.parametrize("op", REDUCTIONS)
def test_large_states_are_added_by_a_tree(op, monkeypatch):
    """Past the one-task limit on the states' bytes, Dask's tree adds them, with the same bits."""
    monkeypatch.setattr(sd, "_ONE_LEVEL_TREE_BYTES", 0)
    rng = np.random.default_rng(36)
    a = rng.standard_normal((64, 48)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    da_a, da_b = da.from_array(a, chunks=(16, 12)), da.from_array(b, chunks=(16, 12))
    for axis, keepdims in ((None, False), (0, True), (1, False)):
        lazy = getattr(sd, op)(da_a, da_b, axis, keepdims=keepdims)
        assert any("-combine" in (k[0] if isinstance(k, tuple) else k) for k in sqdiff_tasks(lazy))
        assert_same_bits(lazy.compute(), getattr(sqdiff, op)(a, b, axis, keepdims=keepdims), "float32",
                         what=f"{op} axis={axis} keepdims={keepdims}")


def test_float64_terms_the_fast_path_leaves_to_the_exact_one():
    """f64 squares below 2**-900 are not bounded by the fast path: their blocks go
    to the exact reduction, and the result is exact (here 3 * 2**-1000 + ...)."""
    a = np.array([2.0 ** -500, 2.0 ** -500, 2.0 ** -500, 0.0], dtype=np.float64)
    b = np.zeros(4)
    before = sd._exact_fallbacks
    got = sd.sum_squared_difference(da.from_array(a, chunks=2), b).compute(scheduler="sync")
    assert got == 3 * 2.0 ** -1000 and got == sqdiff.sum_squared_difference(a, b)
    assert sd._exact_fallbacks - before == 1
