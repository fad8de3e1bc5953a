#!/usr/bin/python3
"""The partial sums behind sqdiff.dask and `sqdiff compare`, against the eager calls, in one run
(issue 23, item 1).

Usage (Debian's /usr/bin/python3 with the CMake-built module and program):

    PYTHONPATH=BUILD/python /usr/bin/python3 bench/python/bench_partials.py --sqdiff BUILD/tools/sqdiff \
        [--rounds N] [--json FILE] [--into docs/PERFORMANCE.md]

Cases:
  states    time per element of one block's partial state, 1 thread, every float dtype, in L2
            (256K elements) and from DRAM (16M): the bounded state sqdiff.dask and compare use
            (sqdiff._bounded_partial_sum_squared_difference) and the exact one (the fallback's,
            sqdiff._partial_sum_squared_difference), against the eager fast path
            (sqdiff.sum_squared_difference); target: the bounded state within 2x of the eager call.
  dask      sqdiff.dask.sum_ and mean_squared_difference of two float32 arrays of 64M elements in
            16 MiB chunks, threaded scheduler with 2 workers, against the eager call on 2 threads;
            target: within 1.3x (issue 35), with this interpreter's Dask and, given
            --newest-dask PYTHON, again with that interpreter's (a venv with the newest Dask).
  compare   `sqdiff compare A.npy B.npy` on two float32 files of 256 MiB in the page cache against
            `sqdiff run --reduce sum A.npy B.npy -o OUT.npy` on the same files (and `cat` of both);
            target: within 1.2x (issue 35).

Method, as in bench/ (docs/PERFORMANCE.md): the contenders of a case take turns, round after
round; each is sampled three times per round (a sample is a batch of calls lasting at least
20 ms) and keeps its best sample; ratios are taken within a round and the median over rounds is
reported. Every result is checked against the eager call's bits before timing.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import sqdiff
from interleaved_rounds import measure, ratio

SECTION_START = "<!-- bench_partials.py: start -->"
SECTION_END = "<!-- bench_partials.py: end -->"


def random_inputs(rng, dtype, n):
    values = rng.standard_normal((2, n), dtype=np.float32)
    if dtype == "bfloat16":
        return sqdiff.to_bfloat16_bits(values[0]), sqdiff.to_bfloat16_bits(values[1])
    return values[0].astype(dtype), values[1].astype(dtype)


def states_case(rounds, rng):
    rows = []
    for dtype in ("float16", "bfloat16", "float32", "float64"):
        keyword = "bfloat16" if dtype == "bfloat16" else None
        for where, n in (("L2", 256 * 1024 // 2), ("DRAM", 16 * 1024 * 1024)):
            a, b = random_inputs(rng, dtype, n)
            eager = sqdiff.sum_squared_difference(a, b, dtype=keyword, threads=1)
            bounded = sqdiff._bounded_partial_sum_squared_difference(a, b, dtype=keyword, threads=1)
            input_dtype = "bfloat16" if keyword else a.dtype
            got, undecided = sqdiff._finish_bounded_partial_sums(input_dtype, bounded, n, mean=False)
            assert not undecided.any() and got.tobytes() == eager.tobytes(), (dtype, where)
            times = measure([
                ("eager", lambda: sqdiff.sum_squared_difference(a, b, dtype=keyword, threads=1)),
                ("bounded", lambda: sqdiff._bounded_partial_sum_squared_difference(a, b, dtype=keyword, threads=1)),
                ("exact", lambda: sqdiff._partial_sum_squared_difference(a, b, dtype=keyword, threads=1)),
            ], rounds)
            rows.append({"dtype": dtype, "where": where, "n": n,
                         "ns_per_element": {k: statistics.median(v) / n * 1e9 for k, v in times.items()},
                         "bounded_over_eager": ratio(times, "bounded", "eager"),
                         "exact_over_eager": ratio(times, "exact", "eager")})
    return {"case": "states", "rows": rows}


def dask_case(rounds, rng):
    import dask
    import dask.array as da
    import sqdiff.dask as sd
    n = 64 * 1024 * 1024
    a, b = random_inputs(rng, "float32", n)
    tiny_a, tiny_b = random_inputs(rng, "float32", 16 * 1024)
    rows = []
    for chunk_bytes in (16 << 20, 64 << 20):
        chunk = chunk_bytes // 4
        da_a, da_b = da.from_array(a, chunks=chunk), da.from_array(b, chunks=chunk)
        # The same graph over 16K elements (as many blocks, 4 KiB each): what Dask costs
        # whatever the data, for sqdiff.dask and for Dask's own reduction.
        blocks = n // chunk
        tiny_da_a, tiny_da_b = (da.from_array(x, chunks=x.size // blocks) for x in (tiny_a, tiny_b))
        for op in ("sum_squared_difference", "mean_squared_difference"):
            eager_call = getattr(sqdiff, op)
            lazy = getattr(sd, op)(da_a, da_b)
            tiny_lazy = getattr(sd, op)(tiny_da_a, tiny_da_b)
            reduce_name = "sum" if op.startswith("sum") else "mean"
            dask_own = getattr((da_a - da_b) ** 2, reduce_name)()
            tiny_dask_own = getattr((tiny_da_a - tiny_da_b) ** 2, reduce_name)()
            want = eager_call(a, b, threads=2)
            got = lazy.compute(scheduler="threads", num_workers=2)
            assert np.asarray(got).tobytes() == want.tobytes(), op
            before = sd._exact_fallbacks
            threaded = {"scheduler": "threads", "num_workers": 2}
            times = measure([
                ("eager", lambda: eager_call(a, b, threads=2)),
                ("dask", lambda: lazy.compute(**threaded)),
                ("dask_own", lambda: dask_own.compute(**threaded)),
                ("tiny_dask", lambda: tiny_lazy.compute(**threaded)),
                ("tiny_dask_own", lambda: tiny_dask_own.compute(**threaded)),
            ], rounds)
            rows.append({"op": op, "n": n, "chunk_bytes": chunk_bytes, "blocks": blocks, "dask": dask.__version__,
                         "tasks": len(dict(dask.optimize(lazy)[0].__dask_graph__())),
                         "median_s": {k: statistics.median(v) for k, v in times.items()},
                         "dask_over_eager": ratio(times, "dask", "eager"),
                         "dask_own_over_eager": ratio(times, "dask_own", "eager"),
                         "exact_fallbacks": sd._exact_fallbacks - before})
    return {"case": "dask", "rows": rows}


def compare_case(rounds, rng, program, directory):
    n = 64 * 1024 * 1024  # 256 MiB per file
    a, b = random_inputs(rng, "float32", n)
    path_a, path_b = os.path.join(directory, "a.npy"), os.path.join(directory, "b.npy")
    out = os.path.join(directory, "sum.npy")
    np.save(path_a, a)
    np.save(path_b, b)
    del a, b

    def command(*args):
        return lambda: subprocess.run([program, *args], check=True, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)

    report = json.loads(subprocess.run([program, "compare", path_a, path_b, "--json"], check=True,
                                       capture_output=True, text=True).stdout)
    subprocess.run([program, "run", "--reduce", "sum", path_a, path_b, "-o", out, "--out-dtype", "f64", "--quiet"],
                   check=True)
    reduce_sum = float(np.load(out))
    times = measure([
        ("run_sum", command("run", "--reduce", "sum", path_a, path_b, "-o", out, "--quiet")),
        ("compare", command("compare", path_a, path_b, "--quiet")),
        ("cat", lambda: subprocess.run(["cat", path_a, path_b], check=True, stdout=subprocess.DEVNULL)),
    ], rounds)
    return {"case": "compare", "n": n, "file_bytes": os.path.getsize(path_a),
            "median_s": {k: statistics.median(v) for k, v in times.items()},
            "compare_over_run_sum": ratio(times, "compare", "run_sum"),
            "compare_over_cat": ratio(times, "compare", "cat"),
            "sum_of_squares": report.get("sum_of_squares", report.get("sum")), "run_sum_f64": reduce_sum}


def dask_rows_of(python, args):
    """The dask case's rows, run by another interpreter (same module path)."""
    with tempfile.TemporaryDirectory(prefix="sqdiff-bench-") as directory:
        out = os.path.join(directory, "dask.json")
        subprocess.run([python, os.path.abspath(__file__), "--sqdiff", args.sqdiff, "--cases", "dask",
                        "--rounds", str(args.rounds), "--json", out], check=True, stdout=subprocess.DEVNULL)
        with open(out, encoding="utf-8") as f:
            return json.load(f)["results"][0]["rows"]


def fmt_time(seconds):
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def met(value, bound):
    return "**yes**" if value <= bound else "no"


def markdown(context, results):
    by_case = {r["case"]: r for r in results}
    lines = [SECTION_START, "## Partial sums: sqdiff.dask and `sqdiff compare` (issue 23, item 1)", "",
             f"This section comes from a run of its own (`{context['command']}`, {context['date']}, "
             f"{context['cpu']}, {context['cpus']} cores, load {context['load1_start']:.1f} at start and "
             f"{context['load1_end']:.1f} at end, commit {context['commit']}), written into the page by "
             "`bench/python/bench_partials.py --into`. Method as above: interleaved rounds "
             f"({context['rounds']}), best of three samples per round, medians of per-round ratios.", "",
             "A piece of a reduction (a Dask block, a chunk of a file) is summed into the library's *bounded* "
             "partial state: the eager fast path's sums with their rigorous error bounds "
             "(`include/sqdiff/bounded_partial_sums.hpp`). The pieces' states are added with their bounds and "
             "rounded once where the bound decides; the rare output it leaves undecided is summed again from "
             "the inputs with the *exact* states (fixed-point, the previous design), so the result is the "
             "eager call's, bit for bit, for every chunking.", ""]
    if "states" in by_case:
        lines += ["| input | data | eager call | bounded state | exact state | bounded / eager | target (<= 2) |",
                  "|---|---|---|---|---|---|---|"]
        for r in by_case["states"]["rows"]:
            ns = r["ns_per_element"]
            lines.append(f"| {r['dtype']} | {r['n'] // 1024}K elements ({r['where']}) | {ns['eager']:.3f} ns/element "
                         f"| {ns['bounded']:.3f} | {ns['exact']:.3f} | {r['bounded_over_eager']:.2f} "
                         f"| {met(r['bounded_over_eager'], 2.0)} |")
        lines += ["", "One thread, one call over the whole input (no axis). The exact state is what every block "
                  "cost before (its time over the eager call's: "
                  + ", ".join(f"{r['dtype']} {r['where']} {r['exact_over_eager']:.1f}x"
                              for r in by_case["states"]["rows"]) + ").", ""]
    if "dask" in by_case:
        lines += ["| sqdiff.dask | eager call (2 threads) | sqdiff.dask (threaded, 2 workers) | sqdiff.dask / eager "
                  "| Dask | target (<= 1.3) | Dask's own `((a - b)**2).OP()` | Dask's own / eager | the same graphs on "
                  "16K elements: sqdiff.dask, Dask's own | blocks summed again exactly |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in by_case["dask"]["rows"]:
            t = r["median_s"]
            lines.append(f"| {r['op']}, float32 {r['n'] >> 20}M in {r['chunk_bytes'] >> 20} MiB chunks "
                         f"({r['blocks']} blocks, {r['tasks']} tasks) "
                         f"| {fmt_time(t['eager'])} | {fmt_time(t['dask'])} | {r['dask_over_eager']:.2f} "
                         f"| {r['dask']} | {met(r['dask_over_eager'], 1.3)} | {fmt_time(t['dask_own'])} "
                         f"| {r['dask_own_over_eager']:.2f} | {fmt_time(t['tiny_dask'])}, {fmt_time(t['tiny_dask_own'])} "
                         f"| {r['exact_fallbacks']} |")
        versions = sorted({r["dask"] for r in by_case["dask"]["rows"]})
        lines += ["", f"Dask {' and '.join(versions)} (Debian 12's, and the newest in a venv where the run had one: "
                  "`scripts/bench.sh` installs the version `requirements/test.txt` pins), `da.from_array` of "
                  "in-memory NumPy arrays; the task counts are of the optimised graph, the inputs' own tasks included. "
                  "Dask's own reduction (not correctly rounded, float32 accumulation) and both graphs on tiny "
                  "data show what Dask itself costs: the time a graph of that many blocks takes whatever "
                  "the data, which sqdiff.dask cannot go below.", ""]
    if "compare" in by_case:
        r = by_case["compare"]
        lines += ["| `sqdiff compare` | `run --reduce sum` | `compare` | `cat` of both files | compare / run | "
                  "target (<= 1.2) | compare / cat |", "|---|---|---|---|---|---|---|",
                  f"| two float32 files of {r['file_bytes'] >> 20} MiB in the page cache "
                  f"| {fmt_time(r['median_s']['run_sum'])} | {fmt_time(r['median_s']['compare'])} "
                  f"| {fmt_time(r['median_s']['cat'])} | {r['compare_over_run_sum']:.2f} "
                  f"| {met(r['compare_over_run_sum'], 1.2)} | {r['compare_over_cat']:.2f} |", "",
                  "Whole commands (process start included), the program's default threads. `compare` also finds "
                  "the largest |a - b| and where, counts NaN and infinities and the pairs out of tolerance.", ""]
    lines.append(SECTION_END)
    return "\n".join(lines) + "\n"


def write_into(page, text):
    with open(page, encoding="utf-8") as f:
        content = f.read()
    if SECTION_START in content:
        pattern = re.compile(re.escape(SECTION_START) + ".*?" + re.escape(SECTION_END) + "\n?", re.S)
        content = pattern.sub(lambda _: text, content)
    elif "\n## Method" in content:  # beside the other generated sections, before the method
        at = content.index("\n## Method") + 1
        content = content[:at] + text + "\n" + content[at:]
    else:
        content = content.rstrip("\n") + "\n\n" + text
    with open(page, "w", encoding="utf-8") as f:
        f.write(content)


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sqdiff", required=True, help="the sqdiff program (BUILD/tools/sqdiff)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per case (default 7)")
    parser.add_argument("--cases", default="states,dask,compare", help="comma-separated subset")
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--into", metavar="PAGE", help="replace (or append) this section of PAGE")
    parser.add_argument("--command", default="bench/python/bench_partials.py", help="the command named in the page")
    parser.add_argument("--newest-dask", metavar="PYTHON",
                        help="an interpreter whose Dask is the newest: the dask case runs again with it")
    args = parser.parse_args()
    rng = np.random.default_rng(23)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or "unknown"
    context = {"python": sys.version.split()[0], "numpy": np.__version__, "cpus": os.cpu_count(), "cpu": cpu_name(),
               "load1_start": os.getloadavg()[0], "rounds": args.rounds, "commit": commit, "command": args.command,
               "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    cases = set(args.cases.split(","))
    results = []
    if "states" in cases:
        results.append(states_case(args.rounds, rng))
    if "dask" in cases:
        results.append(dask_case(args.rounds, rng))
        if args.newest_dask:
            results[-1]["rows"] += dask_rows_of(args.newest_dask, args)
    if "compare" in cases:
        with tempfile.TemporaryDirectory(prefix="sqdiff-bench-") as directory:
            results.append(compare_case(args.rounds, rng, args.sqdiff, directory))
    context["load1_end"] = os.getloadavg()[0]
    text = markdown(context, results)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"context": context, "results": results}, f, indent=1)
    if args.into:
        write_into(args.into, text)


if __name__ == "__main__":
    main()
