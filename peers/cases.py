"""The inputs every peer runs: shapes (SPEC tables and random ones) and values (random, with
NaN, infinities, signed zeros, subnormals, overflow and integer extremes), from fixed seeds.

The same cases go through sqdiff and through each peer; only the peer's way of building the
model differs. bfloat16 values are uint16 arrays of bits, as sqdiff's Python API takes them.
"""

import dataclasses

import numpy as np

# The twelve element types, by sqdiff's names.
DTYPES = ["f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
FLOAT_DTYPES = ["f16", "bf16", "f32", "f64"]

# The NumPy dtype that holds each type's bits (bf16 as its uint16 bits).
STORAGE = {
    "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}

OPS = ["squared_difference", "subtract"]

SEED = 20261125


@dataclasses.dataclass(frozen=True)
class ShapeCase:
    """One broadcast: shapes of a and b in a mode (axis only for pdpd)."""

    mode: str  # "none", "numpy" or "pdpd"
    shape_a: tuple
    shape_b: tuple
    axis: int = -1
    origin: str = ""  # "SPEC 3 numpy", "random", "specials"


# SPEC section 3's tables, the rows that broadcast (the error rows test sqdiff, not agreement).
SPEC_NUMPY = [
    ((), ()), ((2, 3), (1,)), ((3,), (2, 3)), ((2, 3, 5), ()), ((2, 1, 5), (1, 4, 5)),
    ((6, 5), (2, 1, 5)), ((2, 1, 5), (4, 1)), ((3, 2, 1, 4), (5, 4)), ((1, 5, 3), (5, 2, 1, 3)),
    ((8, 1, 6, 1), (7, 1, 5)), ((1, 0, 3), (3,)),
]
SPEC_PDPD = [
    ((2, 3, 4, 5), (3, 4), 1), ((2, 3, 4, 5), (3, 1), 1), ((2, 3, 4, 5), (4, 5), -1),
    ((2, 3, 4, 5), (4, 5), 2), ((2, 3, 4, 5), (1, 3), 0), ((2, 3, 4, 5), (), -1),
    ((2, 3, 4, 5), (5,), -1), ((2, 3, 4, 5), (5,), 3), ((2, 3, 4, 5), (3, 1, 5), 1),
    ((8, 7, 6, 5), (7, 1, 5), -1),
]
SPEC_NONE = [((256, 56), (256, 56)), ((), ()), ((2, 0, 3), (2, 0, 3))]

# Cases that tell two behaviours of the peers apart (issue 21). They come after all the others, so
# that the others keep their random values.
# pdpd with rank(b) == rank(a) (b's dims 1 where they broadcast, or none), next to the same a with
# a b of lower rank: OpenVINO's u8 Subtract wraps in the second kind and saturates in the first.
PDPD_BY_RANK = [
    ((5, 5), (1, 5), -1), ((5, 5), (5, 1), -1), ((5, 5), (1, 1), 0), ((5, 5), (5, 5), -1),
    ((2, 3, 4), (1, 3, 4), -1), ((2, 3, 4), (2, 1, 4), 0), ((2, 3, 4), (2, 3, 1), -1),
    ((5, 5), (5,), -1), ((2, 3, 4), (3, 4), -1), ((2, 3, 4), (3, 1), 1),
]
# Differences (outputs) of one element or with a last dimension of 1, next to ones whose last
# dimension is longer: ONNX Runtime's Pow(d, 2) on i32/i64 gives INT_MIN for an overflowing
# square in the first kind and wraps in the second. (4, 1) with (1, 3) has inputs whose last
# dimension is 1 and a difference whose last dimension is 3.
LAST_DIMENSION_NONE = [((1,), (1,)), ((6, 1), (6, 1)), ((2, 3), (2, 3))]
LAST_DIMENSION_NUMPY = [
    ((5, 1), (1,)), ((2, 3, 1), (3, 1)), ((1, 1), (1,)), ((3,), (1,)), ((1,), (4,)),
    ((4, 2), (4, 1)), ((4, 1), (1, 3)),
]


def _random_numpy_shapes(rng, count):
    shapes = []
    for _ in range(count):
        rank = int(rng.integers(1, 5))
        out = [int(rng.integers(1, 9)) for _ in range(rank)]
        a = [d if rng.random() < 0.6 else 1 for d in out]
        b = [d if rng.random() < 0.6 else 1 for d in out]
        b = b[int(rng.integers(0, rank)):]  # b may have a lower rank
        shapes.append((tuple(a), tuple(b)))
    return shapes


def shape_cases(modes=("none", "numpy", "pdpd")):
    """Every shape case, in a fixed order."""
    rng = np.random.default_rng(SEED)
    cases = []
    if "none" in modes:
        cases += [ShapeCase("none", a, b, origin="SPEC none / SquaredDifference example 1")
                  for a, b in SPEC_NONE]
        cases += [ShapeCase("none", s, s, origin="random")
                  for s in (tuple(int(d) for d in rng.integers(1, 40, size=r)) for r in (1, 2, 3))]
    if "numpy" in modes:
        cases += [ShapeCase("numpy", a, b, origin="SPEC 3 numpy") for a, b in SPEC_NUMPY]
        cases += [ShapeCase("numpy", a, b, origin="random") for a, b in _random_numpy_shapes(rng, 8)]
        cases += [ShapeCase("numpy", (1000,), (1000,), origin="random, long row")]
    if "pdpd" in modes:
        cases += [ShapeCase("pdpd", a, b, axis, origin="SPEC 3 pdpd") for a, b, axis in SPEC_PDPD]
        cases += [ShapeCase("pdpd", a, b, axis, origin="pdpd by rank") for a, b, axis in PDPD_BY_RANK]
    if "none" in modes:
        cases += [ShapeCase("none", a, b, origin="last dimension") for a, b in LAST_DIMENSION_NONE]
    if "numpy" in modes:
        cases += [ShapeCase("numpy", a, b, origin="last dimension") for a, b in LAST_DIMENSION_NUMPY]
    return cases


def label(case):
    """A case as the page names it: '[5, 5] with [1, 5]', and the axis when pdpd's is not -1."""
    text = f"{list(case.shape_a)} with {list(case.shape_b)}"
    return text + (f" axis {case.axis}" if case.mode == "pdpd" and case.axis != -1 else "")


def specials(dtype):
    """Values every pair of which is run: the edges of the type's arithmetic."""
    if dtype in FLOAT_DTYPES:
        f = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64}[dtype]
        info = {"f16": np.finfo(np.float16), "f32": np.finfo(np.float32),
                "f64": np.finfo(np.float64)}.get(dtype)
        if dtype == "bf16":
            big, tiny, smallest = 3.3895313892515355e38, 1.1754943508222875e-38, 9.183549615799121e-41
        else:
            big, tiny, smallest = float(info.max), float(info.tiny), float(info.smallest_subnormal)
        root = float(np.sqrt(big))
        values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -7.25,
                  smallest, -smallest, tiny, -tiny, tiny * 0.75, big, -big,
                  root, root * 1.001, -root, 1e-3, 1 / 3, 256.0, 255.875]
        values = np.array(values, dtype=np.float64)
        return _to_storage(values, dtype, f)
    info = np.iinfo(STORAGE[dtype])
    values = [info.min, info.min + 1, -1, 0, 1, 2, 16, 127, 128, 255, 256,
              info.max - 1, info.max, info.max // 2, info.max // 2 + 1]
    values = sorted({v for v in values if info.min <= v <= info.max})
    return np.array(values, dtype=STORAGE[dtype])


def _to_storage(values, dtype, f):
    if dtype == "bf16":
        import sqdiff
        return sqdiff.to_bfloat16_bits(values.astype(np.float32))
    with np.errstate(over="ignore"):
        return values.astype(f)


def nan_with_payload(dtype):
    """A negative NaN with a payload: shows whether a peer keeps NaN bits."""
    bits = {"f16": (np.uint16, 0xFE01), "bf16": (np.uint16, 0xFFC1),
            "f32": (np.uint32, 0xFFC00001), "f64": (np.uint64, 0xFFF8000000000001)}[dtype]
    return np.array([bits[1]], dtype=bits[0]).view(STORAGE[dtype])


def random_values(rng, dtype, shape):
    """Random values of the type: mostly ordinary, with a few specials sprinkled in."""
    count = int(np.prod(shape, dtype=np.int64))
    if dtype in FLOAT_DTYPES:
        magnitude = 10.0 ** rng.uniform(-3, 3, size=count)
        values = rng.standard_normal(count) * magnitude
        out = _to_storage(values, dtype, STORAGE[dtype] if dtype != "bf16" else np.float32)
        pool = np.concatenate([specials(dtype), nan_with_payload(dtype)])
    else:
        info = np.iinfo(STORAGE[dtype])
        out = rng.integers(info.min, info.max, size=count, dtype=STORAGE[dtype], endpoint=True)
        pool = specials(dtype)
    if count:
        pick = rng.random(count) < 0.08
        out[pick] = pool[rng.integers(0, len(pool), size=int(pick.sum()))]
    return out.reshape(shape)


@dataclasses.dataclass
class Inputs:
    case: ShapeCase
    a: np.ndarray
    b: np.ndarray


def inputs_for(dtype, cases):
    """The a and b arrays of each case, plus one 'specials' case: every pair of specials."""
    rng = np.random.default_rng([SEED, DTYPES.index(dtype)])
    result = [Inputs(c, random_values(rng, dtype, c.shape_a), random_values(rng, dtype, c.shape_b))
              for c in cases]
    pool = specials(dtype)
    if dtype in FLOAT_DTYPES:
        pool = np.concatenate([pool, nan_with_payload(dtype)])
    n = len(pool)
    grid = ShapeCase("none", (n * n,), (n * n,), origin="specials: every pair")
    if any(c.mode == "none" for c in cases) or any(c.mode == "numpy" for c in cases):
        mode = "none" if any(c.mode == "none" for c in cases) else "numpy"
        grid = dataclasses.replace(grid, mode=mode)
        result.append(Inputs(grid, np.repeat(pool, n), np.tile(pool, n)))
    return result
