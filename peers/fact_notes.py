"""The parts of docs/COMPATIBILITY.md's notes that state the run's own figures (findings.py).

Each function takes one configuration's records ({"op dtype mode": record}) and facts ({probe
name: what it found}) as docs/compatibility.json holds them, and returns Markdown. A sentence
that states a rule (OpenVINO's u8 Subtract wraps only when rank(b) < rank(a); ONNX Runtime's Pow
gives INT_MIN only for a d of one element or last dimension 1; OpenVINO's i8 Subtract is
sat(a + sat(-b))) is written only when the figures bear it out; otherwise the figures are given
as they are, so that a run that contradicts the rule cannot leave it on the page.
"""

import re
import textwrap

from cases import DTYPES, FLOAT_DTYPES

LOWER, EQUAL = "rank(b) < rank(a)", "rank(b) == rank(a)"
INTEGER_DTYPES = [t for t in DTYPES if t not in FLOAT_DTYPES]


def fill(text, **indent):
    """Text wrapped at 100 columns like the hand-written notes, never inside a `code span`."""
    unbroken = re.sub(r"`[^`]*`", lambda span: span.group(0).replace(" ", "\0"), text)
    return textwrap.fill(unbroken, width=100, break_long_words=False, break_on_hyphens=False,
                         **indent).replace("\0", " ")


def bullet(text):
    """A Markdown list item."""
    return fill(text, initial_indent="- ", subsequent_indent="  ")


def _code_list(items):
    return ", ".join(f"`{item}`" for item in items)


def _kind(entry):
    """How the peer treated the out-of-range results of one op x type x rank relation."""
    if not entry["cases"]:
        return "refused"
    if not entry["out_of_range"]:
        return "in range"
    if entry["wrapped"] == entry["out_of_range"]:
        return "wraps"
    if entry["saturated"] == entry["out_of_range"]:
        return "saturates"
    return "mixed"


def _cell(entry):
    """A table cell: what the peer did with the out-of-range results, and in how many cases."""
    n = entry["out_of_range"]
    kind = _kind(entry)
    if kind == "refused":
        return f"refused ({len(entry['refused'])} cases)"
    if kind in ("wraps", "saturates"):
        text = f"{kind} {n}/{n}"
    elif kind == "in range":
        text = "none out of range"
    else:
        text = f"of {n}: wraps {entry['wrapped']}, saturates {entry['saturated']}, other {entry['other']}"
    text += f" ({entry['cases']} cases"
    if entry["refused"]:
        text += f", {len(entry['refused'])} refused"
    return text + ")"


def pdpd_table(facts):
    """Integer results out of the type's range with pdpd broadcasting, by rank, as a table."""
    found = facts.get("pdpd by rank")
    if not found:
        return ""
    groups = found["by op and type"]
    lines = [fill("Integer results out of the type's range with pdpd broadcasting (which sqdiff wraps), "
                  "by rank: how many the plugin wrapped (identical to sqdiff) or saturated, out of how "
                  "many (*other*: neither, as the 8-bit SquaredDifference and the 64-bit types computed "
                  "in 32 bits above):"), "",
             f"| op, type | {LOWER} | {EQUAL} |", "|---|---|---|"]
    for op in ("subtract", "squared_difference"):
        for dtype in INTEGER_DTYPES:
            entry = groups.get(f"{op} {dtype}")
            if entry:
                lines.append(f"| {op} {dtype} | {_cell(entry[LOWER])} | {_cell(entry[EQUAL])} |")
    lines += ["", fill(f"The cases with {EQUAL}: {_code_list(found['cases'][EQUAL])}; with {LOWER}: "
                       f"{_code_list(found['cases'][LOWER])}.")]
    return "\n".join(lines)


def u8_subtract(facts):
    """The u8 Subtract bullet: saturation, and what pdpd broadcasting does by rank."""
    text = ("**u8 Subtract**: the plugin saturates (`0 - 1 = 0`); sqdiff wraps (`255`): SPEC 2 "
            "decides \"never saturate\".")
    entry = facts.get("pdpd by rank", {}).get("by op and type", {}).get("subtract u8")
    if not entry:
        return bullet(text)
    lower, equal = entry[LOWER], entry[EQUAL]
    if _kind(lower) == "wraps" and _kind(equal) == "saturates":
        text += (f" With pdpd broadcasting it wraps, identical to sqdiff, only when {LOWER}: all "
                 f"{lower['out_of_range']} out-of-range results of the {lower['cases']} such cases are "
                 f"wrapped; with equal ranks it saturates all {equal['out_of_range']} of its "
                 f"{equal['cases']} cases ({_code_list(facts['pdpd by rank']['cases'][EQUAL])}), as "
                 "without pdpd.")
    else:
        text += (f" With pdpd broadcasting, where {LOWER}: {_cell(lower)}; with equal ranks: "
                 f"{_cell(equal)} (out-of-range results).")
    return bullet(text + " The table below gives every integer type.")


def i8_subtract(facts):
    """The i8 Subtract bullet: the plugin's formula, and the b = -128 differences it explains."""
    found = facts.get("i8 subtract as sat(a + sat(-b))")
    if not found:
        return ""
    total = {key: sum(mode[key] for mode in found.values()) for key in next(iter(found.values()))}
    n, formula = total["elements"], total["equal to sat(a + sat(-b))"]
    other, at_minimum = total["other integer"], total["other integer with b = -128"]
    if formula == n > 0 and at_minimum == other > 0:
        text = (f"**i8 Subtract**: the plugin computes `sat(a + sat(-b))`: it negates b with saturation "
                f"(`-(-128)` gives 127), then adds with saturation: all {n} results (modes "
                f"{', '.join(found)}) are that value. So it saturates where a - b is out of range "
                "(`127 - (-128) = 127`, *saturation*), and when b = -128 and a < 0 it gives a + 127, "
                "one less than a - b: `-17 - (-128)` gives 110, not 111. Every one of the "
                f"{other} *other integer* differences has b = -128. sqdiff wraps (`127 - (-128) = -1`).")
    else:
        text = (f"**i8 Subtract**: the plugin saturates (*saturation*); {formula} of its "
                f"{n} results equal `sat(a + sat(-b))`, and {at_minimum} of the {other} *other integer* "
                "differences have b = -128. sqdiff wraps (`127 - (-128) = -1`).")
    return bullet(text)


def _types(types):
    return ", ".join(types) if types else "none"


def pdpd_refusals(records, facts):
    """The bullet on the pdpd cases the plugin refuses, from the records and the facts."""
    groups = facts.get("pdpd by rank", {}).get("by op and type", {})

    def refused(op):
        whole, partly = [], {}
        for dtype in DTYPES:
            record = records.get(f"{op} {dtype} pdpd")
            if record and record["result"] == "rejected":
                whole.append(dtype)
            elif record and record.get("refused_cases"):
                entry = groups.get(f"{op} {dtype}", {})
                partly[dtype] = {r: entry[r]["refused"] for r in (LOWER, EQUAL)
                                 if entry.get(r, {}).get("refused")}
        return whole, partly

    whole, partly = refused("squared_difference")
    text = ("**pdpd refused**: SquaredDifference with pdpd broadcasting fails in compile_model "
            "(\"evaluate() is not implemented\": the plugin has no kernel for it and no reference to "
            f"fall back on) on {_types(whole)} in every case")
    only_lower = [t for t, by in partly.items() if list(by) == [LOWER]]
    if only_lower:
        counts = sorted({len(partly[t][LOWER]) for t in only_lower})
        text += (f", and on {_types(only_lower)} only where {LOWER} ({' or '.join(map(str, counts))} "
                 "cases): with equal ranks these run (the tables above)")
    others = [t for t in partly if t not in only_lower]
    if others:
        text += f", and on {_types(others)} in some cases: " + "; ".join(
            f"{t}: {_code_list(sum(partly[t].values(), []))}" for t in others)
    whole, partly = refused("subtract")
    cases = sorted({c for by in partly.values() for labels in by.values() for c in labels})
    ran = [t for t in DTYPES if f"subtract {t} pdpd" in records and t not in whole and t not in partly]
    if partly or whole:
        text += (f". Subtract with pdpd fails on {_types(whole + list(partly))} when b is not aligned "
                 f"with a's trailing dims (`axis + rank(b) < rank(a)`: {_code_list(cases)}): the "
                 "plugin's ConvertSubtract pass rewrites `a - b` as `a + b * -1` and loses the axis; "
                 f"{_types(ran)} run every case.")
    else:
        text += ". Subtract runs every pdpd case on every type."
    return bullet(text)


POW_RULE = "minimum exactly where d has one element or its last dimension is 1"
POW_KERNEL = (
    "ONNX Runtime's Pow kernel (PowImpl in core/providers/cpu/math/element_wise_ops.cc) walks the "
    "output in runs along its last dimension: a run of one element takes the branch for a scalar "
    "base, which computes `std::pow` in double and converts back (an out-of-range double converts "
    "to INT_MIN on x86); a longer run takes the branch for a scalar exponent, which squares as "
    "`x * x` in the type.")


def _counts(found, key):
    return ", ".join(f"{dtype}: {entry[key]}" for dtype, entry in found.items())


def pow_overflow(facts):
    """The note on ONNX Runtime's Pow(d, 2) for i32/i64: where an overflowing square gives INT_MIN."""
    found = facts.get("overflowing squares by shape of d", {})
    sentences = ["As with Mul, except for integers: Pow takes no 8- or 16-bit or unsigned integer "
                 "base (the model is invalid)."]
    shapes = [entry["shapes"] for entry in found.values()]
    if found and all(entry[POW_RULE] for entry in found.values()) and shapes.count(shapes[0]) == len(shapes):
        wraps = shapes[0].get("wraps", [])
        text = (f"For {' and '.join(found)}, a square that overflows gives the type's minimum (INT_MIN) "
                "instead of wrapping exactly when d = a - b has one element or its last dimension is "
                "1; otherwise it wraps as sqdiff does (SPEC 2: wrap-around). In this run the squares "
                f"that overflow give INT_MIN in every d of shape {_code_list(shapes[0].get('minimum', []))} "
                f"({_counts(found, 'minimum')} elements), and wrap in every d of shape "
                f"{_code_list(wraps)} ({_counts(found, 'wrapped')} elements)")
        if "[4, 3]" in wraps:
            text += " (`[4, 3]` is `[4, 1]` with `[1, 3]`: d's last dimension counts, not the inputs')"
        sentences.append(text + ". " + POW_KERNEL)
    for dtype, entry in found.items() if len(sentences) == 1 else ():
        sentences.append(
            f"For {dtype}, of the squares that overflow, {entry['minimum']} give INT_MIN, "
            f"{entry['wrapped']} wrap as in sqdiff and {entry['other']} are otherwise, and "
            f"{entry['differing in range']} squares in range differ; by d's shape: "
            + "; ".join(f"{kind}: {_code_list(s)}" for kind, s in entry["shapes"].items())
            + (": INT_MIN exactly where d has one element or its last dimension is 1." if entry[POW_RULE]
               else ". Whether d has one element or a last dimension of 1 does not tell them apart."))
    return fill(" ".join(sentences))
