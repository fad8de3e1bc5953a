"""LiteRT (TensorFlow Lite's runtime, ai-edge-litert): the SQUARED_DIFFERENCE and SUB builtins.

The .tflite flatbuffers are written with the schema classes that ai-edge-litert ships
(schema_py_generated, the object API), without TensorFlow: one model per case and op, two
float inputs, one output. TFLite broadcasts NumPy's way only ('none' = equal shapes). Types other
than f32 are tried as plain (unquantized) tensors; what the kernels refuse is recorded.
"""

import faulthandler
import multiprocessing

import flatbuffers
import ml_dtypes
import numpy as np
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema

import reference
from cases import DTYPES, inputs_for, shape_cases
from compare import Groups

TFL_TYPES = {
    "f16": schema.TensorType.FLOAT16, "bf16": schema.TensorType.BFLOAT16,
    "f32": schema.TensorType.FLOAT32, "f64": schema.TensorType.FLOAT64,
    "i8": schema.TensorType.INT8, "i16": schema.TensorType.INT16, "i32": schema.TensorType.INT32,
    "i64": schema.TensorType.INT64, "u8": schema.TensorType.UINT8, "u16": schema.TensorType.UINT16,
    "u32": schema.TensorType.UINT32, "u64": schema.TensorType.UINT64,
}
BUILTIN = {
    "squared_difference": (schema.BuiltinOperator.SQUARED_DIFFERENCE,
                           schema.BuiltinOptions.SquaredDifferenceOptions, schema.SquaredDifferenceOptionsT),
    "subtract": (schema.BuiltinOperator.SUB, schema.BuiltinOptions.SubOptions, schema.SubOptionsT),
}


def versions():
    import importlib.metadata
    return {"ai-edge-litert": importlib.metadata.version("ai-edge-litert"),
            "model": "written with ai_edge_litert.schema_py_generated"}


def tflite_model(op, dtype, shape_a, shape_b, shape_out):
    """A .tflite flatbuffer: out = OP(a, b)."""
    code, options_type, options_class = BUILTIN[op]
    tensors = []
    for name, shape in (("a", shape_a), ("b", shape_b), ("out", shape_out)):
        tensor = schema.TensorT()
        tensor.shape = list(shape)
        tensor.type = TFL_TYPES[dtype]
        tensor.buffer = 0
        tensor.name = name
        tensors.append(tensor)
    operator = schema.OperatorT()
    operator.opcodeIndex = 0
    operator.inputs = [0, 1]
    operator.outputs = [2]
    operator.builtinOptionsType = options_type
    operator.builtinOptions = options_class()
    subgraph = schema.SubGraphT()
    subgraph.tensors = tensors
    subgraph.inputs = [0, 1]
    subgraph.outputs = [2]
    subgraph.operators = [operator]
    opcode = schema.OperatorCodeT()
    opcode.builtinCode = code
    opcode.deprecatedBuiltinCode = min(code, 127)
    opcode.version = 1
    model = schema.ModelT()
    model.version = 3
    model.operatorCodes = [opcode]
    model.subgraphs = [subgraph]
    model.buffers = [schema.BufferT()]
    model.description = f"sqdiff peers: {op}"
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _run_one(op, dtype, item):
    out_shape = np.broadcast_shapes(item.a.shape, item.b.shape)
    runner = litert.Interpreter(model_content=tflite_model(op, dtype, item.a.shape, item.b.shape, out_shape),
                                num_threads=1)
    runner.allocate_tensors()
    details = runner.get_input_details()
    a, b = np.array(item.a, order="C"), np.array(item.b, order="C")
    if dtype == "bf16":  # the interpreter takes ml_dtypes.bfloat16 arrays
        a, b = a.view(ml_dtypes.bfloat16), b.view(ml_dtypes.bfloat16)
    runner.set_tensor(details[0]["index"], a)
    runner.set_tensor(details[1]["index"], b)
    runner.invoke()
    out = np.array(runner.get_tensor(runner.get_output_details()[0]["index"]), copy=True)
    return out.view(np.uint16) if dtype == "bf16" else out


def _run_op(dtype, op, inputs):
    """[(item, output or error text)] for one type and op."""
    out = []
    for item in inputs:
        try:
            out.append((item, _run_one(op, dtype, item)))
        except Exception as error:  # noqa: BLE001 - the runtime refuses: recorded
            out.append((item, f"{type(error).__name__}: {error}"))
    return out


def _in_child(dtype, op, inputs):
    """_run_op in a forked child: some kernels abort the whole process (a quantized-only type
    without quantization parameters fails a CHECK), which must not end the run."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    def work():
        faulthandler.disable()  # an abort is expected here: no traceback on stderr
        child.send(_run_op(dtype, op, inputs))

    process = context.Process(target=work)
    process.start()
    child.close()
    try:
        result = parent.recv()
    except EOFError:
        result = None
    process.join()
    if result is None:
        return [(item, f"the interpreter ended the process (exit status {process.exitcode})") for item in inputs]
    return result


def run():
    groups = Groups()
    cases = shape_cases(modes=("none", "numpy"))
    for dtype in DTYPES:
        inputs = inputs_for(dtype, cases)
        for op in ("squared_difference", "subtract"):
            for item, theirs in _in_child(dtype, op, inputs):
                if isinstance(theirs, str):
                    groups.reject(op, dtype, item.case.mode, theirs)
                    continue
                ours = reference.run(op, dtype, item.case, item.a, item.b)
                groups.add(op, dtype, item.case, ours, theirs, item.a, item.b)
    return {"litert": groups}
