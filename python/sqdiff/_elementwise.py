"""The element-wise ops, sqdiff.squared_difference and sqdiff.subtract, and
sqdiff.broadcast_shape, the shape they give.

The compiled module does the work and makes Python scalars weak itself
(python/src/sqdiff_module.cpp); this file holds the public signatures and their
documentation and the deprecated ``axis=`` name of ``broadcast_axis``, and hands
inputs of two dtypes to _promotion, which converts them a block at a time.
"""

from __future__ import annotations

import typing as _typing
import warnings as _warnings

from . import _promotion, _sqdiff

if _typing.TYPE_CHECKING:
    from typing import Any, Optional, SupportsIndex, Tuple

    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from ._type_aliases import BroadcastMode, ShapeLike

_PARAMETERS = """\
Parameters
----------
a, b : array_like
    The inputs. NumPy arrays are used as they are, whatever
    their strides: sliced, reversed, transposed and ``np.broadcast_to`` views
    are read in place, not copied. Python scalars (bool, int, float) are
    *weak*, as in NumPy 2 (NEP 50): they take the other operand's dtype, so
    ``squared_difference(x_f32, 0.5)`` computes in float32; an int that does
    not fit an integer dtype (300 for uint8) raises ``sqdiff.Error``; a float
    beside an integer array makes the call float64, as NumPy 2 does (the
    array converted to float64; with ``dtype=`` naming the integer type it is
    an ``sqdiff.Error``); two Python scalars give int64 or float64.
    Anything else (lists) goes through ``np.asarray``. Supported dtypes:
    float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32,
    uint64, and bfloat16 (ml_dtypes', or bits: see ``dtype``). Two dtypes are
    promoted as ``numpy.result_type`` does (NumPy scalars and 0-d arrays by
    their dtype, as in NumPy 2), the converted input a block at a time; any
    other dtype (bool, complex, object, strings, datetimes) raises
    ``sqdiff.Error``.
broadcast : {"numpy", "none", "pdpd"}, default "numpy"
    How the shapes combine. "numpy": NumPy's rules (right-align, a dim of 1
    stretches). "none": the shapes must be identical. "pdpd" (PaddlePaddle):
    only ``b`` is broadcast onto ``a``, and the result has a's shape.
broadcast_axis : int, default -1
    For "pdpd" only: the dim of ``a`` that b's first dim lines up with; -1
    lines ``b`` up with a's trailing dims. Ignored by "numpy" and "none".
    ``axis=`` is its deprecated old name (a ``DeprecationWarning``); passing
    both is a ``TypeError``.
out : numpy.ndarray, optional
    Where to write the result, instead of a new array. Its shape must be the
    broadcast shape and its dtype the result's (the inputs' dtype, promoted
    if they differ; checked, never converted); any strides are fine. It may be ``a`` or ``b`` itself (in
    place: the fastest way to run); any other overlap with an input gives the
    same result as if the inputs had been read first. A read-only ``out``
    raises ``sqdiff.Error``.
threads : int, optional
    Use at most this many threads; None (the default) lets the library
    choose. The result does not depend on it.
dtype : str or numpy.dtype, optional
    None (the default) takes the inputs' dtype. "bfloat16" (or "bf16") reads
    uint16 inputs as bfloat16 bit patterns, since NumPy has no bfloat16 dtype;
    the result is then a uint16 array of bfloat16 bits (``out``, if given, must
    be uint16 too). See ``to_bfloat16_bits`` and ``from_bfloat16_bits``. Any
    other value, a NumPy dtype or its name ("float32", np.int8), only checks
    that the inputs have that dtype (so inputs of two dtypes are an error,
    not promoted); an unknown name raises ``sqdiff.Error``.

Returns
-------
numpy.ndarray
    ``out`` if given; otherwise a new C-contiguous array of the broadcast
    shape and the (promoted) inputs' dtype. When the result is 0-d it is a 0-d array,
    never a NumPy scalar.

Raises
------
sqdiff.Error
    A ValueError, with the library's message, for shapes that do not
    broadcast, unsupported dtypes, an ``out`` of the wrong shape or
    dtype, a read-only ``out``, an unknown broadcast mode or dtype name, and a
    negative ``threads``. Nothing has been written to ``out`` when it is raised.
TypeError
    For an ``out`` that is not a NumPy array, a ``broadcast_axis`` or
    ``threads`` that is not an int, and both ``broadcast_axis`` and ``axis``.
"""

_NOTES = """\
Notes
-----
The results are bit-exact, the same on every CPU and for every thread count:

* float32, float64: IEEE arithmetic in the type itself, round to nearest
  even, no fused multiply-add, subnormals kept; NaN propagates, inf - inf is
  NaN, overflow gives inf.
* float16, bfloat16: both inputs are widened exactly to float32, the formula
  is evaluated in float32 and the result is rounded once, to nearest even.
* integers: two's-complement wrap-around modulo 2**bits, as in C on unsigned
  types: uint8 ``0 - 1`` is 255, ``(0 - 16)**2`` is 0.

The GIL is released while the library computes, so calls from several Python
threads run in parallel (except for results under 16384 elements, which take
about as long as releasing the GIL would). Inputs are copied only when the library cannot
address their memory: an unaligned array (for example a field of a packed
structured array) or one in non-native byte order. Such an ``out`` is written
through a temporary.
"""

_SQUARED_DIFFERENCE_DOC = """\
Element-wise squared difference: ``(a - b)**2``, computed as ``d = a - b; d * d``.

OpenVINO SquaredDifference-1, oneDNN Graph SquaredDifference, DirectML
ELEMENT_WISE_DIFFERENCE_SQUARE, with NumPy broadcasting by default.

@PARAMETERS@
@NOTES@
See Also
--------
subtract : ``a - b`` with the same arguments.
broadcast_shape : the shape of the result, without computing it.

Examples
--------
>>> import numpy as np
>>> import sqdiff
>>> sqdiff.squared_difference(np.array([1, 2, 3], dtype=np.float32), np.float32(1))
array([0., 1., 4.], dtype=float32)

NumPy broadcasting, [8,1,6,1] with [7,1,5]:

>>> a = np.zeros((8, 1, 6, 1), dtype=np.float32)
>>> b = np.ones((7, 1, 5), dtype=np.float32)
>>> sqdiff.squared_difference(a, b).shape
(8, 7, 6, 5)

Integers wrap around: in uint8, (0 - 255)**2 is 1 and (0 - 16)**2 is 0.

>>> sqdiff.squared_difference(np.uint8(0), np.array([255, 16], dtype=np.uint8))
array([1, 0], dtype=uint8)

float16 is computed in float32 and rounded once: 256**2 = 65536 is above
float16's largest value, 65504.

>>> sqdiff.squared_difference(np.float16(256), np.float16(0))
array(inf, dtype=float16)

Rounding once matters: here a - b = 1 - 2**-12 is not a float16, and rounding
it first (to 1.0) would give 1.0; sqdiff squares it exactly in float32.

>>> sqdiff.squared_difference(np.float16(1), np.float16(2**-12))
array(0.9995, dtype=float16)

Reversed and broadcast views are read in place, not copied:

>>> x = np.arange(4, dtype=np.float64)
>>> sqdiff.squared_difference(x[::-1], np.broadcast_to(np.float64(1), (4,)))
array([4., 1., 0., 1.])

In place (``out=a``), with PaddlePaddle broadcasting: b's dim lines up with
a's dim 0.

>>> a = np.arange(6, dtype=np.int32).reshape(2, 3)
>>> sqdiff.squared_difference(a, np.array([0, 10], dtype=np.int32), broadcast="pdpd", broadcast_axis=0, out=a)
array([[ 0,  1,  4],
       [49, 36, 25]], dtype=int32)

bfloat16, as uint16 bit patterns:

>>> a = sqdiff.to_bfloat16_bits([1.5, 3.0])
>>> a
array([16320, 16448], dtype=uint16)
>>> d = sqdiff.squared_difference(a, sqdiff.to_bfloat16_bits(1.0), dtype="bfloat16")
>>> sqdiff.from_bfloat16_bits(d)
array([0.25, 4.  ], dtype=float32)

Errors name the operation, the shapes, the mode and what failed:

>>> sqdiff.squared_difference(np.zeros((3, 5, 6)), np.zeros((4, 10, 12)))
Traceback (most recent call last):
    ...
sqdiff.Error: squared_difference: cannot broadcast [3,5,6] with [4,10,12] (numpy): dimension 0 is 3 vs 4

Inputs of two dtypes are promoted as NumPy does: float32 with float64 in
float64, a list as the array NumPy makes of it.

>>> sqdiff.squared_difference(np.float32([1, 2]), [0.5, 0.25])
array([0.25  , 3.0625])

Python scalars are weak (NEP 50): 0.1 is rounded to float32 here, and the
result is float32.

>>> sqdiff.squared_difference(np.array([1.0], dtype=np.float32), 0.1)
array([0.80999994], dtype=float32)
>>> sqdiff.squared_difference(np.array([1, 2], dtype=np.uint8), 300)
Traceback (most recent call last):
    ...
sqdiff.Error: squared_difference: the Python int 300 does not fit uint8 (range 0 to 255), the dtype of the other operand
"""

_SUBTRACT_DOC = """\
Element-wise difference: ``a - b``.

OpenVINO Subtract-1, with NumPy broadcasting by default. Broadcasting never
swaps the operands: the result is always a minus b.

@PARAMETERS@
@NOTES@
See Also
--------
squared_difference : ``(a - b)**2`` with the same arguments.
broadcast_shape : the shape of the result, without computing it.

Examples
--------
>>> import numpy as np
>>> import sqdiff
>>> sqdiff.subtract(np.array([[1], [2]], dtype=np.int16), np.array([10, 20, 30], dtype=np.int16))
array([[ -9, -19, -29],
       [ -8, -18, -28]], dtype=int16)

Integers wrap around: in uint8, 0 - 1 is 255; in int32, INT32_MIN - 1 is
INT32_MAX.

>>> sqdiff.subtract(np.uint8(0), np.uint8(1))
array(255, dtype=uint8)
>>> sqdiff.subtract(np.int32(-2**31), np.int32(1))
array(2147483647, dtype=int32)

IEEE special values behave as in IEEE arithmetic:

>>> sqdiff.subtract(np.array([1.0, np.inf]), np.array([np.inf, np.inf]))
array([-inf,  nan])

Writing into ``b`` (in place):

>>> b = np.array([0.5, 1.5], dtype=np.float32)
>>> sqdiff.subtract(np.float32(2), b, out=b)
array([1.5, 0.5], dtype=float32)
>>> b
array([1.5, 0.5], dtype=float32)

A read-only ``out`` is an error:

>>> sqdiff.subtract(b, b, out=np.broadcast_to(np.float32(0), (2,)))
Traceback (most recent call last):
    ...
sqdiff.Error: subtract: out is read-only
"""


class _DefaultAxis(int):
    """The default of broadcast_axis (-1), told apart from an explicit -1 so that
    passing it together with the deprecated axis= is caught."""

    def __repr__(self):
        return "-1"


_DEFAULT_AXIS = _DefaultAxis(-1)

# The compiled functions, bound once: the wrappers below call them on every call.
_MixedTypesError = _sqdiff.MixedTypesError  # inputs of two dtypes: promoted (_promotion)
_squared_difference = _sqdiff.squared_difference
_subtract = _sqdiff.subtract


def _alignment(op, broadcast_axis, axis):
    """The pdpd alignment from broadcast_axis, or from its deprecated alias axis."""
    if axis is None:  # not given (None is no alignment)
        return int(broadcast_axis) if broadcast_axis is _DEFAULT_AXIS else broadcast_axis
    if broadcast_axis is not _DEFAULT_AXIS:
        raise TypeError(f"{op}: pass the pdpd alignment as broadcast_axis only; axis is its deprecated name")
    # stacklevel 3: the warning points at the line that called the public function.
    _warnings.warn(f"{op}: axis= is deprecated for the pdpd alignment; use broadcast_axis=",
                   DeprecationWarning, stacklevel=3)
    return axis


def squared_difference(
    a: ArrayLike,
    b: ArrayLike,
    *,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = _DEFAULT_AXIS,
    out: Optional[NDArray[Any]] = None,
    threads: Optional[SupportsIndex] = None,
    dtype: DTypeLike = None,
    axis: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    if axis is None:
        # Without the deprecated axis=, straight to the compiled part, which makes Python scalars
        # weak itself (_weak_scalars.resolve) and reads broadcast_axis (even _DEFAULT_AXIS) as an int.
        # Inputs of two dtypes come back as _MixedTypesError, before anything is written.
        try:
            return _squared_difference(a, b, broadcast, broadcast_axis, out, threads, dtype)
        except _MixedTypesError as error:
            return _promoted_elementwise("squared_difference", _squared_difference, a, b, broadcast,
                                         broadcast_axis, out, threads, dtype, error)
    alignment = _alignment("squared_difference", broadcast_axis, axis)
    return squared_difference(a, b, broadcast=broadcast, broadcast_axis=alignment, out=out, threads=threads,
                              dtype=dtype)


def subtract(
    a: ArrayLike,
    b: ArrayLike,
    *,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = _DEFAULT_AXIS,
    out: Optional[NDArray[Any]] = None,
    threads: Optional[SupportsIndex] = None,
    dtype: DTypeLike = None,
    axis: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    if axis is None:
        try:
            return _subtract(a, b, broadcast, broadcast_axis, out, threads, dtype)  # as in squared_difference
        except _MixedTypesError as error:
            return _promoted_elementwise("subtract", _subtract, a, b, broadcast, broadcast_axis, out, threads, dtype,
                                         error)
    alignment = _alignment("subtract", broadcast_axis, axis)
    return subtract(a, b, broadcast=broadcast, broadcast_axis=alignment, out=out, threads=threads, dtype=dtype)


def _promoted_elementwise(op, function, a, b, broadcast, broadcast_axis, out, threads, dtype, error):
    """The element-wise op on inputs of two dtypes, promoted as NumPy does and converted
    a block at a time."""
    promoted = _promotion.promote(op, (a, b), dtype)
    if promoted is None:
        raise _promotion.not_promoted(error) from None
    (promoted_a, promoted_b), target = promoted
    return _promotion.elementwise(op, function, promoted_a, promoted_b, target, broadcast, broadcast_axis, out,
                                  threads, (a, b))


def _fill(template: str) -> str:
    return template.replace("@PARAMETERS@", _PARAMETERS).replace("@NOTES@", _NOTES)


squared_difference.__doc__ = _fill(_SQUARED_DIFFERENCE_DOC)
subtract.__doc__ = _fill(_SUBTRACT_DOC)


def broadcast_shape(
    shape_a: ShapeLike,
    shape_b: ShapeLike,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = _DEFAULT_AXIS,
    *,
    axis: Optional[SupportsIndex] = None,
) -> Tuple[int, ...]:
    """The shape of ``op(a, b)`` for inputs of shapes ``shape_a`` and ``shape_b``.

    Parameters
    ----------
    shape_a, shape_b : sequence of int, or int
        The input shapes; () is a scalar, and an int ``n`` means ``(n,)``.
        Dims must be >= 0, and the element count must fit in int64.
    broadcast : {"numpy", "none", "pdpd"}, default "numpy"
        "numpy": right-align the shapes, pad the shorter with 1s; each pair of
        dims must be equal or contain a 1, and the result is the other one
        (so 1 with 0 gives 0). "none": the shapes must be identical. "pdpd":
        only ``b`` is broadcast onto ``a`` (each b dim equals the a dim it
        lines up with, or is 1) and the result is ``shape_a``.
    broadcast_axis : int, default -1
        For "pdpd": the dim of ``a`` that b's first dim lines up with; -1 means
        ``len(shape_a) - len(shape_b)`` (trailing 1s of b count). ``axis=`` is
        its deprecated old name.

    Returns
    -------
    tuple of int

    Raises
    ------
    sqdiff.Error
        When the shapes do not broadcast, a dim is negative, the element count
        does not fit in int64, or the mode is unknown.
    TypeError
        When a shape is not a sequence of ints.

    Examples
    --------
    >>> import sqdiff
    >>> sqdiff.broadcast_shape((8, 1, 6, 1), (7, 1, 5))
    (8, 7, 6, 5)
    >>> sqdiff.broadcast_shape([1, 0, 3], [3])
    (1, 0, 3)
    >>> sqdiff.broadcast_shape((2, 3, 4, 5), (3, 1), broadcast="pdpd", broadcast_axis=1)
    (2, 3, 4, 5)
    >>> sqdiff.broadcast_shape((2, 3), (3, 2))
    Traceback (most recent call last):
        ...
    sqdiff.Error: broadcast_shape: cannot broadcast [2,3] with [3,2] (numpy): dimension 0 is 2 vs 3
    >>> sqdiff.broadcast_shape((3, 4), (3, 1), broadcast="none")
    Traceback (most recent call last):
        ...
    sqdiff.Error: broadcast_shape: cannot broadcast [3,4] with [3,1] (none): dimension 1 is 4 vs 1
    """
    alignment = _alignment("broadcast_shape", broadcast_axis, axis)
    return _sqdiff.broadcast_shape(shape_a, shape_b, broadcast, alignment)


# help() and doctest.testmod(sqdiff) take them for the package's own.
squared_difference.__module__ = "sqdiff"
subtract.__module__ = "sqdiff"
broadcast_shape.__module__ = "sqdiff"
