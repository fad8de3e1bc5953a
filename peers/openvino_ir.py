"""OpenVINO IR files, both ways, through `sqdiff ir` and OpenVINO's own reader and CPU plugin.

1. Every model of examples/ir/ (and IR files that OpenVINO writes with `save_model` from
   single-op opset graphs, in several types and modes): `sqdiff ir --random` runs it and saves its
   inputs; OpenVINO (`Core().read_model`, CPU) runs the same inputs; the outputs are compared.
2. A LayerNorm written by OpenVINO (ReduceMean, SquaredDifference, Add, Sqrt, Subtract, Divide,
   as TensorFlow models convert): `sqdiff ir` must check its SquaredDifference/Subtract layers
   and say which layers it cannot run.

The CLI is the sqdiff program of the build whose Python module is imported (BUILD/tools/sqdiff),
or $SQDIFF_CLI.
"""

import os
import pathlib
import re
import subprocess
import tempfile

import numpy as np
import openvino as ov
import openvino.opset13 as ops
import sqdiff

from cases import ShapeCase
from compare import broadcast_inputs, compare

ROOT = pathlib.Path(__file__).resolve().parent.parent
GENERATED = [  # (type, op, mode, shape a, shape b, axis)
    (dtype, op, mode, a, b, axis)
    for dtype in ("f32", "f16", "bf16", "i32", "u8", "i64")
    for op in ("squared_difference", "subtract")
    for mode, a, b, axis in (("none", [4, 5], [4, 5], -1), ("numpy", [8, 1, 6, 1], [7, 1, 5], -1),
                             ("pdpd", [2, 3, 4, 5], [4, 5], -1), ("pdpd", [2, 3, 4, 5], [3, 1], 1))
]
# Dynamic dims as OpenVINO writes them: -1 on ports, intervals only in a Parameter's shape.
GENERATED += [
    ("f32", "squared_difference", "numpy", "[?,1,4]", "[2..7,3,1]", -1),
    ("f16", "subtract", "numpy", "[?,5]", "[5]", -1),
    ("f32", "squared_difference", "pdpd", "[2,3..6,4,5]", "[?,1]", 1),
    ("i32", "subtract", "none", "[1..3,4]", "[1..3,4]", -1),
]
OV_TYPES = {"f32": ov.Type.f32, "f16": ov.Type.f16, "bf16": ov.Type.bf16, "i32": ov.Type.i32,
            "u8": ov.Type.u8, "i64": ov.Type.i64}
OPSET = {"squared_difference": ops.squared_difference, "subtract": ops.subtract}


def cli():
    if os.environ.get("SQDIFF_CLI"):
        return os.environ["SQDIFF_CLI"]
    return str(pathlib.Path(sqdiff.__file__).resolve().parents[2] / "tools" / "sqdiff")


def versions():
    return {"openvino": ov.__version__, "sqdiff ir": cli().replace(str(ROOT) + "/", "")}


def _sqdiff_ir(*args):
    done = subprocess.run([cli(), "ir", *map(str, args)], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _plain(text, directory):
    """Output text without the run's temporary directory."""
    return text.replace(str(directory), "DIR").strip()


def _compare_model(xml, work, case=None, op=None):
    """Runs xml through `sqdiff ir --random 1 -o` and OpenVINO on the same inputs: a one-line verdict."""
    out_dir = work / "out"
    status, stdout, stderr = _sqdiff_ir(xml, "--random", 1, "-o", out_dir)
    if status != 0:
        return f"sqdiff ir refuses: {_plain(stderr, work).splitlines()[-1]}"
    import openvino_peer
    core = ov.Core()
    try:
        model = core.read_model(str(xml))
    except Exception as error:  # noqa: BLE001 - OpenVINO's reader refuses the file
        return f"OpenVINO read_model refuses: {re.sub(r'at offset [0-9]+', 'at offset N', openvino_peer.reason(error))}"
    feeds = {}
    for parameter in model.get_parameters():
        array = np.load(out_dir / "inputs" / f"{parameter.friendly_name}.npy")
        tensor = ov.Tensor(parameter.get_element_type(), list(array.shape))
        if array.size:
            tensor.data[...] = array.view(tensor.data.dtype)
        feeds[parameter.friendly_name] = tensor
    try:
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        request.infer(feeds)
    except Exception as error:  # noqa: BLE001 - OpenVINO refuses the file: the verdict says so
        return f"OpenVINO refuses: {openvino_peer.reason(error)}"
    verdicts = []
    for index, result in enumerate(model.get_results()):
        name = result.friendly_name
        ours = np.load(out_dir / f"{re.sub(r'[^A-Za-z0-9._-]', '_', name)}.npy")
        theirs = np.array(request.get_output_tensor(index).data, copy=True).view(ours.dtype).reshape(ours.shape)
        dtype = _dtype_of(result.get_element_type())
        a = b = None
        if case is not None:  # a single-op model: its inputs tell saturation and flushing apart
            a, b = broadcast_inputs(case, np.load(out_dir / "inputs" / "a.npy"), np.load(out_dir / "inputs" / "b.npy"))
        counts, _, _ = compare(dtype, ours, theirs, a, b, op)
        verdicts.append("identical" if not counts else f"{sum(counts.values())}/{ours.size} differ: " +
                        ", ".join(f"{category} {n}" for category, n in sorted(counts.items())))
    return "; ".join(verdicts)


def _dtype_of(ov_type):
    return {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64"}.get(
        ov_type.get_type_name(), {"i32": "i32", "u8": "u8", "i64": "i64", "i8": "i8", "i16": "i16",
                                  "u16": "u16", "u32": "u32", "u64": "u64"}.get(ov_type.get_type_name(), "f32"))


def _partial_shape(shape):
    """A list of dims, or a string such as "[?,1,4]" or "[2..7,3,1]" for dynamic dims."""
    return ov.PartialShape(shape) if isinstance(shape, str) else ov.PartialShape(list(shape))


def _single_op_model(dtype, op, mode, shape_a, shape_b, axis):
    a = ops.parameter(ov.PartialShape.dynamic(), OV_TYPES[dtype], name="a")
    b = ops.parameter(ov.PartialShape.dynamic(), OV_TYPES[dtype], name="b")
    node = OPSET[op](a, b, auto_broadcast=mode, name=op)
    if mode == "pdpd":
        node.set_attribute("auto_broadcast.auto_broadcast_axis", axis)
    a.set_partial_shape(_partial_shape(shape_a))
    b.set_partial_shape(_partial_shape(shape_b))
    result = ops.result(node, name="out")
    model = ov.Model([result], [a, b], f"{op}_{dtype}_{mode}")
    model.validate_nodes_and_infer_types()
    return model


def layer_norm_model():
    """LayerNorm over the last axis, as TensorFlow's converts: (x - mean) / sqrt(var + eps) with
    var = ReduceMean(SquaredDifference(x, mean))."""
    x = ops.parameter([2, 4, 8], ov.Type.f32, name="x")
    axes = ops.constant(np.array([-1], dtype=np.int64), name="axes")
    mean = ops.reduce_mean(x, axes, keep_dims=True, name="mean")
    squares = ops.squared_difference(x, mean, name="squares")
    variance = ops.reduce_mean(squares, axes, keep_dims=True, name="variance")
    eps = ops.constant(np.array([1e-5], dtype=np.float32), name="eps")
    std = ops.sqrt(ops.add(variance, eps, name="variance_eps"), name="std")
    centred = ops.subtract(x, mean, name="centred")
    y = ops.divide(centred, std, name="normalized")
    return ov.Model([ops.result(y, name="y")], [x], "layer_norm")


def run():
    signature, lines = {}, []
    with tempfile.TemporaryDirectory(prefix="sqdiff-peers-ir-") as tmp:
        tmp = pathlib.Path(tmp)
        for xml in sorted((ROOT / "examples" / "ir").glob("*.xml")):
            work = tmp / xml.stem
            work.mkdir()
            verdict = _compare_model(xml, work)
            signature[f"examples/ir/{xml.name}"] = verdict
        for index, (dtype, op, mode, a, b, axis) in enumerate(GENERATED):
            work = tmp / f"model_{index}"
            work.mkdir()
            xml = work / "model.xml"
            ov.save_model(_single_op_model(dtype, op, mode, a, b, axis), str(xml))
            case = ShapeCase(mode, (), (), axis)  # broadcast_inputs takes the shapes from the arrays
            signature[f"save_model {op} {dtype} {mode} {a} {b} axis {axis}"] = _compare_model(xml, work, case, op)
        for compress in (False, True):
            work = tmp / f"layer_norm_{compress}"
            work.mkdir()
            xml = work / "layer_norm.xml"
            ov.save_model(layer_norm_model(), str(xml), compress_to_fp16=compress)
            check = _sqdiff_ir(xml)
            run_ = _sqdiff_ir(xml, "--random", 1)
            key = f"save_model LayerNorm (compress_to_fp16={compress})"
            signature[f"{key}: shape check"] = f"exit {check[0]}: " + _plain(check[1] + check[2], work)
            signature[f"{key}: run"] = f"exit {run_[0]}: " + _plain(run_[2], work)
    lines = ["## OpenVINO IR files: `sqdiff ir` and OpenVINO on the same files", "",
             "Each model of examples/ir/ and each IR file written by OpenVINO's `save_model` "
             "from a single-op graph is run by `sqdiff ir --random 1 -o DIR` and by OpenVINO "
             "(`read_model`, CPU, f32 hint) on the inputs sqdiff saved; then a LayerNorm that "
             "OpenVINO wrote is checked and run by `sqdiff ir`.", "",
             "| file | result |", "|---|---|"]
    for key, value in signature.items():
        shown = value.replace("|", "\\|").replace("\n", "<br>")
        lines.append(f"| {key} | {shown} |")
    return {"extra": {"signature": signature, "markdown": "\n".join(lines)}}
