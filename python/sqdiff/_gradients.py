"""The gradients (SPEC section 8): sqdiff.squared_difference_backward,
sqdiff.subtract_backward and sqdiff.mean_squared_difference_backward.

The compiled module computes them in one fused pass (python/src/reduce_bindings.cpp);
this file holds the public signatures and their documentation, and readies the
operands: dtypes promoted whole, Python scalars made weak, the upstream gradient
broadcast to the output's shape.
"""

from __future__ import annotations

import typing as _typing

import numpy as _np

from . import _promotion, _sqdiff, _weak_scalars
from ._sqdiff import Error

if _typing.TYPE_CHECKING:
    from typing import Any, Iterable, Optional, SupportsIndex, Tuple, Union

    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from ._type_aliases import BroadcastMode, ShapeLike


def _needed(op, need):
    """need= as two flags: a str ("a", "b") or a collection of them."""
    names = (need,) if isinstance(need, str) else tuple(need)
    for name in names:
        if name not in ("a", "b"):
            raise Error(f"{op}: need holds 'a' and/or 'b', not {name!r}")
    return "a" in names, "b" in names


def _gradient_operands(op, values, dtype):
    """The backward functions' array operands: promoted whole when their dtypes differ
    (as NumPy's result_type), Python scalars made weak (in the promoted type)."""
    first = values[0]
    if dtype is None and all(type(v) is _np.ndarray and v.dtype == first.dtype for v in values):
        return list(values)  # the common call: nothing to resolve or convert
    # Arrays as the compiled part reads them (lists, DLPack producers); Python scalars stay weak.
    values = [v if type(v) is _np.ndarray or _weak_scalars.is_weak(v) else _sqdiff.as_array(op, name, v)
              for v, name in zip(values, ("a", "b", "grad"))]
    promoted = _promotion.promote(op, values, dtype)
    if promoted is None:
        return _weak_scalars.resolve(op, values, dtype)
    arrays, target = promoted
    return _promotion.whole(op, arrays, target)


def _output_shape(a, b, broadcast, broadcast_axis, shapes=False):
    """The broadcast shape of arrays a and b (or of two shapes), or None where it has
    none (the compiled part then says why)."""
    try:
        shape_a, shape_b = (a, b) if shapes else (_np.shape(a), _np.shape(b))
        return _sqdiff.broadcast_shape(shape_a, shape_b, broadcast, broadcast_axis)
    except (Error, TypeError, ValueError):
        return None


def squared_difference_backward(
    a: ArrayLike,
    b: ArrayLike,
    grad: ArrayLike,
    *,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = -1,
    need: Union[str, Iterable[str]] = ("a", "b"),
    threads: Optional[SupportsIndex] = None,
    dtype: DTypeLike = None,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """Gradients of ``squared_difference(a, b)``: ``(grad_a, grad_b)``.

    ``grad_a = sum_to(2 (a - b) grad, a.shape)`` and
    ``grad_b = sum_to(-2 (a - b) grad, b.shape)``, where ``grad`` has the
    broadcast shape and ``sum_to`` sums over the dims broadcasting added or
    stretched for that input. One fused pass; each element is the exact value
    rounded once to nearest even, so the bits do not depend on threads, SIMD
    target or layout.

    Parameters
    ----------
    a, b : array_like
        The forward inputs, of a float dtype (float16, float32, float64, or
        bfloat16 bits with ``dtype="bfloat16"``); integers raise
        ``sqdiff.Error``, except beside a Python float, which makes the call
        float64 (NEP 50). Inputs of different dtypes are promoted as
        ``numpy.result_type`` does; Python scalars are weak.
    grad : array_like
        The gradient of the loss with respect to the output (the upstream
        gradient): of the broadcast shape, or any shape that broadcasts to it
        by NumPy's rules, a scalar too (broadcast as a view, never copied).
        Its dtype joins the promotion of a's and b's.
    broadcast, broadcast_axis : as for ``squared_difference``
    need : str or tuple of str, default ("a", "b")
        Which gradients to compute; the other is returned as None.
    threads : int, optional
        At most this many threads; None lets the library choose.
    dtype : None or "bfloat16", optional
        "bfloat16": uint16 inputs hold bfloat16 bits (the gradients too). A
        NumPy dtype only checks the inputs' dtype.

    Returns
    -------
    (grad_a, grad_b) : tuple of numpy.ndarray or None
        New arrays of a's and b's shapes and the inputs' dtype.

    Raises
    ------
    sqdiff.Error
        Integer types, mixed dtypes, shapes that do not broadcast, a ``grad``
        not of the broadcast shape, an unknown ``need``.

    Examples
    --------
    >>> import numpy as np
    >>> import sqdiff
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.array([0.5, 1.0])
    >>> grad_a, grad_b = sqdiff.squared_difference_backward(a, b, np.ones((2, 2)))
    >>> grad_a
    array([[1., 2.],
           [5., 6.]])
    >>> grad_b
    array([-6., -8.])

    Only the gradient of ``b`` (say, a learned mean):

    >>> sqdiff.squared_difference_backward(a, b, np.ones((2, 2)), need="b")
    (None, array([-6., -8.]))

    A scalar upstream gradient is broadcast to the output shape:

    >>> sqdiff.squared_difference_backward(a, b, 0.5)
    (array([[0.5, 1. ],
           [2.5, 3. ]]), array([-3., -4.]))
    """
    op = "squared_difference_backward"
    need_a, need_b = _needed(op, need)
    a, b, grad = _gradient_operands(op, (a, b, grad), dtype)
    grad = _promotion.upstream(op, grad, _output_shape(a, b, broadcast, broadcast_axis))
    return _sqdiff.squared_difference_backward(a, b, grad, broadcast, broadcast_axis, need_a, need_b, threads, dtype)


def subtract_backward(
    grad: ArrayLike,
    a_shape: ShapeLike,
    b_shape: ShapeLike,
    *,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = -1,
    need: Union[str, Iterable[str]] = ("a", "b"),
    threads: Optional[SupportsIndex] = None,
    dtype: DTypeLike = None,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """Gradients of ``subtract(a, b)``: ``(grad_a, grad_b)``.

    ``grad_a = sum_to(grad, a_shape)`` and ``grad_b = sum_to(-grad, b_shape)``:
    broadcasting undone by summation, each element the exact sum rounded once.

    Parameters
    ----------
    grad : array_like
        The gradient with respect to the output, of the broadcast shape of
        ``a_shape`` and ``b_shape`` or any shape that broadcasts to it (NumPy's
        rules; a scalar too); float16, float32, float64, or bfloat16 bits with
        ``dtype="bfloat16"``. A Python float becomes float64.
    a_shape, b_shape : sequence of int
        The shapes of the forward inputs.
    broadcast, broadcast_axis : as for ``subtract``
    need : str or tuple of str, default ("a", "b")
        Which gradients to compute; the other is returned as None.
    threads : int, optional
        At most this many threads; None lets the library choose.
    dtype : None or "bfloat16", optional
        As for ``squared_difference_backward``.

    Returns
    -------
    (grad_a, grad_b) : tuple of numpy.ndarray or None

    Raises
    ------
    sqdiff.Error
        Integer types, shapes that do not broadcast to grad's shape, an
        unknown ``need``.

    Examples
    --------
    >>> import numpy as np
    >>> import sqdiff
    >>> g = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    >>> sqdiff.subtract_backward(g, (2, 3), (3,))
    (array([[1., 2., 3.],
           [4., 5., 6.]], dtype=float32), array([-5., -7., -9.], dtype=float32))
    >>> sqdiff.subtract_backward(g, (2, 1), (1, 3), need=("a",))
    (array([[ 6.],
           [15.]], dtype=float32), None)
    >>> sqdiff.subtract_backward(np.float32(1), (2, 3), (3,))   # grad broadcast: ones
    (array([[1., 1., 1.],
           [1., 1., 1.]], dtype=float32), array([-2., -2., -2.], dtype=float32))
    """
    op = "subtract_backward"
    need_a, need_b = _needed(op, need)
    (grad,) = _weak_scalars.resolve(op, (grad,), dtype)
    grad = _promotion.upstream(op, grad, _output_shape(a_shape, b_shape, broadcast, broadcast_axis, shapes=True))
    return _sqdiff.subtract_backward(grad, a_shape, b_shape, broadcast, broadcast_axis, need_a, need_b, threads,
                                     dtype)


def mean_squared_difference_backward(
    a: ArrayLike,
    b: ArrayLike,
    *,
    broadcast: BroadcastMode = "numpy",
    broadcast_axis: SupportsIndex = -1,
    need: Union[str, Iterable[str]] = ("a", "b"),
    threads: Optional[SupportsIndex] = None,
    dtype: DTypeLike = None,
) -> Tuple[Optional[NDArray[Any]], Optional[NDArray[Any]]]:
    """Gradients of the MSE loss ``mean((a - b)**2)``: ``(grad_a, grad_b)``.

    ``grad_a = sum_to(2 (a - b) / n, a.shape)`` and
    ``grad_b = sum_to(-2 (a - b) / n, b.shape)``, where n is the number of
    elements of the broadcast shape (the mean is over all of them, as
    ``mean_squared_difference(a, b)``'s default). Each element is the exact
    value, the division included, rounded once to nearest even: not
    ``squared_difference_backward(a, b, 1 / n)``, whose ``1 / n`` is rounded
    first. With n = 0 the gradients are zeros (sums of no terms).

    Parameters
    ----------
    a, b : array_like
        The prediction and the target, of a float dtype (float16, float32,
        float64, or bfloat16 bits with ``dtype="bfloat16"``); different dtypes
        are promoted as ``numpy.result_type`` does; Python scalars are weak.
    broadcast, broadcast_axis : as for ``squared_difference``
    need : str or tuple of str, default ("a", "b")
        Which gradients to compute; the other is returned as None.
    threads : int, optional
        At most this many threads; None lets the library choose.
    dtype : None or "bfloat16", optional
        As for ``squared_difference_backward``.

    Returns
    -------
    (grad_a, grad_b) : tuple of numpy.ndarray or None
        New arrays of a's and b's shapes and the (promoted) inputs' dtype.

    Raises
    ------
    sqdiff.Error
        Integer types, shapes that do not broadcast, an unknown ``need``.

    Examples
    --------
    >>> import numpy as np
    >>> import sqdiff
    >>> prediction = np.array([[0.5, 1.0], [2.0, 4.0]], dtype=np.float32)
    >>> target = np.array([0.0, 1.0], dtype=np.float32)
    >>> sqdiff.mean_squared_difference_backward(prediction, target)
    (array([[0.25, 0.  ],
           [1.  , 1.5 ]], dtype=float32), array([-1.25, -1.5 ], dtype=float32))

    Rounded once: 2 * 1 / 3 is float32's nearest value to 2/3.

    >>> sqdiff.mean_squared_difference_backward(np.float32([1, 0, 0]), np.float32(0), need="a")[0]
    array([0.6666667, 0.       , 0.       ], dtype=float32)
    """
    op = "mean_squared_difference_backward"
    need_a, need_b = _needed(op, need)
    a, b = _gradient_operands(op, (a, b), dtype)
    scale = _power_of_two_scale(a, b, broadcast, broadcast_axis, dtype)
    if scale is not None:
        # 1 / n exact in the type: 2 (a - b) (1 / n) rounded once is the quotient rounded once,
        # and the SIMD kernel of squared_difference_backward computes it ~30 times faster.
        return squared_difference_backward(a, b, scale, broadcast=broadcast, broadcast_axis=broadcast_axis,
                                           need=need, threads=threads, dtype=dtype)
    return _sqdiff.mean_squared_difference_backward(a, b, broadcast, broadcast_axis, need_a, need_b, threads, dtype)


# The largest k for which 2**-k is a value of the type (its smallest subnormal).
_SMALLEST_POWER = {"float16": 24, "bfloat16": 133, "float32": 149, "float64": 1074}


def _power_of_two_scale(a, b, broadcast, broadcast_axis, dtype):
    """1 / n as a Python float when n, the broadcast element count, is a power of two
    whose reciprocal the inputs' float type holds exactly; else None."""
    shape = _output_shape(a, b, broadcast, broadcast_axis)
    if shape is None:
        return None
    n = 1
    for dim in shape:
        n *= dim
    if n <= 0 or n & (n - 1):
        return None
    name = "bfloat16" if isinstance(dtype, str) else getattr(getattr(a, "dtype", None), "name", None)
    k = n.bit_length() - 1
    return 2.0 ** -k if k <= _SMALLEST_POWER.get(name, -1) else None


# help() and doctest.testmod(sqdiff) take them for the package's own.
squared_difference_backward.__module__ = "sqdiff"
subtract_backward.__module__ = "sqdiff"
mean_squared_difference_backward.__module__ = "sqdiff"
