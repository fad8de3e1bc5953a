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

__version__ = _sqdiff.__version__

# The public names, from one module per concept; below the extension's import, which says
# what is missing when it fails.
from ._bfloat16_bits import from_bfloat16_bits, to_bfloat16_bits  # noqa: E402
from ._compare import CompareReport, compare  # noqa: E402
from ._elementwise import broadcast_shape, squared_difference, subtract  # noqa: E402
from ._gradients import (  # noqa: E402 - SPEC 8
    mean_squared_difference_backward, squared_difference_backward, subtract_backward)
from ._quantized import quantized_squared_difference, quantized_subtract  # noqa: E402 - int8/uint8/int16, SPEC 9
from ._reductions import mean_squared_difference, sum_squared_difference  # noqa: E402 - SPEC 7
from ._simd_targets import compiled_simd_targets, simd_target  # noqa: E402
from ._verify import VerifiedOp, VerifyReport, verify  # noqa: E402 - a model in LiteRT or OpenVINO, checked

# Private, reached as sqdiff._name by sqdiff.dask: the promotion it shares with the eager
# functions, and its partial states.
from . import _promotion  # noqa: E402, F401
from ._partial_sums import (  # noqa: E402, F401
    _BOUNDED_PARTIAL_SUM_WORDS, _bounded_partial_sum_squared_difference, _combine_bounded_partial_sums,
    _combine_partial_sums, _finish_bounded_partial_sums, _finish_partial_sums, _partial_sum_squared_difference,
    _partial_sum_words)
