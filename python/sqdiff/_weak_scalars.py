"""Python scalars as *weak* operands (SPEC section 6, NumPy 2's NEP 50).

A Python ``bool``, ``int`` or ``float`` beside an array takes the array's
dtype instead of NumPy 1's int64/float64, so ``squared_difference(x_f32, 0.5)``
computes in float32:

* float array: the scalar's exact value rounded once to nearest even into the
  array's type (bool is 0 or 1); beyond the type's range it is inf, as NumPy 2
  gives for a float (for an int beyond float64's range NumPy raises
  OverflowError: sqdiff rounds it too, to inf, as it does into float32);
* integer array: a Python int must fit the type (300 for uint8 is an error,
  where NumPy 2 raises OverflowError); a bool is 0 or 1; a float makes the
  call float64, as NumPy 2 computes it (NEP 50 makes a Python float a weak
  *float*, and integers with a float promote to the default float): the
  scalar becomes a float64 here, and the integer operand is converted by the
  caller's promotion (``_promotion.promote``), to which the compiled part's
  MixedTypesError leads; with ``dtype=`` naming an integer type, which keeps
  the call in that type, a float is an error;
* only Python scalars: NumPy 2's defaults, int64 for ints and bools with ints,
  float64 as soon as one is a float (an int rounded as above); bools alone
  stay bool (unsupported).

NumPy scalars (``np.float32(1)``) and 0-d arrays are strong: they are arrays
of their dtype. The conversion never touches the strong operand.
"""

import math

import numpy as _np

_BF16_NAMES = ("bfloat16", "bf16")


def is_weak(value):
    """A Python bool, int or float, not a NumPy scalar (np.float64 subclasses float)."""
    return isinstance(value, (bool, int, float)) and not isinstance(value, _np.generic)


def _dtype_hint(dtype):
    """The input dtype a dtype= argument names, or None (bfloat16 bits: "bfloat16")."""
    if dtype is None:
        return None
    if isinstance(dtype, str) and dtype in _BF16_NAMES:
        return "bfloat16"
    try:
        return _np.dtype(dtype)
    except TypeError:
        return None  # the compiled part reports the unknown name


def _strong_dtype(value):
    """The dtype of an operand that is not a Python scalar, or None if it has none
    (it is then left to the compiled part to refuse)."""
    dtype = getattr(value, "dtype", None)  # never np.asarray a Dask array: that computes it
    if not isinstance(dtype, _np.dtype) and hasattr(value, "__dlpack__"):
        # A PyTorch or JAX tensor (whose .dtype is its own), or any DLPack producer:
        # its dtype as NumPy reads it, without a copy.
        try:
            return _np.from_dlpack(value).dtype
        except Exception:  # noqa: BLE001 - on another device: the compiled part says which
            return None
    if dtype is None:
        try:
            dtype = _np.asarray(value).dtype
        except Exception:  # noqa: BLE001 - a ragged list: the compiled part says what is wrong
            return None
    try:
        return _np.dtype(dtype)
    except TypeError:
        return None


def _int_to_float_round_to_odd(value):
    """A Python int as a float64, rounded to odd when it has more than 53 significant
    bits, so that rounding that float once more (to 24 bits or fewer) is correct
    rounding of the int; inf beyond float64's range."""
    magnitude = abs(value)
    bits = magnitude.bit_length()
    if bits > 1024:
        result = math.inf
    elif bits <= 53:
        result = float(magnitude)
    else:
        shift = bits - 53
        mantissa = magnitude >> shift
        if magnitude & ((1 << shift) - 1):
            mantissa |= 1  # sticky: inexact, so odd
        result = math.ldexp(float(mantissa), shift)  # below 2**1024: no overflow
    return -result if value < 0 else result


def _to_float32_round_to_odd(value):
    """A float64 as float32, rounded to odd when inexact (so that one more rounding,
    to bfloat16, is correct rounding of the float64); finite stays finite."""
    with _np.errstate(over="ignore"):
        result = _np.array(value, dtype=_np.float64).astype(_np.float32)
    if math.isnan(value) or float(result) == value:
        return result
    if _np.isinf(result):
        return _np.array(math.copysign(float(_np.finfo(_np.float32).max), value), dtype=_np.float32)
    if int(result.view(_np.uint32)) & 1 == 0:
        toward = _np.float32(_np.inf if value > float(result) else -_np.inf)
        result = _np.array(_np.nextafter(result, toward), dtype=_np.float32)
    return result


def _bfloat16_bits(value):
    """The bfloat16 bits (uint16, 0-d) of a float64, rounded once to nearest even."""
    f32 = _to_float32_round_to_odd(value)
    bits = int(f32.view(_np.uint32))
    if math.isnan(value):
        return _np.array((bits >> 16) | 0x0040, dtype=_np.uint16)
    return _np.array((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16, dtype=_np.uint16)


# Magnitudes from which rounding to nearest gives infinity (the largest finite value plus half
# an ulp): converted by hand, since NumPy warns on such a cast.
_OVERFLOW = {2: 65520.0, 4: math.ldexp(2.0 ** 24 - 0.5, 104)}


def _wide(value, itemsize):
    """A bool, int or float as a float64 that rounds correctly into `itemsize` bytes."""
    if isinstance(value, float):
        return value
    if itemsize == 8:
        try:
            # Python rounds an int to float64 correctly, and raises OverflowError exactly when
            # that rounding gives inf (from 2**1024 - 2**970 on, half an ulp past the largest).
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf  # not copysign: it would convert value too
    return _int_to_float_round_to_odd(int(value))


def _as_float(op, value, dtype):
    """A bool, int or float rounded once into the NumPy float dtype `dtype`, as a 0-d array."""
    itemsize = dtype.itemsize
    wide = _wide(value, itemsize)
    if itemsize != 8 and abs(wide) >= _OVERFLOW[itemsize]:
        wide = math.copysign(math.inf, wide)
    return _np.array(wide, dtype=dtype)  # one rounding, to nearest even


def _as_bfloat16(op, value, dtype):
    """The same into bfloat16: bits in uint16 for dtype "bfloat16", else ml_dtypes' type."""
    bits = _bfloat16_bits(_wide(value, 2))
    return bits if isinstance(dtype, str) else bits.view(dtype)


def _as_integer(op, value, dtype):
    if isinstance(value, float):
        # Only dtype= gets here: without it a float beside integers promotes to float64 (resolve).
        raise _error(op, f"the Python float {value!r} cannot be computed in {dtype.name}, the dtype= asked for: "
                         f"NumPy 2 computes a float beside integers in float64; drop dtype= to compute in "
                         f"float64, or pass an int")
    info = _np.iinfo(dtype)
    number = int(value)
    if not info.min <= number <= info.max:
        raise _error(op, f"the Python int {number} does not fit {dtype.name} (range {info.min} to {info.max}), "
                         f"the dtype of the other operand")
    return _np.array(number, dtype=dtype)


def _error(op, message):
    from . import Error  # the compiled module's exception class

    return Error(f"{op}: {message}")


def _defaults(op, values):
    """Only Python scalars: NumPy 2's defaults (int64, or float64 if any is a float)."""
    if all(isinstance(v, bool) for v in values):
        return [_np.asarray(v) for v in values]  # bool arrays: the compiled part refuses them
    if any(isinstance(v, float) for v in values):
        float64 = _np.dtype(_np.float64)
        return [_as_float(op, v, float64) for v in values]  # an int beyond float64's range: inf
    return [_as_integer(op, v, _np.dtype(_np.int64)) for v in values]


# Exact types of the weak scalars of resolve's shortcut (a subclass, such as np.float64 or an
# IntEnum, takes the general path).
_EXACT_WEAK = (float, int, bool)


def _array_and_scalar(op, values):
    """resolve's shortcut for the common call, an ndarray of a float or integer dtype
    beside a Python float, int or bool, and no dtype=; the same result as the
    general path, which returns None here for everything else."""
    a, b = values
    if type(a) is _np.ndarray and type(b) in _EXACT_WEAK:
        target = a.dtype
        kind = target.kind
        if kind == "f":
            return [a, _as_float(op, b, target)]
        if kind in "iu" and type(b) is not float:  # a float promotes: the general path
            return [a, _as_integer(op, b, target)]
    elif type(b) is _np.ndarray and type(a) in _EXACT_WEAK:
        target = b.dtype
        kind = target.kind
        if kind == "f":
            return [_as_float(op, a, target), b]
        if kind in "iu" and type(a) is not float:
            return [_as_integer(op, a, target), b]
    return None


def resolve(op, values, dtype=None):
    """`values` with each Python scalar converted to the dtype of the first operand
    that is not one (or to `dtype`, the input type a dtype= argument names, when
    all are Python scalars). Anything that cannot be resolved is left for the
    compiled part, which reports it."""
    if dtype is None and len(values) == 2:
        resolved = _array_and_scalar(op, values)
        if resolved is not None:
            return resolved
    weak = [is_weak(v) for v in values]
    if not any(weak):
        return list(values)
    hint = _dtype_hint(dtype)
    if all(weak):
        if hint is None:
            return _defaults(op, values)
        target = hint
    else:
        target = _strong_dtype(next(v for v, w in zip(values, weak) if not w))
        if hint == "bfloat16" and target == _np.dtype(_np.uint16):
            target = "bfloat16"
        if target is None:
            return list(values)
    convert = _converter(target)
    if convert is None:
        return list(values)  # bool, complex, object arrays: refused by the compiled part
    if (convert is _as_integer and (hint is None or hint != target)
            and any(isinstance(v, float) for v, w in zip(values, weak) if w)):
        # NEP 50: a Python float beside integers computes in float64 (numpy.result_type(int8_array,
        # 0.5) is float64), so the scalars become float64 here and the integer operands stay as they
        # are: the compiled part then finds two dtypes and raises MixedTypesError, whose handlers
        # convert them as for any two dtypes (sqdiff._promotion.promote gives float64 too). Only a
        # dtype= naming that integer type keeps the call in it (_as_integer's error); a dtype= naming
        # another type is refused by the compiled part, for the array's dtype.
        target = _np.dtype(_np.float64)
        convert = _as_float
    return [convert(op, v, target) if w else v for v, w in zip(values, weak)]


def _converter(target):
    """The function that makes a weak scalar of type `target` (a NumPy dtype, or
    "bfloat16" for uint16 bits), or None for a type sqdiff does not compute in."""
    if isinstance(target, str):
        return _as_bfloat16
    if target.kind == "f":
        return _as_float
    if target.kind in "iu":
        return _as_integer
    if target.name == "bfloat16":  # ml_dtypes.bfloat16
        return _as_bfloat16
    return None


def resolve_to(op, values, target):
    """`values` with each Python scalar converted once to `target`, the dtype the
    arrays among them promote to (sqdiff._promotion): NEP 50 with mixed arrays,
    where a scalar takes the promoted type, not the first array's (0.1 beside
    float32 and float64 arrays is float64's 0.1, never float32's widened)."""
    convert = _converter(target)
    return [convert(op, v, target) if is_weak(v) else v for v in values]
