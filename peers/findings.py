"""Facts about a peer's integer results that the page's notes state, measured in the same run.

A group's classification (compare.py) says how many elements differ and how; some notes say more
than that: which cases a behaviour appears in, or which formula the peer's values follow. Each
probe here looks at every case of one peer configuration (Groups calls observe() with the inputs
broadcast to the output's shape and flattened, sqdiff's output and the peer's) and returns what
it found as JSON values. generate.py records them in docs/compatibility.json under "facts",
notes.py writes the notes from them, and tests/peers/test_compatibility.py fails when they change.
"""

import numpy as np

from cases import FLOAT_DTYPES, STORAGE, label


def _exact(op, a, b):
    """The exact result of each element, as Python integers (no wrapping, no overflow)."""
    d = a.astype(object) - b.astype(object)
    return d * d if op == "squared_difference" else d


def _clamp(dtype, values):
    info = np.iinfo(STORAGE[dtype])
    return np.array([min(max(v, int(info.min)), int(info.max)) for v in values], dtype=object)


def _in_range(dtype, values):
    info = np.iinfo(STORAGE[dtype])
    return np.array([int(info.min) <= v <= int(info.max) for v in values], dtype=bool)


def _objects(array):
    return np.asarray(array).ravel().astype(object)


class PdpdByRank:
    """pdpd broadcasting split by whether b has a lower rank than a or the same rank: the cases of
    each kind; per op and type how many the peer ran, and which it refused; and for integer types,
    of the results out of the type's range, how many the peer wrapped (as sqdiff does), saturated
    or gave otherwise, and how many cases wrap or saturate throughout."""

    name = "pdpd by rank"
    RELATIONS = ("rank(b) < rank(a)", "rank(b) == rank(a)")

    def __init__(self):
        self._cases = {r: [] for r in self.RELATIONS}
        self._groups = {}

    def _entry(self, op, dtype, case):
        relation = self.RELATIONS[0] if len(case.shape_b) < len(case.shape_a) else self.RELATIONS[1]
        if label(case) not in self._cases[relation]:
            self._cases[relation].append(label(case))
        key = f"{op} {dtype}"
        if key not in self._groups:
            counts = ["cases"] + ([] if dtype in FLOAT_DTYPES else [
                "out_of_range", "wrapped", "saturated", "other",
                "wrapping cases", "saturating cases", "mixed cases"])
            self._groups[key] = {r: {"refused": [], **dict.fromkeys(counts, 0)} for r in self.RELATIONS}
        return self._groups[key][relation]

    def observe(self, op, dtype, case, a, b, ours, theirs):
        if case.mode != "pdpd":
            return
        entry = self._entry(op, dtype, case)
        entry["cases"] += 1
        if dtype in FLOAT_DTYPES:
            return
        exact = _exact(op, a, b)
        outside = ~_in_range(dtype, exact)
        total = int(outside.sum())
        if not total:
            return
        ours, theirs = _objects(ours)[outside], _objects(theirs)[outside]
        wrapped = int((theirs == ours).sum())
        saturated = int((theirs == _clamp(dtype, exact[outside])).sum())
        entry["out_of_range"] += total
        entry["wrapped"] += wrapped
        entry["saturated"] += saturated
        entry["other"] += total - wrapped - saturated
        if wrapped == total:
            entry["wrapping cases"] += 1
        elif saturated == total:
            entry["saturating cases"] += 1
        else:
            entry["mixed cases"] += 1

    def refused(self, op, dtype, case):
        if case.mode == "pdpd":
            self._entry(op, dtype, case)["refused"].append(label(case))

    def facts(self):
        """In an order that does not depend on the order the peer's refusals were found in."""
        if not self._groups:
            return {}
        for group in self._groups.values():
            for entry in group.values():
                entry["refused"].sort()
        return {"cases": {r: sorted(labels) for r, labels in self._cases.items()},
                "by op and type": self._groups}


def one_element_or_last_dimension_one(shape):
    """Issue 21's rule for ONNX Runtime's Pow(d, 2) on i32/i64: an overflowing square gives INT_MIN
    when d has one element or its last dimension is 1, and wraps otherwise."""
    return int(np.prod(shape, dtype=np.int64)) == 1 or (len(shape) > 0 and shape[-1] == 1)


class SquareOverflowByShape:
    """Integer squares that overflow (i32, i64), by the shape of the difference d = a - b: the
    shapes where the peer gives the type's minimum for them, and those where it wraps as sqdiff
    does; and whether both were seen and split exactly by one_element_or_last_dimension_one."""

    name = "overflowing squares by shape of d"
    DTYPES = ("i32", "i64")

    def __init__(self):
        self._by_dtype = {}

    def observe(self, op, dtype, case, a, b, ours, theirs):
        if op != "squared_difference" or dtype not in self.DTYPES:
            return
        entry = self._by_dtype.setdefault(dtype, {"minimum": 0, "wrapped": 0, "other": 0,
                                                  "differing in range": 0, "shapes": {}})
        exact = _exact(op, a, b)
        outside = ~_in_range(dtype, exact)
        ours, theirs = _objects(ours), _objects(theirs)
        entry["differing in range"] += int(((ours != theirs) & ~outside).sum())
        if not outside.any():
            return
        minimum = int(np.iinfo(STORAGE[dtype]).min)
        counts = {"minimum": int((theirs[outside] == minimum).sum()),
                  "wrapped": int((theirs[outside] == ours[outside]).sum())}
        counts["other"] = int(outside.sum()) - counts["minimum"] - counts["wrapped"]
        for key, value in counts.items():
            entry[key] += value
        kind = ("minimum" if counts["minimum"] == outside.sum() else
                "wraps" if counts["wrapped"] == outside.sum() else "mixed")
        entry["shapes"].setdefault(kind, set()).add(tuple(np.broadcast_shapes(case.shape_a, case.shape_b)))

    def refused(self, op, dtype, case):
        pass

    def facts(self):
        out = {}
        for dtype, entry in sorted(self._by_dtype.items()):
            shapes = entry["shapes"]
            rule = (entry["minimum"] > 0 and entry["wrapped"] > 0 and entry["other"] == 0
                    and entry["differing in range"] == 0 and not shapes.get("mixed")
                    and all(map(one_element_or_last_dimension_one, shapes.get("minimum", ())))
                    and not any(map(one_element_or_last_dimension_one, shapes.get("wraps", ()))))
            out[dtype] = {**{k: v for k, v in entry.items() if k != "shapes"},
                          "shapes": {kind: [str(list(s)) for s in sorted(found, key=lambda s: (len(s), s))]
                                     for kind, found in sorted(shapes.items())},
                          "minimum exactly where d has one element or its last dimension is 1": rule}
        return out


class NegateThenAdd:
    """i8 Subtract: how many of the peer's results equal sat(a + sat(-b)) (b negated with
    saturation, so -128 becomes 127, then added with saturation); and of the elements the
    classification calls 'other integer' (differing, and not the saturated a - b), how many have
    b = -128."""

    name = "i8 subtract as sat(a + sat(-b))"

    def __init__(self):
        self._counts = {}

    def observe(self, op, dtype, case, a, b, ours, theirs):
        if op != "subtract" or dtype != "i8":
            return
        counts = self._counts.setdefault(case.mode, dict.fromkeys(
            ("elements", "equal to sat(a + sat(-b))", "other integer", "other integer with b = -128"), 0))
        a, b, ours, theirs = _objects(a), _objects(b), _objects(ours), _objects(theirs)
        negated_then_added = _clamp(dtype, a + _clamp(dtype, -b))
        other = (theirs != ours) & (theirs != _clamp(dtype, a - b))
        counts["elements"] += len(theirs)
        counts["equal to sat(a + sat(-b))"] += int((theirs == negated_then_added).sum())
        counts["other integer"] += int(other.sum())
        counts["other integer with b = -128"] += int((other & (b == -128)).sum())

    def refused(self, op, dtype, case):
        pass

    def facts(self):
        return dict(sorted(self._counts.items()))
