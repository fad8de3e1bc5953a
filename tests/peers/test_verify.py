"""sqdiff.verify in the real runtimes (issue 32, item 3): LiteRT (ai-edge-litert) and OpenVINO's
CPU plugin, the versions requirements/peers.txt pins.

- LiteRT: a .tflite with SUB and SQUARED_DIFFERENCE among FULLY_CONNECTED and ADD (written with
  ai_edge_litert's schema classes), float32 and int8, verified under each resolver; a tensor read
  with one bit flipped is found, at its position, with exit status 3.
- OpenVINO: the IR examples (examples/ir/*.xml), the same .tflite file, an .onnx (written with the
  onnx package) and an IR with a SquaredDifference among Convolution, Add, Relu and Subtract; the
  CPU plugin's known differences (docs/COMPATIBILITY.md: int8/uint8 squares, f64, i64) found again.

Run by scripts/compatibility.sh --check in the venv of requirements/peers.txt, or by hand:
PYTHONPATH=<build>/python:peers build-peers/venv/bin/python -m pytest -q tests/peers/test_verify.py
"""

import json
import pathlib
import warnings

import flatbuffers
import numpy as np
import pytest
import sqdiff
from ai_edge_litert import interpreter as litert
from ai_edge_litert import schema_py_generated as schema

from sqdiff import _verify

ov = pytest.importorskip("openvino")
ops = pytest.importorskip("openvino.opset13")

ROOT = pathlib.Path(__file__).resolve().parents[2]
S = schema


def tflite_model(dtype="f32"):
    """x -> FULLY_CONNECTED (w, bias) -> h; h2 = ADD(h, c); d = SUB(h2, y); out = SQUARED_DIFFERENCE(d, h).
    int8: the same with per-tensor quantization (FULLY_CONNECTED with an int32 bias)."""
    rng = np.random.default_rng(0)
    tensors, buffers = [], [S.BufferT()]
    quantized = dtype == "i8"

    def tensor(name, shape, data=None, quant=None, kind=None):
        t = S.TensorT()
        t.name, t.shape, t.buffer = name, list(shape), 0
        t.type = kind if kind is not None else (S.TensorType.INT8 if quantized else S.TensorType.FLOAT32)
        if data is not None:
            b = S.BufferT()
            b.data = list(np.ascontiguousarray(data).tobytes())
            buffers.append(b)
            t.buffer = len(buffers) - 1
        if quantized and quant is not None:
            q = S.QuantizationParametersT()
            q.scale, q.zeroPoint = [float(np.float32(quant[0]))], [int(quant[1])]
            t.quantization = q
        tensors.append(t)
        return len(tensors) - 1

    if quantized:
        x = tensor("x", (4, 8), quant=(0.05, 0))
        w = tensor("w", (16, 8), rng.integers(-127, 128, (16, 8)).astype(np.int8), quant=(0.02, 0))
        bias = tensor("bias", (16,), rng.integers(-500, 500, 16).astype(np.int32), quant=(0.001, 0),
                      kind=S.TensorType.INT32)
        h = tensor("h", (4, 16), quant=(0.1, 3))
        c = tensor("c", (16,), rng.integers(-128, 128, 16).astype(np.int8), quant=(0.05, -2))
        h2 = tensor("h2", (4, 16), quant=(0.1, 0))
        y = tensor("y", (4, 16), quant=(0.08, 1))
        d = tensor("d", (4, 16), quant=(0.15, -5))
        out = tensor("out", (4, 16), quant=(0.5, -128))
    else:
        x = tensor("x", (4, 8))
        w = tensor("w", (16, 8), rng.normal(size=(16, 8)).astype(np.float32))
        bias = tensor("bias", (16,), rng.normal(size=16).astype(np.float32))
        h = tensor("h", (4, 16))
        c = tensor("c", (16,), rng.normal(size=16).astype(np.float32))
        h2, y, d, out = (tensor(n, (4, 16)) for n in ("h2", "y", "d", "out"))
    operators, codes = [], []

    def operator(code, options_type, options, inputs, outputs):
        if code not in codes:
            codes.append(code)
        o = S.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = codes.index(code), inputs, outputs
        o.builtinOptionsType, o.builtinOptions = options_type, options
        operators.append(o)

    operator(S.BuiltinOperator.FULLY_CONNECTED, S.BuiltinOptions.FullyConnectedOptions,
             S.FullyConnectedOptionsT(), [x, w, bias], [h])
    operator(S.BuiltinOperator.ADD, S.BuiltinOptions.AddOptions, S.AddOptionsT(), [h, c], [h2])
    operator(S.BuiltinOperator.SUB, S.BuiltinOptions.SubOptions, S.SubOptionsT(), [h2, y], [d])
    operator(S.BuiltinOperator.SQUARED_DIFFERENCE, S.BuiltinOptions.SquaredDifferenceOptions,
             S.SquaredDifferenceOptionsT(), [d, h], [out])
    subgraph = S.SubGraphT()
    subgraph.tensors, subgraph.inputs, subgraph.outputs, subgraph.operators = tensors, [x, y], [out], operators
    opcodes = []
    for code in codes:
        k = S.OperatorCodeT()
        k.builtinCode, k.deprecatedBuiltinCode = code, min(code, 127)
        k.version = 2 if quantized and code != S.BuiltinOperator.SQUARED_DIFFERENCE else 1
        opcodes.append(k)
    model = S.ModelT()
    model.version, model.operatorCodes, model.subgraphs, model.buffers = 3, opcodes, [subgraph], buffers
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


@pytest.fixture(scope="module")
def tflite_files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tflite")
    files = {}
    for dtype in ("f32", "i8"):
        files[dtype] = directory / ("mixed_%s.tflite" % dtype)
        files[dtype].write_bytes(tflite_model(dtype))
    return files


# --- LiteRT ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_litert_reference_kernels_are_sqdiffs(tflite_files, dtype):
    report = sqdiff.verify(tflite_files[dtype], random_seed=1, resolver="reference")
    assert report.passed, report.text()
    assert [(op.index, op.name, op.kind) for op in report.ops] == [(2, "d", "SUB"), (3, "out", "SQUARED_DIFFERENCE")]
    assert all(op.elements == 64 and op.differing == 0 and op.executed_as == "reference kernel" for op in report.ops)
    assert report.ops[0].inputs == ("h2", "y") and report.ops[1].inputs == ("d", "h")
    assert report.others == {"ADD": 1, "FULLY_CONNECTED": 1}
    assert report.unmodified == {"outputs": 1, "identical": True, "differing": []}
    if dtype == "i8":
        assert report.ops[0].quantization == (pytest.approx(0.15), -5) and report.ops[1].unit == "steps"


@pytest.mark.parametrize("resolver", ["default", "builtin"])
@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_litert_other_resolvers(tflite_files, dtype, resolver):
    """What the optimized kernels and the XNNPACK delegate give (docs/verify.md records it)."""
    report = sqdiff.verify(tflite_files[dtype], random_seed=2, resolver=resolver)
    assert len(report.ops) == 2 and not report.skipped
    expected = {("default", "f32"): "XNNPACK delegate", ("default", "i8"): None}.get((resolver, dtype),
                                                                                     "optimized kernel")
    if expected is not None:
        assert report.ops[0].executed_as == expected, report.text()
    assert report.passed, report.text()


def test_keeping_tensors_is_what_makes_them_readable(tflite_files):
    """Without experimental_preserve_all_tensors the XNNPACK delegate runs the float graph as one
    partition and never writes its intermediate tensors: the reason verify keeps them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = litert.Interpreter(model_path=str(tflite_files["f32"]))
    plain.allocate_tensors()
    for d in plain.get_input_details():
        plain.set_tensor(d["index"], np.ones(d["shape"], np.float32))
    plain.invoke()
    with pytest.raises(ValueError, match="Tensor data is null"):
        plain.get_tensor(7)  # d, SUB's output
    nodes = [n["op_name"] for n in plain._get_ops_details()]
    assert nodes.count("DELEGATE") == 1


def flip_one_bit(monkeypatch, tensor, flat, bit):
    original = litert.Interpreter.get_tensor

    def get_tensor(self, index, subgraph_index=0):
        value = original(self, index, subgraph_index)
        if index == tensor:
            value = value.copy()
            bits = value.reshape(-1).view(np.uint32 if value.dtype == np.float32 else np.uint8)
            bits[flat] ^= type(bits[flat])(1 << bit)
        return value

    monkeypatch.setattr(litert.Interpreter, "get_tensor", get_tensor)


def test_a_flipped_bit_is_found_where_it_is(tflite_files, monkeypatch, capsys):
    flip_one_bit(monkeypatch, 8, 21, 3)  # out, SQUARED_DIFFERENCE's output: element [1, 5], 8 ulps
    report = sqdiff.verify(tflite_files["f32"], random_seed=1, resolver="reference")
    assert not report.passed
    sub, sqd = report.ops
    assert sub.passed and not sqd.passed
    assert (sqd.differing, sqd.worst, sqd.unit, sqd.position) == (1, 8, "ulps", (1, 5))
    assert sqd.runtime_value != sqd.sqdiff_value
    assert _verify.main([str(tflite_files["f32"]), "--random", "1", "--resolver", "reference"]) == 3
    assert "DIFFERS: 1 of 64 elements, worst 8 ulps at [1,5]" in capsys.readouterr().out
    # An input of the operator read wrong makes its recomputation differ everywhere it reaches.
    flip_one_bit(monkeypatch, 7, 0, 0)  # d, an input of both: one ulp at element [0, 0]
    report = sqdiff.verify(tflite_files["f32"], random_seed=1, resolver="reference")
    assert [op.passed for op in report.ops] == [False, False]
    assert report.ops[0].position == (0, 0) and report.ops[0].worst == 1


def test_a_flipped_bit_in_int8_is_steps(tflite_files, monkeypatch):
    flip_one_bit(monkeypatch, 7, 10, 6)  # d: element [0, 10], 64 steps
    report = sqdiff.verify(tflite_files["i8"], random_seed=1, resolver="reference")
    sub = report.ops[0]
    assert (sub.differing, sub.worst, sub.unit, sub.position) == (1, 64, "steps", (0, 10))


def test_command_json_on_litert(tflite_files, capsys):
    assert _verify.main([str(tflite_files["i8"]), "--random", "3", "--resolver", "reference", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["runtime"] == "litert" and report["resolver"] == "reference" and report["passed"]
    assert [op["kind"] for op in report["ops"]] == ["SUB", "SQUARED_DIFFERENCE"]
    assert report["inputs"] == [{"name": "x", "dtype": "i8", "shape": [4, 8], "source": "random"},
                                {"name": "y", "dtype": "i8", "shape": [4, 16], "source": "random"}]


# --- OpenVINO -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["squared_difference_none", "squared_difference_numpy"])
def test_openvino_ir_examples(name):
    report = sqdiff.verify(ROOT / "examples" / "ir" / (name + ".xml"), random_seed=1)
    assert report.passed, report.text()
    (op,) = report.ops
    assert (op.kind, op.name, op.dtype) == ("SquaredDifference", "squared_difference", "f32")
    assert op.broadcast == name.rsplit("_", 1)[1]
    assert op.executed_as.startswith("Subgraph")
    assert report.unmodified["identical"]


def test_openvino_refuses_two_ir_examples():
    """subtract_pdpd.xml: the CPU plugin cannot compile a pdpd Subtract whose b is not aligned with
    a's trailing dims (COMPATIBILITY.md, "pdpd refused"); dynamic_dims.xml: OpenVINO's IR reader
    takes no `?` in a port's <dim> (sqdiff ir does)."""
    with pytest.raises(sqdiff.Error, match="cannot compile the model.*ConvertSubtractWithConstant"):
        sqdiff.verify(ROOT / "examples" / "ir" / "subtract_pdpd.xml", random_seed=1)
    with pytest.raises(sqdiff.Error, match=r"OpenVINO cannot read .*dynamic_dims.xml.*dimension \(\?\)"):
        sqdiff.verify(ROOT / "examples" / "ir" / "dynamic_dims.xml", random_seed=1)


def test_openvino_on_a_tflite_file(tflite_files):
    report = sqdiff.verify(tflite_files["f32"], runtime="openvino", random_seed=1,
                           properties={"INFERENCE_PRECISION_HINT": "f32"})
    assert report.passed, report.text()
    assert [op.kind for op in report.ops] == ["Subtract", "SquaredDifference"]
    assert report.unmodified["identical"]
    # Unmodified, the plugin fuses both (and the ADD before them) into one Snippets subgraph.
    assert all("fused with" in op.unmodified_executed_as for op in report.ops), report.text()
    assert all("fused with" not in op.executed_as for op in report.ops), report.text()


def onnx_model(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array(rng.normal(size=(8, 4)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.normal(size=4).astype(np.float32), "bias")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "bias"], ["h2"]),
             helper.make_node("Sub", ["h2", "y"], ["d"]), helper.make_node("Mul", ["d", "d"], ["sq"]),
             helper.make_node("Relu", ["sq"], ["out"])]
    graph = helper.make_graph(nodes, "mixed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8]),
                                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [3, 4])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def test_openvino_on_an_onnx_file(tmp_path):
    onnx_model(tmp_path / "mixed.onnx")
    report = sqdiff.verify(tmp_path / "mixed.onnx", random_seed=4, properties={"INFERENCE_PRECISION_HINT": "f32"})
    assert report.passed, report.text()
    assert [(op.kind, op.inputs) for op in report.ops] == [("Subtract", ("h2", "y"))]
    assert report.others == {"Add": 1, "MatMul": 1, "Multiply": 1, "Relu": 1}


def conv_model(element=None):
    """x -> Convolution -> Add -> SquaredDifference(., y) -> Relu -> Subtract(., 0.5)."""
    rng = np.random.default_rng(0)
    x = ops.parameter([1, 3, 8, 8], ov.Type.f32, name="x")
    y = ops.parameter([1, 4, 8, 8], ov.Type.f32, name="y")
    conv = ops.convolution(x, ops.constant(rng.normal(size=(4, 3, 3, 3)).astype(np.float32)), [1, 1], [1, 1],
                           [1, 1], [1, 1], name="conv")
    add = ops.add(conv, ops.constant(rng.normal(size=(1, 4, 1, 1)).astype(np.float32)), name="add")
    sqd = ops.squared_difference(add, y, name="sqd")
    relu = ops.relu(sqd, name="relu")
    sub = ops.subtract(relu, ops.constant(np.float32([0.5])), name="sub")
    return ov.Model([sub], [x, y], "conv_sqd")


def test_openvino_ir_with_squared_difference_among_other_layers(tmp_path):
    ov.save_model(conv_model(), str(tmp_path / "conv_sqd.xml"), compress_to_fp16=False)
    for properties in ({}, {"INFERENCE_PRECISION_HINT": "f32"}):
        report = sqdiff.verify(tmp_path / "conv_sqd.xml", random_seed=9, properties=properties)
        assert report.passed, report.text()
        assert [(op.kind, op.name) for op in report.ops] == [("SquaredDifference", "sqd"), ("Subtract", "sub")]
        assert report.others == {"Add": 1, "Convolution": 1, "Relu": 1}
        # Unmodified, the plugin runs SquaredDifference, Relu and Subtract as one Snippets subgraph;
        # with their tensors as outputs, each on its own.
        sqd = report.ops[0]
        assert "fused with relu, sub" in sqd.unmodified_executed_as and "fused" not in sqd.executed_as
        assert report.unmodified["identical"]


def known_difference_model(op, element, shape=(6,)):
    a = ops.parameter(list(shape), element, name="a")
    b = ops.parameter(list(shape), element, name="b")
    node = {"squared_difference": ops.squared_difference, "subtract": ops.subtract}[op](a, b, name=op)
    return ov.Model([ops.relu(node) if element.is_real() else node], [a, b], op)


def test_openvino_cpu_known_differences_found_again():
    """docs/COMPATIBILITY.md's "Why OpenVINO's CPU plugin differs": found by verify."""
    # u8 and i8 SquaredDifference: neither wrapped nor saturated (u8: 0 throughout).
    a = np.array([0, 3, 5, 127, 2, 1], np.uint8)
    b = np.array([255, 5, 3, 1, 2, 0], np.uint8)
    (op,) = sqdiff.verify(known_difference_model("squared_difference", ov.Type.u8), {"a": a, "b": b}).ops
    # sqdiff wraps: 1, 4, 4, (126 * 126) % 256 = 4, 0, 1; the plugin gives 0 for each.
    assert (op.dtype, op.differing, op.unit, op.position) == ("u8", 5, "steps", (1,))
    assert (op.runtime_value, op.sqdiff_value, op.worst) == (0, 4, 4)
    ia, ib = a.astype(np.int8), np.array([-1, 5, 3, -128, 2, 0], np.int8)
    (op,) = sqdiff.verify(known_difference_model("squared_difference", ov.Type.i8), {"a": ia, "b": ib}).ops
    assert op.differing >= 2 and op.dtype == "i8", op
    # f64: computed in f32 (a narrower type), out-of-range values as +-FLT_MAX.
    fa = np.array([1e300, 0.1, -0.23095280816128363, 2.0, 3.0, 1e-310])
    fb = np.array([0.0, 0.2, 1.0, 1.0, 1.0, 0.0])
    report = sqdiff.verify(known_difference_model("subtract", ov.Type.f64), {"a": fa, "b": fb})
    (op,) = report.ops
    assert op.dtype == "f64" and op.differing == 4 and op.position == (0,)
    assert op.runtime_value == float(np.finfo(np.float32).max) and op.sqdiff_value == 1e300
    # i64: computed in 32 bits.
    la = np.array([2 ** 40 - 1, 3, -5, 2 ** 33, 7, 1363477374930958388], np.int64)
    lb = np.array([0, 1, 2, 3, 4, -5805539076728026549], np.int64)
    (op,) = sqdiff.verify(known_difference_model("subtract", ov.Type.i64), {"a": la, "b": lb}).ops
    assert (op.differing, op.position) == (3, (5,))
    assert op.runtime_value == -837767703 and op.sqdiff_value == int(la[5] - lb[5])


def test_openvino_random_inputs_find_the_8_bit_squares():
    """With --random (integers over their whole range), verify finds the u8 squares alone."""
    model = known_difference_model("squared_difference", ov.Type.u8, (64,))
    report = sqdiff.verify(model, random_seed=1)
    assert report.ops[0].differing > 32, report.text()
    report = sqdiff.verify(known_difference_model("subtract", ov.Type.i64, (64,)), random_seed=1)
    assert report.ops[0].differing > 60, report.text()


def test_docs_verify_md_examples_run_as_written():
    import doctest
    import os
    import re
    import shlex
    import subprocess
    import sys
    text = (ROOT / "docs" / "verify.md").read_text()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(sqdiff.__file__).parents[1]), env.get("PYTHONPATH", "")])
    ran = 0
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        command, expected, status = None, [], None
        for line in block.splitlines() + ["$ end"]:
            if not line.startswith("$ "):
                expected.append(line)
                continue
            if command == "echo $?":
                assert expected == [str(status)]
            elif command is not None:
                args = shlex.split(command)
                assert args[:3] == ["python", "-m", "sqdiff.verify"]
                done = subprocess.run([sys.executable, *args[1:]], cwd=ROOT, env=env, capture_output=True, text=True,
                                      timeout=300)
                status = done.returncode
                assert done.stdout.splitlines() == expected, done.stderr
                ran += 1
            command, expected = line[2:], []
    for block in re.findall(r"```pycon\n(.*?)```", text, re.S):
        test = doctest.DocTestParser().get_doctest(block, {}, "verify.md", "docs/verify.md", 0)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        runner.run(test)
        assert runner.summarize(verbose=False).failed == 0
        ran += 1
    assert ran == 2


# --- OpenVINO on the .tflite files TensorFlow's converter wrote (issue 32, item 4) -----------------

def _corpus(kind):
    import sys
    sys.path.insert(0, str(ROOT / "peers"))
    import corpus_peer
    return sorted(corpus_peer.corpus_dir().glob(f"*-{kind}.tflite"))


@pytest.mark.parametrize("kind", ["float32", "int32"])
def test_openvino_on_converter_made_models_is_identical(kind):
    """OpenVINO reads the converter's .tflite files (its TFLite frontend): every Subtract and
    SquaredDifference node of the float32 and int32 models, with the f32 precision hint, is
    identical to sqdiff's recomputation from the plugin's own input tensors."""
    files = _corpus(kind)
    assert len(files) >= 15
    checked = 0
    for path in files:
        report = sqdiff.verify(str(path), runtime="openvino", random_seed=1,
                               properties={"INFERENCE_PRECISION_HINT": "f32"})
        assert report.passed, (path.name, [op.to_dict() for op in report.ops if op.differing][:2])
        checked += len(report.ops)
    assert checked >= len(files)


def test_openvino_runs_a_quantized_tflite_subtract_in_its_own_low_precision():
    """The int8 models with float I/O: OpenVINO turns QUANTIZE/DEQUANTIZE into FakeQuantize and runs
    the Subtract between them in its low-precision pipeline, so verify's float recomputation of the
    node finds differences, on Subtract nodes only (docs/verify.md)."""
    files = _corpus("int8_float_io")
    differing = []
    for path in files:
        report = sqdiff.verify(str(path), runtime="openvino", random_seed=1,
                               properties={"INFERENCE_PRECISION_HINT": "f32"})
        differing += [(path.name, op.kind) for op in report.ops if op.differing]
    assert differing, "OpenVINO's low-precision Subtract was expected to be found"
    assert {kind for _, kind in differing} == {"Subtract"}, differing
