# Type stub for the compiled extension sqdiff._sqdiff (python/src/*.cpp). Its
# functions take every argument positionally; the public, documented
# signatures with keywords and defaults are sqdiff/__init__.py's.
from typing import Any, Dict, List, Optional, Sequence, SupportsIndex, Tuple, Union

import numpy as np
from numpy.typing import NDArray

__version__: str

class Error(ValueError): ...
class MixedTypesError(Error): ...

_Shape = Union[SupportsIndex, Sequence[SupportsIndex]]

def subtract(
    a: Any, b: Any, broadcast: str, axis: SupportsIndex, out: Optional[NDArray[Any]], threads: Optional[SupportsIndex],
    dtype: Any,
) -> NDArray[Any]: ...
def squared_difference(
    a: Any, b: Any, broadcast: str, axis: SupportsIndex, out: Optional[NDArray[Any]], threads: Optional[SupportsIndex],
    dtype: Any,
) -> NDArray[Any]: ...
def broadcast_shape(shape_a: _Shape, shape_b: _Shape, broadcast: str, axis: SupportsIndex) -> Tuple[int, ...]: ...
def simd_target() -> str: ...
def compiled_simd_targets() -> List[str]: ...
def sum_squared_difference(
    a: Any, b: Any, axis: Any, keepdims: bool, dtype: Any, out: Optional[NDArray[Any]], broadcast: str,
    broadcast_axis: SupportsIndex, threads: Optional[SupportsIndex],
) -> NDArray[Any]: ...
def mean_squared_difference(
    a: Any, b: Any, axis: Any, keepdims: bool, dtype: Any, out: Optional[NDArray[Any]], broadcast: str,
    broadcast_axis: SupportsIndex, threads: Optional[SupportsIndex],
) -> NDArray[Any]: ...
def squared_difference_backward(
    a: Any, b: Any, grad: Any, broadcast: str, broadcast_axis: SupportsIndex, need_a: bool, need_b: bool,
    threads: Optional[SupportsIndex], dtype: Any,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]: ...
def mean_squared_difference_backward(
    a: Any, b: Any, broadcast: str, broadcast_axis: SupportsIndex, need_a: bool, need_b: bool,
    threads: Optional[SupportsIndex], dtype: Any,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]: ...
def as_array(op: str, name: str, object: Any) -> NDArray[Any]: ...
def subtract_backward(
    grad: Any, a_shape: _Shape, b_shape: _Shape, broadcast: str, broadcast_axis: SupportsIndex, need_a: bool,
    need_b: bool, threads: Optional[SupportsIndex], dtype: Any,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]: ...

# The quantized ops (SPEC section 9; sqdiff/_quantized.py has the public signatures).
_QuantParams = Tuple[float, int]
def quantized_squared_difference(
    a: Any, b: Any, a_quant: _QuantParams, b_quant: _QuantParams, out_quant: _QuantParams,
    out: Optional[NDArray[Any]], broadcast: str, broadcast_axis: SupportsIndex, rounding: str,
    threads: Optional[SupportsIndex],
) -> NDArray[Any]: ...
def quantized_subtract(
    a: Any, b: Any, a_quant: _QuantParams, b_quant: _QuantParams, out_quant: _QuantParams, activation: Optional[str],
    pot_scale_int16: bool, out: Optional[NDArray[Any]], broadcast: str, broadcast_axis: SupportsIndex, rounding: str,
    threads: Optional[SupportsIndex],
) -> NDArray[Any]: ...

# The exact partial sums behind sqdiff.dask (private).
def partial_sum_words(dtype: Any) -> int: ...
def partial_sum_squared_difference(
    a: Any, b: Any, axis: Any, keepdims: bool, broadcast: str, broadcast_axis: SupportsIndex,
    threads: Optional[SupportsIndex], dtype: Any,
) -> NDArray[Any]: ...
def combine_partial_sums(dtype: Any, into: NDArray[Any], frm: NDArray[Any]) -> NDArray[Any]: ...
def finish_partial_sums(dtype: Any, partials: NDArray[Any], count: SupportsIndex, mean: bool, out_dtype: Any) -> NDArray[Any]: ...
def bounded_partial_sum_squared_difference(a: Any, b: Any, axis: Any, keepdims: Any, broadcast: Any, broadcast_axis: Any, threads: Any, dtype: Any, out_dtype: Any) -> NDArray[Any]: ...
def combine_bounded_partial_sums(dtype: Any, into: NDArray[Any], frm: NDArray[Any]) -> NDArray[Any]: ...
def finish_bounded_partial_sums(dtype: Any, states: NDArray[Any], count: SupportsIndex, mean: bool, out_dtype: Any) -> tuple[NDArray[Any], NDArray[Any]]: ...

# sqdiff.compare's report fields (sqdiff/_compare.py wraps them in CompareReport).
def _compare(
    a: Any, b: Any, atol: Optional[float], rtol: Optional[float], equal_nan: bool, broadcast: bool,
    peak: Optional[float], fail_above: Optional[float], threads: Optional[SupportsIndex],
) -> Dict[str, Any]: ...
def _compare_sets(
    a: Dict[str, Any], b: Dict[str, Any], atol: Optional[float], rtol: Optional[float], equal_nan: bool,
    broadcast: bool, peak: Optional[float], fail_above: Optional[float], threads: Optional[SupportsIndex],
) -> Dict[str, Any]: ...
