"""`sqdiff tflite` and LiteRT on the same .tflite files (issue 25, item 4).

    sqdiff tflite MODEL.tflite --input a=a.npy --input b=b.npy -o DIR   writes DIR/<output name>.npy

Quantized single-op models of every set of peers/quantized_models.py, a chain (SUB then
SQUARED_DIFFERENCE through an intermediate tensor) and a model with an ADD, which sqdiff cannot
run: the program's outputs must be LiteRT's reference kernels' bit for bit (TFLite-Micro's for
int16 SQUARED_DIFFERENCE, which LiteRT lacks), what sqdiff's Python API gives where LiteRT aborts,
and where sqdiff refuses a model, a non-zero exit that writes nothing. MEAN models of every type
sqdiff runs, and reduce_mean(squared_difference(a, b)) chains: LiteRT's reference kernels' output
bit for bit (float32 in LiteRT's order of additions, not the exact mean). The program is the one
of the build whose Python module is imported (BUILD/tools/sqdiff), or $SQDIFF_CLI.

Run by scripts/compatibility.sh --check, in the venv of requirements/peers.txt.
"""

import os
import pathlib
import subprocess
import sys

import flatbuffers
import numpy as np
import pytest
import sqdiff
from ai_edge_litert import schema_py_generated as schema

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "peers"))

import litert_quantized_peer as peer  # noqa: E402
import quantized_models  # noqa: E402
import quantized_tflite as qt  # noqa: E402

MODELS_PER_SET = 12


def cli():
    if os.environ.get("SQDIFF_CLI"):
        return os.environ["SQDIFF_CLI"]
    return str(pathlib.Path(sqdiff.__file__).resolve().parents[2] / "tools" / "sqdiff")


def sqdiff_tflite(work, model, inputs):
    """Writes the model and its inputs into work, runs `sqdiff tflite`; (exit code, output, text)."""
    path = work / "model.tflite"
    path.write_bytes(model)
    args = [cli(), "tflite", str(path)]
    for name, array in inputs.items():
        np.save(work / f"{name}.npy", array)
        args += ["--input", f"{name}={work / (name + '.npy')}"]
    out_dir = work / "out"
    done = subprocess.run(args + ["-o", str(out_dir)], capture_output=True, text=True, timeout=120)
    return done.returncode, out_dir, done.stdout + done.stderr


def _cases(sets):
    rng = np.random.default_rng(quantized_models.SEED + 1)
    out = []
    for op, dtype, pot, _ in sets:
        for config in quantized_models.configs(rng, op, dtype, MODELS_PER_SET, pot_scale_int16=pot):
            out.append((config, *quantized_models.inputs(rng, config)))
    return out


LITERT_CASES = _cases(peer.LITERT_SETS)
TFLM_CASES = _cases([s for s in peer.TFLM_SETS if s[:2] == ("squared_difference", "i16")])


def _check_against(runtime, cases, tmp_path):
    theirs = peer.run_isolated(runtime, [(peer.model_of(c), a, b) for c, a, b in cases])
    compared = 0
    for i, ((config, a, b), result) in enumerate(zip(cases, theirs)):
        work = tmp_path / str(i)
        work.mkdir()
        code, out_dir, text = sqdiff_tflite(work, peer.model_of(config), {"a": a, "b": b})
        kind, ours = peer.sqdiff_run(config, a, b)
        if kind == "refused":  # the Python API refuses: so must the program, writing nothing
            assert code != 0, (config.describe(), text)
            assert not (out_dir / "out.npy").exists(), config.describe()
            continue
        assert code == 0, (config.describe(), text)
        got = np.load(out_dir / "out.npy")
        assert got.dtype == ours.dtype and got.shape == ours.shape, config.describe()
        np.testing.assert_array_equal(got, ours, err_msg=config.describe())
        if result[0] == "ran":  # where the runtime runs at all (it aborts past SPEC 9's bound)
            theirs = np.asarray(result[1])
            # TFLite-Micro's int32 product overflows and wraps where SPEC 9 saturates (the type's maximum).
            wrapped = peer.int32_overflow(config, a, b) & (got != theirs)
            assert (got[wrapped] == np.iinfo(got.dtype).max).all(), config.describe()
            np.testing.assert_array_equal(np.where(wrapped, got, theirs), got, err_msg=config.describe())
            compared += 1
    return compared


def test_single_op_models_match_litert_reference_kernels(tmp_path):
    assert _check_against("litert-reference", LITERT_CASES, tmp_path) > len(LITERT_CASES) // 2


def test_int16_squared_difference_matches_tflite_micro(tmp_path):
    assert _check_against("tflite-micro", TFLM_CASES, tmp_path) > len(TFLM_CASES) // 2


def _chain_model():
    """t = SUB(a, b) with relu, out = SQUARED_DIFFERENCE(t, c): int8, b and c broadcast."""
    tensors = [qt.Tensor("a", (2, 3, 4), "i8", (0.05, -3)), qt.Tensor("b", (4,), "i8", (0.02, 10)),
               qt.Tensor("t", (2, 3, 4), "i8", (0.04, 0)), qt.Tensor("c", (3, 1), "i8", (0.03, 5)),
               qt.Tensor("out", (2, 3, 4), "i8", (0.01, -100))]
    operators = [qt.Operator("subtract", ("a", "b"), "t", activation="relu"),
                 qt.Operator("squared_difference", ("t", "c"), "out")]
    return qt.model(tensors, operators, ["a", "b", "c"], ["out"], "sqdiff peers: chain")


def _litert_reference(model, inputs):
    from ai_edge_litert import interpreter as litert
    runner = litert.Interpreter(model_content=model, num_threads=1,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    runner.allocate_tensors()
    for detail in runner.get_input_details():
        runner.set_tensor(detail["index"], inputs[detail["name"]])
    runner.invoke()
    return {d["name"]: runner.get_tensor(d["index"]).copy() for d in runner.get_output_details()}


def test_a_chain_through_an_intermediate_tensor_matches_litert(tmp_path):
    rng = np.random.default_rng(7)
    inputs = {"a": rng.integers(-128, 128, (2, 3, 4)).astype(np.int8),
              "b": rng.integers(-128, 128, (4,)).astype(np.int8),
              "c": rng.integers(-128, 128, (3, 1)).astype(np.int8)}
    model = _chain_model()
    expected = _litert_reference(model, inputs)["out"]
    assert len(np.unique(expected)) > 5  # not saturated throughout: the chain is exercised
    code, out_dir, text = sqdiff_tflite(tmp_path, model, inputs)
    assert code == 0, text
    assert sorted(p.name for p in out_dir.glob("*.npy")) == ["out.npy"]  # the model's output only
    got = np.load(out_dir / "out.npy")
    assert got.dtype == np.int8 and got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("position", ["first", "second"])
def test_a_model_with_an_add_is_refused_naming_it(tmp_path, position):
    """ADD is not an operator sqdiff runs: the program says so, exits non-zero, writes nothing."""
    shape, quant = (2, 3), (0.1, 0)
    tensors = [qt.Tensor(name, shape, "i8", quant) for name in ("a", "b", "t", "out")]
    add = qt.Operator("add", ("a", "b"), "t")
    sub = qt.Operator("subtract", ("a", "b"), "t")
    second = (qt.Operator("add", ("t", "b"), "out") if position == "second"
              else qt.Operator("squared_difference", ("t", "b"), "out"))
    model = qt.model(tensors, [sub if position == "second" else add, second], ["a", "b"], ["out"])
    inputs = {"a": np.arange(6, dtype=np.int8).reshape(shape), "b": np.ones(shape, dtype=np.int8)}
    assert "out" in _litert_reference(model, inputs)  # a valid model: LiteRT runs it
    code, out_dir, text = sqdiff_tflite(tmp_path, model, inputs)
    assert code != 0
    assert "ADD" in text, text
    assert not (out_dir / "out.npy").exists()


def _model_over_2_gib(path):
    """Writes (sparsely) what TensorFlow's converter writes past 2 GiB: the flatbuffer, then the
    buffers at Buffer.offset from the file's start; a 2 GiB INT8 constant no operator reads, then
    the FLOAT32 constant c of out = SUB(a, c) at an offset beyond 2^31. Returns c."""
    big_offset, big_bytes = 4096, (1 << 31) + (1 << 20)
    c_offset = big_offset + big_bytes
    c = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
    tensors = []
    for name, shape, dtype, buffer in (("a", [4], schema.TensorType.FLOAT32, 0),
                                       ("big", [2, big_bytes // 2], schema.TensorType.INT8, 1),
                                       ("c", [4], schema.TensorType.FLOAT32, 2),
                                       ("out", [4], schema.TensorType.FLOAT32, 0)):
        t = schema.TensorT()
        t.name, t.shape, t.type, t.buffer = name, shape, dtype, buffer
        tensors.append(t)
    sub = schema.OperatorT()
    sub.opcodeIndex, sub.inputs, sub.outputs = 0, [0, 2], [3]
    sub.builtinOptionsType = schema.BuiltinOptions.SubOptions
    sub.builtinOptions = schema.SubOptionsT()
    subgraph = schema.SubGraphT()
    subgraph.tensors, subgraph.inputs, subgraph.outputs, subgraph.operators = tensors, [0], [3], [sub]
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.SUB
    code.version = 1
    buffers = [schema.BufferT()]
    for offset, size in ((big_offset, big_bytes), (c_offset, c.nbytes)):
        b = schema.BufferT()
        b.offset, b.size = offset, size
        buffers.append(b)
    tflite = schema.ModelT()
    tflite.version, tflite.operatorCodes, tflite.subgraphs, tflite.buffers = 3, [code], [subgraph], buffers
    builder = flatbuffers.Builder(1024)
    builder.Finish(tflite.Pack(builder), file_identifier=b"TFL3")
    flatbuffer = bytes(builder.Output())
    assert len(flatbuffer) < big_offset
    with open(path, "wb") as f:
        f.write(flatbuffer)
        f.seek(c_offset)  # the hole stays unallocated: a sparse file
        f.write(c.tobytes())
    return c


def test_a_model_over_2_gib_runs_as_in_litert(tmp_path):
    """Issue 31 item 6: the file is mapped and its external buffers read where the run needs them."""
    from ai_edge_litert import interpreter as litert
    path = tmp_path / "large.tflite"
    c = _model_over_2_gib(path)
    assert path.stat().st_size > (1 << 31)
    a = np.array([1, 2, 3, 4], np.float32)
    runner = litert.Interpreter(model_path=str(path), num_threads=1,
                                experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    runner.allocate_tensors()
    runner.set_tensor(runner.get_input_details()[0]["index"], a)
    runner.invoke()
    expected = runner.get_tensor(runner.get_output_details()[0]["index"]).copy()
    np.testing.assert_array_equal(expected, a - c)  # LiteRT read c past 2 GiB too
    np.save(tmp_path / "a.npy", a)
    done = subprocess.run([cli(), "tflite", str(path), "--input", f"a={tmp_path / 'a.npy'}", "-o",
                           str(tmp_path / "out")], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "out.npy"), expected)


# --- QUANTIZE and DEQUANTIZE (issue 32): random models, LiteRT's BUILTIN_REF against sqdiff tflite ---

RANGES = {"i8": (-128, 127), "u8": (0, 255), "i16": (-32768, 32767), "i32": (-2**31, 2**31 - 1)}
REQUANTIZE_PAIRS = [("i8", "i8"), ("i8", "u8"), ("i8", "i16"), ("u8", "i8"), ("u8", "u8"), ("u8", "i16"),
                    ("i16", "i8"), ("i16", "i16"), ("i16", "i32"), ("i32", "i8"), ("i32", "i16")]
OPS_PER_MODEL = 16


def _scale(rng):
    """A float32 scale, log-uniform over 1e-6..1e3; now and then a special one that LiteRT runs
    all the same (0, negative, subnormal, huge, NaN, inf)."""
    if rng.random() < 0.08:
        return float(np.float32(rng.choice([0.0, -0.3, 1e-45, 2e-39, 1e30, np.nan, np.inf])))
    return float(np.float32(10.0 ** rng.uniform(-6, 3)))


def _zero_point(rng, dtype, symmetric=False):
    if symmetric:
        return 0
    low, high = RANGES[dtype]
    pick = rng.random()
    if pick < 0.25:
        return int(rng.choice([low, high]))
    if pick < 0.3:  # outside the type, even at int32's ends: LiteRT takes any int32
        return int(rng.choice([low - 1000, high + 1000, -2**31, 2**31 - 1])) if dtype != "i32" else int(
            rng.choice([-2**31, 2**31 - 1]))
    return int(rng.integers(low, high, endpoint=True))


def _float_inputs(rng, scale, zero_point, dtype, count):
    """Specials, quotients on and a hair off the rounding ties, values at the clamps, random ones."""
    low, high = RANGES[dtype]
    s = float(np.float32(scale)) if np.isfinite(scale) and scale > 0 else 1.0
    big = float(np.finfo(np.float32).max)
    values = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -3e-45, big, -big, 2.0**31, -2.0**31]
    with np.errstate(all="ignore"):
        for k in rng.integers(low - zero_point - 2, high - zero_point + 3, 8):
            tie = np.float32((float(k) + 0.5) * s)
            values += [tie, np.nextafter(tie, np.float32(np.inf)), np.nextafter(tie, np.float32(-np.inf))]
        values += list(np.float32(2.0**31 * s) * np.float32([1, -1]))
        values += list(((rng.standard_normal(count) * (high - low) * 0.6 + (low + high) / 2 - zero_point)
                        * s).astype(np.float32))
    return np.array(values, np.float32)


def _int_inputs(rng, dtype, count):
    low, high = RANGES[dtype]
    if high - low < 256:
        return np.arange(low, high + 1).astype(qt.NUMPY[dtype])
    values = [low, high, 0, -1, 1] + list(rng.integers(low, high, count, endpoint=True))
    values += list(rng.integers(-200, 200, count // 4))
    return np.array(values, np.int64).astype(qt.NUMPY[dtype])


def _quantize_cases():
    """(model bytes, inputs, number of operators) for every type pair QUANTIZE and DEQUANTIZE run."""
    rng = np.random.default_rng(32)
    groups = []  # each a list of (input tensor, output tensor, input array or None for a constant)
    for dtype in ("i8", "u8", "i16"):  # float32 -> int
        for _ in range(4):
            group = []
            for _ in range(OPS_PER_MODEL):
                scale, zp = _scale(rng), _zero_point(rng, dtype)
                x = _float_inputs(rng, scale, zp, dtype, 64)
                group.append(("f32", None, x, dtype, (scale, zp)))
            groups.append(group)
    for din, dout in REQUANTIZE_PAIRS:
        for _ in range(2):
            group = []
            symmetric = (din, dout) == ("i16", "i16")
            for _ in range(OPS_PER_MODEL):
                scale_out = _scale(rng)
                pick = rng.random()
                if pick < 0.2:  # the same scale (int8 <-> uint8 with zero points 128 apart: the fast path)
                    scale_in = scale_out
                elif pick < 0.3:  # powers of two, shifts past 31
                    scale_in = float(np.float32(scale_out * 2.0 ** int(rng.integers(-40, 40))))
                else:
                    scale_in = _scale(rng)
                zin, zout = _zero_point(rng, din, symmetric), _zero_point(rng, dout, symmetric)
                if pick < 0.2 and {din, dout} == {"i8", "u8"} and rng.random() < 0.5:
                    zout = zin + 128 if din == "i8" else zin - 128
                group.append((din, (scale_in, zin), _int_inputs(rng, din, 128), dout, (scale_out, zout)))
            groups.append(group)
    for dtype in ("i8", "u8", "i16"):  # int -> float32
        for _ in range(2):
            group = [(dtype, (_scale(rng), _zero_point(rng, dtype, dtype == "i16")), _int_inputs(rng, dtype, 256),
                      "f32", None) for _ in range(OPS_PER_MODEL)]
            groups.append(group)
    halves = np.concatenate([np.arange(0, 65536, 7, dtype=np.uint16), np.uint16([0x7C01, 0xFE01, 0x7FFF, 0x0001])])
    groups.append([("f16", None, halves.view(np.float16), "f32", None)])

    cases = []
    for g, group in enumerate(groups):
        tensors, operators, inputs, arrays = [], [], [], {}
        for i, (din, qin, x, dout, qout) in enumerate(group):
            constant = din == "f16" and i % 2 == 0
            tensors.append(qt.Tensor(f"x{i}", x.shape, din, qin, x if constant else None))
            tensors.append(qt.Tensor(f"y{i}", x.shape, dout, qout))
            operators.append(qt.Operator("dequantize" if dout == "f32" else "quantize", (f"x{i}",), f"y{i}"))
            if not constant:
                inputs.append(f"x{i}")
                arrays[f"x{i}"] = x
        if group[0][0] == "f16":  # the same float16 values once more, as a model input
            x = group[0][2]
            tensors += [qt.Tensor("x1", x.shape, "f16"), qt.Tensor("y1", x.shape, "f32")]
            operators.append(qt.Operator("dequantize", ("x1",), "y1"))
            inputs.append("x1")
            arrays["x1"] = x
        model = qt.model(tensors, operators, inputs, [o.output for o in operators], f"sqdiff peers: quantize {g}")
        cases.append((model, arrays, len(operators)))
    return cases


QUANTIZE_CASES = _quantize_cases()


def test_quantize_and_dequantize_match_litert_reference_kernels(tmp_path):
    """Every element of every output bit for bit, NaN inputs included: LiteRT's results for them
    (and for the other inputs whose C++ is undefined) are its x86-64 build's, which sqdiff
    computes (docs/SPEC_DECISIONS.md)."""
    operators = elements = differing = 0
    for i, (model, arrays, count) in enumerate(QUANTIZE_CASES):
        expected = _litert_reference(model, arrays)
        work = tmp_path / str(i)
        work.mkdir()
        code, out_dir, text = sqdiff_tflite(work, model, arrays)
        assert code == 0, text
        for name, want in expected.items():
            got = np.load(out_dir / f"{name}.npy")
            assert got.dtype == want.dtype and got.shape == want.shape, name
            bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
            differing += int(np.count_nonzero(got.view(bits) != want.view(bits)))
            elements += want.size
        operators += count
    print(f"QUANTIZE/DEQUANTIZE: {len(QUANTIZE_CASES)} models, {operators} operators, {elements} elements, "
          f"{differing} differing")
    assert operators == 12 * OPS_PER_MODEL + 22 * OPS_PER_MODEL + 6 * OPS_PER_MODEL + 2
    assert elements > 100000
    assert differing == 0


def test_quantize_specials_in_litert_are_what_sqdiff_documents():
    """The measured x86-64 values that docs/SPEC_DECISIONS.md writes down, checked in LiteRT itself:
    NaN and out-of-range quotients give INT32_MIN before the zero point is added (wrapping)."""
    x = np.float32([np.nan, np.inf, -np.inf, 3e9, 2.5, -2.5])
    tensors = [qt.Tensor("x", (6,), "f32"), qt.Tensor("y", (6,), "i8", (1.0, 0)), qt.Tensor("z", (6,), "i8", (1.0, -1))]
    operators = [qt.Operator("quantize", ("x",), "y"), qt.Operator("quantize", ("x",), "z")]
    out = _litert_reference(qt.model(tensors, operators, ["x"], ["y", "z"]), {"x": x})
    assert out["y"].tolist() == [-128, -128, -128, -128, 3, -3]
    assert out["z"].tolist() == [127, 127, 127, 127, 2, -4]


# --- MEAN (issue 32 item 1): LiteRT's reference kernel, bit for bit ------------------------------

MEAN_MODELS = 360
MEAN_TYPES = ("f32", "f32", "i8", "u8", "i16", "i32", "i64")


def _mean_values(rng, dtype, shape):
    if dtype == "f32":
        # Magnitudes 1e-3..1e7 side by side: float32 sums whose order of additions matters;
        # now and then a NaN, an infinity or a -0.
        x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 8, shape)).astype(np.float32)
        if x.size and rng.integers(0, 8) == 0:
            x.reshape(-1)[rng.integers(0, x.size)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
        return x
    info = np.iinfo(qt.NUMPY[dtype])
    return rng.integers(info.min, info.max, shape, endpoint=True, dtype=qt.NUMPY[dtype])


def _mean_params(rng, dtype, case):
    """(q_in, q_out): equal a third of the time; now and then an output scale 2^33 or 2^40 below
    the input's, where LiteRT's left shift passes 32 (see mean_op.cpp)."""
    if dtype not in ("i8", "u8", "i16"):
        return None, None
    low, high = {"i8": (-128, 127), "u8": (0, 255), "i16": (0, 0)}[dtype]

    def params():
        return float(np.float32(10.0 ** rng.uniform(-4, 1))), int(rng.integers(low, high, endpoint=True))
    q_in = params()
    if case % 3 == 0:
        return q_in, q_in
    if case % 29 == 0:
        return q_in, (float(np.float32(q_in[0] * 2.0 ** -float(rng.choice([33, 40])))), q_in[1])
    return q_in, params()


def _mean_cases():
    rng = np.random.default_rng(40)
    cases = []
    for case in range(MEAN_MODELS):
        dtype = MEAN_TYPES[case % len(MEAN_TYPES)]
        rank = int(rng.integers(0, 7))
        shape = tuple(int(v) for v in rng.integers(0 if case % 40 == 0 else 1, 9 if rank <= 3 else 5, rank))
        if rank == 0:
            axes = [int(v) for v in rng.integers(-4, 4, int(rng.integers(1, 3)))]  # not read
        elif case % 5 == 0:
            axes = [d - rank if rng.integers(0, 2) else d for d in rng.permutation(rank).tolist()]  # all axes
        else:
            axes = [int(v) for v in rng.integers(-rank, rank, int(rng.integers(1, rank + 2)))]  # repeats too
        keep_dims = [None, False, True][case % 3]
        if case % 7 == 3:  # the 4-D axes (1, 2) keep_dims case, whose optimized kernels are special
            shape, axes, keep_dims = tuple(int(v) for v in rng.integers(1, 9, 4)), [[1, 2], [2, -3]][case % 2], True
        cases.append((dtype, shape, axes, keep_dims, *_mean_params(rng, dtype, case), _mean_values(rng, dtype, shape)))
    # Long sums: float32 rounding piling up, an int16 sum that wraps modulo 2^32.
    x = (rng.standard_normal((3, 50000)) + 1000).astype(np.float32)
    cases.append(("f32", x.shape, [1], False, None, None, x))
    x = np.full((2, 70000), 32767, np.int16)
    x[1] = rng.integers(-32768, 32768, 70000)
    cases.append(("i16", x.shape, [-1], True, (0.002, 0), (0.0015, 0), x))
    return cases


def _run_mean_cases(cases, tmp_path):
    models = elements = differing = summed = 0
    for i, (dtype, shape, axes, keep_dims, q_in, q_out, x) in enumerate(cases):
        model = qt.mean(dtype, shape, axes, keep_dims, q_in, q_out)
        expected = _litert_reference(model, {"x": x})["out"]
        work = tmp_path / str(i)
        work.mkdir()
        code, out_dir, text = sqdiff_tflite(work, model, {"x": x})
        what = f"{dtype} {shape} axes {axes} keep_dims {keep_dims} {q_in} -> {q_out}"
        assert code == 0, (what, text)
        got = np.load(out_dir / "out.npy")
        assert got.dtype == expected.dtype and got.shape == expected.shape, what
        models += 1
        summed += x.size
        elements += got.size
        differing += int(np.sum(got.reshape(-1).view(f"u{got.itemsize}") !=
                                expected.reshape(-1).view(f"u{expected.itemsize}")))
    return models, summed, elements, differing


def test_mean_models_match_litert_reference_kernels(tmp_path):
    models, summed, elements, differing = _run_mean_cases(_mean_cases(), tmp_path)
    print(f"MEAN: {models} models, {summed} input elements, {elements} output elements, {differing} differing "
          "from LiteRT's BUILTIN_REF")
    assert models == MEAN_MODELS + 2
    assert differing == 0


def test_a_float32_mean_of_2_25_ones_is_one_half_in_litert_and_sqdiff(tmp_path):
    """docs/tflite.md's example: the float32 sum stops at 2^24 (2^24 + 1 rounds to even, 2^24)."""
    x = np.ones(1 << 25, np.float32)
    model = qt.mean("f32", x.shape, [0], False)
    assert _litert_reference(model, {"x": x})["out"] == np.float32(0.5)
    code, out_dir, text = sqdiff_tflite(tmp_path, model, {"x": x})
    assert code == 0, text
    assert np.load(out_dir / "out.npy").tobytes() == np.float32(0.5).tobytes()


def test_mean_squared_error_chain_matches_litert(tmp_path):
    """reduce_mean(squared_difference(a, b)): float32 over all axes and int8 over the last one."""
    rng = np.random.default_rng(41)
    for dtype, quants, axes, keep_dims in (("f32", (None,) * 4, [0, 1], False),
                                           ("i8", ((0.05, -3), (0.04, 10), (0.02, -128), (0.01, -100)), [-1], True)):
        shape = (6, 100)
        d_shape = qt.mean_shape(shape, axes, keep_dims)
        tensors = [qt.Tensor("a", shape, dtype, quants[0]), qt.Tensor("b", (100,), dtype, quants[1]),
                   qt.Tensor("d", shape, dtype, quants[2]),
                   qt.Tensor("axis", (len(axes),), "i32", data=np.array(axes, np.int32).tobytes()),
                   qt.Tensor("loss", d_shape, dtype, quants[3])]
        operators = [qt.Operator("squared_difference", ("a", "b"), "d"),
                     qt.Operator("mean", ("d", "axis"), "loss", keep_dims=keep_dims)]
        model = qt.model(tensors, operators, ["a", "b"], ["loss"], "sqdiff peers: mean squared error")
        if dtype == "f32":
            inputs = {"a": rng.standard_normal(shape).astype(np.float32) * 3,
                      "b": rng.standard_normal((100,)).astype(np.float32) * 3}
        else:
            inputs = {"a": rng.integers(-128, 128, shape).astype(np.int8),
                      "b": rng.integers(-128, 128, (100,)).astype(np.int8)}
        expected = _litert_reference(model, inputs)["loss"]
        work = tmp_path / dtype
        work.mkdir()
        code, out_dir, text = sqdiff_tflite(work, model, inputs)
        assert code == 0, text
        got = np.load(out_dir / "loss.npy")
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes(), (got, expected)
        if dtype == "f32":  # LiteRT's float32 sum in its order, not the library's exactly rounded mean
            exact = sqdiff.mean_squared_difference(inputs["a"], inputs["b"])
            print(f"mean squared error: LiteRT and sqdiff tflite {got!r}, sqdiff.mean_squared_difference {exact!r}")


# --- RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1 as operators (issue 32: the converter's clip_by_value) --

RELU_KINDS = {"relu": ("f32", "i8", "u8", "i16"), "relu6": ("f32", "i8", "u8", "i16"),
              "relu_n1_to_1": ("f32", "i8", "u8"), "relu_0_to_1": ("f32", "i8", "u8")}


def _relu_cases():
    """(model, inputs, kind, dtype): per kind and type, models of 8 operators each on every stored
    value of an 8-bit type (int16 and float32: specials, values at and around the bounds, random
    ones), with random scales (a tenth of them equal in and out, powers of two apart, or far apart)
    and zero points at the type's ends half the time."""
    rng = np.random.default_rng(33)
    cases = []
    for kind, dtypes in RELU_KINDS.items():
        for dtype in dtypes:
            for model_index in range(3):
                tensors, operators, arrays = [], [], {}
                for i in range(8):
                    if dtype == "f32":
                        x = np.concatenate([np.float32([np.nan, -np.nan, -0.0, 0.0, -1.0, 1.0, 6.0, 6.000001,
                                                        -1.0000001, 0.99999994, np.inf, -np.inf, 1e-45]),
                                            (rng.standard_normal(64) * 5).astype(np.float32)])
                        qin = qout = None
                    else:
                        low, high = RANGES[dtype]
                        x = (np.arange(low, high + 1) if dtype != "i16" else
                             np.concatenate([[low, high, 0, 1, -1], rng.integers(low, high, 500, endpoint=True)]))
                        x = x.astype(qt.NUMPY[dtype])

                        def zp():
                            if dtype == "i16":
                                return 0
                            return int(rng.choice([low, high])) if rng.random() < 0.5 else int(
                                rng.integers(low, high, endpoint=True))
                        s_in = float(np.float32(10.0 ** rng.uniform(-3, 0)))
                        pick = rng.random()
                        s_out = (s_in if pick < 0.1 else float(np.float32(s_in * 2.0 ** int(rng.integers(-6, 7))))
                                 if pick < 0.3 else float(np.float32(10.0 ** rng.uniform(-3, 0))))
                        qin, qout = (s_in, zp()), (s_out, zp())
                    tensors += [qt.Tensor(f"x{i}", x.shape, dtype, qin), qt.Tensor(f"y{i}", x.shape, dtype, qout)]
                    operators.append(qt.Operator(kind, (f"x{i}",), f"y{i}"))
                    arrays[f"x{i}"] = x
                model = qt.model(tensors, operators, list(arrays), [o.output for o in operators],
                                 f"sqdiff peers: {kind} {dtype} {model_index}")
                cases.append((model, arrays, kind, dtype))
    return cases


def test_relu_kinds_match_litert_reference_kernels(tmp_path):
    elements = differing = 0
    for i, (model, arrays, kind, dtype) in enumerate(_relu_cases()):
        expected = _litert_reference(model, arrays)
        work = tmp_path / str(i)
        work.mkdir()
        code, out_dir, text = sqdiff_tflite(work, model, arrays)
        assert code == 0, (kind, dtype, text)
        for name, want in expected.items():
            got = np.load(out_dir / f"{name}.npy")
            bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[want.dtype.itemsize]
            wrong = int(np.count_nonzero(got.view(bits) != want.view(bits)))
            assert wrong == 0, (kind, dtype, name, got, want)
            elements += want.size
            differing += wrong
    print(f"RELU kinds: {elements} elements, {differing} differing from LiteRT's BUILTIN_REF")
    assert elements > 50000 and differing == 0
