"""Quantized .tflite models of SQUARED_DIFFERENCE and SUB (and ADD, which sqdiff cannot run),
QUANTIZE and DEQUANTIZE, and MEAN models of every type, written with the schema classes that
ai-edge-litert ships (schema_py_generated), without TensorFlow. LiteRT, TFLite-Micro and
`sqdiff tflite` read the same bytes.

A model is a list of operators over named tensors; each tensor has a shape, a type and, for
int8/uint8/int16, a per-tensor (scale, zero point); a tensor with data is a constant (MEAN's axes).
"""

import dataclasses

import flatbuffers
import numpy as np
from ai_edge_litert import schema_py_generated as schema

TYPES = {"i8": schema.TensorType.INT8, "u8": schema.TensorType.UINT8, "i16": schema.TensorType.INT16,
         "f32": schema.TensorType.FLOAT32, "i32": schema.TensorType.INT32, "f16": schema.TensorType.FLOAT16,
         "i64": schema.TensorType.INT64}
NUMPY = {"i8": np.int8, "u8": np.uint8, "i16": np.int16, "f32": np.float32, "i32": np.int32, "f16": np.float16,
         "i64": np.int64}
ACTIVATIONS = {"none": schema.ActivationFunctionType.NONE, "relu": schema.ActivationFunctionType.RELU,
               "relu6": schema.ActivationFunctionType.RELU6,
               "relu_n1_to_1": schema.ActivationFunctionType.RELU_N1_TO_1}
OPS = {  # op: (builtin code, options type, options class)
    "squared_difference": (schema.BuiltinOperator.SQUARED_DIFFERENCE,
                           schema.BuiltinOptions.SquaredDifferenceOptions, schema.SquaredDifferenceOptionsT),
    "subtract": (schema.BuiltinOperator.SUB, schema.BuiltinOptions.SubOptions, schema.SubOptionsT),
    "add": (schema.BuiltinOperator.ADD, schema.BuiltinOptions.AddOptions, schema.AddOptionsT),
    "quantize": (schema.BuiltinOperator.QUANTIZE, schema.BuiltinOptions.QuantizeOptions, schema.QuantizeOptionsT),
    "dequantize": (schema.BuiltinOperator.DEQUANTIZE, schema.BuiltinOptions.DequantizeOptions,
                   schema.DequantizeOptionsT),
    "mean": (schema.BuiltinOperator.MEAN, schema.BuiltinOptions.ReducerOptions, schema.ReducerOptionsT),
    # The activations as operators of their own, which take no options table.
    "relu": (schema.BuiltinOperator.RELU, None, None),
    "relu6": (schema.BuiltinOperator.RELU6, None, None),
    "relu_n1_to_1": (schema.BuiltinOperator.RELU_N1_TO_1, None, None),
    "relu_0_to_1": (schema.BuiltinOperator.RELU_0_TO_1, None, None),
}


@dataclasses.dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple
    dtype: str  # a key of TYPES
    quant: tuple = None  # (scale, zero point), float32 scale
    # A constant: a NumPy array, or its bytes (little-endian), in a buffer of its own.
    data: object = dataclasses.field(default=None, compare=False)


@dataclasses.dataclass(frozen=True)
class Operator:
    op: str  # a key of OPS
    inputs: tuple  # tensor names (QUANTIZE and DEQUANTIZE: one)
    output: str
    activation: str = "none"  # SUB and ADD
    pot_scale_int16: bool = True  # SUB on int16: TFLite's option, default true
    keep_dims: bool = None  # MEAN: ReducerOptions' keep_dims; None leaves the options table out


def _version(operator, tensors):
    """The operator version LiteRT's converter would write (op_version.cc), so that the builtin
    resolvers, which register a range of versions per op, accept the model."""
    dtype = tensors[operator.inputs[0]].dtype
    if operator.op == "quantize":
        return 2 if tensors[operator.output].dtype == "i16" else 1
    if operator.op == "dequantize":
        return {"i8": 2, "i16": 3, "f16": 3}.get(dtype, 1)
    if operator.op.startswith("relu"):  # the reference resolver registers RELU_N1_TO_1 and RELU_0_TO_1 at 1 only
        return {"i8": 2, "u8": 2, "i16": 3}.get(dtype, 1) if operator.op in ("relu", "relu6") else 1
    rank = max(len(tensors[name].shape) for name in (*operator.inputs, operator.output))
    broadcasts = tensors[operator.inputs[0]].shape != tensors[operator.inputs[1]].shape
    if operator.op == "squared_difference":
        return 2 if dtype == "i8" else 1
    if operator.op == "mean":
        return {"i8": 2, "i16": 3}.get(dtype, 1)
    if operator.op == "subtract":
        if dtype == "i16" and not operator.pot_scale_int16:
            return 5
        if broadcasts and rank > 4:
            return 4
        return {"i8": 2, "i16": 3}.get(dtype, 1)
    return {"i8": 2, "i16": 3}.get(dtype, 1)


def model(tensors, operators, inputs, outputs, description="sqdiff peers: quantized"):
    """The .tflite bytes of one subgraph: tensors (a list of Tensor), operators run in order."""
    by_name = {t.name: t for t in tensors}
    index = {t.name: i for i, t in enumerate(tensors)}
    codes = []
    tensor_objects = []
    buffers = [schema.BufferT()]
    for t in tensors:
        tensor = schema.TensorT()
        tensor.shape = list(t.shape)
        tensor.type = TYPES[t.dtype]
        tensor.buffer = 0
        if t.data is not None:
            buffer = schema.BufferT()
            raw = t.data if isinstance(t.data, (bytes, bytearray)) else np.ascontiguousarray(t.data, NUMPY[t.dtype]).tobytes()
            buffer.data = list(raw)
            tensor.buffer = len(buffers)
            buffers.append(buffer)
        tensor.name = t.name
        if t.quant is not None:
            quant = schema.QuantizationParametersT()
            quant.scale = [float(np.float32(t.quant[0]))]
            quant.zeroPoint = [int(t.quant[1])]
            tensor.quantization = quant
        tensor_objects.append(tensor)
    operator_objects = []
    for op in operators:
        code, options_type, options_class = OPS[op.op]
        key = (code, _version(op, by_name))
        if key not in codes:
            codes.append(key)
        operator = schema.OperatorT()
        operator.opcodeIndex = codes.index(key)
        operator.inputs = [index[name] for name in op.inputs]
        operator.outputs = [index[op.output]]
        if options_class is None or (op.op == "mean" and op.keep_dims is None):
            operator_objects.append(operator)  # no options table (MEAN: LiteRT's zeroed parameters)
            continue
        operator.builtinOptionsType = options_type
        options = options_class()
        if op.op in ("subtract", "add"):
            options.fusedActivationFunction = ACTIVATIONS[op.activation]
        if op.op == "subtract":
            options.potScaleInt16 = op.pot_scale_int16
        if op.op == "mean":
            options.keepDims = op.keep_dims
        operator.builtinOptions = options
        operator_objects.append(operator)
    subgraph = schema.SubGraphT()
    subgraph.tensors = tensor_objects
    subgraph.inputs = [index[name] for name in inputs]
    subgraph.outputs = [index[name] for name in outputs]
    subgraph.operators = operator_objects
    opcodes = []
    for code, version in codes:
        opcode = schema.OperatorCodeT()
        opcode.builtinCode = code
        opcode.deprecatedBuiltinCode = min(code, 127)
        opcode.version = version
        opcodes.append(opcode)
    tflite = schema.ModelT()
    tflite.version = 3
    tflite.operatorCodes = opcodes
    tflite.subgraphs = [subgraph]
    tflite.buffers = buffers
    tflite.description = description
    builder = flatbuffers.Builder(1024)
    builder.Finish(tflite.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def single_op(op, dtype, shape_a, shape_b, qa, qb, qout, activation="none", pot_scale_int16=True):
    """out = OP(a, b): the model of one random configuration."""
    shape_out = tuple(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    tensors = [Tensor("a", tuple(shape_a), dtype, qa), Tensor("b", tuple(shape_b), dtype, qb),
               Tensor("out", shape_out, dtype, qout)]
    operator = Operator(op, ("a", "b"), "out", activation, pot_scale_int16)
    return model(tensors, [operator], ["a", "b"], ["out"], f"sqdiff peers: quantized {op} {dtype}")


def mean_shape(shape, axes, keep_dims):
    """The output shape LiteRT's MEAN gives (reduce.cc GetOutputShape)."""
    rank = len(shape)
    resolved = {a + rank if a < 0 else a for a in axes} if rank else set()
    if keep_dims:
        return tuple(1 if d in resolved else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in resolved)


def mean(dtype, shape, axes, keep_dims, q_in=None, q_out=None):
    """out = MEAN(x, axes): axes an INT32 constant; keep_dims None leaves ReducerOptions out."""
    tensors = [Tensor("x", tuple(shape), dtype, q_in),
               Tensor("axis", (len(axes),), "i32", data=np.array(axes, np.int32).tobytes()),
               Tensor("out", mean_shape(shape, axes, bool(keep_dims)), dtype, q_out)]
    operator = Operator("mean", ("x", "axis"), "out", keep_dims=keep_dims)
    return model(tensors, [operator], ["x"], ["out"], f"sqdiff peers: mean {dtype}")
