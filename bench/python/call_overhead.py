"""Per-call overhead of sqdiff's public functions against NumPy's ufuncs, on small arrays.

On [16] and [4096] float32 the work is a few nanoseconds to a microsecond, so what
is timed is mostly what a call costs: argument handling, dtype checks, result
allocation, GIL release. Each case pits a sqdiff call against the NumPy expression
that computes the same thing; the contenders alternate, round after round, in one
process, and the figure is the median over rounds of the time per call (and the
minimum, the least disturbed round: on a loaded machine the medians drift between
runs, the minima much less). ratio = numpy / sqdiff: above 1, sqdiff's call is cheaper.

    nice -n -20 env PYTHONPATH=<build>/python /usr/bin/python3 bench/python/call_overhead.py [--rounds N]
"""

import argparse
import statistics
import timeit

import numpy as np

import sqdiff


def cases(n):
    """(label, sqdiff call, numpy call) for arrays of n float32 elements."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    o = np.empty_like(a)
    f = 0.5
    s = np.float32(0.5)
    sd, sub = sqdiff.squared_difference, sqdiff.subtract
    sq, ns = np.square, np.subtract
    return [
        (f"squared_difference(a, b, out=o) [{n}]", lambda: sd(a, b, out=o), lambda: sq(ns(a, b, out=o), out=o)),
        (f"squared_difference(a, b) [{n}]", lambda: sd(a, b), lambda: sq(a - b)),
        (f"squared_difference(a, 0.5, out=o) [{n}]", lambda: sd(a, f, out=o),
         lambda: sq(ns(a, s, out=o), out=o)),
        (f"squared_difference(a, f32(0.5), out=o) [{n}]", lambda: sd(a, s, out=o),
         lambda: sq(ns(a, s, out=o), out=o)),
        (f"subtract(a, b, out=o) [{n}]", lambda: sub(a, b, out=o), lambda: ns(a, b, out=o)),
        (f"subtract(a, b) [{n}]", lambda: sub(a, b), lambda: ns(a, b)),
        (f"subtract(a, 0.5, out=o) [{n}]", lambda: sub(a, f, out=o), lambda: ns(a, s, out=o)),
        (f"subtract(a, f32(0.5), out=o) [{n}]", lambda: sub(a, s, out=o), lambda: ns(a, s, out=o)),
        (f"sum_squared_difference(a, b) [{n}]", lambda: sqdiff.sum_squared_difference(a, b),
         lambda: np.sum(sq(a - b))),
        (f"mean_squared_difference(a, b) [{n}]", lambda: sqdiff.mean_squared_difference(a, b),
         lambda: np.mean(sq(a - b))),
    ]


def per_call_ns(function, number):
    return timeit.timeit(function, number=number) / number * 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=41)
    parser.add_argument("--number", type=int, default=300, help="calls per timing")
    args = parser.parse_args()
    print(f"sqdiff {sqdiff.__version__} ({sqdiff.simd_target()}), numpy {np.__version__}; "
          f"{args.rounds} rounds of {args.number} calls, ns per call")
    print(f"{'call':48} {'median: sqdiff':>14} {'numpy':>7} {'ratio':>6}   {'min: sqdiff':>11} {'numpy':>7} {'ratio':>6}")
    for n in (16, 4096):
        for label, ours, theirs in cases(n):
            ours(), theirs()  # warm up
            mine, peer = [], []
            for round_index in range(args.rounds):
                pair = [(ours, mine), (theirs, peer)]
                for function, times in (pair if round_index % 2 == 0 else pair[::-1]):
                    times.append(per_call_ns(function, args.number))
            m, p = statistics.median(mine), statistics.median(peer)
            low_m, low_p = min(mine), min(peer)
            print(f"{label:48} {m:14.0f} {p:7.0f} {p / m:6.2f}   {low_m:11.0f} {low_p:7.0f} {low_p / low_m:6.2f}")


if __name__ == "__main__":
    main()
