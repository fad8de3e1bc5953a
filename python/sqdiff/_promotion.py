"""NumPy's type promotion for inputs of different dtypes (issue 24).

The C++ library never converts: both inputs have one type. The Python
functions accept what NumPy accepts: arrays of two dtypes (and lists, which
``numpy.asarray`` makes arrays of their own dtype) are computed in the dtype
``numpy.result_type`` gives for the two dtypes, ``x_f32`` with ``y_f64`` in
float64, ``int32`` with ``float32`` in float64, ``int8`` with ``uint8`` in int16.
Promotion is by dtype only, as in NumPy 2: a NumPy scalar or 0-d array keeps
its dtype (NumPy 1's value-based casting is not applied), and a Python scalar
stays weak (NEP 50): it takes the promoted type (``_weak_scalars``), except
that a Python float beside integers only makes the call float64, as NumPy 2's
``result_type(int8_array, 0.5)`` is: the integer arrays are then converted as
for two dtypes.

Only the converted operand is converted, and for the element-wise functions a
block at a time (``CHUNK`` elements of the result, in C order) into the op, so
that a large call makes no temporary of the full size: each block of an input
is converted (``ndarray.astype``) and passed with the matching block of the
result. The reductions and gradients convert the operand whole (the docs give
the measured cost), since a reduction's blocks cannot be rounded apart.

ml_dtypes.bfloat16 follows ml_dtypes' own promotion (float32 and float64 win,
int8 and uint8 become bfloat16); where NumPy has no common dtype (bfloat16 with
float16, or with wider integers) the call raises ``sqdiff.Error`` saying so.
bfloat16 bits in uint16 arrays (``dtype="bfloat16"``) are never promoted.
"""

import numpy as _np

from . import _sqdiff, _weak_scalars

# Elements of the result per block of a chunked conversion: 512 KiB of float64,
# a few times a core's L2 cache, and enough work per call (tens of microseconds)
# that the Python loop's cost per block is small beside it.
CHUNK = 1 << 16

_BF16_NAMES = ("bfloat16", "bf16")
_NAMES = ("a", "b", "grad")


def _supported(dtype):
    """A dtype sqdiff computes in: the ten NumPy float and integer types, and
    ml_dtypes.bfloat16."""
    if dtype.kind == "f":
        return dtype.itemsize in (2, 4, 8)
    if dtype.kind in "iu":
        return dtype.itemsize in (1, 2, 4, 8)
    return dtype.name == "bfloat16" and dtype.itemsize == 2


def _common_dtype(op, dtypes):
    """numpy.result_type of `dtypes` (dtypes only: no value-based casting under
    NumPy 1), or sqdiff.Error where NumPy has none."""
    target = dtypes[0]
    for dtype in dtypes[1:]:
        try:
            target = _np.promote_types(target, dtype)
        except TypeError:  # NumPy 2's DTypePromotionError is a TypeError too
            raise _sqdiff.Error(
                f"{op}: NumPy has no common dtype for {target.name} and {dtype.name} "
                f"(numpy.result_type raises), so sqdiff cannot promote them; convert one first, "
                f"for example to float32") from None
    return _np.dtype(target).newbyteorder("=")


def promoted_dtype(op, strong, weak):
    """The dtype NumPy 2 computes arrays of the dtypes `strong` (sqdiff's, at
    least one) and the weak Python scalars `weak` in, or None when that is the
    arrays' one dtype (nothing to convert). Two dtypes promote as
    ``numpy.result_type``; a Python float beside integers gives float64 (NEP
    50: a weak *float*, and integers with a float promote to the default
    float)."""
    float_beside_integers = any(isinstance(v, float) for v in weak) and all(d.kind in "iu" for d in strong)
    if not float_beside_integers and all(d == strong[0] for d in strong[1:]):
        return None
    target = _common_dtype(op, strong)
    if float_beside_integers and target.kind in "iu":
        return _np.dtype(_np.float64)
    return target


def promote(op, values, dtype):
    """The operands made arrays and promoted: (arrays, target), with the weak
    Python scalars converted once to the target dtype and the arrays left in
    their own dtypes (the caller converts them, whole or in blocks); None when
    there is nothing to promote or promotion does not apply (bfloat16 bits, a
    `dtype=` check, an unsupported dtype), so that the compiled part reports
    the call as it is."""
    if dtype is not None:
        return None  # "bfloat16" bits are not promoted; another dtype= only checks, never converts
    weak = [_weak_scalars.is_weak(v) for v in values]
    arrays = [v if w else _sqdiff.as_array(op, name, v) for v, w, name in zip(values, weak, _NAMES)]
    strong = [x.dtype for x, w in zip(arrays, weak) if not w]
    if not strong or not all(_supported(d) for d in strong):
        return None
    target = promoted_dtype(op, strong, [v for v, w in zip(values, weak) if w])
    if target is None:
        return None
    return _weak_scalars.resolve_to(op, arrays, target), target


def not_promoted(error):
    """The compiled part's mixed-types error as the sqdiff.Error it is, where promotion does
    not apply (dtype= given: bfloat16 bits, or a dtype the inputs must have)."""
    return _sqdiff.Error(str(error))


def converted(x, target):
    """x in dtype `target` (itself when it has it already)."""
    x = _np.asarray(x)
    return x if x.dtype == target else x.astype(target)


def _alignment_start(broadcast, broadcast_axis, rank_out, rank_b):
    """The dim of the result that b's dim 0 lines up with."""
    if broadcast == "pdpd":
        axis = int(broadcast_axis)
        return rank_out - rank_b if axis == -1 else axis
    return rank_out - rank_b  # numpy right-aligns; none has equal ranks


def _block_index(x, index, start):
    """The part of x that the result's block `index` (slices over the result's
    leading dims) reads: x's dims line up with the result's from `start`; a dim
    of size 1 is read whole (it is broadcast)."""
    parts = []
    for dim in range(x.ndim):
        at = start + dim
        if at >= len(index) or x.shape[dim] == 1:
            parts.append(slice(None))
        else:
            parts.append(index[at])
    return tuple(parts)


def _blocks(shape):
    """Index tuples (slices of the leading dims) that cover `shape` in C order,
    each at most CHUNK elements (at least one row of the innermost dims kept
    whole)."""
    inner = 1
    split = len(shape)
    while split > 0 and inner * shape[split - 1] <= CHUNK:
        split -= 1
        inner *= shape[split]
    if split == 0:
        yield ()
        return
    dim = split - 1  # the dim cut into runs of `rows`
    rows = max(1, CHUNK // inner)
    for prefix in _np.ndindex(*shape[:dim]):
        head = tuple(slice(i, i + 1) for i in prefix)
        for first in range(0, shape[dim], rows):
            yield head + (slice(first, min(first + rows, shape[dim])),)


def _chunkable_out(out, shape, target, inputs):
    """True when `out` may be written block by block: a plain, writable,
    C-contiguous ndarray of the result's shape and dtype that shares no memory
    with an input. Any other out= takes the one-call path, where the library
    checks it and reports what is wrong, and handles overlap as if the inputs
    had been read first."""
    return (type(out) is _np.ndarray and out.flags.writeable and out.flags.c_contiguous and out.flags.aligned
            and out.dtype == target and out.dtype.isnative and out.shape == tuple(shape)
            and not any(_np.may_share_memory(out, x) for x in inputs))


def elementwise(op, function, a, b, target, broadcast, broadcast_axis, out, threads, given):
    """The element-wise op `function` (the compiled one) on a and b promoted to
    `target`, converted a block at a time. Every check runs before anything is
    written: the shapes here, out= either here or by the library's one call.
    `given`: the operands as the caller passed them, which out='s error names."""
    try:
        shape = _sqdiff.broadcast_shape(a.shape, b.shape, broadcast, broadcast_axis)
    except (_sqdiff.Error, TypeError):
        # The library's message, in the op's name: from stand-ins of the promoted type, which
        # hold one element whatever their shapes (nothing converted for an error).
        function(_stand_in(a, target), _stand_in(b, target), broadcast, broadcast_axis, out, threads, None)
        raise AssertionError(f"{op}: the shapes' error was not raised again")  # pragma: no cover
    size = int(_np.prod(shape, dtype=_np.int64))
    if size <= CHUNK or (out is not None and not _chunkable_out(out, shape, target, (a, b))):
        return with_promoted_types(op, lambda: function(converted(a, target), converted(b, target), broadcast,
                                                        broadcast_axis, out, threads, None), given, target)
    result = _np.empty(shape, target) if out is None else out
    rank = len(shape)
    start_b = _alignment_start(broadcast, broadcast_axis, rank, b.ndim)
    start_a = rank - a.ndim if broadcast != "pdpd" else 0
    for index in _blocks(shape):
        block_a = converted(a[_block_index(a, index, start_a)], target)
        block_b = converted(b[_block_index(b, index, start_b)], target)
        function(block_a, block_b, broadcast, broadcast_axis, result[index], threads, None)
    return result


def _stand_in(x, target):
    """An array of x's shape in `target`, one zero in memory (every stride 0)."""
    return _np.broadcast_to(_np.zeros((), target), x.shape)


def with_promoted_types(op, call, given, target):
    """call(), with a message about out's type that says which type the inputs
    `given` (as the caller passed them) were promoted to."""
    try:
        return call()
    except _sqdiff.Error as error:
        message = str(error)
        if message.startswith(f"{op}: output type "):
            raise _sqdiff.Error(f"{message} ({_promotion_text(op, given, target)})") from None
        raise


def _promotion_text(op, given, target):
    """'the inputs' int32 and float64 promoted to float64, as numpy.result_type
    does': a Python scalar, which has no dtype, named as one."""
    names = []
    weak = False
    for value, name in zip(given, _NAMES):
        if _weak_scalars.is_weak(value):
            weak = True
            names.append(f"a Python {type(value).__name__}")
        else:
            names.append(_sqdiff.as_array(op, name, value).dtype.name)
    rule = "as NumPy 2 promotes a Python scalar (NEP 50)" if weak else "as numpy.result_type does"
    return f"the inputs' {' and '.join(names)} promoted to {target.name}, {rule}"


def whole(op, values, target):
    """Each value converted whole to `target` (the reductions and gradients)."""
    return [converted(v, target) for v in values]


def upstream(op, grad, shape):
    """The upstream gradient broadcast (NumPy's rules, a view: no copy) to the
    op's output `shape`, for the backward functions; as it is when it has that
    shape already, or does not broadcast to it (the compiled part says so)."""
    if shape is None:
        return grad
    if not isinstance(grad, _np.ndarray):
        grad = _sqdiff.as_array(op, "grad", grad)  # a list, a tensor (a Python scalar is a 0-d array by now)
    if grad.shape == tuple(shape):
        return grad
    try:
        return _np.broadcast_to(grad, tuple(shape))
    except ValueError:
        return grad  # the compiled part's message: grad's shape, and the broadcast shape it needs
