"""sqdiff.quantized_squared_difference and sqdiff.quantized_subtract: int8, uint8 and
int16 tensors with a per-tensor scale and zero point, computed bit for bit as LiteRT's
reference kernels compute them (SPEC section 9; the C++ API is docs/quantized.md).

The compiled module does the work (python/src/quantized_bindings.cpp); this file holds
the public signatures and their documentation.
"""

from __future__ import annotations

import typing as _typing

from . import _sqdiff

if _typing.TYPE_CHECKING:
    from typing import Any, Literal, Optional, SupportsIndex, Tuple

    from numpy.typing import ArrayLike, NDArray

    QuantParams = Tuple[float, int]
    Activation = Literal["none", "relu", "relu6", "relu_n1_to_1"]
    Rounding = Literal["double", "single"]

_quantized_squared_difference = _sqdiff.quantized_squared_difference
_quantized_subtract = _sqdiff.quantized_subtract


def quantized_squared_difference(
    a: ArrayLike,
    b: ArrayLike,
    *,
    a_quant: QuantParams,
    b_quant: QuantParams,
    out_quant: QuantParams,
    out: Optional[NDArray[Any]] = None,
    broadcast: Literal["numpy", "none", "pdpd"] = "numpy",
    broadcast_axis: SupportsIndex = -1,
    rounding: Rounding = "double",
    threads: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    return _quantized_squared_difference(a, b, a_quant, b_quant, out_quant, out, broadcast, broadcast_axis, rounding,
                                         threads)


def quantized_subtract(
    a: ArrayLike,
    b: ArrayLike,
    *,
    a_quant: QuantParams,
    b_quant: QuantParams,
    out_quant: QuantParams,
    activation: Optional[Activation] = None,
    pot_scale_int16: bool = True,
    out: Optional[NDArray[Any]] = None,
    broadcast: Literal["numpy", "none", "pdpd"] = "numpy",
    broadcast_axis: SupportsIndex = -1,
    rounding: Rounding = "double",
    threads: Optional[SupportsIndex] = None,
) -> NDArray[Any]:
    return _quantized_subtract(a, b, a_quant, b_quant, out_quant, activation, pot_scale_int16, out, broadcast,
                               broadcast_axis, rounding, threads)


_PARAMETERS = """\
a, b : numpy.ndarray of int8, uint8 or int16
    The stored integers; a stored ``q`` stands for ``scale * (q - zero_point)``.
    Both of one type, the output's too: nothing is promoted or converted (an
    int32 array, a Python list of ints, a float array or inputs of two types are
    an ``sqdiff.Error``). Arrays are read in place, whatever their strides (sliced,
    reversed, transposed, ``numpy.broadcast_to`` views); anything else with
    ``__array__`` or DLPack is read as ``numpy.asarray`` gives it.
a_quant, b_quant, out_quant : (float, int)
    Each tensor's ``(scale, zero_point)``, the tuple LiteRT's Interpreter reports
    as a tensor's ``"quantization"``. The scale is rounded to float32 (a model's
    scales are float32) and must be positive and finite; the zero point is an int
    within the tensor's type, and 0 for int16 (symmetric, as LiteRT requires).
    Anything but a tuple (or list) of two is a ``TypeError``."""

_COMMON = """\
out : numpy.ndarray, optional
    Where to write: of the broadcast shape and the inputs' dtype, any strides;
    it may be ``a`` or ``b`` itself (in place). Returned.
broadcast : {"numpy", "none", "pdpd"}, default "numpy"
broadcast_axis : int, default -1
    As for ``sqdiff.subtract`` ("pdpd": the dim of ``a`` that b's first dim
    lines up with).
rounding : {"double", "single"}, default "double"
    "double" is LiteRT's default build (gemmlowp's rounding doubling high
    multiply, then a rounding shift); "single" its ``TFLITE_SINGLE_ROUNDING=1``
    build (one rounding step), which differs by one step on rare elements.
threads : int, optional
    At most that many threads (None: the library's default). Results never
    depend on it.

Returns
-------
numpy.ndarray
    ``out``, or a new C-contiguous array of the broadcast shape and the inputs'
    dtype (0-d for 0-d inputs).

Raises
------
sqdiff.Error
    A scale that is not a positive finite float32, a zero point outside the
    type (or not 0 for int16), inputs or output of a type other than int8, uint8
    or int16 or of two types, an unknown rounding@ACTIVATION@, shapes that do
    not broadcast, an ``out`` of the wrong shape, dtype or read-only, a negative
    thread count@REFUSED@. Nothing has been written when it is raised.
TypeError
    A quantization that is not a ``(scale, zero_point)`` pair of a real number
    and an int, a ``threads`` or ``broadcast_axis`` that is not an int@FLAG_TYPE@."""

_QUANTIZED_SQUARED_DIFFERENCE_DOC = """\
Quantized element-wise ``(a - b)**2``, as LiteRT's SQUARED_DIFFERENCE computes it.

The integer algorithm of LiteRT's reference kernel (TFLite-Micro's for int16,
which LiteRT lacks), bit for bit: each input rescaled to twice the larger input
scale, the difference squared in int32, requantized to ``out_quant``. Not the
dequantize-compute-requantize value, which differs by a step on some elements.

Parameters
----------
@PARAMETERS@
@COMMON@

See Also
--------
quantized_subtract : ``a - b`` on quantized tensors.
squared_difference : ``(a - b)**2`` on the stored values themselves.

Notes
-----
Where LiteRT aborts (an output multiplier ``max(scale_a, scale_b)**2 / (4096
scale_out)`` of 1 or more, i.e. a tiny output scale), sqdiff computes the result
as TFLite-Micro does, which agrees with LiteRT wherever LiteRT runs.

Examples
--------
>>> import numpy as np
>>> import sqdiff
>>> a = np.array([[2, 4, 6], [8, 10, 12]], dtype=np.int8)  # 0.5 * q: 1 2 3 / 4 5 6
>>> b = np.array([14, 18, 22], dtype=np.int8)              # 0.25 * (q - 10): 1 2 3
>>> sqdiff.quantized_squared_difference(a, b, a_quant=(0.5, 0), b_quant=(0.25, 10),
...                                     out_quant=(0.125, -128))
array([[-128, -128, -128],
       [ -56,  -56,  -56]], dtype=int8)

That is 0 and 9 in steps of 0.125 from -128. An int16 zero point must be 0:

>>> x = np.array([100, -100], dtype=np.int16)
>>> sqdiff.quantized_squared_difference(x, x, a_quant=(0.01, 0), b_quant=(0.01, 0), out_quant=(0.01, 5))
Traceback (most recent call last):
    ...
sqdiff.Error: quantized_squared_difference: the zero point of out is 5; int16 tensors are quantized symmetrically (zero point 0), as LiteRT requires
"""

_QUANTIZED_SUBTRACT_DOC = """\
Quantized element-wise ``a - b``, as LiteRT's SUB computes it.

The integer algorithm of LiteRT's reference kernels, bit for bit: for int8 and
uint8 (and int16 in general) each input shifted left and rescaled to twice the
larger input scale, the difference requantized to ``out_quant`` and clamped to
the fused activation's range; for int16 with power-of-two scales (and
``pot_scale_int16``, TFLite's default) LiteRT's ``Sub16``: one input shifted
right to the other's scale, a saturating int16 difference.

Parameters
----------
@PARAMETERS@
activation : {None, "none", "relu", "relu6", "relu_n1_to_1"}, default None
    TFLite's fused activation: the output clamped to the quantized image of
    ``[0, inf)``, ``[0, 6]`` or ``[-1, 1]`` (within the type). None and "none"
    clamp to the type only.
pot_scale_int16 : bool, default True
    int16 only: when all three scales are powers of two (as TFLite's
    ``CheckedLog2`` tells them, within 1e-3 in log2), take the power-of-two path
    (LiteRT's default, the converter's ``pot_scale_int16``); False takes the
    general path as LiteRT does when the model says so.
@COMMON@

See Also
--------
quantized_squared_difference : ``(a - b)**2`` on quantized tensors.
subtract : ``a - b`` on the stored values themselves (wrapping around).

Examples
--------
>>> import numpy as np
>>> import sqdiff
>>> a = np.array([10, 20, 30], dtype=np.uint8)   # 0.1 * (q - 20): -1 0 1
>>> b = np.array([25], dtype=np.uint8)           # 0.05 * (q - 5): 1
>>> sqdiff.quantized_subtract(a, b, a_quant=(0.1, 20), b_quant=(0.05, 5), out_quant=(0.1, 128))
array([108, 118, 128], dtype=uint8)
>>> sqdiff.quantized_subtract(a, b, a_quant=(0.1, 20), b_quant=(0.05, 5), out_quant=(0.1, 128),
...                           activation="relu")
array([128, 128, 128], dtype=uint8)

In place, into ``a``:

>>> sqdiff.quantized_subtract(a, b, a_quant=(0.1, 20), b_quant=(0.05, 5), out_quant=(0.1, 128), out=a)
array([108, 118, 128], dtype=uint8)
>>> a
array([108, 118, 128], dtype=uint8)

int16 with power-of-two scales: a (scale 2**-10) is shifted right by 2, rounding
half away from zero, to the output's scale 2**-8, which is b's:

>>> x = np.array([1000, -1000, 3], dtype=np.int16)
>>> y = np.array([100, 100, 100], dtype=np.int16)
>>> sqdiff.quantized_subtract(x, y, a_quant=(2.0**-10, 0), b_quant=(2.0**-8, 0), out_quant=(2.0**-8, 0))
array([ 150, -350,  -99], dtype=int16)

An output scale too small for the output multiplier (LiteRT aborts there):

>>> sqdiff.quantized_subtract(x, y, a_quant=(0.5, 0), b_quant=(0.5, 0), out_quant=(1e-7, 0))
Traceback (most recent call last):
    ...
sqdiff.Error: quantized_subtract: the output multiplier 2 max(scale_a, scale_b) / (2^15 scale_out) is 1 or more (scales a 0.5, b 0.5, out 1.00000001e-07): the output scale must exceed 2 max(scale_a, scale_b) / 2^15, as LiteRT requires
"""


def _fill(template, activation, refused, flag_type):
    common = (_COMMON.replace("@ACTIVATION@", activation).replace("@REFUSED@", refused)
              .replace("@FLAG_TYPE@", flag_type))
    return template.replace("@PARAMETERS@", _PARAMETERS).replace("@COMMON@", common)


quantized_squared_difference.__doc__ = _fill(_QUANTIZED_SQUARED_DIFFERENCE_DOC, "", "", "")
quantized_subtract.__doc__ = _fill(
    _QUANTIZED_SUBTRACT_DOC, " or activation",
    ", an output scale at or below ``2 max(scale_a, scale_b) / 2**20`` (``2**15`` for int16: LiteRT aborts "
    "there), int16 power-of-two scales LiteRT refuses (one input's scale must equal the output's, the other's "
    "be at most that)", ", a ``pot_scale_int16`` that is not a bool")
