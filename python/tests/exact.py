"""An exact oracle for the reductions and gradients (SPEC sections 7 and 8), in rational arithmetic.

Independent of sqdiff: the inputs' values become ``fractions.Fraction`` (bfloat16
bits are widened by shifting them into float32 bits), broadcasting is NumPy's on
object arrays of those Fractions (pdpd first reshapes b into a's window), every
sum is exact, and the result is rounded once by ``round_to_format``, written
here from the definition of round-to-nearest-even on a binary format:

    q = m * 2**e with the format's p-bit significand m and exponent e >= emin - p + 1;
    take the two neighbouring values of that grid around q, keep the nearer, and on
    a tie the one with the even significand; past the largest finite value
    (2**(emax+1) - 2**(emax-p)), a tie or beyond rounds to infinity.
"""

import math
from fractions import Fraction

import numpy as np

# precision p (significand bits, with the implicit one), emin, emax
FORMATS = {
    "float16": (11, -14, 15),
    "bfloat16": (8, -126, 127),
    "float32": (24, -126, 127),
    "float64": (53, -1022, 1023),
}
FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")


class Special:
    """Not a finite rational: NaN or a signed infinity, or a signed zero."""


def to_python_values(array, dtype_name):
    """The exact values of an array as Python floats or ints (bfloat16: uint16 bits)."""
    array = np.asarray(array)
    if dtype_name == "bfloat16":
        array = (array.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if dtype_name in FLOAT_NAMES:
        return np.vectorize(float, otypes=[object])(array) if array.size else array.astype(object)
    return np.vectorize(int, otypes=[object])(array) if array.size else array.astype(object)


def pdpd_reshape(b_shape, a_rank, axis):
    """b's shape placed in a's window starting at `axis` (-1: trailing), padded with 1s."""
    start = a_rank - len(b_shape) if axis == -1 else axis
    return (1,) * start + tuple(b_shape) + (1,) * (a_rank - start - len(b_shape))


def broadcast_pair(a, b, broadcast="numpy", broadcast_axis=-1):
    """a and b (object arrays) broadcast to their common shape, as the library does."""
    if broadcast == "pdpd":
        b = b.reshape(pdpd_reshape(b.shape, a.ndim, broadcast_axis))
        return a, np.broadcast_to(b, a.shape)
    if broadcast == "none":
        assert a.shape == b.shape
        return a, b
    return np.broadcast_arrays(a, b)


def round_to_format(value, name):
    """The Python float nearest to the Fraction `value` in format `name`, ties to even
    (a float64 holds every value of these formats exactly)."""
    precision, emin, emax = FORMATS[name]
    if value == 0:
        return 0.0
    sign = -1.0 if value < 0 else 1.0
    q = abs(value)
    # e = floor(log2(q)), from the bit lengths, then corrected.
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    assert Fraction(2) ** e <= q < Fraction(2) ** (e + 1)
    quantum = Fraction(2) ** (max(e, emin) - precision + 1)  # the grid's spacing around q
    lower = (q / quantum).numerator // (q / quantum).denominator  # floor
    below, above = lower * quantum, (lower + 1) * quantum
    if q - below < above - q or (q - below == above - q and lower % 2 == 0):
        result = below
    else:
        result = above
    largest = Fraction(2) ** (emax + 1) - Fraction(2) ** (emax + 1 - precision)
    if result > largest:
        return sign * math.inf
    return sign * float(result)


def float_bits(value, name):
    """The bits of a float of format `name` as stored (uint16 for bfloat16's bits)."""
    if name == "bfloat16":
        bits = int(np.array(value, dtype=np.float32).view(np.uint32))
        if math.isnan(value):
            return np.array((bits >> 16) | 0x40, dtype=np.uint16)
        assert bits & 0xFFFF == 0, "not a bfloat16 value"
        return np.array(bits >> 16, dtype=np.uint16)
    return np.array(value, dtype=name)


# SPEC_DECISIONS section 7: for f64 inputs a single square at least this large (the smallest
# value that rounds to infinity in f64) makes the result +inf, even where a mean would fit.
F64_SQUARE_LIMIT = Fraction(2) ** 1024 - Fraction(2) ** 970


def _sum_of(terms, count, f64_inputs=False):
    """Exact sum of (a - b)**2 terms (Python floats or ints): a Fraction, or nan/inf."""
    total = Fraction(0)
    special = None
    for a, b in terms:
        if isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
            return math.nan
        if isinstance(a, float) and (math.isinf(a) or math.isinf(b)):
            if math.isinf(a) and math.isinf(b) and a == b:
                return math.nan  # inf - inf
            special = math.inf
            continue
        difference = Fraction(a) - Fraction(b)
        square = difference * difference
        if f64_inputs and square >= F64_SQUARE_LIMIT:
            special = math.inf
        total += square
    return special if special is not None else total


def reduce(a, b, dtype_name, axis=None, keepdims=False, mean=False, out_name=None, broadcast="numpy",
           broadcast_axis=-1):
    """The exact result of sum_/mean_squared_difference, as an array of the output dtype
    (uint16 bits for bfloat16). An integer sum that does not fit raises OverflowError."""
    va, vb = broadcast_pair(to_python_values(a, dtype_name), to_python_values(b, dtype_name), broadcast,
                            broadcast_axis)
    rank = va.ndim
    axes = tuple(range(rank)) if axis is None else tuple(x % rank for x in np.atleast_1d(axis).tolist())
    kept = [d for d in range(rank) if d not in axes]
    moved_a = np.moveaxis(va, kept + list(axes), range(rank))
    moved_b = np.moveaxis(vb, kept + list(axes), range(rank))
    kept_shape = tuple(va.shape[d] for d in kept)
    count = math.prod(va.shape[d] for d in axes)
    flat_a = moved_a.reshape(kept_shape + (count,))
    flat_b = moved_b.reshape(kept_shape + (count,))
    if out_name is None:
        if dtype_name in FLOAT_NAMES:
            out_name = dtype_name
        elif mean:
            out_name = "float64"
        else:
            out_name = "int64" if dtype_name.startswith("int") else "uint64"
    values = []
    for index in np.ndindex(*kept_shape):
        total = _sum_of(zip(flat_a[index], flat_b[index]), count, dtype_name == "float64")
        if mean and not isinstance(total, float):
            total = Fraction(total) / count if count else math.nan
        elif mean and count == 0:
            total = math.nan
        values.append(_round_output(total, out_name))
    shape = tuple(1 if d in axes else va.shape[d] for d in range(rank)) if keepdims else kept_shape
    storage = np.uint16 if out_name == "bfloat16" else np.dtype(out_name)
    result = np.array([_store(v, out_name) for v in values], dtype=storage)
    return result.reshape(shape)


def _round_output(total, out_name):
    if isinstance(total, float):  # nan or inf
        return total
    if out_name in FLOAT_NAMES:
        return round_to_format(Fraction(total), out_name)
    info = np.iinfo(out_name)
    assert total.denominator == 1
    if not info.min <= total <= info.max:
        raise OverflowError(f"{total} does not fit {out_name}")
    return int(total)


def _store(value, out_name):
    if out_name == "bfloat16":
        return int(float_bits(value, "bfloat16"))
    return value


def _term_sign_negative_zero(value):
    return value == 0 and math.copysign(1.0, value) < 0


def _gradient_sum(terms, name, divisor=1):
    """Round a list of (Fraction or special float, is -0) terms once, their sum divided by
    `divisor` (a mean's gradient); -0 only when every term is -0 (SPEC_DECISIONS section 8),
    +0 for no terms."""
    finite = Fraction(0)
    infinities = set()
    all_negative_zero = bool(terms)
    for value, negative_zero in terms:
        if isinstance(value, float):
            if math.isnan(value):
                return math.nan
            infinities.add(value)
            all_negative_zero = False
            continue
        all_negative_zero = all_negative_zero and negative_zero
        finite += value
    if len(infinities) == 2:
        return math.nan
    if infinities:
        return infinities.pop()
    if finite == 0:
        return -0.0 if all_negative_zero else 0.0
    return round_to_format(finite / divisor, name)


def _product_term(d_value, d_negative, g, factor):
    """factor * d * g with IEEE signs of zeros; d as (Fraction or special float, d is -0)."""
    if isinstance(d_value, float) or math.isinf(g) or math.isnan(g):
        result = factor * float(d_value) * g  # a special: IEEE arithmetic gives it exactly
        return result, False
    value = factor * d_value * Fraction(g)
    if value != 0:
        return value, False
    g_negative = math.copysign(1.0, g) < 0
    d_sign_negative = d_negative if d_value == 0 else d_value < 0
    negative = (d_sign_negative != g_negative) != (factor < 0)
    return value, negative


def _difference(a, b):
    """a - b exactly, with IEEE's sign of a zero (-0 only for -0 - +0) and specials."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
        return a - b, False
    value = Fraction(a) - Fraction(b)
    negative_zero = value == 0 and _term_sign_negative_zero(a) and not _term_sign_negative_zero(b)
    return value, negative_zero


def _sum_to(terms, shape, target_shape, broadcast, broadcast_axis, name, is_b, divisor=1):
    """Sum an object array of terms (broadcast shape) down to target_shape."""
    if broadcast == "pdpd" and is_b:
        window = pdpd_reshape(target_shape, len(shape), broadcast_axis)
    else:
        window = (1,) * (len(shape) - len(target_shape)) + tuple(target_shape)
    result = []
    for index in np.ndindex(*window):
        selection = tuple(slice(None) if w == 1 and s != 1 else slice(i, i + 1)
                          for i, w, s in zip(index, window, shape))
        result.append(_gradient_sum(list(terms[selection].reshape(-1)), name, divisor))
    return result


def squared_difference_backward(a, b, grad, name, broadcast="numpy", broadcast_axis=-1, mean=False):
    """(grad_a, grad_b) exactly rounded, as arrays of the storage dtype. With `mean`, those of
    mean((a - b)**2) (grad is then ignored: every term's g is 1, each sum divided by the
    broadcast element count)."""
    va, vb = broadcast_pair(to_python_values(a, name), to_python_values(b, name), broadcast, broadcast_axis)
    vg = np.ones(va.shape) if mean else to_python_values(grad, name)
    shape = va.shape
    divisor = max(va.size, 1) if mean else 1
    terms_a = np.empty(shape, dtype=object)
    terms_b = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        d = _difference(va[index], vb[index])
        terms_a[index] = _product_term(d[0], d[1], vg[index], 2)
        terms_b[index] = _product_term(d[0], d[1], vg[index], -2)
    grad_a = _sum_to(terms_a, shape, np.shape(a), broadcast, broadcast_axis, name, False, divisor)
    grad_b = _sum_to(terms_b, shape, np.shape(b), broadcast, broadcast_axis, name, True, divisor)
    return _as_array(grad_a, np.shape(a), name), _as_array(grad_b, np.shape(b), name)


def subtract_backward(grad, a_shape, b_shape, name, broadcast="numpy", broadcast_axis=-1):
    vg = to_python_values(grad, name)
    shape = vg.shape
    terms_a = np.empty(shape, dtype=object)
    terms_b = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        g = vg[index]
        special = math.isnan(g) or math.isinf(g)
        terms_a[index] = (g if special else Fraction(g), _term_sign_negative_zero(g))
        terms_b[index] = (-g if special else -Fraction(g), g == 0 and not _term_sign_negative_zero(g))
    grad_a = _sum_to(terms_a, shape, tuple(a_shape), broadcast, broadcast_axis, name, False)
    grad_b = _sum_to(terms_b, shape, tuple(b_shape), broadcast, broadcast_axis, name, True)
    return _as_array(grad_a, a_shape, name), _as_array(grad_b, b_shape, name)


def _as_array(values, shape, name):
    storage = np.uint16 if name == "bfloat16" else np.dtype(name)
    return np.array([int(float_bits(v, name)) if name == "bfloat16" else v for v in values],
                    dtype=storage).reshape(shape)
