"""The reductions (SPEC section 7): sqdiff.sum_squared_difference and
sqdiff.mean_squared_difference.

The compiled module sums in one pass and rounds once (python/src/reduce_bindings.cpp);
this file holds the public signatures and their documentation, makes Python
scalars weak and promotes inputs of two dtypes whole.
"""

from __future__ import annotations

import typing as _typing

from . import _promotion, _sqdiff, _weak_scalars

if _typing.TYPE_CHECKING:
    from typing import Any, Optional, SupportsIndex

    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from ._type_aliases import AxesLike, BroadcastMode

# What the wrappers below use on every call, bound once: the types whose instances may be weak
# Python scalars (a NumPy scalar such as np.float64, a float subclass, takes the slow path,
# where _weak_scalars tells it apart), and the compiled functions.
_PYTHON_SCALARS = (bool, int, float)
_MixedTypesError = _sqdiff.MixedTypesError  # inputs of two dtypes: promoted (_promotion)
_sum_squared_difference = _sqdiff.sum_squared_difference
_mean_squared_difference = _sqdiff.mean_squared_difference


_REDUCE_DOC = """\
@WHAT@ of squared differences over axes of the broadcast shape, in one pass.

@FORMULA@

No array of the broadcast shape is ever made, and the result is the exact
value rounded once (to nearest even) to the output type: the same bits for
every thread count, SIMD target, memory layout and chunking.

Parameters
----------
a, b : array_like
    The inputs, as for ``squared_difference`` (two dtypes promoted as
    ``numpy.result_type`` does, the converted input whole): any strides,
    read in place; Python scalars are weak (they take the other operand's
    dtype; a float beside integers makes them float64, as in NumPy 2);
    bfloat16 as uint16 bits with ``dtype="bfloat16"``.
axis : None, int or tuple of ints, default None
    The axes of the **broadcast** shape to reduce, negative ones counting
    from the end; None reduces all of them, ``()`` none. A repeated or
    out-of-range axis raises ``sqdiff.Error``.
keepdims : bool, default False
    Keep each reduced axis as a dim of size 1.
dtype : str or numpy.dtype, optional
    The output dtype. None: the input dtype for floats, @INTEGERS@
    float16/bfloat16/float32 inputs may also give float32 or float64,
    float64 inputs float32, integer inputs @INTEGER_CHOICES@; any other
    choice raises ``sqdiff.Error``. ``"bfloat16"`` is the exception: as in
    the element-wise functions it says that uint16 inputs hold bfloat16 bits,
    and the result is bfloat16 bits (or ``out``'s float32/float64).
out : numpy.ndarray, optional
    Where to write the result: exactly the reduced shape, and the output
    dtype (without ``dtype=``, out's dtype is the output dtype, as in NumPy).
    Any strides; read-only raises ``sqdiff.Error``; byte-swapped or unaligned
    arrays are written through a temporary.
broadcast : {"numpy", "none", "pdpd"}, default "numpy"
    How the shapes of ``a`` and ``b`` combine (see ``squared_difference``).
broadcast_axis : int, default -1
    For "pdpd": the dim of ``a`` that b's first dim lines up with.
threads : int, optional
    At most this many threads; None lets the library choose. The result does
    not depend on it.

Returns
-------
numpy.ndarray
    ``out`` if given, else a new array of the reduced shape; a 0-d array
    (never a NumPy scalar) when every axis is reduced without keepdims.

Raises
------
sqdiff.Error
    Shapes that do not broadcast, bad axes, mixed or unsupported dtypes, an
    output dtype SPEC section 7 does not allow (see ``dtype``), an ``out``
    of the wrong shape or dtype or read-only@OVERFLOW@. Nothing is written
    when it is raised.
TypeError
    An ``axis``, ``broadcast_axis`` or ``threads`` that is not an int (or a
    tuple of ints for ``axis``), an ``out`` that is not a NumPy array.

Notes
-----
Each ``(a - b)**2`` is exact (integers do not wrap, unlike in
``squared_difference``), the sum is exact@MEAN_NOTE@, and only the result is
rounded. A NaN term gives NaN; otherwise an infinite term or a result beyond
the output type's range gives inf. float16 squares that overflow float16 are
fine as long as the result fits. The GIL is released while it computes (from
16384 terms on; shorter calls take about as long as releasing it would).

Examples
--------
@EXAMPLES@"""

_SUM_EXAMPLES = """\
>>> import numpy as np
>>> import sqdiff
>>> a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
>>> b = np.array([1, 0, -1], dtype=np.float32)
>>> sqdiff.sum_squared_difference(a, b)
array(103., dtype=float32)
>>> sqdiff.sum_squared_difference(a, b, axis=1)
array([20., 83.], dtype=float32)
>>> sqdiff.sum_squared_difference(a, b, axis=0, keepdims=True)
array([[ 9., 29., 65.]], dtype=float32)

Integers sum exactly into int64 (uint64 for unsigned); they do not wrap as
the element-wise op does: (0 - 255)**2 is 65025 here.

>>> sqdiff.sum_squared_difference(np.array([0, 0], dtype=np.uint8), np.array([255, 1], dtype=np.uint8))
array(65026, dtype=uint64)

Squared distances between every row of x and every row of y, [M,1,K] with
[1,N,K] over the last axis:

>>> x = np.array([[0, 0], [1, 1]], dtype=np.float64)
>>> y = np.array([[0, 1], [2, 2], [3, 0]], dtype=np.float64)
>>> sqdiff.sum_squared_difference(x[:, None, :], y[None, :, :], axis=-1)
array([[1., 8., 9.],
       [1., 2., 5.]])

float16 squares beyond float16's range are no problem when the result fits:
300**2 = 90000 overflows float16, and the sum is rounded once, in float32.

>>> sqdiff.sum_squared_difference(np.float16(300), np.float16(0), dtype=np.float32)
array(90000., dtype=float32)

An integer sum beyond int64 is an error:

>>> big = np.array([2**62, 2**62], dtype=np.int64)
>>> sqdiff.sum_squared_difference(big, -big)
Traceback (most recent call last):
    ...
sqdiff.Error: sum_squared_difference: the sum of squares at output element 0 (in row-major order) does not fit i64; nothing was written (ask for an f64 output for sums this large)
"""

_MEAN_EXAMPLES = """\
>>> import numpy as np
>>> import sqdiff
>>> prediction = np.array([[0.5, 1.0], [2.0, 4.0]], dtype=np.float32)
>>> target = np.array([[0.0, 1.0], [2.5, 3.0]], dtype=np.float32)
>>> sqdiff.mean_squared_difference(prediction, target)
array(0.375, dtype=float32)

Per channel of an [N,C,H,W] batch, about a per-channel mean of shape
[1,C,1,1] (a variance about a given mean), reducing axes (0, 2, 3):

>>> x = np.arange(16, dtype=np.float64).reshape(2, 2, 2, 2)
>>> mu = np.array([5.5, 9.5]).reshape(1, 2, 1, 1)
>>> sqdiff.mean_squared_difference(x, mu, axis=(0, 2, 3))
array([17.25, 17.25])

Integers give float64 by default, the exact mean rounded once:

>>> sqdiff.mean_squared_difference(np.array([1, 2, 4], dtype=np.int32), 0)
array(7.)

A Python scalar takes the array's dtype (NEP 50), so this is float32:

>>> sqdiff.mean_squared_difference(np.array([0.5, 1.5], dtype=np.float32), 0.5)
array(0.5, dtype=float32)

The mean over no elements is NaN:

>>> sqdiff.mean_squared_difference(np.zeros(0), np.zeros(0))
array(nan)
"""


def _fill_reduce(what, formula, integers, integer_choices, overflow, mean_note, examples):
    return (_REDUCE_DOC.replace("@WHAT@", what).replace("@FORMULA@", formula)
            .replace("@INTEGERS@", integers).replace("@INTEGER_CHOICES@", integer_choices)
            .replace("@OVERFLOW@", overflow).replace("@MEAN_NOTE@", mean_note)
            .replace("@EXAMPLES@", examples))


def _reduce(op, function, a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads):
    """The reductions' slow path: a or b is a Python scalar, made weak first."""
    bf16 = dtype if isinstance(dtype, str) and dtype in ("bfloat16", "bf16") else None
    resolved_a, resolved_b = _weak_scalars.resolve(op, (a, b), bf16)
    try:
        return function(resolved_a, resolved_b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads)
    except _MixedTypesError as error:  # a NumPy scalar (np.float64 is a float) beside another dtype
        return _promoted_reduce(op, function, a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads,
                                error)


def _promoted_reduce(op, function, a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads, error):
    """A reduction of inputs of two dtypes, promoted as NumPy does and converted whole (a
    reduction's blocks cannot be rounded apart; docs/python.md has the cost). dtype= is
    the output type here, which does not stop promotion; bfloat16 bits do."""
    bf16 = dtype if isinstance(dtype, str) and dtype in ("bfloat16", "bf16") else None
    promoted = _promotion.promote(op, (a, b), bf16)
    if promoted is None:
        raise _promotion.not_promoted(error) from None
    arrays, target = promoted
    whole_a, whole_b = _promotion.whole(op, arrays, target)
    if out is None:
        # dtype='s errors name the promoted input type as they are (sqdiff.dask's do the same).
        return function(whole_a, whole_b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads)
    return _promotion.with_promoted_types(
        op, lambda: function(whole_a, whole_b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads),
        (a, b), target)


def sum_squared_difference(
    a: ArrayLike,
    b: ArrayLike,
    axis: AxesLike = None,
    *,
    keepdims: bool = False,
    dtype: DTypeLike = None,
    out: Optional[NDArray[Any]] = None,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = -1,
    threads: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    if not isinstance(a, _PYTHON_SCALARS) and not isinstance(b, _PYTHON_SCALARS):
        try:
            return _sum_squared_difference(a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads)
        except _MixedTypesError as error:
            return _promoted_reduce("sum_squared_difference", _sum_squared_difference, a, b, axis, keepdims,
                                    dtype, out, broadcast, broadcast_axis, threads, error)
    return _reduce("sum_squared_difference", _sum_squared_difference, a, b, axis, keepdims, dtype, out,
                   broadcast, broadcast_axis, threads)


def mean_squared_difference(
    a: ArrayLike,
    b: ArrayLike,
    axis: AxesLike = None,
    *,
    keepdims: bool = False,
    dtype: DTypeLike = None,
    out: Optional[NDArray[Any]] = None,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = -1,
    threads: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    if not isinstance(a, _PYTHON_SCALARS) and not isinstance(b, _PYTHON_SCALARS):
        try:
            return _mean_squared_difference(a, b, axis, keepdims, dtype, out, broadcast, broadcast_axis, threads)
        except _MixedTypesError as error:
            return _promoted_reduce("mean_squared_difference", _mean_squared_difference, a, b, axis, keepdims,
                                    dtype, out, broadcast, broadcast_axis, threads, error)
    return _reduce("mean_squared_difference", _mean_squared_difference, a, b, axis, keepdims, dtype, out,
                   broadcast, broadcast_axis, threads)


sum_squared_difference.__doc__ = _fill_reduce(
    "Sum", "``sum((a - b)**2, axis)``: squared L2 distances, sums of squared errors.",
    "int64 for signed and uint64 for unsigned integers;", "also float64",
    ", an integer sum beyond int64/uint64", "", _SUM_EXAMPLES)
mean_squared_difference.__doc__ = _fill_reduce(
    "Mean", "``mean((a - b)**2, axis)``: MSE, variances about a given mean.",
    "float64 for integers;", "float64 or float32", "", ", divided by the number of reduced elements "
    "(NaN when there are none)", _MEAN_EXAMPLES)


# help() and doctest.testmod(sqdiff) take them for the package's own.
sum_squared_difference.__module__ = "sqdiff"
mean_squared_difference.__module__ = "sqdiff"
