#!/usr/bin/env python3
"""Writes the "Quantized ops" section of docs/PERFORMANCE.md (issues 25 and 33)
from sqdiff_bench's JSON output of the quant/ cases (scripts/bench.sh
--quantized-only), between <!-- quantized:begin --> and <!-- quantized:end -->;
the rest of the page is kept. A page without the section gets it before
"## Method". perf_table.py keeps the section when it regenerates the page.

    scripts/quantized_perf_section.py RESULTS.json --into docs/PERFORMANCE.md [--command TEXT]
        [--litert LITERT.json]

LITERT.json is bench/python/bench_quantized.py's output: LiteRT's reference and default
resolvers beside sqdiff's Python call, one table more.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf_page.common import fmt_ratio, fmt_size, fmt_time, load, time_ns  # noqa: E402
from perf_page.splice import QUANTIZED_BEGIN, QUANTIZED_END, insert_before_method  # noqa: E402

HEADING = "## Quantized ops (issues 25 and 33)\n"


def describe(name):
    # quant/<op>/<type>[/decimal][/constant]/<size>/t<threads>
    parts = name.split("/")
    op, dtype, size, threads = parts[1], parts[2], parts[-2], parts[-1]
    kind = "/".join(parts[3:-2]) or "calibrated"
    return op, dtype, kind, size, threads[1:]


def exact_share(row):
    vectors = row.get("decided_vectors", 0)
    if not vectors:
        return "—"
    return f"{100 * row.get('exact_fraction', 0):.2f}%"


def agreement(row):
    agree = row.get("xnnpack_agree")
    if agree is None:
        return "—"
    return f"{100 * agree:.1f}% (max diff {row.get('xnnpack_max_diff', 0):.0f})"


def litert_table(data):
    versions = data["versions"]
    out = [f"LiteRT's kernels, from Python (`bench/python/bench_quantized.py`, ai-edge-litert "
           f"{versions['ai-edge-litert']}, NumPy {versions['numpy']}, sqdiff {versions['sqdiff_simd_target']}), "
           "in the same interleaved rounds as sqdiff's Python call on the same arrays (`out=` given; LiteRT's "
           "inputs set once, a call is `invoke()`). *reference* is the builtin reference resolver "
           "(`BUILTIN_REF`), *default* the default one (`AUTO`: XNNPACK's delegate takes SUB on int8/uint8). "
           "Each cell: the runner's time over sqdiff's on as many threads (above 1: sqdiff is faster), then the "
           "share of elements equal to sqdiff's. LiteRT has no uint8 or int16 SQUARED_DIFFERENCE.\n",
           "| op | type | n | sqdiff t1 | sqdiff t2 | reference t1 | default t1 | default t2 |",
           "|---|---|---|---|---|---|---|---|"]
    for case in data["cases"]:
        cells = []
        for name, against in (("litert-reference t1", "vs_sqdiff_t1"), ("litert-default t1", "vs_sqdiff_t1"),
                              ("litert-default t2", "vs_sqdiff_t2")):
            runner = case["runners"].get(name, {})
            if "error" in runner:
                cells.append("refuses")
            elif against in runner:
                share = 100.0 * runner["agree"] / case["n"]
                delegated = ", delegated" if runner.get("delegated") else ""
                cells.append(f"{runner[against]:.2f} ({share:.1f}% equal{delegated})")
            else:
                cells.append("—")
        ns = case["ns"]
        out.append(f"| {case['op']} | {case['dtype']} | {fmt_size(case['n'])} | "
                   f"{fmt_time(ns['sqdiff t1'])} | {fmt_time(ns['sqdiff t2'])} | "
                   + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def section(ctx, rows, command, litert=None):
    type_order = {"i8": 0, "u8": 1, "i16": 2}
    kind_order = {"calibrated": 0, "constant": 1, "decimal": 2}
    rows = sorted((r for r in rows if r["name"].startswith("quant/") and "error" not in r),
                  key=lambda r: (r["name"].split("/")[1] != "subtract", type_order.get(r["name"].split("/")[2], 3),
                                 kind_order.get(describe(r["name"])[2], 3), int(r.get("elements", 0)),
                                 int(r.get("threads", 1))))
    out = [QUANTIZED_BEGIN, HEADING]
    out.append(f"Command: `{command}` (the quant/ cases alone; git {ctx.get('git', 'unknown')}, "
               f"SIMD target {ctx.get('sqdiff_simd_target', '?')}, XNNPACK {ctx.get('xnnpack_version', '?')}).\n")
    out.append("`quantized_subtract` and `quantized_squared_difference` (SPEC 9, LiteRT's reference arithmetic, "
               "double rounding; every output bit-exact) on dense 1-D tensors. Scales: *calibrated* as a "
               "converter's calibration makes them (a range / 255, or / 32767 for int16: ratios that are nothing "
               "in particular); *constant*, the same with b one element broadcast over a (x - c: the 256-entry "
               "table, two streams moved); *decimal* 0.05, 0.03 and 0.1, whose simple ratios put many outputs "
               "exactly on rounding boundaries. Bytes moved: a, b and out once each (3 bytes per 8-bit element, "
               "6 per int16; 2 and 4 for a constant b); the bound is the faster of the plain and streaming `add` "
               "(`copy` for a constant b) loops over the same bytes, timed in the same rounds. *exact path* is the "
               "share of the decided-lane vectors that took LiteRT's integer pipeline (— where the call has no "
               "decided lanes: the dyadic or table path, or int16). *vs XNNPACK* is XNNPACK's time over sqdiff's "
               "(`xnn_create_subtract_nd_qs8` / `_qu8`, set up once, b broadcast for a constant; it has no int16 "
               "subtract and no quantized squared difference); *XNNPACK agrees* is the share of elements where "
               "XNNPACK's result equals sqdiff's (XNNPACK rounds its own way, not LiteRT's). Targets (issue 33, "
               "calibrated, 16M, one thread): ratio to bound >= 0.6 for 8-bit subtract, 0.5 for squared "
               "difference, 0.8 for int16 subtract, 0.9 for a constant operand; never slower than XNNPACK.\n")
    out.append("| op | type | scales | n | threads | time | GB/s | ratio to bound | target | exact path | vs XNNPACK | "
               "XNNPACK agrees | r_self | load |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        op, dtype, kind, size, threads = describe(r["name"])
        target = r.get("target", 0)
        out.append(f"| {op} | {dtype} | {kind} | {size} | {threads} | {fmt_time(time_ns(r))} | "
                   f"{r.get('GBps', 0):.1f} | {fmt_ratio(r.get('r_bound'))} | "
                   f"{f'{target:.2f}' if target else '—'} | {exact_share(r)} | "
                   f"{fmt_ratio(r.get('vs_xnnpack'))} | {agreement(r)} | "
                   f"{fmt_ratio(r.get('r_self'))} | {r.get('load1', 0):.2f} |")
    out.append("")
    if litert is not None:
        out.append(litert_table(litert))
    out.append("How the 8-bit paths get there (issue 33; src/kernels/quantized-inl.h and beside it). LiteRT's "
               "exact integer algorithm is 42 instructions per 16 int8 elements (two 32x32->64 products and the "
               "rounding shifts of the output stage, the split-multiplier scaling of one input). The *decided "
               "lanes* (quantized_decided-inl.h) estimate each output in float32 from per-call constants, two "
               "FMAs from the stored bytes, with a proved bound on the estimate's distance from the value the "
               "integer pipeline rounds; the bound decides the rounding of all but a few lanes per ten thousand, "
               "and a vector with an undecided lane takes the exact pipeline (the *exact path* column). Where "
               "every multiplier is a power of two (equal scales, scales 2^n apart) the outputs lie on rounding "
               "boundaries by design and a shift-only pipeline gives them exactly (quantized_dyadic-inl.h). A "
               "constant operand is a 256-entry table built per row by the exact pipeline and applied with "
               "`vpermi2b` (quantized_lookup-inl.h). Decimal scales put about one output in ten exactly on a "
               "boundary: those calls switch to the exact pipeline after the first segment and run at its speed. "
               "Squared difference keeps its inputs' scaling exact (the issue's rule: an estimate of the inputs "
               "would carry their rounding into the square), and that scaling, three 32-bit multiplies per 16 "
               "elements, is now what limits it below its 0.5 target (a 64 KiB table of all 65,536 pairs' exact outputs, "
               "applied with AVX-512 gathers, measured 0.42 of the same bound in a separate probe: the gathers "
               "are slower still). int16 subtract has decided lanes in float64 "
               "(quantized_decided_wide-inl.h; float32 has too few bits for its estimate); int16 squared "
               "difference keeps the exact pipeline. At 64K a quantized call here also pays about 27 us to "
               "choose its SIMD target (hwy::SupportedTargets() runs CPUID, which this VM traps). Two-thread rows need a quiet machine: "
               "the load column says how many other jobs shared the two cores.\n")
    out.append(QUANTIZED_END)
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", help="JSON written by sqdiff_bench --benchmark_out=FILE")
    parser.add_argument("--into", required=True, metavar="PAGE", help="the existing page to write the section into")
    parser.add_argument("--command", default="scripts/bench.sh --quantized-only")
    parser.add_argument("--litert", metavar="JSON", help="bench/python/bench_quantized.py --json output")
    args = parser.parse_args()
    ctx, rows = load(args.results)
    if not any(r["name"].startswith("quant/") for r in rows):
        sys.exit(f"quantized_perf_section.py: no quant/ rows in {args.results}")
    litert = None
    if args.litert:
        with open(args.litert, encoding="utf-8") as f:
            litert = json.load(f)
    text = section(ctx, rows, args.command, litert)
    with open(args.into, encoding="utf-8") as f:
        page = f.read()
    if QUANTIZED_BEGIN in page and QUANTIZED_END in page:
        page = (page[:page.index(QUANTIZED_BEGIN)] + text.rstrip("\n")
                + page[page.index(QUANTIZED_END) + len(QUANTIZED_END):])
    else:
        page = insert_before_method(page, text)
    with open(args.into, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
