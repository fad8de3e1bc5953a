"""sqdiff.to_bfloat16_bits and sqdiff.from_bfloat16_bits: bfloat16 values to and from
the uint16 bit patterns that sqdiff takes with ``dtype="bfloat16"`` (NumPy has no
bfloat16 dtype).
"""

from __future__ import annotations

import typing as _typing

import numpy as _np

from ._sqdiff import Error

if _typing.TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray


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


# help() and doctest.testmod(sqdiff) take them for the package's own.
to_bfloat16_bits.__module__ = "sqdiff"
from_bfloat16_bits.__module__ = "sqdiff"
