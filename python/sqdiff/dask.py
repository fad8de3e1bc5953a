"""sqdiff.dask: sqdiff's operations on Dask arrays, lazily, with the eager module's results.

The eager functions (``sqdiff.squared_difference`` and the others) take NumPy
arrays and refuse Dask arrays, which ``numpy.asarray`` would compute whole into
memory. These take ``dask.array`` arrays (the other operand may be a NumPy
array or a scalar) and return lazy Dask arrays:

    squared_difference(a, b)         (a - b)**2, block by block
    subtract(a, b)                   a - b, block by block
    sum_squared_difference(a, b)     the sum of (a - b)**2 over axes: partial sums, added
    mean_squared_difference(a, b)    that sum divided by the number of terms
    quantized_squared_difference(a, b, a_quant=..., b_quant=..., out_quant=...)
    quantized_subtract(a, b, a_quant=..., b_quant=..., out_quant=...)
                                     int8/uint8/int16 as LiteRT computes them, block by block

They take the eager functions' keywords (less ``out``) and raise their errors
(shapes, dtypes, axes, modes, threads) when the graph is built, checked on
stand-ins that hold no data, so that nothing is computed before ``.compute()``
and nothing fails there that could have failed earlier. (An integer sum too
large for its output type depends on the data: that error comes at compute
time. When a call has several errors, the one reported may not be the one the
eager function reports first.)

The results are bit-identical to the eager module's for any chunking, any
``split_every`` and any number of workers: the element-wise ops are the eager
ops on each block. Each block of a float reduction yields the library's
bounded partial state (``sqdiff._bounded_partial_sum_squared_difference``: the
eager fast path's sums, each with a rigorous error bound); the states are
added with the bounds (``sqdiff._combine_bounded_partial_sums``) by the task
that finishes the output block, or by a tree of tasks first where they are
large or ``split_every`` is given, and rounded once, at the end, where the bound decides the rounding
(``sqdiff._finish_bounded_partial_sums``): almost always. An output block it
leaves undecided (a sum on or within about 2^-40 of a rounding boundary, such
as an odd integer sum beyond 2**24 for float32) is summed again from the
inputs, in that task, with the exact partial states
(``sqdiff._partial_sum_squared_difference``, added exactly and rounded), which
integer inputs always use. So a reduction reads its inputs once, at the
eager call's speed, and twice in the rare undecided case.

Each block runs with ``threads=1`` by default: Dask provides the parallelism,
and more threads per task would oversubscribe the cores. The functions the
tasks run are module-level functions of this module, so graphs pickle to
``distributed`` workers (which need sqdiff installed, as for any library).

>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.arange(6, dtype=np.float32, chunks=2).reshape(2, 3)
>>> d = sqdiff.dask.squared_difference(a, np.float32([1, 0, -1]))
>>> d.compute()
array([[ 1.,  1.,  9.],
       [ 4., 16., 36.]], dtype=float32)
>>> sqdiff.dask.mean_squared_difference(a, np.float32([1, 0, -1]), axis=1).compute()
array([ 3.6666667, 18.666666 ], dtype=float32)
"""

import functools
import numbers
import operator

import re

import dask
import dask.array as _da
import dask.base as _dask_base
import numpy as _np

import sqdiff as _sqdiff
from sqdiff import _promotion, _weak_scalars

# The oldest Dask sqdiff.dask supports: Debian 12's python3-dask. docs/python.md, the `dask`
# extra in pyproject.toml and python/tests/optional_modules.py say the same.
MINIMUM_DASK = "2022.12.1"


def _release(version):
    """The leading numbers of a version string: "2022.12.1+dfsg" -> (2022, 12, 1)."""
    return tuple(int(part) for part in re.findall(r"\d+", re.match(r"[\d.]*", version).group()))


if _release(dask.__version__) < _release(MINIMUM_DASK):
    raise ImportError(f"sqdiff.dask needs Dask {MINIMUM_DASK} or later, and this is Dask {dask.__version__}: "
                      f"pip install \"dask[array]>={MINIMUM_DASK}\" (or pip install \"sqdiff[dask]\")")
del dask

__all__ = ["mean_squared_difference", "squared_difference", "subtract", "sum_squared_difference"]

_Error = _sqdiff.Error

_EAGER = {
    "squared_difference": _sqdiff.squared_difference,
    "subtract": _sqdiff.subtract,
    "sum_squared_difference": _sqdiff.sum_squared_difference,
    "mean_squared_difference": _sqdiff.mean_squared_difference,
}

_BF16_NAMES = ("bfloat16", "bf16")


# --- operands and their stand-ins -------------------------------------------

def _is_scalar(x):
    """Python and NumPy scalars stay as they are: the eager functions apply
    their own rules to them (a Python int or float takes the array's type)."""
    return isinstance(x, (numbers.Number, _np.generic))


def _operand(op, name, x):
    """A Dask array of known chunk sizes, or a scalar. NumPy arrays and lists
    become one-chunk Dask arrays (split along the other operand's chunks when
    the graph is built); objects whose conversion would lose their meaning are
    refused with the eager function's message."""
    if isinstance(x, _da.Array):
        if any(_np.isnan(size) for sizes in x.chunks for size in sizes):
            raise _Error(f"{op}: {name} has unknown chunk sizes (shape {x.shape}); call "
                         f"{name}.compute_chunk_sizes() first, so that the shapes can be checked")
        return _without_empty_chunks(x)
    if _is_scalar(x):
        return x
    if isinstance(x, _np.ma.MaskedArray) or (type(x).__module__ or "").split(".")[0] in ("pandas", "xarray"):
        _EAGER[op](*((x, 0) if name == "a" else (0, x)))  # raises: masks and labels would be lost
    array = _np.asarray(x)
    return _da.from_array(array, chunks=array.shape, asarray=False)


def _promoted(op, a, b, dtype, dtype_is_output):
    """a and b in the dtype NumPy promotes their dtypes to, as the eager functions
    compute them (sqdiff._promotion): the one of another dtype converted lazily,
    chunk by chunk (astype), so no conversion happens before compute() and none
    is larger than a chunk. Python scalars stay weak (a Python float beside
    integer arrays makes them float64, as in the eager functions: NEP 50), and
    nothing is converted where the eager function would not: a dtype= of the element-wise functions
    (it checks the inputs' dtype), bfloat16 bits, an unsupported dtype (the
    eager error, from the stand-ins)."""
    bf16 = isinstance(dtype, str) and dtype in _BF16_NAMES
    if bf16 or (dtype is not None and not dtype_is_output):
        return a, b
    strong = [x for x in (a, b) if not _weak_scalars.is_weak(x)]
    dtypes = [getattr(x, "dtype", None) for x in strong]  # a Python complex has none: the eager error
    # `is None`, not `in`: NumPy compares a dtype equal to None as to float64.
    if (not dtypes or any(d is None for d in dtypes)
            or not all(_promotion._supported(_np.dtype(d)) for d in dtypes)):
        return a, b
    weak = [x for x in (a, b) if _weak_scalars.is_weak(x)]
    target = _promotion.promoted_dtype(op, [_np.dtype(d) for d in dtypes], weak)  # float64 for int with 0.5
    if target is None:
        return a, b
    return tuple(x if _weak_scalars.is_weak(x) or x.dtype == target else x.astype(target) for x in (a, b))


def _without_empty_chunks(x):
    """x with no chunk of length 0 (a dim of length 0 keeps one). Boolean
    indexing and compute_chunk_sizes() leave such chunks, (1, 0) for a dim of
    length 1, and blockwise then lines a broadcast dim's blocks up as if it
    had two: an element-wise result with more elements than its shape, a
    reduction that fails at compute(). Dropping them moves no element, so the
    results stay the eager ones; an array without them is passed on as it is."""
    chunks = tuple(tuple(size for size in sizes if size) or (0,) for sizes in x.chunks)
    return x if chunks == x.chunks else x.rechunk(chunks)


def _shape(x):
    """The shape of an operand or stand-in (a scalar's is ())."""
    return tuple(x.shape) if isinstance(x, (_da.Array, _np.ndarray)) else ()


def _ones_stand_in(x):
    """x's dtype and rank, every dim 1, one zero in memory: what the checks that
    depend only on dtypes, ranks and keywords run on."""
    if isinstance(x, _da.Array):
        return _np.broadcast_to(_np.zeros((), x.dtype), (1,) * x.ndim)
    return x


def _shaped_stand_in(x):
    """x's dtype and shape, one zero in memory (every stride 0)."""
    if isinstance(x, _da.Array):
        return _np.broadcast_to(_np.zeros((), x.dtype), x.shape)
    return x


def _broadcast_error(op, shape_a, shape_b, broadcast, broadcast_axis):
    """The eager function's error for shapes that do not broadcast, or None
    (the eager functions put their own name in front of broadcast_shape's)."""
    try:
        _sqdiff.broadcast_shape(shape_a, shape_b, broadcast, broadcast_axis)
    except _Error as error:
        message = str(error)
        prefix = "broadcast_shape: "
        if message.startswith(prefix):
            message = message[len(prefix):]
        return _Error(f"{op}: {message}")
    return None


def _check_on_ones(op, a, b, broadcast, broadcast_axis, **keywords):
    """The eager function on stand-ins with a's and b's dtypes and ranks but
    every dim 1: raises its error for the dtypes, ranks and keywords, or
    returns its one-element result (whose dtype is the result's). An error
    about the stand-ins' shapes (ranks that do not broadcast) is replaced by
    the one about the real shapes."""
    ones_a, ones_b = _ones_stand_in(a), _ones_stand_in(b)
    try:
        return _EAGER[op](ones_a, ones_b, broadcast=broadcast, broadcast_axis=broadcast_axis, **keywords)
    except _Error as error:
        stand_in_error = _broadcast_error(op, _shape(ones_a), _shape(ones_b), broadcast, broadcast_axis)
        if stand_in_error is not None and str(stand_in_error) == str(error):
            real_error = _broadcast_error(op, _shape(a), _shape(b), broadcast, broadcast_axis)
            if real_error is not None:
                raise real_error from None
        raise


def _check_shapes(op, a, b, broadcast, broadcast_axis):
    """The broadcast shape of a and b, or the eager function's error."""
    error = _broadcast_error(op, _shape(a), _shape(b), broadcast, broadcast_axis)
    if error is not None:
        raise error
    return _sqdiff.broadcast_shape(_shape(a), _shape(b), broadcast, broadcast_axis)


def _pdpd_start(rank_a, rank_b, broadcast_axis):
    """The dim of `a` that b's first dim lines up with in "pdpd" mode."""
    return rank_a - rank_b if broadcast_axis == -1 else operator.index(broadcast_axis)


def _blockwise_inputs(a, b, broadcast, broadcast_axis, rank):
    """blockwise's (array, indices) pairs: which output dims each input's dims
    line up with (None for a scalar)."""
    rank_a, rank_b = len(_shape(a)), len(_shape(b))
    if broadcast == "pdpd":
        start = _pdpd_start(rank_a, rank_b, broadcast_axis)
        index_a, index_b = tuple(range(rank_a)), tuple(range(start, start + rank_b))
    else:  # "numpy" right-aligns; "none" has equal ranks, where that is the same
        index_a, index_b = tuple(range(rank - rank_a, rank)), tuple(range(rank - rank_b, rank))
    pairs = []
    for x, index in ((a, index_a), (b, index_b)):
        pairs += [x, index] if isinstance(x, _da.Array) else [x, None]
    return pairs


def _block_alignment(a, b, broadcast, broadcast_axis):
    """The broadcast_axis for each block's call: pdpd's -1 made explicit (it
    stays right for blocks, whose ranks are the arrays' ranks)."""
    if broadcast == "pdpd":
        return _pdpd_start(len(_shape(a)), len(_shape(b)), broadcast_axis)
    return broadcast_axis


# --- element-wise -----------------------------------------------------------

def _elementwise_block(a, b, *, op, broadcast, broadcast_axis, keywords):
    """A task: the eager element-wise op (float or quantized) on one block of each input."""
    return _EAGER[op](a, b, broadcast=broadcast, broadcast_axis=broadcast_axis, **keywords)


def _blockwise(op, a, b, broadcast, broadcast_axis, keywords):
    """The lazy element-wise op: checked now as the eager call would be, one task per block."""
    one = _check_on_ones(op, a, b, broadcast, broadcast_axis, **keywords)
    shape = _check_shapes(op, a, b, broadcast, broadcast_axis)
    rank = len(shape)
    return _da.blockwise(
        _elementwise_block, tuple(range(rank)), *_blockwise_inputs(a, b, broadcast, broadcast_axis, rank),
        op=op, broadcast=broadcast, broadcast_axis=_block_alignment(a, b, broadcast, broadcast_axis),
        keywords=keywords, token=f"sqdiff-{op}", align_arrays=True, meta=_np.empty((0,) * rank, dtype=one.dtype))


def _elementwise(op, a, b, broadcast, broadcast_axis, threads, dtype):
    a, b = _promoted(op, _operand(op, "a", a), _operand(op, "b", b), dtype, dtype_is_output=False)
    return _blockwise(op, a, b, broadcast, broadcast_axis, {"threads": threads, "dtype": dtype})


_ELEMENTWISE_PARAMETERS = """\
Parameters
----------
a, b : dask.array.Array, numpy.ndarray or scalar
    The inputs, as for the eager function (two dtypes are promoted as
    ``numpy.result_type`` does, lazily, chunk by chunk). A NumPy array (or a
    list) is split along the other operand's chunks; a Python scalar follows
    the eager function's rules (it takes the array's dtype; a float makes an
    integer array float64, lazily, as NumPy 2 does).
broadcast : {"numpy", "none", "pdpd"}, default "numpy"
broadcast_axis : int, default -1
dtype : str or numpy.dtype, optional
    As for the eager function ("pdpd": the dim of ``a`` that b's first dim
    lines up with; dtype="bfloat16" for uint16 arrays of bfloat16 bits).
threads : int or None, default 1
    Threads for each block's call (None: the library's default). Dask runs
    the blocks in parallel.

Returns
-------
dask.array.Array
    Lazy, of the broadcast shape and the inputs' dtype; computed, it is bit
    for bit the eager function's result. Its chunks are the inputs' chunks
    along the broadcast shape, unified where they differ (a dim chunked
    differently in ``a`` and ``b`` gets the boundaries of both), less any
    chunk of length 0 (as boolean indexing leaves them).

Raises
------
sqdiff.Error, TypeError
    The eager function's errors, here, when the graph is built (also for a
    Dask array of unknown chunk sizes, whose shape cannot be checked).
"""


def squared_difference(a, b, *, broadcast="numpy", broadcast_axis=-1, threads=1, dtype=None):
    return _elementwise("squared_difference", a, b, broadcast, broadcast_axis, threads, dtype)


def subtract(a, b, *, broadcast="numpy", broadcast_axis=-1, threads=1, dtype=None):
    return _elementwise("subtract", a, b, broadcast, broadcast_axis, threads, dtype)


squared_difference.__doc__ = f"""\
Element-wise ``(a - b)**2`` of Dask arrays, lazily: ``sqdiff.squared_difference`` on each block.

{_ELEMENTWISE_PARAMETERS}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.from_array(np.arange(8, dtype=np.int16).reshape(4, 2), chunks=(3, 2))
>>> d = sqdiff.dask.squared_difference(a, np.int16([10, 0, 5, 1]), broadcast="pdpd", broadcast_axis=0)
>>> d
dask.array<sqdiff-squared_difference, shape=(4, 2), dtype=int16, chunksize=(3, 2), chunktype=numpy.ndarray>
>>> d.compute()
array([[100,  81],
       [  4,   9],
       [  1,   0],
       [ 25,  36]], dtype=int16)

Errors come when the graph is built:

>>> sqdiff.dask.squared_difference(a, da.zeros((3,), dtype=np.int16))
Traceback (most recent call last):
    ...
sqdiff.Error: squared_difference: cannot broadcast [4,2] with [3] (numpy): dimension 1 is 2 vs 3
"""

subtract.__doc__ = f"""\
Element-wise ``a - b`` of Dask arrays, lazily: ``sqdiff.subtract`` on each block.

{_ELEMENTWISE_PARAMETERS}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.from_array(np.uint8([0, 1, 2, 3, 4]), chunks=2)
>>> sqdiff.dask.subtract(a, 1).compute()   # uint8 wraps around; 1 takes a's dtype
array([255,   0,   1,   2,   3], dtype=uint8)
"""


# --- reductions -------------------------------------------------------------

def _reduced_axes(axis, rank):
    """The reduced dims of the broadcast shape, sorted and non-negative (the
    eager check has already refused bad ones)."""
    if axis is None:
        return tuple(range(rank))
    axes = (axis,) if not isinstance(axis, (tuple, list)) else axis
    return tuple(sorted(operator.index(x) % rank for x in axes))


def _check_axes(op, a, b, axis, keepdims, dtype, broadcast, broadcast_axis, out_dtype):
    """Raises the eager function's error for axes that do not fit the broadcast
    shape. The eager function runs on stand-ins of the real shapes with an
    `out` whose shape can never be right: the library checks the axes before
    the output's shape, and then stops at the output's shape, before reading
    anything."""
    rank = max(len(_shape(a)), len(_shape(b)))
    never = (0,) * (rank + 1)
    try:
        _EAGER[op](_shaped_stand_in(a), _shaped_stand_in(b), axis, keepdims=keepdims, dtype=dtype,
                   out=_np.empty(never, dtype=out_dtype), broadcast=broadcast, broadcast_axis=broadcast_axis)
    except _Error as error:
        shape_text = "[" + ",".join("0" for _ in never) + "]"
        if not str(error).startswith(f"{op}: output shape {shape_text} differs"):
            raise
    else:  # pragma: no cover - the library never takes that shape
        raise AssertionError(f"{op}: the axes check returned without an error")


def _input_dtype(op, a, b, dtype):
    """What the partial states are states of: "bfloat16", or the inputs' dtype
    (a Python scalar takes the other operand's)."""
    if isinstance(dtype, str) and dtype in _BF16_NAMES:
        return "bfloat16"
    ones_a, ones_b = _weak_scalars.resolve(op, (_ones_stand_in(a), _ones_stand_in(b)), None)
    return _np.asarray(ones_a).dtype


def _partial_block(a, b, *, axes, broadcast, broadcast_axis, threads, dtype_keyword):
    """A task: the exact partial state of one block of each input, summed over
    `axes` (kept as 1s), shape (..., words)."""
    return _sqdiff._partial_sum_squared_difference(a, b, axes, keepdims=True, broadcast=broadcast,
                                                   broadcast_axis=broadcast_axis, threads=threads, dtype=dtype_keyword)


def _bounded_block(a, b, *, axes, broadcast, broadcast_axis, threads, dtype_keyword, out_dtype):
    """A task: the bounded partial state of one block of each input (the fast
    path's sums with their error bounds), shape (..., 4)."""
    return _sqdiff._bounded_partial_sum_squared_difference(a, b, axes, keepdims=True, broadcast=broadcast,
                                                           broadcast_axis=broadcast_axis, threads=threads,
                                                           dtype=dtype_keyword, out_dtype=out_dtype)


def _pass_states(states, axis, keepdims):
    """da.reduction's per-chunk step: the blocks already are partial states."""
    return states


def _combine_states(states, axis, keepdims, *, input_dtype, combine):
    """A task of the tree: the states side by side along `axis` (as Dask
    concatenates them) added into one (`combine`: exactly, or with their
    bounds), into a new array."""
    states = _np.asarray(states)
    index = [slice(None)] * states.ndim
    total = None
    for position in _np.ndindex(*(states.shape[i] for i in axis)):
        for dim, at in zip(axis, position):
            index[dim] = slice(at, at + 1)
        piece = states[tuple(index)]
        if total is None:
            total = _np.array(piece, order="C")  # a copy: the inputs belong to other tasks
        else:
            combine(input_dtype, total, piece)
    return total


def _added_here(states, tree_axes, input_dtype, combine):
    """A finishing task's states: added here along `tree_axes`, where the
    states of its output block were not added by a tree before it."""
    if not tree_axes:
        return states
    return _combine_states(states, tree_axes, True, input_dtype=input_dtype, combine=combine)


def _finish_states(states, *, input_dtype, count, mean, out_dtype, squeeze, result_dtype, tree_axes=(),
                   combine=None):
    """The last task of each output block: the states (added here along
    `tree_axes`) rounded once, as `result_dtype` (the eager function's:
    ml_dtypes.bfloat16 for such inputs, whose states finish as uint16 bits)."""
    states = _added_here(states, tree_axes, input_dtype, combine)
    shape = tuple(d for i, d in enumerate(states.shape[:-1]) if i not in squeeze)
    result = _sqdiff._finish_partial_sums(input_dtype, states, count, mean=mean, out_dtype=out_dtype)
    if result.dtype != result_dtype:
        result = result.view(result_dtype)
    return result.reshape(shape)


# How many output blocks were summed again exactly since the process started
# (the threaded and synchronous schedulers run the tasks in this process; the
# tests read it).
_exact_fallbacks = 0


class _ExactFallback:
    """The exact reduction (exact partial states, added and rounded), computed
    block by block only where the bounded states leave an output undecided.
    A plain object, not a collection: Dask neither computes it with the graph
    nor makes the graph depend on it; the finishing task computes the block it
    needs, synchronously, in its own thread."""

    __slots__ = ("result",)

    def __init__(self, result):
        self.result = result

    def __dask_tokenize__(self):
        return ("sqdiff-exact-fallback", self.result.name)

    def block(self, block_id):
        global _exact_fallbacks
        _exact_fallbacks += 1
        # A 0-d result is its one block (Dask 2022.12's .blocks[()] yields a key, not an array).
        block = self.result if self.result.ndim == 0 else self.result.blocks[tuple(block_id)]
        return _dask_base.compute(block, scheduler="sync")[0]


def _finish_bounded(states, where=0, *, input_dtype, count, mean, out_dtype, squeeze, result_dtype, block_grid,
                    fallback, tree_axes=(), combine=None):
    """The last task of each output block of a float reduction: the bounded
    states (added here along `tree_axes`) rounded once where their bounds
    decide (almost everywhere), the other outputs taken from the exact
    reduction's block (`where` holds the block's flat index in `block_grid`)."""
    states = _added_here(states, tree_axes, input_dtype, combine)
    shape = tuple(d for i, d in enumerate(states.shape[:-1]) if i not in squeeze)
    result, undecided = _sqdiff._finish_bounded_partial_sums(input_dtype, states, count, mean=mean,
                                                             out_dtype=out_dtype)
    if result.dtype != result_dtype:
        result = result.view(result_dtype)
    result = result.reshape(shape)
    undecided = undecided.reshape(shape)
    if undecided.any():
        block_id = _np.unravel_index(int(_np.asarray(where).item()), block_grid)
        _np.copyto(result, _np.asarray(fallback.block(block_id), dtype=result.dtype), where=undecided)
    return result


# The most bytes of partial states one finishing task adds by itself. Below it
# (always, for a reduction over every axis: a state is 4 or a few words per
# output) the states of an output block go straight to its finishing task, a
# tree of one level: each task costs the scheduler about as much as summing
# megabytes, so on fast eager calls the tree's tasks were most of what Dask
# added (issue 35: 16 blocks took 55 tasks, now 17 beside the inputs').
_ONE_LEVEL_TREE_BYTES = 16 << 20


def _one_level_tree_fits(states, axes):
    """Whether one task may add all the partial states of an output block."""
    per_output_block = 1
    for i in axes:
        per_output_block *= states.numblocks[i]
    largest_block = 8
    for dim_chunks in states.chunks:
        largest_block *= max(dim_chunks, default=0)
    return per_output_block * largest_block <= _ONE_LEVEL_TREE_BYTES


def _reduction(op, a, b, axis, keepdims, dtype, broadcast, broadcast_axis, threads, split_every):
    mean = op == "mean_squared_difference"
    a, b = _promoted(op, _operand(op, "a", a), _operand(op, "b", b), dtype, dtype_is_output=True)
    one = _check_on_ones(op, a, b, broadcast, broadcast_axis, axis=None, keepdims=keepdims, dtype=dtype,
                         threads=threads)
    shape = _check_shapes(op, a, b, broadcast, broadcast_axis)
    _check_axes(op, a, b, axis, keepdims, dtype, broadcast, broadcast_axis, one.dtype)
    rank = len(shape)
    axes = _reduced_axes(axis, rank)
    input_dtype = _input_dtype(op, a, b, dtype)
    bf16 = input_dtype == "bfloat16"
    partial_dtype = "bfloat16" if bf16 else None
    out_dtype = None if dtype is None or bf16 and isinstance(dtype, str) and dtype in _BF16_NAMES else dtype
    count = 1
    for i in axes:
        count *= shape[i]
    squeeze = () if keepdims else axes
    out_rank = rank - len(squeeze)
    # The dims dropped by the finishing tasks (the squeezed ones and the state's words) are one block each.
    dropped = set(squeeze) | {rank}
    finish_keywords = dict(input_dtype=input_dtype, count=count, mean=mean, out_dtype=out_dtype, squeeze=squeeze,
                           result_dtype=one.dtype)

    def states_of(kind, block, combine, words, **keywords):
        """The blocks' partial states, and the axes along which the finishing
        tasks still add them (those of a one-level tree)."""
        states = _da.blockwise(
            block, tuple(range(rank + 1)), *_blockwise_inputs(a, b, broadcast, broadcast_axis, rank),
            new_axes={rank: words}, adjust_chunks={i: 1 for i in axes},
            axes=axes, broadcast=broadcast, broadcast_axis=_block_alignment(a, b, broadcast, broadcast_axis),
            threads=threads, dtype_keyword=partial_dtype, token=f"sqdiff-{op}-{kind}-partial", align_arrays=True,
            meta=_np.empty((0,) * (rank + 1), dtype=_np.uint64), **keywords)
        if not axes:
            return states, {}
        adding = dict(tree_axes=axes, combine=combine)
        if split_every is None and _one_level_tree_fits(states, axes):
            return states, adding
        add = functools.partial(_combine_states, input_dtype=input_dtype, combine=combine)
        states = _da.reduction(
            states, _pass_states, add, combine=add, axis=axes, keepdims=True, dtype=_np.uint64,
            split_every=split_every, concatenate=True, name=f"sqdiff-{op}-{kind}-combine",
            meta=_np.empty((0,) * (rank + 1), dtype=_np.uint64))
        return states, {}

    # The exact reduction: exact partial states, added exactly and rounded once.
    # blockwise, not map_blocks(drop_axis=...): Dask 2022.12 (Debian 12's) deprecates map_blocks'
    # token= with a FutureWarning, and its name= is a prefix there but the whole key later.
    out_index = tuple(i for i in range(rank + 1) if i not in dropped)

    def finishing_index(adding):
        """The finishing tasks' output index. Where they add the states
        themselves, the reduced dims are contracted (all of an output block's
        states in one task), and those kept by keepdims come back as new dims
        of length 1 (labels past the states' own)."""
        if not adding or not keepdims:
            return out_index, {}
        return tuple(rank + 1 + i if i in axes else i for i in range(rank)), {rank + 1 + i: 1 for i in axes}

    exact_states, exact_adding = states_of("exact", _partial_block, _sqdiff._combine_partial_sums,
                                           _sqdiff._partial_sum_words(input_dtype))
    exact_index, exact_new_axes = finishing_index(exact_adding)
    exact = _da.blockwise(
        _finish_states, exact_index, exact_states, tuple(range(rank + 1)), new_axes=exact_new_axes,
        dtype=one.dtype, meta=_np.empty((0,) * out_rank, dtype=one.dtype), token=f"sqdiff-{op}", concatenate=True,
        **finish_keywords, **exact_adding)
    if not bf16 and _np.dtype(input_dtype).kind in "iu":
        return exact  # sums of integer squares: the exact states are the fast path

    # Float inputs: the bounded states, at the fast path's speed; an output whose
    # bound straddles a rounding boundary takes the exact reduction's block instead.
    bounded_states, bounded_adding = states_of("bounded", _bounded_block, _sqdiff._combine_bounded_partial_sums,
                                               _sqdiff._BOUNDED_PARTIAL_SUM_WORDS, out_dtype=out_dtype)
    index, new_axes = finishing_index(bounded_adding)
    numblocks = exact.numblocks
    finishing = dict(dtype=one.dtype, meta=_np.empty((0,) * out_rank, dtype=one.dtype), token=f"sqdiff-{op}",
                     concatenate=True, align_arrays=False, block_grid=numblocks, fallback=_ExactFallback(exact),
                     new_axes=new_axes, **finish_keywords, **bounded_adding)
    if all(n == 1 for n in numblocks):
        # One output block: its index is 0, and no task needs to say so.
        return _da.blockwise(_finish_bounded, index, bounded_states, tuple(range(rank + 1)), **finishing)
    # Each finishing task learns its block's location (which the fallback needs) from a
    # small array beside the states: element i of `where` is block i's flat index. (map_blocks'
    # block_id would do, but Dask 2022.12 cannot run an empty one and reads its name= otherwise.)
    where = _da.from_array(_np.arange(_np.prod(numblocks, dtype=_np.int64)).reshape(numblocks),
                           chunks=(1,) * len(numblocks), name=f"sqdiff-block-index-{_dask_base.tokenize(numblocks)}")
    return _da.blockwise(_finish_bounded, index, bounded_states, tuple(range(rank + 1)), where, index, **finishing)


_REDUCTION_PARAMETERS = """\
Parameters
----------
a, b : dask.array.Array, numpy.ndarray or scalar
    The inputs, as for the element-wise functions here.
axis : None, int or tuple of ints, default None
    The axes of the broadcast shape to reduce (None: all).
keepdims : bool, default False
dtype : str or numpy.dtype, optional
broadcast : {"numpy", "none", "pdpd"}, default "numpy"
broadcast_axis : int, default -1
    As for the eager function: dtype is the output type (or "bfloat16" for
    uint16 arrays of bfloat16 bits, whose result is then bfloat16 bits).
threads : int or None, default 1
    Threads for each block's call (None: the library's default).
split_every : int or dict, optional
    How many partial states one task of a tree adds. None: each output
    block's finishing task adds them all where they take at most 16 MiB,
    Dask's default tree otherwise. The result does not depend on it.

Returns
-------
dask.array.Array
    Lazy, of the reduced shape and the output type; computed, it is bit for
    bit the eager function's result, whatever the chunks, split_every and
    workers. Its chunks are the inputs' chunks along the kept dims (less
    any of length 0).

Raises
------
sqdiff.Error, TypeError
    The eager function's errors, here, when the graph is built. An integer
    sum beyond int64/uint64 depends on the data: it is raised by compute().
"""


def sum_squared_difference(a, b, axis=None, *, keepdims=False, dtype=None, broadcast="numpy", broadcast_axis=-1,
                           threads=1, split_every=None):
    return _reduction("sum_squared_difference", a, b, axis, keepdims, dtype, broadcast, broadcast_axis, threads,
                      split_every)


def mean_squared_difference(a, b, axis=None, *, keepdims=False, dtype=None, broadcast="numpy", broadcast_axis=-1,
                            threads=1, split_every=None):
    return _reduction("mean_squared_difference", a, b, axis, keepdims, dtype, broadcast, broadcast_axis, threads,
                      split_every)


sum_squared_difference.__doc__ = f"""\
``sum((a - b)**2, axis)`` of Dask arrays, lazily, exact: ``sqdiff.sum_squared_difference``'s result.

Each block yields the exact, unrounded partial sums of its squares; a tree of
tasks adds them exactly; the last task rounds them once. So the result is the
eager function's, correctly rounded, for any chunking.

{_REDUCTION_PARAMETERS}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.from_array(np.float32([[1e8, 1, -1e8, 1], [3, 4, 5, 6]]), chunks=1)
>>> s = sqdiff.dask.sum_squared_difference(a, np.float32(0), axis=1)
>>> s
dask.array<sqdiff-sum_squared_difference, shape=(2,), dtype=float32, chunksize=(1,), chunktype=numpy.ndarray>
>>> s.compute()
array([2.0e+16, 8.6e+01], dtype=float32)
>>> sqdiff.dask.sum_squared_difference(a, np.int64(0))   # float32 with int64: float64, as in NumPy
dask.array<sqdiff-sum_squared_difference, shape=(), dtype=float64, chunksize=(), chunktype=numpy.ndarray>
"""

mean_squared_difference.__doc__ = f"""\
``mean((a - b)**2, axis)`` of Dask arrays, lazily, exact: ``sqdiff.mean_squared_difference``'s result.

The exact sum (as in ``sum_squared_difference`` here) divided by the number of
reduced elements, rounded once.

{_REDUCTION_PARAMETERS}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.arange(10, dtype=np.int32, chunks=3)
>>> sqdiff.dask.mean_squared_difference(a, 0).compute()   # int32 inputs: a float64 mean
array(28.5)
>>> sqdiff.dask.mean_squared_difference(a, np.int32(0), axis=1)
Traceback (most recent call last):
    ...
sqdiff.Error: mean_squared_difference: axis 1 is out of range for shape [10] of rank 1 (axes go from -1 to 0)
"""


# --- quantized (int8, uint8, int16; SPEC section 9) -------------------------

__all__ += ["quantized_squared_difference", "quantized_subtract"]

# The eager entries carry neutral quantization parameters so that _operand's
# refusal of a masked array or a pandas/xarray object (a call with the two
# operands only) reaches the eager function's message; every other call passes
# the real ones, which replace these.
_NEUTRAL_QUANT = {"a_quant": (1.0, 0), "b_quant": (1.0, 0), "out_quant": (1.0, 0)}
_EAGER["quantized_squared_difference"] = functools.partial(_sqdiff.quantized_squared_difference, **_NEUTRAL_QUANT)
_EAGER["quantized_subtract"] = functools.partial(_sqdiff.quantized_subtract, **_NEUTRAL_QUANT)


def _quantized(op, a, b, broadcast, broadcast_axis, keywords):
    # No promotion: the eager functions take the three tensors in one quantized type only.
    return _blockwise(op, _operand(op, "a", a), _operand(op, "b", b), broadcast, broadcast_axis, keywords)


def quantized_squared_difference(a, b, *, a_quant, b_quant, out_quant, broadcast="numpy", broadcast_axis=-1,
                                 rounding="double", threads=1):
    keywords = {"a_quant": a_quant, "b_quant": b_quant, "out_quant": out_quant, "rounding": rounding,
                "threads": threads}
    return _quantized("quantized_squared_difference", a, b, broadcast, broadcast_axis, keywords)


def quantized_subtract(a, b, *, a_quant, b_quant, out_quant, activation=None, pot_scale_int16=True,
                       broadcast="numpy", broadcast_axis=-1, rounding="double", threads=1):
    keywords = {"a_quant": a_quant, "b_quant": b_quant, "out_quant": out_quant, "activation": activation,
                "pot_scale_int16": pot_scale_int16, "rounding": rounding, "threads": threads}
    return _quantized("quantized_subtract", a, b, broadcast, broadcast_axis, keywords)


_QUANTIZED_PARAMETERS = """\
Parameters
----------
a, b : dask.array.Array, numpy.ndarray or NumPy scalar of int8, uint8 or int16
    The stored integers, both of one type (nothing is promoted). A NumPy array
    is split along the other operand's chunks.
a_quant, b_quant, out_quant, @OPTIONS@broadcast, broadcast_axis, rounding
    As for the eager function: ``(scale, zero_point)`` tuples and the same
    keywords (less ``out``).
threads : int or None, default 1
    Threads for each block's call (None: the library's default). Dask runs
    the blocks in parallel.

Returns
-------
dask.array.Array
    Lazy, of the broadcast shape and the inputs' dtype; computed, it is bit
    for bit the eager function's result (each element depends only on its
    two inputs and the call's parameters, so the chunking cannot change it).

Raises
------
sqdiff.Error, TypeError
    The eager function's errors (quantization, types, options, shapes), here,
    when the graph is built.
"""

quantized_squared_difference.__doc__ = f"""\
Quantized element-wise ``(a - b)**2`` of Dask arrays, lazily: ``sqdiff.quantized_squared_difference`` on each block.

{_QUANTIZED_PARAMETERS.replace("@OPTIONS@", "")}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.from_array(np.int8([[2, 4, 6], [8, 10, 12]]), chunks=(1, 2))
>>> d = sqdiff.dask.quantized_squared_difference(a, np.int8([14, 18, 22]), a_quant=(0.5, 0),
...                                              b_quant=(0.25, 10), out_quant=(0.125, -128))
>>> d.compute()
array([[-128, -128, -128],
       [ -56,  -56,  -56]], dtype=int8)
"""

quantized_subtract.__doc__ = f"""\
Quantized element-wise ``a - b`` of Dask arrays, lazily: ``sqdiff.quantized_subtract`` on each block.

{_QUANTIZED_PARAMETERS.replace("@OPTIONS@", "activation, pot_scale_int16, ")}
Examples
--------
>>> import numpy as np
>>> import dask.array as da
>>> import sqdiff.dask
>>> a = da.from_array(np.uint8([10, 20, 30, 40]), chunks=3)
>>> sqdiff.dask.quantized_subtract(a, np.uint8([25]), a_quant=(0.1, 20), b_quant=(0.05, 5),
...                                out_quant=(0.1, 128), activation="relu").compute()
array([128, 128, 128, 138], dtype=uint8)

Errors come when the graph is built:

>>> sqdiff.dask.quantized_subtract(a, a, a_quant=(0.1, 20), b_quant=(0.1, 20), out_quant=(0.1, 300))
Traceback (most recent call last):
    ...
sqdiff.Error: quantized_subtract: the zero point of out is 300, outside the range [0, 255] of u8
"""
