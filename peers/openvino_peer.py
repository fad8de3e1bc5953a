"""OpenVINO's CPU plugin: SquaredDifference-1 and Subtract-1 built with its opset API.

One model per element type and configuration holds every case (a Parameter pair per shape case
and one node per op), so that each type costs one compile_model. When the plugin refuses a type,
each op and mode is retried, in smaller batches down to single cases, to name exactly what it
refuses.
"""

import re

import numpy as np
import openvino as ov
import openvino.opset13 as ops

import reference
from cases import DTYPES, FLOAT_DTYPES, OPS, inputs_for, shape_cases
from compare import Groups
from findings import NegateThenAdd, PdpdByRank

OV_TYPES = {
    "f16": ov.Type.f16, "bf16": ov.Type.bf16, "f32": ov.Type.f32, "f64": ov.Type.f64,
    "i8": ov.Type.i8, "i16": ov.Type.i16, "i32": ov.Type.i32, "i64": ov.Type.i64,
    "u8": ov.Type.u8, "u16": ov.Type.u16, "u32": ov.Type.u32, "u64": ov.Type.u64,
}

OPSET = {"squared_difference": ops.squared_difference, "subtract": ops.subtract}

# The configurations: the plugin's defaults, and f32 asked for explicitly. On a CPU with
# AVX512-BF16/AMX the default inference precision is bf16, which changes f32 results.
CONFIGS = {
    "openvino": {},
    "openvino-f32-hint": {"INFERENCE_PRECISION_HINT": "f32"},
}


def versions():
    core = ov.Core()
    return {
        "openvino": ov.__version__,
        "device": core.get_property("CPU", "FULL_DEVICE_NAME"),
        "default INFERENCE_PRECISION_HINT": str(core.get_property("CPU", "INFERENCE_PRECISION_HINT")),
    }


def _node(op, a, b, case, index):
    """The op node with the case's broadcast; pdpd's axis is set after creation (the Python
    factory makes pdpd with axis 0, and checks shapes at once: so the Parameters start dynamic)."""
    node = OPSET[op](a, b, auto_broadcast=case.mode, name=f"{op}_{index}")
    if case.mode == "pdpd":
        node.set_attribute("auto_broadcast.auto_broadcast_axis", case.axis)
    return node


def _model(dtype, inputs, ops_list):
    params, results = [], []
    for index, item in enumerate(inputs):
        a = ops.parameter(ov.PartialShape.dynamic(), OV_TYPES[dtype], name=f"a{index}")
        b = ops.parameter(ov.PartialShape.dynamic(), OV_TYPES[dtype], name=f"b{index}")
        nodes = [_node(op, a, b, item.case, index) for op in ops_list]
        a.set_partial_shape(ov.PartialShape(list(item.case.shape_a)))
        b.set_partial_shape(ov.PartialShape(list(item.case.shape_b)))
        params += [a, b]
        results += nodes
    model = ov.Model(results, params, f"sqdiff_peers_{dtype}")
    model.validate_nodes_and_infer_types()
    return model


def _tensor(dtype, array):
    tensor = ov.Tensor(OV_TYPES[dtype], list(array.shape))
    if array.size:
        tensor.data[...] = array.view(tensor.data.dtype)
    return tensor


def reason(error):
    """The informative part of an OpenVINO exception: the pass that threw (if any) and the last
    line, with generated node numbers removed (so that the text is the same on every run)."""
    lines = [line.strip() for line in str(error).splitlines()
             if line.strip() and not line.startswith("Exception from")]
    if not lines:
        return str(error).strip()
    passes = re.findall(r"^\[(\w+)\]", lines[0])
    text = (f"compile_model: pass {passes[0]} threw: " if passes else "") + lines[-1]
    text = re.sub(r" \(opset\d+::.*$", "", text)  # the node's inputs and outputs, in full
    return re.sub(r"_\d+", "_N", text)


def _run(core, config, dtype, inputs, ops_list=OPS):
    """Outputs of every case and op: [(op, item, array)]."""
    compiled = core.compile_model(_model(dtype, inputs, ops_list), "CPU", config)
    request = compiled.create_infer_request()
    request.infer([_tensor(dtype, x) for item in inputs for x in (item.a, item.b)])
    out = []
    for index, item in enumerate(inputs):
        for k, op in enumerate(ops_list):
            tensor = request.get_output_tensor(index * len(ops_list) + k)
            data = np.array(tensor.data, copy=True)
            if dtype == "bf16":
                data = data.view(np.uint16)
            out.append((op, item, data.reshape(tuple(tensor.shape))))
    return out


def _refused_item(error, op, count):
    """The index of the case whose node the plugin's message names (the model's nodes are named
    op_index), or None."""
    found = re.search(rf"\b{op}_(\d+)\b", str(error))
    return int(found.group(1)) if found and int(found.group(1)) < count else None


def _run_leaving_out_refused(core, config, dtype, items, op, groups):
    """Outputs of the items the plugin runs with op; each one it refuses is recorded. A batch it
    refuses is split in halves and each half tried again, once the case whose node the message
    names is left out: a few compiles of small models where one per case would cost many."""
    if not items:
        return []
    try:
        return _run(core, config, dtype, items, [op])
    except Exception as error:  # noqa: BLE001
        index = 0 if len(items) == 1 else _refused_item(error, op, len(items))
        if index is not None:
            groups.reject(op, dtype, items[index].case.mode, reason(error), items[index].case)
            items = items[:index] + items[index + 1:]
    half = len(items) // 2
    return (_run_leaving_out_refused(core, config, dtype, items[:half], op, groups)
            + _run_leaving_out_refused(core, config, dtype, items[half:], op, groups))


def run():
    """{config: Groups} for every configuration."""
    core = ov.Core()
    cases = shape_cases()
    results = {}
    for config, properties in CONFIGS.items():
        groups = Groups(probes=[PdpdByRank(), NegateThenAdd()])
        for dtype in DTYPES:
            if properties and dtype not in FLOAT_DTYPES:
                continue  # the precision hint concerns floating-point types only
            inputs = inputs_for(dtype, cases)
            try:
                outputs = _run(core, properties, dtype, inputs)
            except Exception:  # noqa: BLE001 - find what the plugin refuses: by op and mode, then case
                outputs = []
                for op in OPS:
                    for mode in ("none", "numpy", "pdpd"):
                        some = [item for item in inputs if item.case.mode == mode]
                        outputs += _run_leaving_out_refused(core, properties, dtype, some, op, groups)
            for op, item, theirs in outputs:
                ours = reference.run(op, dtype, item.case, item.a, item.b)
                groups.add(op, dtype, item.case, ours, theirs, item.a, item.b)
        results[config] = groups
    return results
