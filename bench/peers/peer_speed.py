"""sqdiff against the runtimes people would use instead, timed side by side in one run.

Each case (the shapes of docs/PERFORMANCE.md, the dtypes f32/f16/bf16/i32, 1 and 2 threads,
and the MSE reduction) is run by sqdiff and by every peer that can run it, each with its own
best settings: a pre-compiled model (OpenVINO, ONNX Runtime), the thread count set through the
peer's own knob, the output buffer allocated once and reused where the peer allows it
(NumPy/PyTorch `out=`, ONNX Runtime's IO binding, OpenVINO's output tensor bound to a NumPy
buffer). The contenders run in a shuffled order, a new one each round; each round times a batch of
calls per contender. The figure per contender is the median over rounds, and the ratio
peer/sqdiff > 1 means sqdiff is faster.

Noise: a second, identical sqdiff contender ("sqdiff again") runs in every case; its ratio to
the first is what the machine's drift does to two equal contenders in the same run, and the
table's noise band is the spread of that ratio over all cases.

    python bench/peers/peer_speed.py [--quick] [--filter REGEX] [--markdown FILE]

Needs sqdiff importable (PYTHONPATH=<build>/python) and the peers of requirements/peers.txt;
a peer that is not installed is left out and named in the output.
"""

import argparse
import dataclasses
import importlib
import os
import random
import re
import statistics
import sys
import time

import numpy as np

import sqdiff

KI = 1024
MI = 1024 * 1024


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    shape_a: tuple
    shape_b: tuple
    dtype: str  # "f32", "f16", "bf16", "i32"
    op: str = "squared_difference"  # or "mse"


def cases():
    out = []
    for n, label in ((4 * KI, "4K"), (256 * KI, "256K"), (4 * MI, "4M"), (64 * MI, "64M")):
        out.append(Case(f"same shape {label}", (n,), (n,), "f32"))
    for dtype in ("f16", "bf16", "i32"):
        for n, label in ((4 * KI, "4K"), (4 * MI, "4M")):
            out.append(Case(f"same shape {label}", (n,), (n,), dtype))
    out += [
        Case("per channel", (8, 64, 128, 128), (1, 64, 1, 1), "f32"),
        Case("row", (4096, 1024), (1024,), "f32"),
        Case("column", (4096, 1024), (4096, 1), "f32"),
        Case("scalar", (8 * MI,), (), "f32"),
        Case("both sided", (64, 1, 128, 1), (32, 1, 64), "f32"),
        Case("spec example", (8, 1, 6, 1), (7, 1, 5), "f32"),
        Case("MSE 64M", (64 * MI,), (64 * MI,), "f32", op="mse"),
        Case("MSE 4M", (4 * MI,), (4 * MI,), "f32", op="mse"),
    ]
    return out


STORAGE = {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32}


def make_inputs(case, rng):
    def one(shape):
        if case.dtype == "i32":
            return rng.integers(-1000, 1000, size=shape, dtype=np.int32)
        values = rng.standard_normal(size=shape, dtype=np.float32)
        if case.dtype == "bf16":
            return sqdiff.to_bfloat16_bits(values)
        return values.astype(STORAGE[case.dtype])
    return one(case.shape_a), one(case.shape_b)


def out_shape(case):
    return tuple(sqdiff.broadcast_shape(case.shape_a, case.shape_b))


# --- contenders: each returns a zero-argument callable, or raises Unsupported ----------------

class Unsupported(Exception):
    pass


def sqdiff_contender(case, a, b, threads):
    if case.op == "mse":
        out = np.empty((), np.float32)
        return lambda: sqdiff.mean_squared_difference(a, b, out=out, threads=threads)
    out = np.empty(out_shape(case), a.dtype)
    kwargs = {"dtype": "bfloat16"} if case.dtype == "bf16" else {}
    return lambda: sqdiff.squared_difference(a, b, out=out, threads=threads, **kwargs)


def numpy_contender(case, a, b, threads):
    if threads != 1 or case.dtype == "bf16":
        raise Unsupported("NumPy runs on one thread and has no bfloat16")
    if case.op == "mse":
        return lambda: np.square(a - b).mean()
    out = np.empty(out_shape(case), a.dtype)
    return lambda: np.square(np.subtract(a, b, out=out), out=out)


def torch_contender(case, a, b, threads):
    import torch
    torch.set_num_threads(threads)
    if case.dtype == "bf16":
        ta = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
        tb = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16)
    else:
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    if case.op == "mse":
        return lambda: torch.nn.functional.mse_loss(ta, tb)
    out = torch.empty(out_shape(case), dtype=ta.dtype)

    def call():
        torch.sub(ta, tb, out=out)
        out.mul_(out)
    return call


ONNX_TYPES = {"f32": 1, "f16": 10, "bf16": 16, "i32": 6}


def onnxruntime_contender(case, a, b, threads):
    import onnx
    import onnxruntime as ort
    from onnx import helper
    if case.dtype == "bf16":
        raise Unsupported("ONNX Runtime's CPU provider has no bfloat16 Sub")
    elem = ONNX_TYPES[case.dtype]
    inputs = [helper.make_tensor_value_info("a", elem, list(case.shape_a)),
              helper.make_tensor_value_info("b", elem, list(case.shape_b))]
    nodes = [helper.make_node("Sub", ["a", "b"], ["d"])]
    if case.op == "mse":
        two = helper.make_tensor("two", elem, [], [2.0])
        nodes += [helper.make_node("Pow", ["d", "two"], ["s"]),
                  helper.make_node("ReduceMean", ["s"], ["y"], keepdims=0)]
        initializers = [two]
        outputs = [helper.make_tensor_value_info("y", elem, [])]
    else:
        nodes.append(helper.make_node("Mul", ["d", "d"], ["y"]))
        initializers = []
        outputs = [helper.make_tensor_value_info("y", elem, list(out_shape(case)))]
    graph = helper.make_graph(nodes, "peer", inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    binding.bind_cpu_input("a", a)
    binding.bind_cpu_input("b", b)
    out = np.empty(() if case.op == "mse" else out_shape(case), a.dtype)
    binding.bind_output("y", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
    # The binding holds raw pointers only: the closure keeps the buffers alive.
    return lambda: (session.run_with_iobinding(binding), a, b, out)


def openvino_contender(case, a, b, threads):
    if case.dtype == "bf16":
        raise Unsupported("OpenVINO's Python API cannot share a bfloat16 NumPy buffer without a copy")
    import openvino as ov
    import openvino.opset13 as ops
    types = {"f32": ov.Type.f32, "f16": ov.Type.f16, "i32": ov.Type.i32}
    pa = ops.parameter(list(case.shape_a), types[case.dtype], name="a")
    pb = ops.parameter(list(case.shape_b), types[case.dtype], name="b")
    node = ops.squared_difference(pa, pb)
    if case.op == "mse":
        node = ops.reduce_mean(node, ops.constant(np.array([0], np.int64)), False)
    compiled = ov.Core().compile_model(ov.Model([node], [pa, pb], "peer"), "CPU", {
        "INFERENCE_NUM_THREADS": threads,
        "INFERENCE_PRECISION_HINT": "f32",  # no down-conversion of f32 to bf16/f16 inside
        "PERFORMANCE_HINT": "LATENCY",
    })
    request = compiled.create_infer_request()
    request.set_input_tensor(0, ov.Tensor(a, shared_memory=True))
    request.set_input_tensor(1, ov.Tensor(b, shared_memory=True))
    out = np.empty(() if case.op == "mse" else out_shape(case), a.dtype)
    request.set_output_tensor(0, ov.Tensor(out, shared_memory=True))
    # Shared tensors do not own their NumPy buffers: the closure keeps them alive.
    return lambda: (request.infer(), a, b, out)


PEERS = {
    "numpy": numpy_contender,
    "torch": torch_contender,
    "onnxruntime": onnxruntime_contender,
    "openvino": openvino_contender,
}


def peer_version(name):
    return getattr(importlib.import_module(name), "__version__", "?")


# --- timing ------------------------------------------------------------------------------------

def batch_size(call, target_seconds):
    start = time.perf_counter()
    call()
    one = max(time.perf_counter() - start, 1e-7)
    return max(1, min(10_000, int(target_seconds / one)))


def measure(contenders, rounds, target_seconds):
    """Median seconds per call of each contender, rounds interleaved in shuffled orders."""
    for call in contenders.values():
        call()  # warm: first-call allocations, thread pools, compiled kernels
    batches = {name: batch_size(call, target_seconds) for name, call in contenders.items()}
    samples = {name: [] for name in contenders}
    # A new order every round (fixed seed): what ran just before a contender
    # leaves its mark on the caches, and a rotation keeps each one's
    # predecessor the same, which turns that into a bias between contenders.
    order = list(contenders)
    shuffler = random.Random(0x5EED)
    for _ in range(rounds):
        shuffler.shuffle(order)
        for name in order:
            call, batch = contenders[name], batches[name]
            start = time.perf_counter()
            for _ in range(batch):
                call()
            samples[name].append((time.perf_counter() - start) / batch)
    return {name: statistics.median(values) for name, values in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--filter", default="", help="only cases whose name/dtype matches this regex")
    parser.add_argument("--markdown", help="write the table to this file")
    args = parser.parse_args()
    rounds, target = (5, 0.02) if args.quick else (11, 0.05)

    available, missing = {}, []
    for name, factory in PEERS.items():
        try:
            __import__({"openvino": "openvino", "onnxruntime": "onnxruntime"}.get(name, name))
            available[name] = factory
        except ImportError:
            missing.append(name)
    if missing:
        print(f"peers not installed (left out): {', '.join(missing)}", file=sys.stderr)

    rng = np.random.default_rng(20261125)
    rows, control_ratios = [], []
    for case in cases():
        label = f"{case.name} {case.dtype}"
        if args.filter and not re.search(args.filter, label):
            continue
        a, b = make_inputs(case, rng)
        for threads in (1, 2):
            contenders = {"sqdiff": sqdiff_contender(case, a, b, threads),
                          "sqdiff again": sqdiff_contender(case, a, b, threads)}
            notes = {}
            for name, factory in available.items():
                try:
                    contenders[name] = factory(case, a, b, threads)
                except Unsupported as why:
                    notes[name] = str(why)
            times = measure(contenders, rounds, target)
            base = times["sqdiff"]
            control_ratios.append(times["sqdiff again"] / base)
            ratios = {name: times[name] / base for name in available if name in times}
            rows.append((label, threads, base, times["sqdiff again"] / base, ratios, notes))
            shown = "  ".join(f"{n} {r:.2f}" for n, r in ratios.items())
            print(f"{label:28} t{threads}  sqdiff {base * 1e6:10.1f} us  {shown}", flush=True)

    low, high = min(control_ratios), max(control_ratios)
    versions = ", ".join(f"{name} {peer_version(name)}" for name in available)
    lines = [
        f"From a run of `scripts/peer_speed.sh` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} "
        f"(sqdiff {sqdiff.__version__}, {versions}; load average at the end {os.getloadavg()[0]:.1f}).",
        "",
        f"Peer time / sqdiff time (> 1: sqdiff faster), medians of {rounds} interleaved rounds. "
        f"Noise band (sqdiff against itself in the same run, all cases): {low:.2f}-{high:.2f}.",
        "",
        "| case | threads | sqdiff | " + " | ".join(available) + " |",
        "|---|---|---|" + "---|" * len(available),
    ]
    for label, threads, base, _control, ratios, notes in rows:
        cells = [f"{ratios[n]:.2f}" if n in ratios else "n/a" for n in available]
        lines.append(f"| {label} | {threads} | {base * 1e6:.1f} us | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(table + "\n")
    slower = [(label, t, n, r) for label, t, _, _, ratios, _ in rows for n, r in ratios.items() if r < low]
    for label, t, name, ratio in slower:
        print(f"peer faster beyond noise: {label} t{t}: {name} {ratio:.2f}", file=sys.stderr)


if __name__ == "__main__":
    main()
