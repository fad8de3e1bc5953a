"""`sqdiff tflite`'s run beside LiteRT's invoke on the same single-op model (issue 32, item 5).

A 4M-element SUB and SQUARED_DIFFERENCE model ([2048, 2048] float32, and int8) is written without
TensorFlow (peers/quantized_tflite.py). LiteRT (ai-edge-litert) runs it with the default resolver
(the XNNPACK delegate) and the reference kernels: allocate_tensors and the inputs set once, then
the first invoke (its arena touched for the first time) and the median of the later ones.
`sqdiff tflite MODEL --input ... --timings` runs it in a process of its own each round: its
"operators" time is the run itself (the output allocated and touched for the first time, the
kernel), beside the process's whole wall time (reading the .npy inputs, checking the model; no
files written). Rounds alternate between the contenders (interleaved_rounds.py); medians quoted.

    PYTHONPATH=build/python build-peers/venv/bin/python bench/python/bench_tflite_run.py [--rounds N]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "peers"))

import quantized_tflite  # noqa: E402
import sqdiff  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402

SHAPE = (2048, 2048)
QUANT = {"f32": (None, None, None), "i8": ((0.05, -3), (0.03, 5), (0.1, 2))}


def program():
    if os.environ.get("SQDIFF_CLI"):
        return os.environ["SQDIFF_CLI"]
    import pathlib
    return str(pathlib.Path(sqdiff.__file__).resolve().parents[2] / "tools" / "sqdiff")


def model(op, dtype):
    qa, qb, qout = QUANT[dtype]
    if op == "squared_difference" and dtype == "i8":
        qout = (0.25, -120)
    tensors = [quantized_tflite.Tensor("a", SHAPE, dtype, qa), quantized_tflite.Tensor("b", SHAPE, dtype, qb),
               quantized_tflite.Tensor("out", SHAPE, dtype, qout)]
    return quantized_tflite.model(tensors, [quantized_tflite.Operator(op, ("a", "b"), "out")], ["a", "b"], ["out"])


def inputs(dtype, rng):
    if dtype == "f32":
        return [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2)]
    return [rng.integers(-128, 128, SHAPE).astype(np.int8) for _ in range(2)]


def litert_times(path, a, b, resolver, threads, rounds):
    runner = litert.Interpreter(model_path=path, num_threads=threads,
                                experimental_op_resolver_type=getattr(litert.OpResolverType, resolver))
    runner.allocate_tensors()
    details = runner.get_input_details()
    runner.set_tensor(details[0]["index"], a)
    runner.set_tensor(details[1]["index"], b)
    start = time.perf_counter()
    runner.invoke()
    first = time.perf_counter() - start
    later = []
    for _ in range(rounds):
        start = time.perf_counter()
        runner.invoke()
        later.append(time.perf_counter() - start)
    return first, statistics.median(later), runner.get_tensor(runner.get_output_details()[0]["index"]).copy()


def sqdiff_times(path, files, threads, rounds):
    operators, walls = [], []
    args = [program(), "tflite", path, "--input", "a=" + files[0], "--input", "b=" + files[1], "--timings",
            "--threads", str(threads)]
    for _ in range(rounds):
        start = time.perf_counter()
        done = subprocess.run(args, capture_output=True, text=True, check=True)
        walls.append(time.perf_counter() - start)
        operators.append(float(re.search(r"operators ([0-9.]+) ms", done.stdout).group(1)) / 1e3)
    return statistics.median(operators), statistics.median(walls)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    rng = np.random.default_rng(32)
    print("| model | threads | LiteRT default: first invoke | later invokes | LiteRT reference: later invokes | "
          "sqdiff tflite: the run (operators) | sqdiff tflite: whole process | run / default's later invoke |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for dtype in ("f32", "i8"):
            a, b = inputs(dtype, rng)
            files = [os.path.join(work, f"{n}_{dtype}.npy") for n in ("a", "b")]
            np.save(files[0], a)
            np.save(files[1], b)
            for op in ("subtract", "squared_difference"):
                path = os.path.join(work, f"{op}_{dtype}.tflite")
                with open(path, "wb") as f:
                    f.write(model(op, dtype))
                for threads in (1, 2):
                    first, later, _ = litert_times(path, a, b, "AUTO", threads, options.rounds)
                    _, reference, _ = litert_times(path, a, b, "BUILTIN_REF", threads, max(3, options.rounds // 3))
                    run, wall = sqdiff_times(path, files, threads, options.rounds)
                    print(f"| {op} {dtype} {SHAPE[0]}x{SHAPE[1]} | {threads} | {first * 1e3:.2f} ms | "
                          f"{later * 1e3:.2f} ms | {reference * 1e3:.2f} ms | {run * 1e3:.2f} ms | "
                          f"{wall * 1e3:.1f} ms | {run / later:.2f} |", flush=True)


if __name__ == "__main__":
    main()
