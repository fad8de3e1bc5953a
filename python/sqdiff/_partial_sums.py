"""The exact and the bounded partial sums of ``(a - b)**2``: sqdiff.dask's states (private).

sqdiff.dask sums each pair of blocks into a state, adds the states in a tree of
tasks and rounds once at the end; it, its tests and bench/python/bench_partials.py
reach these functions as ``sqdiff._name``. The bounded states (the eager fast
path's sums, each with a rigorous error bound) come first; an output whose bound
leaves the rounding undecided is summed again with the exact, unrounded states.
"""

import numpy as _np

from . import _sqdiff, _weak_scalars


# --- exact partial sums -------------------------------------------------------

def _partial_sum_words(dtype):
    """64-bit words in the exact partial state of one output element, for inputs of
    `dtype` (a NumPy dtype or "bfloat16")."""
    return _sqdiff.partial_sum_words(dtype)


def _partial_sum_squared_difference(a, b, axis=None, *, keepdims=False, broadcast="numpy", broadcast_axis=-1,
                                    threads=None, dtype=None):
    """The exact, unrounded sums of ``(a - b)**2`` over `axis`: a uint64 array of
    shape ``reduced_shape + (words,)``. `dtype`: None, or "bfloat16" for uint16
    inputs of bfloat16 bits (or a dtype the inputs must have)."""
    op = "_partial_sum_squared_difference"
    a, b = _weak_scalars.resolve(op, (a, b), dtype)
    return _sqdiff.partial_sum_squared_difference(a, b, axis, keepdims, broadcast, broadcast_axis, threads, dtype)


def _combine_partial_sums(dtype, into, frm):
    """``into += frm``, exactly, for partial states of inputs of `dtype`; returns `into`
    (C-contiguous uint64, shape (..., words), written in place)."""
    frm = _np.asarray(frm)
    if isinstance(into, _np.ndarray) and _np.may_share_memory(into, frm):
        frm = frm.copy()  # the states are read and written word by word
    return _sqdiff.combine_partial_sums(dtype, into, _np.ascontiguousarray(frm))


def _finish_partial_sums(dtype, partials, count, *, mean, out_dtype=None):
    """Partial states rounded once: the sums (or with `mean`, the sums divided by
    `count`, the terms per output element) as an array of shape
    ``partials.shape[:-1]`` and `out_dtype` (default as for the reductions)."""
    return _sqdiff.finish_partial_sums(dtype, _np.ascontiguousarray(partials), count, bool(mean), out_dtype)


# --- bounded partial sums: the fast path ----------------------------------

_BOUNDED_PARTIAL_SUM_WORDS = 4


def _bounded_partial_sum_squared_difference(a, b, axis=None, *, keepdims=False, broadcast="numpy", broadcast_axis=-1,
                                            threads=None, dtype=None, out_dtype=None):
    """The sums of ``(a - b)**2`` over `axis` at the fast path's speed, each with a
    rigorous error bound: a uint64 array of shape ``reduced_shape + (4,)``, kept
    precisely enough to be rounded into `out_dtype` (default: the sum's). Float
    inputs only; `dtype` as for _partial_sum_squared_difference."""
    op = "_bounded_partial_sum_squared_difference"
    a, b = _weak_scalars.resolve(op, (a, b), dtype)
    return _sqdiff.bounded_partial_sum_squared_difference(a, b, axis, keepdims, broadcast, broadcast_axis, threads,
                                                          dtype, out_dtype)


def _combine_bounded_partial_sums(dtype, into, frm):
    """``into += frm`` for bounded states of inputs of `dtype`, bounds included;
    returns `into` (written in place)."""
    frm = _np.asarray(frm)
    if isinstance(into, _np.ndarray) and _np.may_share_memory(into, frm):
        frm = frm.copy()
    return _sqdiff.combine_bounded_partial_sums(dtype, into, _np.ascontiguousarray(frm))


def _finish_bounded_partial_sums(dtype, states, count, *, mean, out_dtype=None):
    """Bounded states rounded once where their bounds decide: ``(result,
    undecided)``, `undecided` a bool array marking the outputs left for the
    exact states (their elements of `result` are not set)."""
    return _sqdiff.finish_bounded_partial_sums(dtype, _np.ascontiguousarray(states), count, bool(mean), out_dtype)
