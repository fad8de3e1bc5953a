"""ONNX Runtime (CPU execution provider): Sub, and the two ways ONNX graphs square a difference,
Sub then Mul(d, d) and Sub then Pow(d, 2). Models are built with onnx.helper.

ONNX has one broadcast rule, NumPy's (multidirectional): the 'none' cases are those with equal
shapes, run the same way. There is no pdpd. One model per type holds every case; a type an op
does not support is retried op by op, then case by case, to name what is refused.
"""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

import reference
from cases import DTYPES, inputs_for, shape_cases
from compare import Groups
from findings import SquareOverflowByShape

ONNX_TYPES = {
    "f16": TensorProto.FLOAT16, "bf16": TensorProto.BFLOAT16, "f32": TensorProto.FLOAT,
    "f64": TensorProto.DOUBLE, "i8": TensorProto.INT8, "i16": TensorProto.INT16,
    "i32": TensorProto.INT32, "i64": TensorProto.INT64, "u8": TensorProto.UINT8,
    "u16": TensorProto.UINT16, "u32": TensorProto.UINT32, "u64": TensorProto.UINT64,
}

# Each configuration: how squared_difference is spelled (subtract is Sub in both).
CONFIGS = {"onnxruntime-mul": "Mul", "onnxruntime-pow": "Pow"}
OPSET = 21


def versions():
    return {"onnxruntime": ort.__version__, "onnx": onnx.__version__, "opset": OPSET,
            "providers": "CPUExecutionProvider"}


def _nodes(op, square, index, dtype):
    a, b, d, out = f"a{index}", f"b{index}", f"d{index}_{op}", f"{op}_{index}"
    if op == "subtract":
        return [helper.make_node("Sub", [a, b], [out])], []
    nodes = [helper.make_node("Sub", [a, b], [d])]
    if square == "Mul":
        return nodes + [helper.make_node("Mul", [d, d], [out])], []
    # Pow's exponent: the constant 2 in the base's own type (ONNX allows any numeric type).
    two = helper.make_tensor(f"two{index}", ONNX_TYPES[dtype], [], [2] if dtype[0] in "iu" else [2.0])
    return nodes + [helper.make_node("Pow", [d, f"two{index}"], [out])], [two]


def _session(dtype, square, inputs, ops):
    nodes, inits, graph_inputs, graph_outputs = [], [], [], []
    for index, item in enumerate(inputs):
        for name, shape in ((f"a{index}", item.case.shape_a), (f"b{index}", item.case.shape_b)):
            graph_inputs.append(helper.make_tensor_value_info(name, ONNX_TYPES[dtype], list(shape)))
        for op in ops:
            n, i = _nodes(op, square, index, dtype)
            nodes += n
            inits += i
            graph_outputs.append(helper.make_tensor_value_info(f"{op}_{index}", ONNX_TYPES[dtype], None))
    graph = helper.make_graph(nodes, "sqdiff_peers", graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _value(dtype, array):
    if dtype == "bf16":
        return ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.array(array, order="C"), ONNX_TYPES[dtype])
    return ort.OrtValue.ortvalue_from_numpy(np.array(array, order="C"))


def _run(dtype, square, inputs, ops):
    session = _session(dtype, square, inputs, ops)
    feeds = {}
    for index, item in enumerate(inputs):
        feeds[f"a{index}"] = _value(dtype, item.a)
        feeds[f"b{index}"] = _value(dtype, item.b)
    names = [f"{op}_{index}" for index in range(len(inputs)) for op in ops]
    values = session.run_with_ort_values(names, feeds)
    out = []
    for index, item in enumerate(inputs):
        for k, op in enumerate(ops):
            value = values[index * len(ops) + k]
            data = np.array(value.numpy(), copy=True)
            if dtype == "bf16":
                data = data.view(np.uint16)
            out.append((op, item, data))
    return out


def run():
    cases = shape_cases(modes=("none", "numpy"))
    results = {}
    for config, square in CONFIGS.items():
        # Pow's integer squares overflow differently by the shape of d (notes.py says how).
        groups = Groups(probes=[SquareOverflowByShape()] if square == "Pow" else [])
        for dtype in DTYPES:
            inputs = inputs_for(dtype, cases)
            outputs = []
            try:
                outputs = _run(dtype, square, inputs, ["squared_difference", "subtract"])
            except Exception:  # noqa: BLE001 - narrow down: op by op, then case by case
                for op in ("squared_difference", "subtract"):
                    try:
                        outputs += _run(dtype, square, inputs, [op])
                        continue
                    except Exception:  # noqa: BLE001
                        pass
                    for item in inputs:
                        try:
                            outputs += _run(dtype, square, [item], [op])
                        except Exception as error:  # noqa: BLE001
                            groups.reject(op, dtype, item.case.mode, str(error), item.case)
            for op, item, theirs in outputs:
                ours = reference.run(op, dtype, item.case, item.a, item.b)
                groups.add(op, dtype, item.case, ours, theirs, item.a, item.b)
        results[config] = groups
    return results
