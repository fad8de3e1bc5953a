"""Element-by-element comparison of a peer's output with sqdiff's, and its classification.

A group (peer x op x dtype x mode) is "identical" when every element has the same bits, NaN
payloads included. Otherwise each differing element is put in one category, so the page can
say which elements differ and why.
"""

import collections

import numpy as np

from cases import FLOAT_DTYPES, STORAGE

BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
FLOAT_LAYOUT = {  # (exponent bits, mantissa bits)
    "f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52),
}

CATEGORY_TEXT = {
    "rounding": "finite values that differ in the last places (max ulps given)",
    "nan_bits": "both NaN, sign or payload bits differ",
    "nan_vs_number": "NaN in one, a number in the other",
    "zero_sign": "+0 in one, -0 in the other",
    "flush_to_zero": "a subnormal result in one and 0 in the other, or (f32, f64) the peer's result is what subnormal inputs read as 0 give (denormals-are-zero)",
    "overflow": "+-inf in one, a finite value in the other",
    "saturation": "integer result clamped to the type's range by the peer (sqdiff wraps)",
    "narrowed": "the peer computed in a narrower type: an f64 result that is an f32 value, a 64-bit "
                "integer result whose low 32 bits are right and the rest is not",
    "integer_other": "integer results that differ otherwise",
    "inf_sign": "infinities of opposite signs",
}


def _ordered(bits, dtype):
    """Bits as integers ordered like the values (so that ulps are differences)."""
    width = np.dtype(BITS[dtype]).itemsize * 8
    b = bits.astype(np.uint64).astype(object) if width == 64 else bits.astype(np.int64)
    sign = 1 << (width - 1)
    if width == 64:
        return np.array([-(x & (sign - 1)) if x & sign else x for x in b], dtype=object)
    return np.where(b & sign, -(b & (sign - 1)), b)


def _float_fields(bits, dtype):
    exp_bits, man_bits = FLOAT_LAYOUT[dtype]
    b = bits.astype(np.uint64)
    exponent = (b >> np.uint64(man_bits)) & np.uint64((1 << exp_bits) - 1)
    mantissa = b & np.uint64((1 << man_bits) - 1)
    nan = (exponent == (1 << exp_bits) - 1) & (mantissa != 0)
    inf = (exponent == (1 << exp_bits) - 1) & (mantissa == 0)
    zero = (exponent == 0) & (mantissa == 0)
    subnormal = (exponent == 0) & (mantissa != 0)
    return nan, inf, zero, subnormal


def broadcast_inputs(case, a, b):
    """a and b as views of the output's shape, by the case's broadcast rule."""
    if case.mode == "pdpd":
        axis = len(a.shape) - len(b.shape) if case.axis == -1 else case.axis
        b = b.reshape((1,) * axis + tuple(b.shape) + (1,) * (len(a.shape) - axis - len(b.shape)))
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.broadcast_to(a, shape).ravel(), np.broadcast_to(b, shape).ravel()


def compare(dtype, ours, theirs, a=None, b=None, op=None):
    """Counts of differing elements by category, and the largest ulp distance of 'rounding'.

    ours and theirs hold the type's storage (bf16 as uint16 bits). a and b, the inputs broadcast
    to the output's shape and flattened (broadcast_inputs), tell subnormal inputs (floats) and
    saturation (integers, with op) from other differences.
    """
    ours = np.ascontiguousarray(ours)
    theirs = np.ascontiguousarray(theirs)
    if ours.shape != theirs.shape:
        raise ValueError(f"shape {theirs.shape} from the peer, {ours.shape} from sqdiff")
    counts = collections.Counter()
    examples = {}
    max_ulps = 0
    if dtype in FLOAT_DTYPES:
        x = ours.view(BITS[dtype]).ravel()
        y = theirs.view(BITS[dtype]).ravel()
        differ = x != y
        if not differ.any():
            return counts, 0, examples
        nx, ix, zx, sx = _float_fields(x, dtype)
        ny, iy, zy, sy = _float_fields(y, dtype)
        for i in np.flatnonzero(differ):
            if nx[i] and ny[i]:
                category = "nan_bits"
            elif nx[i] or ny[i]:
                category = "nan_vs_number"
            elif zx[i] and zy[i]:
                category = "zero_sign"
            elif ix[i] and iy[i]:
                category = "inf_sign"
            elif ix[i] or iy[i]:
                category = "overflow"
            elif (sx[i] and zy[i]) or (zx[i] and sy[i]) or _inputs_flushed(dtype, op, a, b, i, y[i]):
                category = "flush_to_zero"
            elif dtype == "f64" and _is_f32_value(y[i]) and not _is_f32_value(x[i]):
                category = "narrowed"
            else:
                category = "rounding"
                ox, oy = _ordered(x[i:i + 1], dtype), _ordered(y[i:i + 1], dtype)
                max_ulps = max(max_ulps, int(abs(int(ox[0]) - int(oy[0]))))
            counts[category] += 1
            if category not in examples and a is not None:
                examples[category] = _example(dtype, a[i], b[i], x[i], y[i])
        return counts, max_ulps, examples
    x = ours.ravel()
    y = theirs.ravel()
    differ = np.flatnonzero(x != y)
    if len(differ) == 0:
        return counts, 0, examples
    info = np.iinfo(STORAGE[dtype])
    fa, fb = a, b
    for i in differ:
        if fa is not None:
            exact = int(fa[i]) - int(fb[i])
            if op == "squared_difference":
                exact *= exact
            if int(y[i]) == min(max(exact, info.min), info.max):
                category = "saturation"
            elif info.bits == 64 and int(y[i]) % 2**32 == int(x[i]) % 2**32:
                category = "narrowed"
            else:
                category = "integer_other"
        else:
            category = "integer_other"
        counts[category] += 1
        if category not in examples and fa is not None:
            examples[category] = f"a={int(fa[i])}, b={int(fb[i])}: sqdiff {int(x[i])}, peer {int(y[i])}"
    return counts, 0, examples


def _show(dtype, bits):
    """A float element as its value and, for NaNs and zeros, its bits."""
    value = bits.view(STORAGE[dtype]) if dtype != "bf16" else None
    if dtype == "bf16":
        value = np.array([int(bits) << 16], dtype=np.uint32).view(np.float32)[0]
    number = float(value)
    text = repr(number)
    if np.isnan(number) or number == 0:
        text += f" (0x{int(bits):0{np.dtype(BITS[dtype]).itemsize * 2}x})"
    return text


def _example(dtype, a, b, x, y):
    bits = BITS[dtype]
    a_bits = np.array([a]).view(bits)[0] if dtype != "bf16" else a
    b_bits = np.array([b]).view(bits)[0] if dtype != "bf16" else b
    return (f"a={_show(dtype, np.array([a_bits], dtype=bits))}, b={_show(dtype, np.array([b_bits], dtype=bits))}: "
            f"sqdiff {_show(dtype, np.array([x], dtype=bits))}, peer {_show(dtype, np.array([y], dtype=bits))}")


def _is_f32_value(bits):
    """Whether an f64 (given as its bits) is a float32 value, or float32's largest finite one
    clamped: what an f64 computed in f32 and widened back looks like."""
    value = np.array([bits], dtype=np.uint64).view(np.float64)[0]
    with np.errstate(over="ignore"):
        return bool(np.isfinite(value) and np.float64(np.float32(value)) == value)


def _inputs_flushed(dtype, op, a, b, i, peer_bits):
    """Whether the peer's f32/f64 result is what it gives with subnormal inputs read as 0
    (denormals-are-zero): such elements are flushing, not rounding."""
    if a is None or dtype not in ("f32", "f64"):
        return False
    x, y = a[i], b[i]
    tiny = np.finfo(x.dtype).tiny
    if not (0 < abs(x) < tiny or 0 < abs(y) < tiny):
        return False
    x = x.dtype.type(0) * np.sign(x) if abs(x) < tiny else x
    y = y.dtype.type(0) * np.sign(y) if abs(y) < tiny else y
    with np.errstate(all="ignore"):
        d = np.array([x - y])
        value = d * d if op == "squared_difference" else d
    return bool(value.view(BITS[dtype])[0] == peer_bits)


def summarize(results):
    """Merges the (counts, max_ulps, elements) of several cases into one group's record."""
    counts = collections.Counter()
    max_ulps = 0
    elements = 0
    examples = {}
    for c, u, n, e in results:
        counts.update(c)
        max_ulps = max(max_ulps, u)
        elements += n
        for category, text in e.items():
            examples.setdefault(category, text)
    differing = sum(counts.values())
    record = {"result": "identical" if differing == 0 else "differs", "elements": elements}
    if differing:
        record["differing"] = differing
        record["categories"] = dict(sorted(counts.items()))
        if counts.get("rounding"):
            record["max_ulps"] = max_ulps
        record["examples"] = dict(sorted(examples.items()))
    return record


class Groups:
    """Results collected per (op, dtype, mode) of one peer configuration, and the facts that its
    probes (findings.py) gather from the same cases."""

    def __init__(self, probes=()):
        self._cases = collections.defaultdict(list)
        self._rejected = {}
        self._probes = list(probes)

    def add(self, op, dtype, case, ours, theirs, a, b):
        fa, fb = broadcast_inputs(case, a, b)
        counts, ulps, examples = compare(dtype, ours, theirs, fa, fb, op)
        self._cases[(op, dtype, case.mode)].append((counts, ulps, int(ours.size), examples))
        for probe in self._probes:
            probe.observe(op, dtype, case, fa, fb, ours, theirs)

    def reject(self, op, dtype, mode, reason, case=None):
        """The peer refused this op/type/mode (the case, when known): the first line of its
        message is kept."""
        lines = [line for line in reason.strip().splitlines() if line.strip()] or ["(no message)"]
        entry = self._rejected.setdefault((op, dtype, mode), {"reason": lines[0][:200], "cases": 0})
        entry["cases"] += 1
        if case is not None:
            for probe in self._probes:
                probe.refused(op, dtype, case)

    def facts(self):
        """{probe name: what it found}, for the probes that found something."""
        return {probe.name: found for probe in self._probes if (found := probe.facts())}

    def records(self):
        """{(op, dtype, mode): record}. A group the peer refused whole is 'rejected'; one where it
        refused some cases only carries 'refused_cases' besides the comparison of the rest."""
        out = {}
        for key in sorted(set(self._cases) | set(self._rejected)):
            if key not in self._cases:
                out[key] = {"result": "rejected", "reason": self._rejected[key]["reason"]}
                continue
            out[key] = summarize(self._cases[key])
            if key in self._rejected:
                out[key]["refused_cases"] = self._rejected[key]["cases"]
                out[key]["reason"] = self._rejected[key]["reason"]
        return out
