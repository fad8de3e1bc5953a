"""Test support: a NumPy oracle written from SPEC, bit-exact comparison, value and layout makers.

The oracle is independent of sqdiff (it uses neither the library nor the
package's bfloat16 helpers):

* integers: computed in the unsigned type of the same width, where NumPy's
  array arithmetic wraps around modulo 2**bits;
* float32, float64: NumPy's own ``d = a - b`` and ``d * d``;
* float16: ``d = f32(a) - f32(b)`` and ``d * d`` in float32, then
  ``.astype(float16)`` (NumPy rounds to nearest even);
* bfloat16 (uint16 bits): widen by shifting the bits up, compute in float32,
  then round to nearest even on the float32 bits (NaN stays a quiet NaN).
"""

import os
from pathlib import Path

import numpy as np

# The twelve SPEC types as the binding spells them ("bfloat16" = uint16 bits).
DTYPE_NAMES = [
    "float16", "bfloat16", "float32", "float64",
    "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64",
]
OPS = ["subtract", "squared_difference"]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
QUIET_BIT = {"float16": 0x0200, "bfloat16": 0x0040, "float32": 1 << 22, "float64": 1 << 51}


def examples(count):
    """A test's hypothesis example count: as given for the "ci" profile, ten times
    more for "thorough" (SQDIFF_HYPOTHESIS_PROFILE=thorough)."""
    return count * 10 if os.environ.get("SQDIFF_HYPOTHESIS_PROFILE") == "thorough" else count


def source_dir():
    """The repository root (docs/, include/)."""
    return Path(os.environ.get("SQDIFF_SOURCE_DIR", Path(__file__).resolve().parents[2]))


def storage(dtype_name):
    """The NumPy dtype that holds a SPEC type (uint16 for bfloat16's bits)."""
    return np.dtype(np.uint16) if dtype_name == "bfloat16" else np.dtype(dtype_name)


def dtype_keyword(dtype_name):
    """What to pass as dtype= for a SPEC type."""
    return "bfloat16" if dtype_name == "bfloat16" else None


class ShapeError(Exception):
    """The oracle's verdict that two shapes do not broadcast."""


def expected_shape(shape_a, shape_b, broadcast="numpy", axis=-1):
    """SPEC section 3, written out independently of the library."""
    a, b = tuple(shape_a), tuple(shape_b)
    if any(d < 0 for d in a + b):
        raise ShapeError("negative dim")
    if broadcast == "none":
        if a != b:
            raise ShapeError("none: shapes differ")
        out = a
    elif broadcast == "numpy":
        rank = max(len(a), len(b))
        pa = (1,) * (rank - len(a)) + a
        pb = (1,) * (rank - len(b)) + b
        out = []
        for x, y in zip(pa, pb):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                raise ShapeError(f"numpy: {x} vs {y}")
        out = tuple(out)
    elif broadcast == "pdpd":
        if len(b) > len(a):
            raise ShapeError("pdpd: rank(b) > rank(a)")
        if axis < -1:
            raise ShapeError("pdpd: axis < -1")
        start = len(a) - len(b) if axis == -1 else axis
        if start + len(b) > len(a):
            raise ShapeError("pdpd: axis + rank(b) > rank(a)")
        for i, d in enumerate(b):
            if d != a[start + i] and d != 1:
                raise ShapeError(f"pdpd: {a[start + i]} vs {d}")
        out = a
    else:
        raise ValueError(broadcast)
    for shape in (a, b, out):
        if int(np.prod(shape, dtype=object)) > 2**63 - 1:
            raise ShapeError("element count overflows int64")
    return out


def pdpd_aligned(b, rank_a, axis):
    """b reshaped to rank(a), its dims starting at `axis` (pdpd's alignment)."""
    start = rank_a - b.ndim if axis == -1 else axis
    return b.reshape((1,) * start + b.shape + (1,) * (rank_a - start - b.ndim))


def bf16_to_f32(bits):
    """Exact: bfloat16 is the top half of a float32. 1-d uint16 in, float32 out."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x):
    """Round float32 to bfloat16 bits, to nearest even; NaN stays NaN, made quiet."""
    u = x.view(np.uint32)
    upper = u >> np.uint32(16)
    lower = u & np.uint32(0xFFFF)
    round_up = (lower > 0x8000) | ((lower == 0x8000) & ((upper & np.uint32(1)) == 1))
    result = upper + round_up.astype(np.uint32)
    nan = np.isnan(x)
    result[nan] = upper[nan] | np.uint32(0x0040)
    return result.astype(np.uint16)


def oracle(op, a, b, dtype_name, broadcast="numpy", axis=-1):
    """The expected result of sqdiff.<op>(a, b) per SPEC, as a new C-contiguous array."""
    a = np.asarray(a)
    b = np.asarray(b)
    shape = expected_shape(a.shape, b.shape, broadcast, axis)
    if broadcast == "pdpd":
        b = pdpd_aligned(b, a.ndim, axis)
    # Flat copies, so that every operation below is an array operation (NumPy
    # warns about integer overflow in scalar arithmetic, never in arrays).
    fa = np.array(np.broadcast_to(a, shape)).reshape(-1)
    fb = np.array(np.broadcast_to(b, shape)).reshape(-1)
    square = op == "squared_difference"
    with np.errstate(all="ignore"):
        if dtype_name == "bfloat16":
            d = bf16_to_f32(fa) - bf16_to_f32(fb)
            result = f32_to_bf16(d * d if square else d)
        elif dtype_name == "float16":
            d = fa.astype(np.float32) - fb.astype(np.float32)
            result = (d * d if square else d).astype(np.float16)
        elif dtype_name in ("float32", "float64"):
            d = fa - fb
            result = d * d if square else d
        else:
            unsigned = UNSIGNED[fa.dtype.itemsize]
            d = fa.view(unsigned) - fb.view(unsigned)
            result = (d * d if square else d).view(fa.dtype)
    return result.reshape(shape)


def nan_mask(values, dtype_name):
    """Which elements are NaN (from the bits, for bfloat16)."""
    if dtype_name == "bfloat16":
        return (values.view(np.uint16) & np.uint16(0x7FFF)) > np.uint16(0x7F80)
    if dtype_name.startswith("float"):
        return np.isnan(values)
    return np.zeros(values.shape, dtype=bool)


def assert_same_bits(actual, expected, dtype_name, what="result", quiet_nans=True):
    """Bit-exact equality, where any NaN equals any NaN; NaN results must be quiet
    (quiet_nans=False for comparing inputs, which may hold signalling NaNs)."""
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    got = np.array(actual).reshape(-1)
    want = np.array(expected).reshape(-1)
    unsigned = UNSIGNED[got.dtype.itemsize]
    got_bits = got.view(unsigned)
    want_bits = want.view(unsigned)
    got_nan = nan_mask(got, dtype_name)
    want_nan = nan_mask(want, dtype_name)
    bad = (got_nan != want_nan) | (~want_nan & (got_bits != want_bits))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        width = 2 * got.dtype.itemsize
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {bad.size} {dtype_name} elements differ; first at flat "
            f"index {i} (of shape {actual.shape}): got 0x{int(got_bits[i]):0{width}x} ({got[i]!r}), "
            f"expected 0x{int(want_bits[i]):0{width}x} ({want[i]!r})")
    if quiet_nans and dtype_name in QUIET_BIT and got_nan.any():
        quiet = (got_bits[got_nan] & unsigned(QUIET_BIT[dtype_name])) != 0
        assert quiet.all(), f"{what}: a NaN result is signalling: 0x{int(got_bits[got_nan][~quiet][0]):x}"


def _float_specials(dtype_name):
    if dtype_name == "bfloat16":
        return np.array([0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x7F7F, 0xFF7F,
                         0x0001, 0x8001, 0x0080, 0x3F80, 0xBF80, 0x4380, 0x5F80], dtype=np.uint16)
    t = np.dtype(dtype_name).type
    info = np.finfo(t)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, info.max, -info.max, info.tiny,
              -info.tiny, info.smallest_subnormal, -info.smallest_subnormal, 1.0, -1.0, 256.0,
              -256.0, 255.875, 0.5, 1e4]
    with np.errstate(all="ignore"):
        return np.array(values).astype(t)


def random_values(rng, dtype_name, shape):
    """Values that reach every corner of a type: uniformly random bits, moderate
    values (whose differences and squares stay mostly in range), and special values
    (zeros, infinities, NaNs, extremes, subnormals, wrap-around points)."""
    dtype = storage(dtype_name)
    n = int(np.prod(shape, dtype=np.int64))
    unsigned = UNSIGNED[dtype.itemsize]
    bits = rng.integers(0, np.iinfo(unsigned).max, size=n, dtype=unsigned, endpoint=True)
    random_bits = bits.view(dtype)
    if dtype_name == "bfloat16" or dtype.kind == "f":
        moderate = rng.uniform(-300.0, 300.0, size=n).astype(np.float32)
        moderate = np.where(rng.random(n) < 0.5, np.round(moderate), moderate).astype(np.float32)
        moderate = f32_to_bf16(moderate) if dtype_name == "bfloat16" else moderate.astype(dtype)
        specials = _float_specials(dtype_name)
    else:
        info = np.iinfo(dtype)
        moderate = rng.integers(max(info.min, -20), min(info.max, 300), size=n, endpoint=True).astype(dtype)
        candidates = [info.min, info.max, 0, 1, 16, 255, 256, info.max // 2 + 1]
        if info.min < 0:
            candidates += [-1, -128, 127, info.min + 1]
        specials = np.array([int(c) for c in candidates if info.min <= c <= info.max], dtype=dtype)
    special = specials[rng.integers(0, len(specials), size=n)]
    choice = rng.integers(0, 3, size=n)
    values = np.where(choice == 0, random_bits, np.where(choice == 1, moderate, special))
    return values.astype(dtype).reshape(shape)


GARBAGE_BYTE = 0xA5


def place(values, layout, rng):
    """A copy of `values` in the given memory layout.

    Returns (view, base, inside): the view to pass to sqdiff, the buffer it
    lives in, and a boolean mask of the base elements the view covers (so that
    a test can check that nothing outside the view was written).
    layout: "c" (C order), "f" (Fortran order), "reversed" (every stride
    negative), "strided" (steps of 1..3 elements, each reversed or not).
    """
    values = np.asarray(values)
    if layout in ("c", "f"):
        view = np.array(values, order=layout.upper())
        return view, view, np.ones(view.shape, dtype=bool)
    if layout == "reversed":
        steps = [-1] * values.ndim
    elif layout == "strided":
        steps = [int(s) * (1 if flip else -1)
                 for s, flip in zip(rng.integers(1, 4, size=values.ndim), rng.integers(0, 2, size=values.ndim))]
    else:
        raise ValueError(layout)
    base = np.empty(tuple(n * abs(s) for n, s in zip(values.shape, steps)), dtype=values.dtype)
    base.reshape(-1).view(np.uint8)[:] = GARBAGE_BYTE  # base is C-contiguous: reshape is a view
    index = tuple(slice(None, None, s) for s in steps) + (Ellipsis,)  # a view, also when 0-d
    view = base[index]
    view[...] = values
    inside = np.zeros(base.shape, dtype=bool)
    inside[index] = True
    return view, base, inside


def assert_untouched_outside(base, inside, what):
    """Every byte of `base` outside the view still holds the garbage pattern."""
    outside = base[~inside]
    assert (outside.view(np.uint8) == GARBAGE_BYTE).all(), f"{what}: written outside the view"
