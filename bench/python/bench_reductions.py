#!/usr/bin/python3
"""sqdiff's reductions from Python against NumPy and PyTorch, in one run.

Usage (Debian's /usr/bin/python3 with the CMake-built module):

    PYTHONPATH=BUILD/python /usr/bin/python3 bench/python/bench_reductions.py [--rounds N] [--json FILE]

scripts/bench.sh --python also runs this in a venv over Debian's Python with
NumPy's wheel pinned in bench/python/requirements.txt (torch still Debian's):
the NumPy most users have.

Case (issue 13, "Benchmarks"):
  mse       MSE of two f32 arrays of 64M elements: sqdiff.mean_squared_difference
            against NumPy's ((a - b)**2).mean() and torch.nn.functional.mse_loss.

Pairwise squared distances (against SciPy's cdist and NumPy's GEMM expansion)
are bench_pairwise.py's.

Method, as in bench/ (docs/PERFORMANCE.md): the contenders of a case take turns,
round after round; in each round each one is sampled three times (a sample is
a batch of calls lasting at least 20 ms) and keeps its best sample. Ratios are
taken within a round, then the median over rounds is reported: the shared
machine drifts by up to 2x over minutes, hardly within a round. A missing
torch is reported as skipped.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

import sqdiff
from interleaved_rounds import measure, ratio

try:
    import torch
except ImportError:  # reported as skipped
    torch = None

def fmt_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def reference_mse(a, b):
    """The MSE in f64: each difference exact, each square and sum rounded in f64,
    so within n * 2^-53 (< 5e-10 for 4M-term chunks of positive terms) of the
    exact value relatively, far below an f32 ulp (2^-23 ~ 1.2e-7 relative)."""
    total = 0.0
    chunk = 1 << 22
    for i in range(0, a.size, chunk):
        d = a[i:i + chunk].astype(np.float64) - b[i:i + chunk]
        total += float(np.dot(d, d))
    return total / a.size


def mse_case(rounds, n, rng):
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    contenders = [
        ("sqdiff", lambda: sqdiff.mean_squared_difference(a, b)),
        ("sqdiff_t1", lambda: sqdiff.mean_squared_difference(a, b, threads=1)),
        ("numpy", lambda: ((a - b) ** 2).mean()),
    ]
    notes = {"sqdiff": "mean_squared_difference(a, b), library default threads",
             "sqdiff_t1": "the same, threads=1",
             "numpy": "((a - b)**2).mean(), one thread, a temporary of 64M f32"}
    if torch is not None:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)  # zero-copy views
        contenders.append(("torch", lambda: torch.nn.functional.mse_loss(ta, tb)))
        notes["torch"] = f"torch.nn.functional.mse_loss, {torch.get_num_threads()} threads, torch {torch.__version__}"
    times = measure(contenders, rounds)
    result = {"case": "mse", "n": n, "dtype": "float32", "median_s": {k: statistics.median(v) for k, v in times.items()},
              "notes": notes}
    result["speedup"] = {name: ratio(times, name, "sqdiff") for name in times if name != "sqdiff"}
    # Accuracy: each result's error against an f64 reference (sqdiff's is the exact value rounded once to f32).
    exact = reference_mse(a, b)
    values = {"sqdiff": float(sqdiff.mean_squared_difference(a, b)), "numpy": float(((a - b) ** 2).mean())}
    if torch is not None:
        values["torch"] = float(torch.nn.functional.mse_loss(torch.from_numpy(a), torch.from_numpy(b)))
    result["relative_error"] = {k: abs(v - exact) / exact for k, v in values.items()}
    return result


def blas_library():
    """The BLAS NumPy was built with (Debian's: the Netlib reference BLAS; the wheel's: OpenBLAS)."""
    config = getattr(np.__config__, "CONFIG", None)  # NumPy >= 1.26 (meson builds)
    if config is not None:
        blas = config.get("Build Dependencies", {}).get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    libraries = getattr(np.__config__, "blas_opt_info", {}).get("libraries", [])
    if "blas" in libraries:  # Debian's: whatever the libblas.so.3 alternative points to
        target = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
        kind = " (Netlib reference BLAS)" if "/blas/libblas" in target else ""
        return f"libblas.so.3 -> {target}{kind}"
    return ", ".join(libraries) or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7, help="rounds per case (default 7)")
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    rng = np.random.default_rng(13)
    context = {
        "python": sys.version.split()[0], "numpy": np.__version__, "sqdiff_module": sqdiff.__file__,
        "torch": torch.__version__ if torch is not None else "not installed",
        "blas": blas_library(), "torch_threads": torch.get_num_threads() if torch is not None else None,
        "cpus": os.cpu_count(), "machine": platform.machine(), "load1_start": os.getloadavg()[0],
        "rounds": args.rounds, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    results = [mse_case(args.rounds, 64 * 1024 * 1024, rng)]
    context["load1_end"] = os.getloadavg()[0]

    print(f"# {context['date']}  numpy {context['numpy']} ({context['blas']}), torch {context['torch']}, "
          f"load {context['load1_start']:.1f} -> {context['load1_end']:.1f}, {args.rounds} rounds")
    for r in results:
        print(f"\n## {r['case']}")
        print("| contender | median time | its time / sqdiff's (median of rounds) | note |")
        print("|---|---|---|---|")
        for name, t in r["median_s"].items():
            speed = "1.00" if name == "sqdiff" else f"{r['speedup'][name]:.2f}"
            print(f"| {name} | {fmt_time(t)} | {speed} | {r['notes'].get(name, '')} |")
        print("relative error against an f64 reference MSE: "
              + ", ".join(f"{k} {v:.2e}" for k, v in r["relative_error"].items()))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"context": context, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
