"""The "Reductions and gradients" section (issue 13): the reduce/ and grad/ rows (the pairwise ones have
their own section) against loops reading the same bytes, and bench/python/bench_reductions.py's peers."""

import json
import re

from perf_page.common import (fmt_ratio, fmt_size, fmt_time, load_cell, met_text, suspect, target_verdict,
                              threads_text, time_ns)
from perf_page.machine import own_run_note
from perf_page.pairwise import describe_pairwise, is_pairwise


REDUCE_HEADING = "## Reductions and gradients\n"

# The reductions' and gradients' targets (issue 13, "Benchmarks"), by
# benchmark name: (title, regex, minimum r_bound).
REDUCE_TARGETS = [
    ("Sum over all axes, f32 64M, 2 threads: >= 0.95 of the bound", r"^reduce/all/f32/64M/t2$", 0.95),
    ("Sum over all axes, f16, bf16, f64 16M, 2 threads: >= 0.90", r"^reduce/all/(f16|bf16|f64)/16M/t2$", 0.90),
    ("Sum over all axes, f32 256K (in L2), 1 thread: >= 0.70", r"^reduce/all/f32/256K/t1$", 0.70),
    ("Per-row, per-column, per-channel at 16M: >= 0.90", r"^reduce/(rows|columns|per_channel)/", 0.90),
    ("Gradient, same shape, f32 64M: >= 0.90 of a loop moving the same bytes", r"^grad/same/f32/64M/", 0.90),
]

REDUCE_LOOP_NAMES = {
    "read_sum": "read a, b",
    "read_sum_1": "read a",
    "gradient": "gradient",
    "gradient_nt": "gradient, streaming",
    "fma_f32": "f32 FMA peak",
    "fma_f64": "f64 FMA peak",
}


def reduce_target_of(name):
    for title, pattern, value in REDUCE_TARGETS:
        if re.search(pattern, name):
            return value
    return None


def describe_reduction(row):
    """(case, threads) of a reduce/ or grad/ row."""
    parts = row["name"].split("/")
    threads = threads_text(row, parts[-1])
    show = lambda s: "[" + s.replace("x", ",") + "]"  # noqa: E731
    if parts[0] == "grad":
        return f"gradient, same shape, {parts[2]} {parts[3]}", threads
    kind = parts[1]
    if kind == "pairwise":
        case = describe_pairwise(row)
        return f"pairwise (axis 2) {case['dtype']} `{case['a']}` with `{case['b']}`", case["threads"]
    if kind == "all":
        out = "f64" if parts[2] == "f64" else "f32"
        return f"sum over all axes, {parts[2]} {parts[3]} (into {out})", threads
    a, b = parts[2].split("-", 1)
    what = {"rows": "per row (axis 1)", "columns": "per column (axis 0)",
            "per_channel": "per channel (axes 0, 2, 3)", "pairwise": "pairwise (axis 2)"}.get(kind, kind)
    return f"{what} `{show(a)}` with `{show(b)}`", threads


def instructions_cell(loops, name):
    """The case's kernel loop: instructions per element, and the count per pass it comes from."""
    counted = loops.per_element(name) if loops is not None else None
    if counted is None:
        return "—"
    instructions, elements = counted
    return f"{instructions / elements:.2f} ({instructions} per {elements})"


def reduce_table(rows, loops=None):
    head = ["case", "threads", "time", "GB/s or GFLOP/s", "ratio to bound (loop)", "instructions per element",
            "vs Eigen", "target", "met", "exact path", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in rows:
        case, threads = describe_reduction(row)
        if "error" in row:
            lines.append(f"| {case} | | error: {row['error']} |" + " |" * (len(head) - 3))
            continue
        rate = f"{row['GBps']:.1f} GB/s" if row.get("GBps") else (
            f"{row['GFLOPs']:.1f} GFLOP/s" if row.get("GFLOPs") else "—")
        loop = REDUCE_LOOP_NAMES.get(row["labels"].get("bound", ""), row["labels"].get("bound", "?"))
        r = row.get("r_bound")
        digits = 2 if r is None or r >= 0.1 else 4  # a compute-bound case far below the peak
        ratio = f"{fmt_ratio(r, digits)} ({loop})" if r is not None else "—"
        if row.get("r_fma_f64") is not None:
            ratio += f"; {fmt_ratio(row['r_fma_f64'], digits)} of the f64 FMA peak"
        if r is not None and row.get("r_column_loop") and row.get("r_column_loop_8k"):
            # bench/column_loop.hpp: the plain column loop's own ratio to the bound, r_bound / r_<loop>.
            ratio += (f"; the plain column loop {fmt_ratio(r / row['r_column_loop'])}, "
                      f"its sums in 8 KiB {fmt_ratio(r / row['r_column_loop_8k'])}")
        if row.get("r_gradient") is not None and row["labels"].get("bound") != "gradient":
            # sqdiff's gradient stores as the plain loop does (each store first reads its line).
            ratio += f"; {fmt_ratio(row['r_gradient'])} of the loop with ordinary stores"
        target = reduce_target_of(row["name"])
        m = None if target is None or r is None else r >= target
        vs = row.get("vs_eigen")
        exact = row.get("exact_fraction")
        cells = [case, threads, fmt_time(time_ns(row)), rate, ratio, instructions_cell(loops, row["name"]),
                 f"{vs:.2f}x" if vs is not None else "—",
                 f"≥ {target:.2f}" if target is not None else "—", met_text(m, row),
                 f"{100 * exact:.2g}%" if exact is not None else "—",
                 load_cell(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def reduce_targets_section(rows):
    lines = ["| target | figures (ratio to bound) | met |", "|---|---|---|"]
    for title, pattern, value in REDUCE_TARGETS:
        matching = sorted((r for r in rows if "error" not in r and re.search(pattern, r["name"])),
                          key=lambda r: r["name"])
        if not matching:
            lines.append(f"| {title} | not run | — |")
            continue
        figures = "; ".join(f"{'/'.join(r['name'].split('/')[1:])}: {fmt_ratio(r.get('r_bound'))}" for r in matching)
        met_count = sum(1 for r in matching if r.get("r_bound") is not None and r["r_bound"] >= value)
        suspect_count = sum(1 for r in matching if suspect(r))
        verdict = target_verdict(met_count, len(matching), suspect_count)
        lines.append(f"| {title} | {figures} | {verdict} |")
    return "\n".join(lines)


REDUCE_METHOD = """\
Sums (`sqdiff::sum_squared_difference`) and the element-wise gradient
(`sqdiff::squared_difference_backward`, both gradients), measured as the element-wise cases are
(interleaved rounds, best of three samples per round, medians of per-round ratios; see Method).
Every sum is correctly rounded; *exact path* is the share of output elements the library had to
sum again exactly during the case (its error bound straddled a rounding boundary).

- **Bound of a reduction:** a loop reading the same bytes, `s += a[i] + b[i]` over 32-bit integer
  lanes with four vector accumulators, one scalar per thread at the end (`bench/reduce_bound_loops.cpp`,
  `-O3 -march=native`); with 2 threads each thread sums one half. A per-channel case reads one
  large input (b is 64 values), so its loop is `s += a[i]`. Bytes moved: every input element once,
  the output once.
- **Bound of the gradient:** a loop reading a, b and g and writing two outputs (`ga = a + b + g`,
  `gb = a - b + g`), with ordinary or streaming stores, the faster of the two in each round.
- **Pairwise** squared distances have a section of their own (below).
- **Eigen** `(a - b).squaredNorm()` on `Map`'d vectors (1 thread), the Tensor module's
  `(a - b).square().sum()` on a 2-thread pool: an f32 sum, not correctly rounded.
- f16 and bf16 sum into f32 (their own type overflows at 16M terms near 4), f64 into f64.
- **Instructions per element:** the main loop of the kernel the case runs, for the run's SIMD
  target, counted in the benchmark binary (`scripts/perf_page/kernel_loops.py`, from `objdump -d`:
  this VM has no hardware counters): its instructions over the elements one pass handles. Where
  the ratio to the bound is low and the data sits in cache or two threads share the work, this
  count, not the memory, sets the speed (see "What limits the targets not met").
"""


PYTHON_NAMES = {
    "sqdiff": "sqdiff (default threads)",
    "sqdiff_t1": "sqdiff, 1 thread",
    "numpy": "NumPy `((a - b)**2).mean()`",
    "torch": "PyTorch `mse_loss`",
}


def python_section(path):
    """The Python peers (bench/python/bench_reductions.py), as measured in their own run."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    ctx = data["context"]
    out = [f"### Python peers, NumPy {ctx['numpy']}\n",
           f"Measured by `bench/python/bench_reductions.py` ({ctx['rounds']} rounds, best of 3 samples per round, "
           f"ratios per round, medians; {ctx['date']}, load {ctx['load1_start']:.1f} to {ctx['load1_end']:.1f}): "
           f"Python {ctx['python']}, NumPy {ctx['numpy']} with {ctx.get('blas', 'an unrecorded BLAS')}, PyTorch {ctx['torch']} "
           f"({ctx.get('torch_threads')} thread{'' if ctx.get('torch_threads') == 1 else 's'}). *Peer / sqdiff* is the peer's time over "
           "sqdiff's (default threads) in the same round: above 1, sqdiff is faster. Errors are relative to an f64 "
           "reference.\n"]
    for r in data["results"]:
        if r["case"] != "mse":
            continue  # the pairwise case of older runs: now bench_pairwise.py's, in its own section
        out.append(f"MSE of two f32 arrays of {fmt_size(r['n'])} elements:\n")
        errors = r.get("relative_error", {})
        lines = ["| contender | time | peer / sqdiff | relative error |", "|---|---|---|---|"]
        for name, t in r["median_s"].items():
            ratio = "1.00" if name == "sqdiff" else f"{r['speedup'][name]:.2f}"
            err = f"{errors[name]:.1e}" if name in errors else "—"
            lines.append(f"| {PYTHON_NAMES.get(name, name)} | {fmt_time(t * 1e9)} | {ratio} | {err} |")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def reductions_section(ctx, rows, python_paths, separate_run, loops=None):
    """The "Reductions and gradients" section, or "" without such rows. A
    section written into a page generated from another run names its own.
    `loops` (kernel_loops.KernelLoops of the run's binary) gives each row's
    instructions per element."""
    reductions = sorted((r for r in rows if r["name"].startswith(("reduce/", "grad/")) and not is_pairwise(r)),
                        key=lambda r: r["name"])
    if not reductions and not python_paths:
        return ""
    out = [REDUCE_HEADING]
    if separate_run:
        out.append(own_run_note(ctx, "--reductions-into", "the run described at the top"))
    out.append(REDUCE_METHOD)
    if reductions:
        out.append("Targets (issue 13):\n")
        out.append(reduce_targets_section(reductions) + "\n")
        out.append(reduce_table(reductions, loops) + "\n")
    for path in python_paths:
        out.append(python_section(path))
    return "\n".join(out)
