"""LiteRT's kernels beside sqdiff's quantized ops, in one process (issue 25, item 5).

For each op (SUB, SQUARED_DIFFERENCE), type (int8, uint8, int16) and size, one single-op .tflite
model (peers/quantized_tflite.py, written without TensorFlow) is run by LiteRT (ai-edge-litert)
with the builtin reference resolver (BUILTIN_REF: the kernels sqdiff matches bit for bit) and with
the default resolver (AUTO: XNNPACK's delegate takes what it can), on 1 and 2 threads; sqdiff's
Python call (`out=` preallocated) on 1 and 2 threads is timed in the same interleaved rounds
(bench/python/interleaved_rounds.py). The inputs are set once: a LiteRT call is invoke() only.
Each runner's output is compared with sqdiff's element by element (agreement counts).
The parameters are those of the C++ quant/ cases (bench/quantized_cases.cpp).

    PYTHONPATH=build/python build-peers/venv/bin/python bench/python/bench_quantized.py --json OUT.json
"""

import argparse
import importlib.metadata
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "peers"))

import interleaved_rounds  # noqa: E402
import quantized_tflite  # noqa: E402
import sqdiff  # noqa: E402
from ai_edge_litert import interpreter as litert  # noqa: E402

NUMPY = {"i8": np.int8, "u8": np.uint8, "i16": np.int16}


def params_for(op, dtype):
    """(a, b, out) quantization: bench/quantized_cases.cpp's calibrated scales (a range / 255, or
    / 32767 for int16, as a converter's calibration makes them)."""
    square = op == "squared_difference"

    def q(range_, steps):  # the C++ side's float32 quotient
        return float(np.float32(range_) / np.float32(steps))
    if dtype == "i16":
        return (q(3.1, 32767), 0), (q(4.4, 32767), 0), (q(40.0 if square else 8.5, 32767), 0)
    offset = 128 if dtype == "u8" else 0
    out = (q(40.0, 255), -128 + offset) if square else (q(10.1, 255), 21 + offset)
    return (q(5.8, 255), 8 + offset), (q(5.7, 255), -70 + offset), out


def inputs(dtype, n):
    """bench/buffers.cpp's values: i % 1000 and -1 - i % 1000, modulo the type (times 37 for int16)."""
    i = np.arange(n, dtype=np.int64) % 1000
    factor = 37 if dtype == "i16" else 1
    bits = 16 if dtype == "i16" else 8
    a = (i * factor) % (1 << bits)
    b = ((-1 - i) * factor) % (1 << bits)
    if dtype != "u8":
        a = np.where(a >= 1 << (bits - 1), a - (1 << bits), a)
        b = np.where(b >= 1 << (bits - 1), b - (1 << bits), b)
    return a.astype(NUMPY[dtype]), b.astype(NUMPY[dtype])


def litert_runner(model, a, b, resolver, threads):
    runner = litert.Interpreter(model_content=model, num_threads=threads, experimental_op_resolver_type=resolver)
    runner.allocate_tensors()
    details = runner.get_input_details()
    runner.set_tensor(details[0]["index"], a)
    runner.set_tensor(details[1]["index"], b)
    output_index = runner.get_output_details()[0]["index"]
    delegated = any(op["op_name"] == "DELEGATE" for op in runner._get_ops_details())

    def output():
        return np.array(runner.get_tensor(output_index), copy=True)

    return runner.invoke, output, delegated


def one_case(op, dtype, n, rounds):
    qa, qb, qout = params_for(op, dtype)
    a, b = inputs(dtype, n)
    out = np.empty(n, NUMPY[dtype])
    pot = dtype != "i16"  # int16: the general path in both (the scales are not powers of two)
    if op == "subtract":
        def sqdiff_call(threads):
            return lambda: sqdiff.quantized_subtract(a, b, a_quant=qa, b_quant=qb, out_quant=qout, out=out,
                                                     pot_scale_int16=pot, threads=threads)
    else:
        def sqdiff_call(threads):
            return lambda: sqdiff.quantized_squared_difference(a, b, a_quant=qa, b_quant=qb, out_quant=qout,
                                                               out=out, threads=threads)
    sqdiff_call(1)()
    expected = out.copy()
    model = quantized_tflite.single_op(op, dtype, (n,), (n,), qa, qb, qout, pot_scale_int16=pot)
    contenders = [("sqdiff t1", sqdiff_call(1)), ("sqdiff t2", sqdiff_call(2))]
    result = {"op": op, "dtype": dtype, "n": n, "runners": {}}
    for name, resolver, threads in (("litert-reference t1", litert.OpResolverType.BUILTIN_REF, 1),
                                    ("litert-default t1", litert.OpResolverType.AUTO, 1),
                                    ("litert-default t2", litert.OpResolverType.AUTO, 2)):
        try:
            invoke, output, delegated = litert_runner(model, a, b, resolver, threads)
            invoke()
        except Exception as error:  # LiteRT refuses (int16 SQUARED_DIFFERENCE has no kernel)
            result["runners"][name] = {"error": str(error).splitlines()[0][:160]}
            continue
        got = output()
        result["runners"][name] = {"agree": int(np.count_nonzero(got == expected)), "delegated": delegated,
                                   "max_diff": int(np.max(np.abs(got.astype(np.int64) - expected)))}
        contenders.append((name, invoke))
    times = interleaved_rounds.measure(contenders, rounds)
    result["ns"] = {name: 1e9 * float(np.median(t)) for name, t in times.items()}
    for name, _ in contenders[2:]:
        result["runners"][name]["vs_sqdiff_t1"] = interleaved_rounds.ratio(times, name, "sqdiff t1")
        result["runners"][name]["vs_sqdiff_t2"] = interleaved_rounds.ratio(times, name, "sqdiff t2")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = {"versions": {"ai-edge-litert": importlib.metadata.version("ai-edge-litert"),
                            "sqdiff": sqdiff.__version__, "sqdiff_simd_target": sqdiff.simd_target(),
                            "numpy": np.__version__},
               "cases": []}
    for op in ("subtract", "squared_difference"):
        for dtype in ("i8", "u8", "i16"):
            for n in (256 << 10, 16 << 20):
                case = one_case(op, dtype, n, args.rounds)
                print(json.dumps(case), flush=True)
                results["cases"].append(case)
    with open(args.json, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
