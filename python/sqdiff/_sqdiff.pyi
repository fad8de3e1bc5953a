# Type stub for the compiled extension sqdiff._sqdiff (python/src/*.cpp). Its
# functions take every argument positionally; the public, documented
# signatures with keywords and defaults are sqdiff/__init__.py's.
from typing import Any, List, Optional, Sequence, SupportsIndex, Tuple, Union

import numpy as np
from numpy.typing import NDArray

__version__: str

class Error(ValueError): ...

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
def subtract_backward(
    grad: Any, a_shape: _Shape, b_shape: _Shape, broadcast: str, broadcast_axis: SupportsIndex, need_a: bool,
    need_b: bool, threads: Optional[SupportsIndex], dtype: Any,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]: ...

# The exact partial sums behind sqdiff.dask (private).
def partial_sum_words(dtype: Any) -> int: ...
def partial_sum_squared_difference(
    a: Any, b: Any, axis: Any, keepdims: bool, broadcast: str, broadcast_axis: SupportsIndex,
    threads: Optional[SupportsIndex], dtype: Any,
) -> NDArray[Any]: ...
def combine_partial_sums(dtype: Any, into: NDArray[Any], frm: NDArray[Any]) -> NDArray[Any]: ...
def finish_partial_sums(dtype: Any, partials: NDArray[Any], count: SupportsIndex, mean: bool, out_dtype: Any) -> NDArray[Any]: ...
