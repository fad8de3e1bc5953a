"""sqdiff.verify without a runtime: the error that names the extra to install, the arguments, the
comparator's records, the report's JSON, the random inputs (the same as `sqdiff tflite
--random`), and `python -m sqdiff.verify`'s exit statuses (0 identical, 3 differs, 1 error,
2 usage) through a stand-in runner. The runtimes themselves: tests/peers/test_verify.py."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sqdiff
from sqdiff import _verify
from support import source_dir

# Imports the package with a runtime's module made unimportable, then runs ARGV as
# `python -m sqdiff.verify` would.
HIDDEN_RUN = """
import runpy, sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
sys.argv = ["sqdiff.verify"] + sys.argv[2:]
runpy.run_module("sqdiff.verify", run_name="__main__", alter_sys=True)
"""


def run_module(*args, hide=("ai_edge_litert", "openvino")):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(sqdiff.__file__).parents[1]), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-c", HIDDEN_RUN, ",".join(hide), *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "model.tflite"
    path.write_bytes(b"not read: the runtime is missing")
    return path


# --- The extras ----------------------------------------------------------------------------------

@pytest.mark.parametrize("runtime, module", [("litert", "ai_edge_litert"), ("openvino", "openvino")])
def test_a_missing_runtime_names_its_extra(monkeypatch, model_file, runtime, module):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if it were not installed
    with pytest.raises(sqdiff.Error, match=r'pip install "sqdiff\[%s\]"' % runtime):
        sqdiff.verify(model_file, runtime=runtime, random_seed=1)


def test_the_command_without_the_runtime(model_file):
    done = run_module(model_file, "--random", "1")
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr.startswith('sqdiff.verify: error: sqdiff.verify with runtime="litert" needs ai-edge-litert')
    assert done.stderr.rstrip().endswith('pip install "sqdiff[litert]"')
    done = run_module(model_file, "--runtime", "openvino", "--random", "1")
    assert done.returncode == 1 and 'pip install "sqdiff[openvino]"' in done.stderr, done.stderr


def test_pyproject_declares_the_extras():
    text = (source_dir() / "pyproject.toml").read_text()
    pins = dict(line.split("==") for line in (source_dir() / "requirements" / "peers.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert 'litert = ["ai-edge-litert==%s"]' % pins["ai-edge-litert"] in text
    assert 'openvino = ["openvino==%s"]' % pins["openvino"] in text


# --- Arguments ------------------------------------------------------------------------------------

def test_arguments_are_checked_before_anything_runs(model_file, tmp_path):
    with pytest.raises(sqdiff.Error, match="runtime='tvm': not one of 'litert', 'openvino'"):
        sqdiff.verify(model_file, runtime="tvm")
    with pytest.raises(sqdiff.Error, match="resolver='fast'"):
        sqdiff.verify(model_file, resolver="fast")
    with pytest.raises(sqdiff.Error, match="resolver= is LiteRT's"):
        sqdiff.verify(model_file, runtime="openvino", resolver="reference")
    with pytest.raises(sqdiff.Error, match="LiteRT runs on the CPU"):
        sqdiff.verify(model_file, device="GPU")
    with pytest.raises(sqdiff.Error, match="properties= are OpenVINO's"):
        sqdiff.verify(model_file, properties={"INFERENCE_PRECISION_HINT": "f32"})
    with pytest.raises(sqdiff.Error, match="random_seed=-1"):
        sqdiff.verify(model_file, random_seed=-1)
    with pytest.raises(TypeError, match="random_seed must be an int"):
        sqdiff.verify(model_file, random_seed=1.5)
    with pytest.raises(TypeError, match="inputs must be a dict"):
        sqdiff.verify(model_file, [np.zeros(3)])
    with pytest.raises(TypeError, match="model must be a path"):
        sqdiff.verify(b"TFL3...")
    with pytest.raises(sqdiff.Error, match="no such file"):
        sqdiff.verify(tmp_path / "missing.tflite")


def test_the_runtime_follows_the_file_name():
    assert _verify.runtime_for("a/model.tflite") == "litert"
    assert _verify.runtime_for(Path("MODEL.TFLITE")) == "litert"
    for name in ("model.xml", "model.onnx", "model"):
        assert _verify.runtime_for(name) == "openvino"


SPECS = [_verify.InputSpec("x", "f32", (2, 3), "float32"), _verify.InputSpec("k", "i8", (4,), "int8"),
         _verify.InputSpec("h", "bf16", (2,), "bf16"), _verify.InputSpec("d", "f32", (1, 4), "f32", static=False)]


def test_inputs_are_checked_against_the_model():
    x, k = np.zeros((2, 3), np.float32), np.zeros(4, np.int8)
    h, d = np.zeros(2, np.uint16), np.zeros((3, 4), np.float32)  # d's shape is dynamic: any size
    feed, described = _verify.prepare_inputs(SPECS, {"x": x, "k": k, "h": h, "d": d}, None)
    assert [i["source"] for i in described] == ["given"] * 4
    assert described[3] == {"name": "d", "dtype": "f32", "shape": [3, 4], "source": "given"}
    with pytest.raises(sqdiff.Error, match=r"no input called 'y' \(its inputs: 'x', 'k', 'h', 'd'\)"):
        _verify.prepare_inputs(SPECS, {"y": x}, 1)
    with pytest.raises(sqdiff.Error, match=r"inputs\['x'\]: dtype float64, but the model's input is float32"):
        _verify.prepare_inputs(SPECS, {"x": x.astype(np.float64)}, 1)
    with pytest.raises(sqdiff.Error, match=r"inputs\['x'\]: shape \[3, 2\], but the model's input has \[2, 3\]"):
        _verify.prepare_inputs(SPECS, {"x": x.reshape(3, 2)}, 1)
    with pytest.raises(sqdiff.Error, match=r"bfloat16: ml_dtypes.bfloat16, or uint16 bits"):
        _verify.prepare_inputs(SPECS, {"h": np.zeros(2, np.float32)}, 1)
    with pytest.raises(sqdiff.Error, match=r"input 'k' needs data: pass it in inputs \(--input k=FILE.npy\)"):
        _verify.prepare_inputs(SPECS, {"x": x}, None)
    feed, described = _verify.prepare_inputs(SPECS, {"x": x}, 5)
    assert [i["source"] for i in described] == ["given", "random", "random", "random"]
    assert feed["k"].dtype == np.int8 and feed["h"].dtype == np.uint16 and feed["d"].shape == (1, 4)


def test_random_inputs_are_sqdiff_tflites(tmp_path):
    """The same seed gives the inputs `sqdiff tflite --random SEED` draws, bit for bit."""
    try:
        program = sqdiff._program.program()
    except sqdiff.Error as error:
        pytest.skip(str(error))
    flatc = os.environ.get("FLATC") or shutil.which("flatc")
    if not flatc:
        pytest.skip("no flatc (Debian's flatbuffers-compiler) to write the model with")
    types = {"x": ("FLOAT32", [3, 40], np.float32), "y": ("FLOAT32", [40], np.float32),
             "p": ("INT8", [33], np.int8), "q": ("INT8", [33], np.int8),
             "r": ("INT32", [2, 5], np.int32), "s": ("INT32", [5], np.int32)}
    tensors = []
    for name, (kind, shape, _) in types.items():
        tensors.append({"name": name, "shape": shape, "type": kind})
        if kind == "INT8":
            tensors[-1]["quantization"] = {"scale": [0.5], "zero_point": [0]}
    outs = [("d", [3, 40], "FLOAT32"), ("e", [33], "INT8"), ("f", [2, 5], "INT32")]
    for name, shape, kind in outs:
        tensors.append({"name": name, "shape": shape, "type": kind})
        if kind == "INT8":
            tensors[-1]["quantization"] = {"scale": [0.5], "zero_point": [0]}
    model = {"version": 3, "operator_codes": [{"deprecated_builtin_code": 99, "builtin_code": 99},
                                              {"deprecated_builtin_code": 41, "builtin_code": 41}],
             "subgraphs": [{"tensors": tensors, "inputs": [0, 1, 2, 3, 4, 5], "outputs": [6, 7, 8],
                            "operators": [{"opcode_index": 0, "inputs": [0, 1], "outputs": [6]},
                                          {"opcode_index": 1, "inputs": [2, 3], "outputs": [7]},
                                          {"opcode_index": 1, "inputs": [4, 5], "outputs": [8]}]}],
             "buffers": [{}]}
    (tmp_path / "random.json").write_text(json.dumps(model))
    schema = source_dir() / "tools" / "tflite" / "tflite_subset.fbs"
    subprocess.run([flatc, "-b", "-o", str(tmp_path), str(schema), str(tmp_path / "random.json")], check=True)
    for seed in (0, 7, 2 ** 64 - 1):
        out = tmp_path / ("out%d" % (seed % 1000))
        subprocess.run([program, "tflite", str(tmp_path / "random.tflite"), "--random", str(seed), "-o", str(out)],
                       check=True, capture_output=True)
        for position, (name, (_, shape, dtype)) in enumerate(types.items()):
            theirs = np.load(out / "inputs" / (name + ".npy"))
            ours = _verify.random_input(seed, position, _verify.DTYPE_NAMES[np.dtype(dtype)], shape)
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
            assert ours.tobytes() == theirs.tobytes(), (seed, name)


def test_random_inputs_of_every_type():
    for dtype in ("f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"):
        values = _verify.random_input(3, 1, dtype, (4, 1000))
        assert values.shape == (4, 1000) and values.dtype == _verify.NUMPY_DTYPES[dtype]
        assert np.array_equal(values, _verify.random_input(3, 1, dtype, (4, 1000)))
        assert not np.array_equal(values, _verify.random_input(3, 2, dtype, (4, 1000)))
        if dtype in ("f16", "f32", "f64"):
            assert abs(float(np.mean(values))) < 0.1 and 0.9 < float(np.std(values)) < 1.1
        elif dtype in ("u8", "i8"):
            info = np.iinfo(values.dtype)
            assert values.min() == info.min and values.max() == info.max  # the whole range


# --- The comparator -------------------------------------------------------------------------------

def check(runtime, expected, dtype, **extra):
    return _verify.compare(_verify.Check(index=3, name="n", kind="SUB", dtype=dtype, runtime=runtime,
                                         expected=expected, inputs=["a", "b"], **extra))


def test_identical_outputs_and_nans():
    f32 = np.array([[1.5, np.nan], [np.inf, -0.0]], np.float32)
    other_nan = f32.copy()
    other_nan.view(np.uint32)[0, 1] = 0xFFC00001  # another NaN: equal all the same
    op = check(other_nan, f32, "f32")
    assert (op.differing, op.worst, op.position, op.passed) == (0, None, None, True)
    assert (op.shape, op.elements, op.unit) == ((2, 2), 4, "ulps")


def test_worst_difference_in_ulps_and_where():
    expected = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    got = expected.copy()
    got[0, 2] = np.nextafter(np.float32(3), np.float32(4))
    got.view(np.uint32)[1, 1] += 7
    op = check(got, expected, "f32")
    assert (op.differing, op.worst, op.unit, op.position) == (2, 7, "ulps", (1, 1))
    assert op.runtime_value == float(got[1, 1]) and op.sqdiff_value == 5.0
    assert not op.passed


def test_ulps_across_zero_and_to_infinity():
    # -max to +max: 2 * (2^31 - 2^23 - 1) + ... counted along the values, exactly.
    big = np.finfo(np.float64).max
    op = check(np.array([-big]), np.array([big]), "f64")
    assert op.worst == 2 * (0x7FEFFFFFFFFFFFFF)
    op = check(np.array([np.inf], np.float32), np.array([np.finfo(np.float32).max], np.float32), "f32")
    assert op.worst == 1  # inf is one past the largest finite value: an overflow shows as 1 ulp
    op = check(np.array([0.0, -0.0], np.float32), np.array([-0.0, -0.0], np.float32), "f32")
    assert (op.differing, op.worst, op.position) == (1, 0, (0,))  # the sign of zero differs, 0 ulps apart
    op = check(np.array([1.0, np.nan, 2.0], np.float16), np.array([1.0, 3.0, 2.5], np.float16), "f16")
    assert (op.differing, op.worst, op.position) == (2, math.inf, (1,))  # NaN against a number first
    assert math.isnan(op.runtime_value) and op.sqdiff_value == 3.0


def test_bfloat16_bits():
    expected = sqdiff.to_bfloat16_bits(np.array([1.0, 2.0], np.float32))
    got = expected.copy()
    got[1] += 3
    op = check(got, expected, "bf16")
    assert (op.differing, op.worst, op.position, op.sqdiff_value) == (1, 3, (1,), 2.0)
    assert op.runtime_value == float(sqdiff.from_bfloat16_bits(got)[1])


def test_integer_steps():
    op = check(np.array([5, -128, 127], np.int8), np.array([5, 127, 126], np.int8), "i8", quantization=(0.5, 3))
    assert (op.differing, op.worst, op.unit, op.position) == (2, 255, "steps", (1,))
    assert (op.runtime_value, op.sqdiff_value, op.quantization) == (-128, 127, (0.5, 3))
    op = check(np.array([0], np.uint64), np.array([2 ** 64 - 1], np.uint64), "u64")
    assert op.worst == 2 ** 64 - 1
    op = check(np.array([-2 ** 63], np.int64), np.array([2 ** 63 - 1], np.int64), "i64")
    assert op.worst == 2 ** 64 - 1


def test_a_shape_that_differs_fails():
    op = check(np.zeros(3, np.float32), np.zeros((1, 3), np.float32), "f32")
    assert not op.passed and op.note == "the runtime's output has shape [3], sqdiff's [1, 3]"


# --- The report and the command -------------------------------------------------------------------

class FakeRunner:
    """A stand-in for a runtime: one input, two operators, the second off by `error` ulps."""

    def __init__(self, error=0):
        self.error = error

    def input_specs(self):
        return [_verify.InputSpec("x", "f32", (2, 2), "float32")]

    def run(self, feed):
        x = feed["x"]
        ours = sqdiff.squared_difference(x, np.float32(0.5))
        theirs = ours.copy()
        if self.error:
            theirs.view(np.uint32)[1, 0] += self.error
        checks = [_verify.Check(0, "d", "SUB", "f32", x - np.float32(0.5), sqdiff.subtract(x, np.float32(0.5)),
                                ["x", "c"], executed_as="a kernel"),
                  _verify.Check(1, "out", "SQUARED_DIFFERENCE", "f32", theirs, ours, ["x", "c"])]
        skipped = [_verify.Skip(2, "e", "SUB", "refused by sqdiff tflite's check: TANH")]
        return _verify.RunResult(checks, skipped, {"runtime": "litert", "version": "0", "resolver": "reference"},
                                 {"ADD": 2}, [("out", theirs, theirs), ("nan", np.float32([np.nan]),
                                                                        np.float32([np.nan]))])


@pytest.fixture
def fake(monkeypatch):
    runner = FakeRunner()
    monkeypatch.setattr(_verify, "make_runner", lambda *args: runner)
    return runner


def test_report_json_schema(fake, model_file):
    fake.error = 5
    report = sqdiff.verify(model_file, random_seed=1)
    assert isinstance(report, sqdiff.VerifyReport) and not report.passed
    assert repr(report) == "VerifyReport(passed=False, checked=2, differing_ops=1, skipped=1)"
    d = report.to_dict()
    assert json.loads(json.dumps(d, allow_nan=False)) == d
    assert list(d) == ["model", "runtime", "version", "resolver", "inputs", "passed", "checked", "differing_ops",
                       "ops", "skipped", "others", "unmodified"]
    assert d["inputs"] == [{"name": "x", "dtype": "f32", "shape": [2, 2], "source": "random"}]
    assert (d["passed"], d["checked"], d["differing_ops"]) == (False, 2, 1)
    first, second = d["ops"]
    assert list(first) == ["index", "name", "kind", "dtype", "shape", "elements", "differing", "worst", "unit",
                           "position", "runtime_value", "sqdiff_value", "inputs", "quantization", "broadcast",
                           "executed_as", "unmodified_executed_as", "note", "nonfinite"]
    assert (first["differing"], first["worst"], first["position"], first["executed_as"]) == (0, None, None, "a kernel")
    assert (second["differing"], second["worst"], second["position"]) == (1, 5, [1, 0])
    assert d["skipped"] == [{"index": 2, "name": "e", "kind": "SUB", "reason": "refused by sqdiff tflite's check: TANH"}]
    assert d["others"] == {"ADD": 2}
    assert d["unmodified"] == {"outputs": 2, "identical": True, "differing": []}
    assert report.ops[1].to_dict() == second


def test_nonfinite_values_are_null_in_json():
    op = check(np.array([np.nan], np.float32), np.array([np.inf], np.float32), "f32")
    d = op.to_dict()
    assert (d["worst"], d["runtime_value"], d["sqdiff_value"]) == (None, None, None)
    assert d["nonfinite"] == {"worst": "inf", "runtime_value": "nan", "sqdiff_value": "inf"}
    json.dumps(d, allow_nan=False)


def test_command_exit_statuses(fake, model_file, tmp_path, capsys):
    assert _verify.main([str(model_file), "--random", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "%s: litert (version 0, resolver reference)" % model_file
    assert out[1] == "input 'x': f32 [2,2], random"
    assert out[2] == "operator 0 'd' SUB: f32 [2,2]: identical (4 elements); ran as a kernel"
    assert out[4] == "operator 2 'e' SUB: not checked: refused by sqdiff tflite's check: TANH"
    assert out[5:] == ["other operators: ADD x 2",
                       "the model's 2 outputs with the checked tensors kept: identical to an unmodified run",
                       "verify: 2 operators checked, 1 not checked, all identical"]
    fake.error = 1
    assert _verify.main([str(model_file), "--random", "1"]) == 3
    out = capsys.readouterr().out.splitlines()
    assert out[3].startswith("operator 1 'out' SQUARED_DIFFERENCE: f32 [2,2]: DIFFERS: 1 of 4 elements, worst 1 ulps "
                             "at [1,0]: runtime ")
    assert out[-1] == "verify: 2 operators checked, 1 not checked, 1 differs"
    np.save(tmp_path / "x.npy", np.ones((2, 2), np.float32))
    assert _verify.main([str(model_file), "--input", "x=%s" % (tmp_path / "x.npy"), "--json"]) == 3
    report = json.loads(capsys.readouterr().out)
    assert report["inputs"][0]["source"] == "given" and report["passed"] is False
    # Errors: one line, status 1.
    assert _verify.main([str(model_file)]) == 1
    assert capsys.readouterr().err == ("sqdiff.verify: error: input 'x' needs data: pass it in inputs "
                                       "(--input x=FILE.npy), or a random_seed (--random SEED)\n")
    assert _verify.main([str(model_file), "--input", "x=%s" % (tmp_path / "none.npy")]) == 1
    assert "--input x=" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: model"),
    (["m.tflite", "--random", "x"], "not an integer"),
    (["m.tflite", "--random", "-1"], "not in 0 to 2**64 - 1"),
    (["m.tflite", "--input", "x"], "--input x: not NAME=FILE.npy"),
    (["m.tflite", "--input", "x=a.npy", "--input", "x=b.npy"], "--input x: given twice"),
    (["m.tflite", "--runtime", "tvm"], "invalid choice: 'tvm'"),
    (["m.tflite", "--resolver", "fast"], "invalid choice: 'fast'"),
    (["m.xml", "--resolver", "reference"], "--resolver is for --runtime litert"),
    (["m.tflite", "--device", "GPU"], "--device and --property are for --runtime openvino"),
    (["m.xml", "--property", "HINT"], "--property HINT: not KEY=VALUE"),
])
def test_usage_errors_exit_2(args, message, capsys):
    with pytest.raises(SystemExit) as exit:
        _verify.main(args)
    assert exit.value.code == 2
    assert message in capsys.readouterr().err


def test_python_m_sqdiff_verify():
    done = run_module("--help")
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m sqdiff.verify"), done.stderr
    assert run_module().returncode == 2
    assert done.stderr == ""  # no runpy warning: the package does not import sqdiff.verify itself


def test_the_module_imported_stays_callable(model_file, monkeypatch):
    import importlib
    monkeypatch.setattr(sqdiff, "verify", sqdiff.verify)  # importing the module rebinds it: restored after
    monkeypatch.delitem(sys.modules, "sqdiff.verify", raising=False)
    module = importlib.import_module("sqdiff.verify")
    assert module.main is _verify.main
    with pytest.raises(sqdiff.Error, match="runtime='tvm'"):
        module(model_file, runtime="tvm")
