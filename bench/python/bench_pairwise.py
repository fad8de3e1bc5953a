#!/usr/bin/python3
"""Pairwise squared distances from Python: sqdiff against SciPy's cdist and NumPy's GEMM expansion.

Usage (a Python with NumPy's wheel, SciPy and threadpoolctl, bench/python/requirements.txt, and
the CMake-built module; scripts/bench.sh --python or --pairwise-only runs it in build-bench/venv-python):

    PYTHONPATH=BUILD/python python bench/python/bench_pairwise.py [--rounds N] [--json FILE]

Issue 23, item 2: x of [M, K] with y of [N, K], M = N = 1024, K in {3, 16, 64, 256}, float32 and
float64, the distances in the input dtype:

  sqdiff     sqdiff.sum_squared_difference(x[:, None], y[None], axis=-1, threads=T), T = 1 and 2:
             every output the exact sum rounded once
  cdist      scipy.spatial.distance.cdist(x, y, "sqeuclidean"): one thread (SciPy's C loop has no
             threads), always float64 (float32 inputs are converted first)
  expansion  (x*x).sum(1)[:, None] + (y*y).sum(1)[None] - 2 * x @ y.T in the input dtype; the GEMM
             on NumPy's BLAS (OpenBLAS in the wheel) with T = 1 and 2 threads, set through
             threadpoolctl before each sample (the element-wise parts are NumPy's, one thread)

Targets: sqdiff at least 5x faster than cdist, and faster than the expansion at K <= 64, with the
same number of threads.

Method (as in bench/ and bench_reductions.py, docs/PERFORMANCE.md "Method"): the contenders of a
case take turns, round after round. In a round each one is sampled three times, each pass in a new
shuffled order, and keeps its best sample; a sample is a batch of calls lasting at least 20 ms,
after one untimed call (pools awake, as in a loop of calls). After each sample the harness waits
until no other thread of the process is running or runnable: OpenBLAS's workers, and sqdiff's,
spin for a while after a call and would steal the second core from the next contender. Ratios are
taken within a round; the report gives their median over the rounds.

The same rounds time sqdiff on 1 thread a second time ("self_t1"): its ratio to the first is the
noise band of the ratios.

Accuracy: on inputs with close points, (a) near duplicates, y = x + sqrt(eps) * noise, and (b)
clustered data, points within 0.01 of one of 16 centres drawn from [-10, 10]^K, each method's
outputs against an exact oracle (integer arithmetic on the inputs' exact values, as Python's
fractions would do it, no rounding anywhere) on a fixed-seed sample of 2000 outputs: the 1000
closest pairs and 1000 others. Reported: the largest relative error in the sample, the outputs
that differ from the correctly rounded value (sqdiff: must be none, or the script fails), and the
count of negative outputs among all M x N. The expansion is checked with 1 and with 2 BLAS
threads (OpenBLAS splits the GEMM, and its roundings, by threads); its figure is the worse.
"""

import argparse
import json
import os
import platform
import random
import statistics
import sys
import threading
import time
from fractions import Fraction

import numpy as np
import scipy
from scipy.spatial.distance import cdist
import threadpoolctl

import sqdiff

M = N = 1024
KS = (3, 16, 64, 256)
DTYPES = ("float32", "float64")
THREADS = (1, 2)
SAMPLE_SECONDS = 0.02
SAMPLES_PER_ROUND = 3
ORACLE_CLOSEST = 1000
ORACLE_OTHERS = 1000

# Binary formats: (significand bits, exponent of the smallest subnormal).
FORMATS = {"float32": (24, -149), "float64": (53, -1074)}


# ---- timing -------------------------------------------------------------------

def other_runnable_threads():
    """Threads of this process other than the caller in state R (running or runnable)."""
    me = str(threading.get_native_id())
    count = 0
    for tid in os.listdir("/proc/self/task"):
        if tid == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="ascii", errors="replace") as f:
                line = f.read()
        except OSError:
            continue
        close = line.rfind(")")
        if close >= 0 and line[close + 2:close + 3] == "R":
            count += 1
    return count


def quiesce(limit_seconds=1.0):
    """Waits until no other thread of the process runs (at most limit_seconds)."""
    end = time.perf_counter() + limit_seconds
    while other_runnable_threads() > 0 and time.perf_counter() < end:
        time.sleep(50e-6)


def sample(call, batch):
    start = time.perf_counter()
    for _ in range(batch):
        call()
    return (time.perf_counter() - start) / batch


class Contender:
    def __init__(self, name, call, setup=None):
        self.name, self.call, self.setup = name, call, setup or (lambda: None)

    def timed(self, batch):
        self.setup()
        self.call()  # untimed: wakes a pool that slept during the quiesce
        seconds = sample(self.call, batch)
        quiesce()
        return seconds


def measure(contenders, rounds, shuffle):
    """{name: [seconds per call, one per round]} (each the best of SAMPLES_PER_ROUND samples)."""
    batches = {}
    for c in contenders:
        c.setup()
        c.call()  # warm-up: first touch, lazy initialisation
        one = min(sample(c.call, 1) for _ in range(2))
        batches[c.name] = max(1, int(SAMPLE_SECONDS / max(one, 1e-9) + 0.999))
        quiesce()
    times = {c.name: [] for c in contenders}
    order = list(contenders)
    for _ in range(rounds):
        best = {c.name: float("inf") for c in contenders}
        for _ in range(SAMPLES_PER_ROUND):
            shuffle(order)
            for c in order:
                best[c.name] = min(best[c.name], c.timed(batches[c.name]))
        for name, seconds in best.items():
            times[name].append(seconds)
    return times


def median_ratio(times, numerator, denominator):
    return statistics.median(a / b for a, b in zip(times[numerator], times[denominator]))


def blas_threads_setter(threads):
    """Sets the BLAS libraries' thread count (NumPy's OpenBLAS) when called."""
    controller = threadpoolctl.ThreadpoolController()
    return lambda: controller.limit(limits=threads, user_api="blas")


def expansion(x, y):
    return (x * x).sum(1)[:, None] + (y * y).sum(1)[None] - 2 * x @ y.T


def timing_case(dtype, k, rounds, rng, shuffle):
    x = rng.standard_normal((M, k)).astype(dtype)
    y = rng.standard_normal((N, k)).astype(dtype)
    x3, y3 = x[:, None], y[None]
    contenders = [Contender("cdist", lambda: cdist(x, y, "sqeuclidean"))]
    for t in THREADS:
        contenders.append(Contender(f"sqdiff_t{t}",
                                    lambda t=t: sqdiff.sum_squared_difference(x3, y3, axis=-1, threads=t)))
        contenders.append(Contender(f"expansion_t{t}", lambda: expansion(x, y), blas_threads_setter(t)))
    # sqdiff on 1 thread timed a second time in the same rounds: its ratio to the first is how far two
    # equal contenders differ here (the noise band of the ratios, as r_self in bench/).
    contenders.append(Contender("self_t1", lambda: sqdiff.sum_squared_difference(x3, y3, axis=-1, threads=1)))
    load_start = os.getloadavg()[0]
    times = measure(contenders, rounds, shuffle)
    result = {"dtype": dtype, "m": M, "n": N, "k": k, "load1_start": load_start, "load1_end": os.getloadavg()[0],
              "median_s": {name: statistics.median(v) for name, v in times.items()}, "ratios": {}}
    result["ratios"]["self_t1_over_sqdiff_t1"] = median_ratio(times, "self_t1", "sqdiff_t1")
    for t in THREADS:
        # Above 1: sqdiff is faster.
        result["ratios"][f"cdist_t1_over_sqdiff_t{t}"] = median_ratio(times, "cdist", f"sqdiff_t{t}")
        result["ratios"][f"expansion_t{t}_over_sqdiff_t{t}"] = median_ratio(times, f"expansion_t{t}", f"sqdiff_t{t}")
        result[f"sqdiff_t{t}_ns_per_output"] = statistics.median(times[f"sqdiff_t{t}"]) / (M * N) * 1e9
    return result


# ---- accuracy -----------------------------------------------------------------

def exact_integers(values, dtype):
    """The inputs as integers in units of the format's smallest subnormal (exact)."""
    shift = -FORMATS[dtype][1]
    out = []
    for v in values:
        numerator, denominator = float(v).as_integer_ratio()
        out.append(numerator * ((1 << shift) // denominator))
    return out


def round_exact(numerator, denominator, dtype):
    """(rounded value, its ulp) of the positive rational numerator / denominator, correctly
    rounded (to nearest, ties to even) to the format, as Fractions (no overflow at these sizes)."""
    if numerator == 0:
        return Fraction(0), Fraction(1, 1 << -FORMATS[dtype][1])
    bits, least = FORMATS[dtype]
    exponent = numerator.bit_length() - denominator.bit_length()
    if Fraction(numerator, denominator) < Fraction(2) ** exponent:
        exponent -= 1  # now 2^exponent <= value < 2^(exponent + 1)
    quantum = max(exponent - (bits - 1), least)
    scaled_num = numerator * (1 << -quantum) if quantum < 0 else numerator
    scaled_den = denominator if quantum < 0 else denominator * (1 << quantum)
    q, r = divmod(scaled_num, scaled_den)
    if 2 * r > scaled_den or (2 * r == scaled_den and q % 2 == 1):
        q += 1
    ulp = Fraction(2) ** quantum
    return q * ulp, ulp


def oracle_sample(exact_d, rng):
    """Flat indices of the ORACLE_CLOSEST smallest outputs and ORACLE_OTHERS others."""
    flat = exact_d.ravel()
    closest = np.argpartition(flat, ORACLE_CLOSEST)[:ORACLE_CLOSEST]
    rest = np.setdiff1d(np.arange(flat.size), closest)
    others = rng.choice(rest, size=ORACLE_OTHERS, replace=False)
    return np.concatenate([closest, others])


def accuracy_case(dataset, dtype, k, rng):
    if dataset == "near_duplicates":
        x = rng.standard_normal((M, k)).astype(dtype)
        scale = float(np.sqrt(np.finfo(dtype).eps))
        y = (x.astype(np.float64) + scale * rng.standard_normal((N, k))).astype(dtype)
    else:  # clustered
        centres = rng.uniform(-10, 10, (16, k))
        x = (centres[rng.integers(0, 16, M)] + 0.01 * rng.standard_normal((M, k))).astype(dtype)
        y = (centres[rng.integers(0, 16, N)] + 0.01 * rng.standard_normal((N, k))).astype(dtype)
    outputs = {"sqdiff": sqdiff.sum_squared_difference(x[:, None], y[None], axis=-1),
               "cdist": cdist(x, y, "sqeuclidean")}
    for t in THREADS:
        # OpenBLAS splits the GEMM by threads, and its roundings with it: each count is checked.
        blas_threads_setter(t)()
        outputs[f"expansion_t{t}"] = expansion(x, y)
    # sqdiff's outputs are the exact values rounded once (checked below), so they order the pairs
    # as the exact values do, up to ties: they choose the closest pairs for the sample.
    indices = oracle_sample(outputs["sqdiff"], rng)
    xi = {}
    yi = {}
    shift2 = 2 * -FORMATS[dtype][1]  # exact sum = integer / 2^shift2
    methods = {name: {"dtype": str(v.dtype), "max_relative_error": 0.0, "not_correctly_rounded": 0,
                      "max_ulps": 0.0, "negative_outputs": int(np.count_nonzero(v < 0)),
                      "negative_in_sample": 0}
               for name, v in outputs.items()}
    for flat in indices.tolist():
        i, j = divmod(flat, N)
        if i not in xi:
            xi[i] = exact_integers(x[i], dtype)
        if j not in yi:
            yi[j] = exact_integers(y[j], dtype)
        total = sum((a - b) * (a - b) for a, b in zip(xi[i], yi[j]))
        exact = Fraction(total, 1 << shift2)
        for name, v in outputs.items():
            got = float(v[i, j])
            got_exact = Fraction(got)
            stats = methods[name]
            rounded, ulp = round_exact(total, 1 << shift2, str(v.dtype))
            if got_exact != rounded:
                stats["not_correctly_rounded"] += 1
                stats["max_ulps"] = max(stats["max_ulps"], float(abs(got_exact - rounded) / ulp))
            if got < 0:
                stats["negative_in_sample"] += 1
            error = float(abs(got_exact - exact) / exact) if exact != 0 else (0.0 if got == 0 else float("inf"))
            stats["max_relative_error"] = max(stats["max_relative_error"], error)
    # The expansion's figures: the worse of its thread counts.
    per_threads = [methods[f"expansion_t{t}"] for t in THREADS]
    methods["expansion"] = {key: max(m[key] for m in per_threads) for key in per_threads[0] if key != "dtype"}
    methods["expansion"]["dtype"] = per_threads[0]["dtype"]
    return {"dataset": dataset, "dtype": dtype, "m": M, "n": N, "k": k, "sample": int(indices.size),
            "closest_in_sample": ORACLE_CLOSEST, "methods": methods}


# ---- report -------------------------------------------------------------------

def fmt_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def blas_info():
    return [{key: info.get(key) for key in ("internal_api", "version", "architecture", "threading_layer", "num_threads")}
            for info in threadpoolctl.threadpool_info() if info.get("user_api") == "blas"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9, help="rounds per timing case (default 9)")
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--skip-accuracy", action="store_true", help="timings only")
    args = parser.parse_args()
    np_rng = np.random.default_rng(23)
    shuffle = random.Random(23).shuffle
    context = {
        "python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
        "threadpoolctl": threadpoolctl.__version__, "blas": blas_info(),
        "sqdiff_module": sqdiff.__file__, "sqdiff_simd_target": sqdiff.simd_target(),
        "cpus": os.cpu_count(), "machine": platform.machine(), "load1_start": os.getloadavg()[0],
        "rounds": args.rounds, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    timings = []
    for dtype in DTYPES:
        for k in KS:
            r = timing_case(dtype, k, args.rounds, np_rng, shuffle)
            timings.append(r)
            print(f"{dtype} K={k:3}: " + ", ".join(f"{name} {fmt_time(s)}" for name, s in r["median_s"].items())
                  + "; " + ", ".join(f"{name} {v:.2f}" for name, v in r["ratios"].items())
                  + f"; load {r['load1_start']:.1f}", flush=True)
    accuracy = []
    if not args.skip_accuracy:
        rng = np.random.default_rng(2023)
        for dataset in ("near_duplicates", "clustered"):
            for dtype in DTYPES:
                for k in KS:
                    a = accuracy_case(dataset, dtype, k, rng)
                    accuracy.append(a)
                    print(f"{dataset} {dtype} K={k:3}: " + "; ".join(
                        f"{name} max rel {s['max_relative_error']:.1e}, not correctly rounded "
                        f"{s['not_correctly_rounded']}, negative {s['negative_outputs']}"
                        for name, s in a["methods"].items()), flush=True)
    context["load1_end"] = os.getloadavg()[0]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"context": context, "timings": timings, "accuracy": accuracy}, f, indent=1)
    wrong = [a for a in accuracy if a["methods"]["sqdiff"]["not_correctly_rounded"]]
    if wrong:
        sys.exit("bench_pairwise.py: sqdiff returned outputs that are not correctly rounded: "
                 + ", ".join(f"{a['dataset']} {a['dtype']} K={a['k']}" for a in wrong))


if __name__ == "__main__":
    main()
