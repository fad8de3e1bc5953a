"""sqdiff: exact element-wise ``a - b`` and ``(a - b)**2`` for NumPy arrays.

The NumPy binding of the sqdiff C++ library. Two operations, exactly as the
inference specs define them (OpenVINO Subtract-1 and SquaredDifference-1,
oneDNN Graph SquaredDifference, DirectML ELEMENT_WISE_DIFFERENCE_SQUARE):

    subtract(a, b)              a - b
    squared_difference(a, b)    (a - b)**2, computed as d = a - b; d * d

Both take NumPy arrays (or anything ``numpy.asarray`` takes) of one of twelve
element types: float16, float32, float64, int8, int16, int32, int64, uint8,
uint16, uint32, uint64, and bfloat16 (as uint16 arrays of bits, with
``dtype="bfloat16"``). They broadcast the shapes ("numpy", "none" or "pdpd"
rules), read sliced, reversed, transposed and ``numpy.broadcast_to`` views in
place without copying them, write a new C-contiguous array or into ``out=``
(which may be an input: in place), release the GIL while they compute, and
give bit-exact results:

* float32 and float64: IEEE arithmetic in the type itself; subnormals kept.
* float16 and bfloat16: computed in float32, rounded once to nearest even.
* integers: wrap around modulo 2**bits; never saturate, never widen.
* inputs of two dtypes are computed in the dtype ``numpy.result_type``
  gives (float32 with float64 in float64, int32 with float32 in float64),
  converted a block at a time; ``out`` has that dtype.

>>> import numpy as np
>>> import sqdiff
>>> a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
>>> b = np.array([1, 0, -1], dtype=np.float32)
>>> sqdiff.squared_difference(a, b)
array([[ 0.,  4., 16.],
       [ 9., 25., 49.]], dtype=float32)
>>> sqdiff.subtract(a, b)
array([[0., 2., 4.],
       [3., 5., 7.]], dtype=float32)
>>> sqdiff.broadcast_shape((8, 1, 6, 1), (7, 1, 5))
(8, 7, 6, 5)

Reductions and gradients (one pass, each result the exact value rounded once):

    sum_squared_difference(a, b, axis)       sum((a - b)**2, axis)
    mean_squared_difference(a, b, axis)      mean((a - b)**2, axis)
    squared_difference_backward(a, b, grad)  (grad_a, grad_b) of squared_difference
    subtract_backward(grad, a_shape, b_shape)  (grad_a, grad_b) of subtract

Python scalars are weak, as in NumPy 2: ``squared_difference(x_f32, 0.5)``
computes in float32, ``squared_difference(x_int32, 0.5)`` in float64 (NEP 50);
``mean_squared_difference_backward(a, b)`` is the MSE loss's gradient.

Functions: squared_difference, subtract, sum_squared_difference,
mean_squared_difference, squared_difference_backward, subtract_backward,
mean_squared_difference_backward,
broadcast_shape, to_bfloat16_bits, from_bfloat16_bits, simd_target,
compiled_simd_targets. Errors: sqdiff.Error,
a ValueError. The rules in full: docs/python.md and docs/SPEC_DECISIONS.md.
"""

from __future__ import annotations  # annotations stay strings: nothing below is imported at run time for them

import typing as _typing
import warnings as _warnings

import numpy as _np

if _typing.TYPE_CHECKING:
    from typing import Any, List, Optional, SupportsIndex, Tuple

    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from ._type_aliases import BroadcastMode, ShapeLike

try:
    from . import _sqdiff
except ImportError as _error:  # pragma: no cover - a source checkout without a build
    if isinstance(_error.__cause__, ImportError):
        # The extension is there but refused to start (pybind11 says "initialization
        # failed", caused by the extension's own ImportError: a NumPy whose dtypes it
        # cannot read). Its reason, which names the build to use, is the one to show.
        raise _error.__cause__ from None
    if not isinstance(_error, ModuleNotFoundError):
        # The extension is there but the loader refused it: a shared library it
        # needs is missing (Highway's libhwy.so.1 for a wheel auditwheel has not
        # repaired) or built for another machine. The loader's reason names it.
        raise ImportError(
            f"sqdiff's compiled extension (sqdiff._sqdiff) could not be loaded: {_error}. A wheel built by "
            "`pip wheel .` needs Debian's libhwy1 where it runs, unless `auditwheel repair` bundled it "
            "(README.md, \"A wheel for other machines\")"
        ) from _error
    raise ImportError(
        "sqdiff's compiled extension (sqdiff._sqdiff) is missing: build the project with CMake "
        "and put <build>/python on PYTHONPATH, or run `cmake --install <build> --component python`"
    ) from _error

__all__ = [
    "CompareReport",
    "Error",
    "VerifiedOp",
    "VerifyReport",
    "__version__",
    "broadcast_shape",
    "compare",
    "compiled_simd_targets",
    "from_bfloat16_bits",
    "mean_squared_difference",
    "mean_squared_difference_backward",
    "quantized_squared_difference",
    "quantized_subtract",
    "simd_target",
    "squared_difference",
    "squared_difference_backward",
    "subtract",
    "subtract_backward",
    "sum_squared_difference",
    "to_bfloat16_bits",
    "verify",
]

Error = _sqdiff.Error
Error.__module__ = "sqdiff"

from . import _promotion, _weak_scalars  # noqa: E402 - needs Error
from ._compare import CompareReport, compare  # noqa: E402 - needs Error
from ._quantized import quantized_squared_difference, quantized_subtract  # noqa: E402 - int8/uint8/int16, SPEC 9
from ._gradients import (  # noqa: E402 - SPEC 8
    mean_squared_difference_backward, squared_difference_backward, subtract_backward)
from ._reductions import mean_squared_difference, sum_squared_difference  # noqa: E402 - SPEC 7
from ._verify import VerifiedOp, VerifyReport, verify  # noqa: E402 - a model in LiteRT or OpenVINO, checked
# sqdiff.dask's partial states: private, reached as sqdiff._name.
from ._partial_sums import (  # noqa: E402, F401
    _BOUNDED_PARTIAL_SUM_WORDS, _bounded_partial_sum_squared_difference, _combine_bounded_partial_sums,
    _combine_partial_sums, _finish_bounded_partial_sums, _finish_partial_sums, _partial_sum_squared_difference,
    _partial_sum_words)

# The __future__ import also bound the name `annotations` (a feature object), which
# dir(sqdiff) would list as public; the feature itself is the compiler's and stays.
del annotations

__version__ = _sqdiff.__version__

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


def simd_target() -> str:
    """The SIMD instruction set sqdiff's kernels use on this CPU, e.g. "AVX2".

    Chosen at run time as the best of ``compiled_simd_targets()`` that the CPU
    supports. Results do not depend on it (except for the payload bits of a
    NaN result).

    >>> import sqdiff
    >>> sqdiff.simd_target() in sqdiff.compiled_simd_targets()
    True
    """
    return _sqdiff.simd_target()


def compiled_simd_targets() -> List[str]:
    """The SIMD instruction sets compiled into sqdiff, best first, as a list of names.

    >>> import sqdiff
    >>> sqdiff.compiled_simd_targets()[-1]
    'SCALAR'
    """
    return _sqdiff.compiled_simd_targets()


def to_bfloat16_bits(x: ArrayLike) -> NDArray[_np.uint16]:
    """bfloat16 bit patterns (a uint16 array) of the values ``x``.

    NumPy has no bfloat16 dtype, so sqdiff takes bfloat16 data as uint16 arrays
    of bits with ``dtype="bfloat16"``. ``x`` is converted to float32 first
    (``np.asarray(x, dtype=np.float32)``), then rounded to bfloat16 to nearest
    even, as sqdiff rounds its results: overflow gives inf, NaN stays a quiet
    NaN.

    >>> import sqdiff
    >>> sqdiff.to_bfloat16_bits([1.0, -2.0, 1.00390625])
    array([16256, 49152, 16256], dtype=uint16)
    >>> sqdiff.from_bfloat16_bits(sqdiff.to_bfloat16_bits(3.14159))
    array(3.140625, dtype=float32)
    """
    f32 = _np.array(x, dtype=_np.float32)  # a copy: x itself is never modified
    bits = f32.reshape(-1).view(_np.uint32)  # 1-d, so that uint32 arithmetic wraps silently
    nan = (bits & _np.uint32(0x7FFFFFFF)) > _np.uint32(0x7F800000)
    lsb = (bits >> _np.uint32(16)) & _np.uint32(1)
    rounded = (bits + _np.uint32(0x7FFF) + lsb) >> _np.uint32(16)
    quiet_nan = (bits >> _np.uint32(16)) | _np.uint32(0x0040)
    return _np.where(nan, quiet_nan, rounded).astype(_np.uint16).reshape(f32.shape)


def from_bfloat16_bits(bits: ArrayLike) -> NDArray[_np.float32]:
    """The float32 values (exact) of bfloat16 bit patterns given as uint16.

    >>> import numpy as np
    >>> import sqdiff
    >>> sqdiff.from_bfloat16_bits(np.array([16256, 49152, 32640], dtype=np.uint16))
    array([ 1., -2., inf], dtype=float32)
    """
    b = _np.asarray(bits)
    if b.dtype != _np.uint16:
        raise Error(f"from_bfloat16_bits: takes uint16 bit patterns, not {b.dtype}")
    wide = b.astype(_np.uint32)
    wide <<= _np.uint32(16)
    return wide.view(_np.float32)
