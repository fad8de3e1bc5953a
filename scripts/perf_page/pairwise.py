"""The "Pairwise squared distances" section (issue 23, item 2): the C++ reduce/pairwise/ rows against
the FMA peak, and bench/python/bench_pairwise.py's run against SciPy's cdist and NumPy's GEMM expansion."""

import json

from perf_page.common import SUSPECT_RATIO, fmt_ratio, fmt_time, load_cell, met_text, threads_text, time_ns
from perf_page.machine import own_run_note


PAIRWISE_HEADING = "## Pairwise squared distances\n"

# (title, what it covers, kind). kind "fma": the C++ rows, r_fma_f64 >= value; "cdist" and
# "expansion": bench_pairwise.py's ratios, peer time / sqdiff time (>= value, > value).
PAIRWISE_FMA_TARGET = ("At least 0.25 of the f64 FMA peak at K >= 64 (f32 and f64, 1 and 2 threads)", 64, 0.25)
PAIRWISE_CDIST_TARGET = ("At least 5x faster than SciPy's `cdist(x, y, \"sqeuclidean\")` (every K and dtype; "
                         "sqdiff on 1 and on 2 threads, cdist on its one)", 5.0)
PAIRWISE_EXPANSION_TARGET = ("Faster than NumPy's GEMM expansion at K <= 64 (same threads for sqdiff and the BLAS)",
                             64)

PAIRWISE_METHOD = """\
`[M,1,K]` with `[1,N,K]` summed over K (`sum_squared_difference(x[:, None], y[None], axis=-1)` in
Python), M = N = 1024, every output correctly rounded to the input dtype.

- **C++ rows** (`bench/reduce_cases.cpp`), measured as every case is (interleaved rounds, best of
  three samples per round, medians of per-round ratios; see Method). The work is compute-bound
  (M x N x K terms from (M + N) x K inputs), so it is held to FMA loops measured in the same rounds
  (16 independent chains of `acc = acc * x + y`, the CPU's FMA throughput, same threads), scaled to
  one FMA lane per term: *f64 FMA peak* is that loop's time in f64 lanes over sqdiff's (the target's
  measure: the kernel sums each term in f64 lanes, which is what keeps its error bound rigorous), *f32
  FMA peak* the same in f32 lanes. GFLOP/s counts 3 flops per term (subtract, multiply, add); *per
  output* and *per term* are sqdiff's time divided by M x N and by M x N x K (on 2 threads: wall time,
  not per thread). *Exact path*: the share of outputs whose error bound straddled a rounding boundary
  and were summed again exactly.
- **Python rows** (`bench/python/bench_pairwise.py`, in a venv of Debian's Python with NumPy's wheel,
  SciPy and threadpoolctl pinned in `bench/python/requirements.txt`): sqdiff's call against SciPy's
  `cdist(x, y, "sqeuclidean")` (one thread: its C loop has none; float64 output, float32 inputs are
  converted first) and the GEMM expansion `(x*x).sum(1)[:, None] + (y*y).sum(1)[None] - 2 * x @ y.T`
  in the input dtype, whose GEMM runs on the wheel's OpenBLAS with 1 or 2 threads, set with
  threadpoolctl before each sample (the element-wise parts are NumPy's, one thread). Contenders take
  turns in shuffled order, three samples of at least 20 ms per round each (one untimed call before
  each sample, so that pools are awake; after it the harness waits until no other thread of the
  process runs, since OpenBLAS's and sqdiff's workers spin for a while after a call); ratios are taken
  within a round, medians over rounds. *Peer / sqdiff*: above 1, sqdiff is faster. *sqdiff t1 /
  itself*: the 1-thread call timed a second time in the same rounds, over the first: how far two
  equal contenders differ in that case (the noise band, as `r_self` above).
- **Accuracy** (the same script; the expansion with 1 and with 2 BLAS threads, whose GEMMs round
  differently, and the worse of the two shown): inputs with close points, *near duplicates* (x standard normal,
  y = x + sqrt(eps) x standard normal noise, rounded to the dtype) and *clustered* (x and y within 0.01
  of 16 centres drawn from [-10, 10]^K). Each method's outputs are checked against the exact value
  (integer arithmetic on the inputs' exact values, no rounding) on a fixed-seed sample of 2000
  outputs, the 1000 closest pairs and 1000 others: the largest relative error in the sample, and the
  count of negative outputs among all M x N. sqdiff's outputs must all be the exact value correctly
  rounded (0 ulp); the script fails otherwise.
- **Raw results:** `build-bench/bench-pairwise.json` (`--pairwise-only`; a full run's
  `bench-results.json`) and `build-bench/bench-python-pairwise.json` (medians, ratios, and the
  accuracy of each method and BLAS thread count).
"""


def is_pairwise(row):
    return row["name"].startswith("reduce/pairwise/")


def describe_pairwise(row):
    """dtype, shapes, K and threads of a reduce/pairwise/DTYPE/AxBxK-CxDxK/tT row (rows of runs
    before issue 23 have no dtype: f32)."""
    parts = row["name"].split("/")
    dtype = parts[2] if len(parts) == 5 else "f32"
    a, b = parts[-2].split("-", 1)
    show = lambda s: "[" + s.replace("x", ",") + "]"  # noqa: E731
    k = int(row.get("k") or a.split("x")[-1])
    return {"dtype": dtype, "a": show(a), "b": show(b), "k": k, "threads": threads_text(row, parts[-1])}


def pairwise_sort_key(row):
    case = describe_pairwise(row)
    return ({"f32": 0, "f64": 1}.get(case["dtype"], 2), case["k"], case["threads"])


def verdict(passed, total):
    if total == 0:
        return "not run"
    return "**yes**" if passed == total else f"no ({passed} of {total})"


def pairwise_targets(rows, python):
    title, least_k, value = PAIRWISE_FMA_TARGET
    covered = [r for r in rows if "error" not in r and describe_pairwise(r)["k"] >= least_k]
    figures = []
    for r in covered:
        case = describe_pairwise(r)
        r64 = r.get("r_fma_f64")
        figures.append(f"{case['dtype']} K={case['k']} t{case['threads']}: "
                       f"{fmt_ratio(r64, 2 if r64 is None or r64 >= 0.1 else 4)}")
    passed = sum(1 for r in covered if (r.get("r_fma_f64") or 0) >= value)
    fma_verdict = verdict(passed, len(covered))
    above = sum(1 for r in covered if (r.get("r_fma_f64") or 0) > SUSPECT_RATIO)
    if above:  # faster than the f64 FMA loop: noise, not a figure to claim
        fma_verdict += f", {above} above {SUSPECT_RATIO} of the peak (noise)"
    lines = ["| target | figures | met |", "|---|---|---|",
             f"| {title} | {'; '.join(figures) or 'not run'} | {fma_verdict} |"]
    timings = python.get("timings", []) if python else []
    title, least = PAIRWISE_CDIST_TARGET
    figures, passed, total = [], 0, 0
    for t in timings:
        for threads in (1, 2):
            ratio = t["ratios"].get(f"cdist_t1_over_sqdiff_t{threads}")
            if ratio is None:
                continue
            total += 1
            passed += ratio >= least
            figures.append(f"{short_dtype(t['dtype'])} K={t['k']} t{threads}: {ratio:.2f}x")
    lines.append(f"| {title} | {'; '.join(figures) or 'not run'} | {verdict(passed, total)} |")
    title, most_k = PAIRWISE_EXPANSION_TARGET
    figures, passed, total = [], 0, 0
    for t in timings:
        if t["k"] > most_k:
            continue
        for threads in (1, 2):
            ratio = t["ratios"].get(f"expansion_t{threads}_over_sqdiff_t{threads}")
            if ratio is None:
                continue
            total += 1
            passed += ratio > 1.0
            figures.append(f"{short_dtype(t['dtype'])} K={t['k']} t{threads}: {ratio:.2f}x")
    lines.append(f"| {title} | {'; '.join(figures) or 'not run'} | {verdict(passed, total)} |")
    return "\n".join(lines)


def fmt_short(ns):
    """A time per output or per term: "3.49 ns", "55 ps"."""
    return f"{ns:.2f} ns" if ns >= 1 else f"{1000 * ns:.0f} ps"


def short_dtype(name):
    return {"float32": "f32", "float64": "f64"}.get(name, name)


def pairwise_table(rows):
    head = ["case", "threads", "time", "per output", "per term", "GFLOP/s", "f64 FMA peak", "f32 FMA peak",
            "target", "met", "exact path", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    _, least_k, value = PAIRWISE_FMA_TARGET
    for row in rows:
        case = describe_pairwise(row)
        name = f"{case['dtype']} `{case['a']}` with `{case['b']}`"
        if "error" in row:
            lines.append(f"| {name} | | error: {row['error']} |" + " |" * (len(head) - 3))
            continue
        ns = time_ns(row)
        outputs = float(row.get("elements") or 0)
        r64, r32 = row.get("r_fma_f64"), row.get("r_bound")
        digits = lambda r: 2 if r is None or r >= 0.1 else 4  # noqa: E731  (far below the peak)
        targeted = case["k"] >= least_k
        exact = row.get("exact_fraction")
        cells = [name, case["threads"], fmt_time(ns),
                 fmt_short(ns / outputs) if outputs else "—",
                 fmt_short(ns / (outputs * case["k"])) if outputs else "—",
                 f"{row['GFLOPs']:.1f}" if row.get("GFLOPs") else "—",
                 fmt_ratio(r64, digits(r64)), fmt_ratio(r32, digits(r32)),
                 f"≥ {value:.2f}" if targeted else "—",
                 met_text(None if not targeted or r64 is None else r64 >= value, {"r_bound": r64}),
                 f"{100 * exact:.2g}%" if exact is not None else "—",
                 load_cell(row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def pairwise_python_tables(data):
    ctx = data["context"]
    blas = "; ".join(f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')} kernels, "
                     f"{b.get('threading_layer')})" for b in ctx.get("blas", [])) or "unrecorded"
    out = [f"Python {ctx['python']}, NumPy {ctx['numpy']} (BLAS: {blas}), SciPy {ctx['scipy']}, threadpoolctl "
           f"{ctx['threadpoolctl']}; sqdiff {ctx.get('sqdiff_simd_target', '?')}; {ctx['rounds']} rounds per case, "
           f"{ctx['date']}, load {ctx['load1_start']:.1f} at start, {ctx['load1_end']:.1f} at the end.\n"]
    head = ["dtype", "K", "sqdiff t1", "sqdiff t2", "cdist (t1)", "expansion t1", "expansion t2",
            "cdist / sqdiff t1", "cdist / sqdiff t2", "expansion / sqdiff t1", "expansion / sqdiff t2",
            "sqdiff t1 / itself", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for t in data.get("timings", []):
        s, r = t["median_s"], t["ratios"]
        cells = [short_dtype(t["dtype"]), str(t["k"])]
        cells += [fmt_time(s[name] * 1e9) for name in ("sqdiff_t1", "sqdiff_t2", "cdist", "expansion_t1",
                                                       "expansion_t2")]
        cells += [f"{r[name]:.2f}x" for name in ("cdist_t1_over_sqdiff_t1", "cdist_t1_over_sqdiff_t2",
                                                 "expansion_t1_over_sqdiff_t1", "expansion_t2_over_sqdiff_t2")]
        self_ratio = r.get("self_t1_over_sqdiff_t1")
        cells.append(f"{self_ratio:.2f}" if self_ratio is not None else "—")
        cells.append(f"{t['load1_start']:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    out.append("\n".join(lines) + "\n")
    accuracy = data.get("accuracy", [])
    if accuracy:
        out.append("Accuracy on close points: the largest relative error against the exact value in the "
                   "sample of 2000 outputs (1000 closest pairs), and the negative outputs among all "
                   f"{accuracy[0]['m'] * accuracy[0]['n']:,} (a squared distance is never negative). sqdiff's "
                   "outputs in the sample against the exact value rounded once to the output dtype: the largest "
                   "distance in ulps, and how many differ (must be 0 ulp, none: the script fails otherwise).\n")
        head = ["data", "dtype", "K", "sqdiff: max rel. error", "sqdiff: from the correctly rounded value",
                "expansion: max rel. error", "negative", "cdist: max rel. error", "negative"]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for a in accuracy:
            m = a["methods"]
            lines.append("| " + " | ".join([
                a["dataset"].replace("_", " "), short_dtype(a["dtype"]), str(a["k"]),
                f"{m['sqdiff']['max_relative_error']:.1e}",
                f"{m['sqdiff']['max_ulps']:g} ulp ({m['sqdiff']['not_correctly_rounded']} of {a['sample']} off)",
                f"{m['expansion']['max_relative_error']:.1e}", f"{m['expansion']['negative_outputs']:,}",
                f"{m['cdist']['max_relative_error']:.1e}", f"{m['cdist']['negative_outputs']:,}"]) + " |")
        out.append("\n".join(lines) + "\n")
    return "\n".join(out)


def pairwise_section(ctx, rows, python_path, separate_run):
    """The "Pairwise squared distances" section, or "" with neither C++ rows nor Python results."""
    pairwise = sorted((r for r in rows if is_pairwise(r)), key=pairwise_sort_key)
    python = None
    if python_path:
        with open(python_path, encoding="utf-8") as f:
            python = json.load(f)
    if not pairwise and python is None:
        return ""
    out = [PAIRWISE_HEADING]
    if separate_run:
        out.append(own_run_note(ctx, "--pairwise-into", "the runs they name"))
    out.append(PAIRWISE_METHOD)
    out.append("Targets (issue 23, item 2), computed from the rows below:\n")
    out.append(pairwise_targets(pairwise, python) + "\n")
    if pairwise:
        out.append("### C++: against the FMA peak\n")
        out.append(pairwise_table(pairwise) + "\n")
    out.append("### Python: against SciPy's cdist and NumPy's GEMM expansion\n")
    if python is None:
        out.append("Not run in this run (`scripts/bench.sh --python` or `--pairwise-only` runs "
                   "`bench/python/bench_pairwise.py`).\n")
    else:
        out.append(pairwise_python_tables(python))
    return "\n".join(out)
