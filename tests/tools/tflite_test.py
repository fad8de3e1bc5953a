#!/usr/bin/python3
"""`sqdiff tflite MODEL.tflite` (tools/tflite/): .tflite models written here, from JSON, by
Debian's `flatc -b` with the project's schema (tools/tflite/tflite_subset.fbs, whose field slots
are LiteRT's). Quantized results are checked bit for bit against the integer oracle of
quant_run_test.py (SPEC 9 in Python ints, independent of the library) and a few values worked
by hand; float32 and int32 against NumPy; then the output directory, and every refusal.

Run by CTest as `/usr/bin/python3 tflite_test.py -v CLASS` with SQDIFF_BIN and SQDIFF_TEST_TMP
set, as cli_test.py is; FLATC names flatc (default: the one on PATH).
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import unittest

import numpy as np

from cli_test import SQDIFF, CliTestCase, assert_bit_exact, help_examples, run
from quant_run_test import TYPES, Refused, quant_oracle, random_params, random_values

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMA = os.path.join(REPO, "tools", "tflite", "tflite_subset.fbs")
FLATC = os.environ.get("FLATC") or shutil.which("flatc") or "flatc"

TFLITE_TYPE = {"f32": "FLOAT32", "i32": "INT32", "u8": "UINT8", "i16": "INT16", "i8": "INT8", "i64": "INT64",
               "f16": "FLOAT16"}
NUMPY = {"f32": np.float32, "i32": np.int32, "u8": np.uint8, "i16": np.int16, "i8": np.int8, "i64": np.int64,
         "f16": np.float16}
SUB, SQUARED_DIFFERENCE, ADD, CUSTOM = 41, 99, 0, 32
MUL, MAXIMUM, MINIMUM, SQUARE = 18, 55, 57, 92
ACTIVATIONS = {"none": "NONE", "relu": "RELU", "relu_n1_to_1": "RELU_N1_TO_1", "relu6": "RELU6"}


def tensor(name, shape, dtype, quant=None, data=None, **extra):
    """One tensor of a model: quant (scale, zero point) or a dict of QuantizationParameters
    fields; data, a NumPy array, makes it a constant."""
    t = {"name": name, "shape": list(shape), "type": TFLITE_TYPE.get(dtype, dtype)}
    if quant is not None:
        t["quantization"] = quant if isinstance(quant, dict) else {"scale": [float(np.float32(quant[0]))],
                                                                   "zero_point": [int(quant[1])]}
    if data is not None:
        t["data"] = np.ascontiguousarray(data, dtype=NUMPY[dtype])
    t.update(extra)
    return t


def op(code, inputs, outputs, activation=None, pot=None, custom=None, options=None):
    o = {"code": code, "inputs": inputs, "outputs": outputs, "custom": custom}
    if code == SUB and (activation is not None or pot is not None):
        o["options"] = ("SubOptions", {**({"fused_activation_function": ACTIVATIONS[activation]} if activation else {}),
                                       **({"pot_scale_int16": pot} if pot is not None else {})})
    if code == SQUARED_DIFFERENCE:
        o["options"] = ("SquaredDifferenceOptions", {})
    if code == MUL and activation is not None:
        o["options"] = ("MulOptions", {"fused_activation_function": ACTIVATIONS[activation]})
    if options is not None:
        o["options"] = options
    return o


def model_json(tensors, operators, inputs, outputs, buffers=None):
    """The JSON flatc turns into a .tflite file."""
    codes, code_index = [], {}
    for o in operators:
        key = (o["code"], o["custom"])
        if key not in code_index:
            code_index[key] = len(codes)
            entry = {"deprecated_builtin_code": min(o["code"], 127), "builtin_code": o["code"]}
            if o["custom"] is not None:
                entry["custom_code"] = o["custom"]
            codes.append(entry)
    all_buffers = [{}] + list(buffers or [])
    json_tensors = []
    for t in tensors:
        t = dict(t)
        data = t.pop("data", None)
        if data is not None:
            t["buffer"] = len(all_buffers)
            all_buffers.append({"data": list(data.tobytes())})
        json_tensors.append(t)
    json_ops = []
    for o in operators:
        j = {"opcode_index": code_index[(o["code"], o["custom"])], "inputs": o["inputs"], "outputs": o["outputs"]}
        if "options" in o:
            j["builtin_options_type"], j["builtin_options"] = o["options"]
        json_ops.append(j)
    return {"version": 3, "operator_codes": codes,
            "subgraphs": [{"tensors": json_tensors, "inputs": inputs, "outputs": outputs, "operators": json_ops,
                           "name": "main"}],
            "buffers": all_buffers}


def write_model(directory, name, model):
    """Writes DIRECTORY/NAME.tflite from the JSON `model` with flatc; returns its path."""
    source = os.path.join(directory, name + ".json")
    with open(source, "w") as f:
        json.dump(model, f)
    subprocess.run([FLATC, "-b", "-o", directory, SCHEMA, source], check=True)
    return os.path.join(directory, name + ".tflite")


def binary_model(dtype, op_code, a_shape, b_shape, quants=None, activation=None, pot=None, b_data=None):
    """a (input) OP b (input, or a constant when b_data is given) -> out."""
    qa, qb, qo = quants or (None, None, None)
    out_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    tensors = [tensor("a", a_shape, dtype, qa), tensor("b", b_shape, dtype, qb, b_data),
               tensor("out", out_shape, dtype, qo)]
    inputs = [0] if b_data is not None else [0, 1]
    return model_json(tensors, [op(op_code, [0, 1], [2], activation, pot)], inputs, [2])


class TfliteTestCase(CliTestCase):
    def model(self, name, model):
        return write_model(self.dir, name, model)

    def run_ok(self, *args):
        proc = run(["tflite"] + list(args))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        return proc

    def run_fails(self, *args, status=1):
        proc = run(["tflite"] + list(args))
        self.assertEqual(proc.returncode, status, proc.stdout + proc.stderr)
        return proc.stderr

    def read(self, path):
        with open(path, "rb") as f:
            return f.read()

    def run_model(self, path, inputs, out_dir="out"):
        """Runs the model on {name: array}; returns {output file name: array}."""
        args = [path]
        for name, array in inputs.items():
            args += ["--input", "%s=%s" % (name, self.save(name + ".npy", array))]
        out = self.path(out_dir)
        self.run_ok(*args, "-o", out)
        return {f: np.load(os.path.join(out, f)) for f in os.listdir(out) if f.endswith(".npy")}


class TfliteRunTest(TfliteTestCase):
    """Results, element by element."""

    def test_hand_computed_int8(self):
        # docs/quantized.md's numbers: a = 0.5 q, b = 0.25 (q - 10), out steps of 0.125.
        a = np.array([[2, 4, 6], [8, 10, 12]], np.int8)
        b = np.array([14, 18, 22], np.int8)
        quants = ((0.5, 0), (0.25, 10), (0.125, -128))
        path = self.model("sqd", binary_model("i8", SQUARED_DIFFERENCE, [2, 3], [3], quants))
        got = self.run_model(path, {"a": a, "b": b})["out.npy"]
        self.assertEqual(got.dtype, np.int8)
        self.assertEqual(got.tolist(), [[-128, -128, -128], [-56, -56, -56]])  # (a - b)^2 = 0 and 9
        # a - b with b a constant and relu: 0 and 3 / 0.125 = 24; b - a would be clamped at 0.
        path = self.model("sub", binary_model("i8", SUB, [2, 3], [3], ((0.5, 0), (0.25, 10), (0.125, 0)),
                                              activation="relu", b_data=b))
        self.assertEqual(self.run_model(path, {"a": a}, "out2")["out.npy"].tolist(), [[0, 0, 0], [24, 24, 24]])

    def test_quantized_random_parameters(self):
        rng = np.random.default_rng(12)
        shapes = [([2, 3, 4], [4]), ([5, 1], [1, 6]), ([3], [2, 1, 3]), ([1, 2, 1, 2, 1, 2], [2, 1, 2, 1, 2, 1])]
        ran = 0
        for dtype in ("i8", "u8", "i16"):
            for op_name, code in (("subtract", SUB), ("squared_difference", SQUARED_DIFFERENCE)):
                for case in range(6):
                    a_shape, b_shape = shapes[case % len(shapes)]
                    quants = [random_params(rng, dtype) for _ in range(3)]
                    activation = ["none", "relu", "relu6", "relu_n1_to_1"][case % 4] if code == SUB else "none"
                    try:
                        expected_f = quant_oracle(op_name, np.zeros(1, TYPES[dtype][0]), np.zeros(1, TYPES[dtype][0]),
                                                  dtype, *quants, activation=activation)
                    except Refused:
                        continue
                    del expected_f
                    a = random_values(rng, dtype, a_shape)
                    b = random_values(rng, dtype, b_shape)
                    with self.subTest(dtype=dtype, op=op_name, case=case, quants=quants, activation=activation):
                        name = "%s_%s_%d" % (dtype, op_name, case)
                        path = self.model(name, binary_model(dtype, code, a_shape, b_shape, quants,
                                                             activation=activation if code == SUB else None))
                        got = self.run_model(path, {"a": a, "b": b}, name)["out.npy"]
                        expected = quant_oracle(op_name, a, b, dtype, *quants, activation=activation)
                        assert_bit_exact(self, got, expected, dtype)
                        ran += 1
        self.assertGreater(ran, 25)

    def test_int16_power_of_two_path(self):
        # Scales 2^-3, 2^-4 -> 2^-3: Sub16 shifts b right by 1 (rounding half away); with
        # pot_scale_int16 false the general path runs, whose result differs on some elements.
        a = np.array([100, -7, 32767, -32768, 3, 5], np.int16)
        b = np.array([3, -3, 1, 1, -32768, 32767], np.int16)
        quants = ((0.125, 0), (0.0625, 0), (0.125, 0))
        got = {}
        for pot in (True, False):
            path = self.model("pot_%s" % pot, binary_model("i16", SUB, [6], [6], quants, pot=pot))
            got[pot] = self.run_model(path, {"a": a, "b": b}, "out_%s" % pot)["out.npy"]
            assert_bit_exact(self, got[pot], quant_oracle("subtract", a, b, "i16", *quants, pot=pot), "i16")
        # RDBPOT(3, 1) = 2, RDBPOT(-3, 1) = -2, RDBPOT(-32768, 1) = -16384, RDBPOT(32767, 1) = 16384.
        self.assertEqual(got[True].tolist(), [98, -5, 32766, -32768, 16387, -16379])  # -32769 saturates

    def test_int16_sub_without_options_takes_the_general_path(self):
        # LiteRT zeroes a SUB's parameters and fills them from SubOptions only when the table is
        # there: without it pot_scale_int16 is false (the schema's default of true is a table's).
        a = np.array([1, 0, 3, -1, 5, 100, -7], np.int16)
        b = np.array([2, 2, 2, 2, 6, 2, -2], np.int16)
        quants = ((2.0 ** -8, 0), (2.0 ** -10, 0), (2.0 ** -8, 0))
        model = binary_model("i16", SUB, [7], [7], quants)
        self.assertNotIn("builtin_options_type", model["subgraphs"][0]["operators"][0])
        got = self.run_model(self.model("no_options", model), {"a": a, "b": b})["out.npy"]
        self.assertEqual(got.tolist(), [1, -1, 3, -2, 4, 100, -7])  # LiteRT's reference kernels' values
        assert_bit_exact(self, got, quant_oracle("subtract", a, b, "i16", *quants, pot=False), "i16")
        # The table without the field: the power-of-two path, which differs here.
        table = binary_model("i16", SUB, [7], [7], quants, activation="none")
        got_pot = self.run_model(self.model("table", table), {"a": a, "b": b}, "out_table")["out.npy"]
        assert_bit_exact(self, got_pot, quant_oracle("subtract", a, b, "i16", *quants, pot=True), "i16")
        self.assertEqual(got_pot.tolist(), [0, -1, 2, -2, 3, 99, -6])

    def test_float32_sub_clamps_to_the_finite_range(self):
        # TFLite's float SUB clamps to the activation's range, [lowest, max] for NONE: an overflow
        # or an infinite input gives +-FLT_MAX (reference kernels, TFLite-Micro); NaN stays NaN.
        big = np.finfo(np.float32).max
        a = np.array([big, -big, np.inf, 1, -np.inf, np.nan, np.inf, 2.5], np.float32)
        b = np.array([-big, big, 0, -np.inf, 3, 0, np.inf, 0.5], np.float32)
        for activation, expected in ((None, [big, -big, big, big, -big, None, None, 2.0]),
                                     ("none", [big, -big, big, big, -big, None, None, 2.0]),
                                     ("relu", [big, 0, big, big, 0, None, None, 2.0]),
                                     ("relu6", [6, 0, 6, 6, 0, None, None, 2.0])):
            with self.subTest(activation=activation):
                name = "clamp_%s" % activation
                path = self.model(name, binary_model("f32", SUB, [8], [8], activation=activation))
                got = self.run_model(path, {"a": a, "b": b}, name)["out.npy"]
                for value, want in zip(got.tolist(), expected):
                    if want is None:
                        self.assertTrue(np.isnan(value))  # inf - inf and NaN inputs
                    else:
                        self.assertEqual(value, float(np.float32(want)))
        # SQUARED_DIFFERENCE has no activation: its overflow stays inf, as in TFLite.
        path = self.model("sqd", binary_model("f32", SQUARED_DIFFERENCE, [2], [2]))
        got = self.run_model(path, {"a": np.array([big, 1], np.float32), "b": np.array([0, 1], np.float32)}, "sqd")
        self.assertEqual(got["out.npy"].tolist(), [np.inf, 0.0])

    def test_input_listed_twice_is_one_tensor(self):
        # Subgraph inputs [a, b, a]: a is one tensor, drawn once, saved once, used by the operator.
        tensors = [tensor("a", [4], "i8", (0.5, 0)), tensor("b", [4], "i8", (0.5, 0)),
                   tensor("out", [4], "i8", (1.0, 0))]
        path = self.model("twice", model_json(tensors, [op(SUB, [0, 1], [2])], [0, 1, 0], [2, 2]))
        proc = self.run_ok(path, "--random", "3", "-o", self.path("o"))
        lines = proc.stdout.splitlines()
        self.assertEqual(sum(line.startswith('input tensor 0 "a"') for line in lines), 1, proc.stdout)
        self.assertEqual(sum(line.startswith('output tensor 2 "out"') for line in lines), 1, proc.stdout)
        self.assertEqual(sorted(os.listdir(self.path("o/inputs"))), ["a.npy", "b.npy"])
        self.assertEqual(sorted(f for f in os.listdir(self.path("o")) if f.endswith(".npy")), ["out.npy"])
        a, b = np.load(self.path("o/inputs/a.npy")), np.load(self.path("o/inputs/b.npy"))
        expected = quant_oracle("subtract", a, b, "i8", (0.5, 0), (0.5, 0), (1.0, 0))
        assert_bit_exact(self, np.load(self.path("o/out.npy")), expected, "i8")
        # The saved draw is the one used: running on it gives the same output.
        again = self.run_model(path, {"a": a, "b": b}, "again")["out.npy"]
        assert_bit_exact(self, again, expected, "i8")

    def test_mul_maximum_minimum_square_against_numpy(self):
        # The kinds the converter lowers rank-5/6 squared differences and int32 relu to, computed as
        # LiteRT's reference kernels do: MUL in the type (int32 wraps) then the activation's clamp
        # (NONE: a float's finite range), MAXIMUM/MINIMUM as `a > b ? a : b` / `a < b ? a : b` on
        # the stored values (so a NaN in b wins and one in a loses), SQUARE as x * x.
        rng = np.random.default_rng(21)
        big = np.finfo(np.float32).max
        specials = np.array([np.nan, 1.0, -np.inf, np.inf, 0.0, -0.0, big, 2.0], np.float32)
        a32 = np.concatenate([specials, rng.standard_normal(24).astype(np.float32) * 4]).reshape(2, 1, 16)
        b32 = np.concatenate([specials[::-1], rng.standard_normal(8).astype(np.float32) * 4]).reshape(1, 16)
        ai = rng.integers(-2**31, 2**31, (2, 1, 16), dtype=np.int64).astype(np.int32)
        bi = rng.integers(-2**31, 2**31, (3, 16), dtype=np.int64).astype(np.int32)
        for dtype, a, b in (("f32", a32, b32), ("i32", ai, bi)):
            out_shape = list(np.broadcast_shapes(a.shape, b.shape))
            for activation, lo, hi in ((None, None, None), ("relu", 0, None), ("relu6", 0, 6)):
                with self.subTest(op="MUL", dtype=dtype, activation=activation):
                    name = "mul_%s_%s" % (dtype, activation)
                    model = model_json([tensor("a", a.shape, dtype), tensor("b", b.shape, dtype),
                                        tensor("out", out_shape, dtype)], [op(MUL, [0, 1], [2], activation)],
                                       [0, 1], [2])
                    got = self.run_model(self.model(name, model), {"a": a, "b": b}, name)["out.npy"]
                    with np.errstate(all="ignore"):
                        product = (a.astype(np.int64) * b).astype(np.int32) if dtype == "i32" else a * b
                    # std::min(std::max(x, lo), hi): a NaN and -0 (not below 0) are kept.
                    lo_, hi_ = (-big, big) if dtype == "f32" else (None, None)
                    lo_ = lo if lo is not None else lo_
                    hi_ = hi if hi is not None else hi_
                    expected = product
                    with np.errstate(invalid="ignore"):
                        if lo_ is not None:
                            expected = np.where(expected < lo_, NUMPY[dtype](lo_), expected)
                        if hi_ is not None:
                            expected = np.where(NUMPY[dtype](hi_) < expected, NUMPY[dtype](hi_), expected)
                    assert_bit_exact(self, got, expected.astype(NUMPY[dtype]), dtype)
            for code, name, pick in ((MAXIMUM, "max", np.greater), (MINIMUM, "min", np.less)):
                with self.subTest(op=name, dtype=dtype):
                    model = model_json([tensor("a", a.shape, dtype), tensor("b", b.shape, dtype),
                                        tensor("out", out_shape, dtype)], [op(code, [0, 1], [2])], [0, 1], [2])
                    got = self.run_model(self.model(name + dtype, model), {"a": a, "b": b}, name + dtype)["out.npy"]
                    x, y = np.broadcast_arrays(a, b)
                    with np.errstate(invalid="ignore"):
                        assert_bit_exact(self, got, np.where(pick(x, y), x, y), dtype)
        # MAXIMUM on int8 and float16 compares the stored values (no requantization).
        for dtype in ("i8", "f16"):
            x = (rng.integers(-128, 128, 64).astype(np.int8) if dtype == "i8"
                 else rng.standard_normal(64).astype(np.float16))
            y = x[::-1].copy()
            quant = (0.5, 3) if dtype == "i8" else None
            model = model_json([tensor("a", [64], dtype, quant), tensor("b", [64], dtype, (0.25, -7) if quant else None),
                                tensor("out", [64], dtype, (1.0, 0) if quant else None)],
                               [op(MAXIMUM, [0, 1], [2])], [0, 1], [2])
            got = self.run_model(self.model("max_" + dtype, model), {"a": x, "b": y}, "max_" + dtype)["out.npy"]
            self.assertEqual(got.tobytes(), np.where(x > y, x, y).tobytes())
        # SQUARE: x * x rounded once, inf past the range, NaN kept.
        x = np.concatenate([specials, np.float32([1e20, -3e-23, 1.5])]).astype(np.float32)
        model = model_json([tensor("x", [11], "f32"), tensor("out", [11], "f32")], [op(SQUARE, [0], [1])], [0], [1])
        got = self.run_model(self.model("square", model), {"x": x}, "square")["out.npy"]
        with np.errstate(over="ignore"):
            assert_bit_exact(self, got, x * x, "f32")

    def test_float32_and_int32(self):
        rng = np.random.default_rng(3)
        a32 = rng.standard_normal((3, 4)).astype(np.float32) * 5
        b32 = rng.standard_normal((4,)).astype(np.float32) * 5
        ai = rng.integers(-2**31, 2**31 - 1, (3, 4), dtype=np.int32, endpoint=True)
        bi = rng.integers(-2**31, 2**31 - 1, (4,), dtype=np.int32, endpoint=True)
        for dtype, a, b in (("f32", a32, b32), ("i32", ai, bi)):
            with np.errstate(all="ignore"):
                d = (a.astype(np.int64) - b).astype(np.int32) if dtype == "i32" else a - b
                sq = (d.astype(np.int64) * d).astype(np.int32) if dtype == "i32" else d * d
            path = self.model("sqd_" + dtype, binary_model(dtype, SQUARED_DIFFERENCE, [3, 4], [4]))
            assert_bit_exact(self, self.run_model(path, {"a": a, "b": b}, "sqd_" + dtype)["out.npy"], sq, dtype)
            for activation, lo, hi in (("none", None, None), ("relu", 0, None), ("relu6", 0, 6),
                                       ("relu_n1_to_1", -1, 1)):
                with self.subTest(dtype=dtype, activation=activation):
                    path = self.model("sub_%s_%s" % (dtype, activation),
                                      binary_model(dtype, SUB, [3, 4], [4], activation=activation))
                    got = self.run_model(path, {"a": a, "b": b}, "sub_%s_%s" % (dtype, activation))["out.npy"]
                    assert_bit_exact(self, got, np.clip(d, lo, hi) if lo is not None else d, dtype)

    def test_float32_relu_values_by_hand(self):
        path = self.model("relu6", binary_model("f32", SUB, [5], [5], activation="relu6"))
        a = np.array([1.5, 10, -3, 7, np.nan], np.float32)
        b = np.array([0.25, 1, 0, 0.5, 0], np.float32)
        got = self.run_model(path, {"a": a, "b": b})["out.npy"]
        self.assertEqual(got[:4].tolist(), [1.25, 6.0, 0.0, 6.0])
        self.assertTrue(np.isnan(got[4]))  # TFLite's min(max(x, 0), 6) keeps a NaN

    def test_chain_with_constant(self):
        # d = (x - c)^2 with c a constant, then out = d - y: two operators, an intermediate tensor.
        c = np.array([1, -2, 3], np.int8)
        q = (0.5, 0)
        tensors = [tensor("x", [2, 3], "i8", q), tensor("c", [3], "i8", q, c), tensor("d", [2, 3], "i8", (1.0, -128)),
                   tensor("y", [1], "i8", (1.0, 0)), tensor("out", [2, 3], "i8", (0.5, 3))]
        # Stored out of order: the SUB first, the SQUARED_DIFFERENCE it needs second.
        ops = [op(SUB, [2, 3], [4], "relu"), op(SQUARED_DIFFERENCE, [0, 1], [2])]
        path = self.model("chain", model_json(tensors, ops, [0, 3], [4, 2]))
        x = np.array([[3, 5, -7], [127, -128, 0]], np.int8)
        y = np.array([-4], np.int8)
        files = self.run_model(path, {"x": x, "y": y})
        d = quant_oracle("squared_difference", x, c, "i8", q, q, (1.0, -128))
        out = quant_oracle("subtract", d, y, "i8", (1.0, -128), (1.0, 0), (0.5, 3), activation="relu")
        assert_bit_exact(self, files["d.npy"], d, "i8")
        assert_bit_exact(self, files["out.npy"], out, "i8")
        self.assertEqual(files["d.npy"].tolist()[0], [-127, -116, -103])  # (1, 12.25, 25) steps of 1 above -128

    def test_external_buffer(self):
        # A large model's constant outside the flatbuffer: Buffer.offset and size.
        b = np.array([1.5, -2.0, 0.25], np.float32)
        tensors = [tensor("a", [3], "f32"), tensor("b", [3], "f32", buffer=1), tensor("out", [3], "f32")]

        def build(offset):
            return model_json(tensors, [op(SUB, [0, 1], [2])], [0], [2], buffers=[{"offset": offset, "size": 12}])
        length = os.path.getsize(self.model("ext", build(2)))
        offset = (length + 15) // 16 * 16
        path = self.model("ext", build(offset))
        self.assertEqual(os.path.getsize(path), length)  # the offset is a fixed-size field
        with open(path, "ab") as f:
            f.write(b"\0" * (offset - length) + b.tobytes())
        a = np.array([1, 2, 3], np.float32)
        self.assertEqual(self.run_model(path, {"a": a})["out.npy"].tolist(), [-0.5, 4.0, 2.75])

    def test_model_over_2_gib_with_external_buffers(self):
        # What TensorFlow's converter writes past 2 GiB: the flatbuffer first, then the large
        # buffers at Buffer.offset from the file's start. A 2 GiB constant no operator uses sits
        # before the one the SUB reads (at an offset beyond 2^31); the file is sparse, and the file
        # is mapped, not read, so the run's peak memory is about the tensors it uses.
        big_offset, big_bytes = 4096, (1 << 31) + (1 << 20)
        c_offset = big_offset + big_bytes
        c = np.array([1.5, -2.0, 0.25, 8.0], np.float32)
        tensors = [tensor("a", [4], "f32"), tensor("big", [2, big_bytes // 2], "i8", buffer=1),
                   tensor("c", [4], "f32", buffer=2), tensor("out", [4], "f32")]
        model = model_json(tensors, [op(SUB, [0, 2], [3])], [0], [3],
                           buffers=[{"offset": big_offset, "size": big_bytes}, {"offset": c_offset, "size": 16}])
        path = self.model("large", model)
        self.assertLess(os.path.getsize(path), big_offset)
        with open(path, "r+b") as f:
            f.seek(c_offset)
            f.write(c.tobytes())
        self.assertGreater(os.path.getsize(path), 1 << 31)
        a = self.save("a.npy", np.array([1, 2, 3, 4], np.float32))
        measure = ("import resource, subprocess, sys\n"
                   "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
                   "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
                   "sys.stderr.write(done.stderr)\n")
        proc = subprocess.run(["/usr/bin/python3", "-c", measure, SQDIFF, "tflite", path, "--input", "a=" + a,
                               "-o", self.path("large_out")], capture_output=True, text=True, timeout=600)
        status, peak_kib = map(int, proc.stdout.split())
        self.assertEqual(status, 0, proc.stderr)
        self.assertEqual(np.load(self.path("large_out/out.npy")).tolist(), [-0.5, 4.0, 2.75, -4.0])
        self.assertLess(peak_kib, 64 * 1024, "the 2 GiB constant no operator reads must not be read")

    def test_random_inputs_are_deterministic_and_cover_the_range(self):
        path = self.model("r", binary_model("i8", SUB, [64, 64], [64, 64], ((0.5, 0), (0.5, 0), (1.0, 0))))
        self.run_ok(path, "--random", "5", "-o", self.path("r1"))
        self.run_ok(path, "--random", "5", "-o", self.path("r2"), "--threads", "2")
        a1 = np.load(self.path("r1/inputs/a.npy"))
        self.assertTrue((a1 == np.load(self.path("r2/inputs/a.npy"))).all())
        self.assertTrue((np.load(self.path("r1/out.npy")) == np.load(self.path("r2/out.npy"))).all())
        self.assertFalse((a1 == np.load(self.path("r1/inputs/b.npy"))).all())
        self.assertEqual((a1.min(), a1.max()), (-128, 127))  # uniform over the whole type
        expected = quant_oracle("subtract", a1, np.load(self.path("r1/inputs/b.npy")), "i8",
                                (0.5, 0), (0.5, 0), (1.0, 0))
        assert_bit_exact(self, np.load(self.path("r1/out.npy")), expected, "i8")
        path = self.model("f", binary_model("f32", SQUARED_DIFFERENCE, [4096], [1]))
        self.run_ok(path, "--random", "1", "-o", self.path("f"))
        x = np.load(self.path("f/inputs/a.npy")).astype(np.float64)
        self.assertLess(abs(x.mean()), 0.1)  # a standard normal
        self.assertLess(abs(x.std() - 1), 0.1)

    def test_check_only_prints_each_operator(self):
        path = self.model("m", binary_model("i8", SUB, [2, 3], [3], ((0.5, 0), (0.25, 10), (0.125, 0)), "relu"))
        proc = self.run_ok(path)
        self.assertEqual(proc.stdout.splitlines()[1:], [
            "operator 0 SUB: INT8 [2,3] (scale 0.5, zero point 0) - INT8 [3] (scale 0.25, zero point 10) -> "
            "INT8 [2,3] (scale 0.125, zero point 0), activation RELU: ok",
            "check: 1 operator ok"])
        self.assertFalse(os.path.exists(self.path("out")))


class TfliteOutputTest(TfliteTestCase):
    """-o DIR: the layout, staging, file names."""

    def test_layout_and_names(self):
        tensors = [tensor("in/put", [2], "f32"), tensor("..", [2], "f32"), tensor("", [2], "f32"),
                   tensor("x:0", [2], "f32")]
        ops = [op(SUB, [0, 1], [2]), op(SQUARED_DIFFERENCE, [0, 1], [3])]
        path = self.model("names", model_json(tensors, ops, [0, 1], [2, 3]))
        out = self.path("o")
        self.run_ok(path, "--random", "2", "-o", out)
        self.assertEqual(sorted(os.listdir(out)), [".sqdiff-output", "inputs", "result.npy", "x_0.npy"])
        self.assertEqual(sorted(os.listdir(os.path.join(out, "inputs"))), ["_...npy", "in_put.npy"])
        self.assertEqual(os.listdir(self.dir).count("o"), 1)
        a = np.load(os.path.join(out, "inputs", "in_put.npy"))
        b = np.load(os.path.join(out, "inputs", "_...npy"))
        assert_bit_exact(self, np.load(os.path.join(out, "result.npy")), a - b, "f32")

    def test_failed_run_leaves_nothing(self):
        path = self.model("m", binary_model("i8", SUB, [3], [3], ((0.5, 0), (0.5, 0), (1.0, 0))))
        out = self.path("o")
        before = sorted(os.listdir(self.dir))
        # The second input has the wrong dtype: the run fails after the directory was staged.
        err = self.run_fails(path, "--input", "a=" + self.save("a.npy", np.zeros(3, np.int8)),
                             "--input", "b=" + self.save("b.npy", np.zeros(3, np.int16)), "-o", out)
        self.assertIn('input tensor 1 "b":', err)
        self.assertIn("holds i16 but the tensor is INT8 (i8)", err)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(before + ["a.npy", "b.npy"]))
        # An earlier set stays as it was.
        self.run_ok(path, "--random", "1", "-o", out)
        first = self.read(os.path.join(out, "out.npy"))
        self.run_fails(path, "--input", "a=" + self.path("a.npy"), "--input", "b=" + self.path("b.npy"), "-o", out)
        self.assertEqual(self.read(os.path.join(out, "out.npy")), first)
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(before + ["a.npy", "b.npy", "o"]))

    def test_summary_without_output_directory(self):
        path = self.model("m", binary_model("f32", SUB, [2], [2]))
        proc = self.run_ok(path, "--input", "a=" + self.save("a.npy", np.array([3, 4], np.float32)),
                           "--input", "b=" + self.save("b.npy", np.array([1, 8], np.float32)))
        self.assertEqual(proc.stdout.splitlines()[-3:], [
            'input tensor 0 "a": %s, f32 [2]: 3 4' % self.path("a.npy"),
            'input tensor 1 "b": %s, f32 [2]: 1 8' % self.path("b.npy"),
            'output tensor 2 "out": f32 [2]: 2 -4'])


class TfliteErrorTest(TfliteTestCase):
    """Every refusal: a message, exit status 1 (2 for command-line mistakes), nothing written."""

    def good_model(self):
        return self.model("good", binary_model("i8", SUB, [3], [3], ((0.5, 0), (0.5, 0), (1.0, 0))))

    def check_refused(self, model, *expected, args=()):
        path = self.model("bad", model) if isinstance(model, dict) else model
        err = self.run_fails(path, *args, "--random", "1", "-o", self.path("o"))
        for text in expected:
            self.assertIn(text, err)
        self.assertFalse(os.path.exists(self.path("o")))
        self.assertNotIn("Traceback", err)
        return err

    def test_file_damage(self):
        data = self.read(self.good_model())
        cases = {
            "truncated": (data[: len(data) // 2], "the FlatBuffers verifier rejected it"),
            "identifier": (data[:4] + b"TFL2" + data[8:], 'does not carry the identifier "TFL3"'),
            "tiny": (data[:6], "the file has 6 bytes"),
            "root offset": (b"\xff\xff\xff\x7f" + data[4:], "the FlatBuffers verifier rejected it"),
            "empty": (b"", "the file has 0 bytes"),
        }
        # Every 4-byte word of the file set to a large offset: refused or run, never a crash.
        for i in range(8, len(data) - 4, 4):
            cases["word %d" % i] = (data[:i] + b"\xf0\xff\xff\x7f" + data[i + 4:], None)
        for name, (content, expected) in cases.items():
            with self.subTest(name):
                path = self.path(name.replace(" ", "_") + ".tflite")
                with open(path, "wb") as f:
                    f.write(content)
                proc = subprocess.run([SQDIFF, "tflite", path, "--random", "1"], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, timeout=600)
                proc.stderr = proc.stderr.decode("utf-8", "replace")  # names in a damaged file are any bytes
                self.assertIn(proc.returncode, (0, 1) if expected is None else (1,), proc.stderr)
                self.assertNotIn("Sanitizer", proc.stderr)
                if expected is not None:
                    self.assertIn(expected, proc.stderr)
                    self.assertRegex(proc.stderr, r"^sqdiff: error: .*%s" % re.escape(path))

    def test_unsupported_operators_are_named(self):
        tensors = [tensor("a", [2], "f32"), tensor("b", [2], "f32"), tensor("s", [2], "f32"),
                   tensor("c", [2], "f32"), tensor("out", [2], "f32")]
        ops = [op(ADD, [0, 1], [2]), op(SUB, [2, 1], [3]), op(CUSTOM, [3], [4], custom="MyNorm")]
        path = self.model("m", model_json(tensors, ops, [0, 1], [4]))
        # The check alone lists them by kind, and fails: the model cannot run.
        proc = run(["tflite", path])
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stdout.splitlines()[1:], [
            "operator 1 SUB: FLOAT32 [2] - FLOAT32 [2] -> FLOAT32 [2], activation NONE: ok",
            "not run by sqdiff tflite: ADD x 1 (operator 0)",
            'not run by sqdiff tflite: CUSTOM "MyNorm" x 1 (operator 2)',
            "check: 1 operator ok, 2 that sqdiff tflite cannot run"])
        summary = ('m.tflite: cannot run 2 operators of 2 kinds (ADD x 1, CUSTOM "MyNorm" x 1); sqdiff tflite '
                   "runs ")
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertIn(summary, proc.stderr)
        err = self.check_refused(path, summary)
        self.assertEqual(len(err.splitlines()), 1)

    def test_every_builtin_operator_is_named_and_kinds_are_grouped(self):
        # Ten CONV_2D-coded operators (shapes do not matter: they are not run), one of a code the
        # schema does not have, and RESHAPE: one line per kind, at most 8 indices each.
        n = 12
        tensors = [tensor("t%d" % i, [2], "f32") for i in range(n + 1)]
        codes = [3] * 10 + [250, 22]
        ops = [op(code, [i], [i + 1]) for i, code in enumerate(codes)]
        path = self.model("conv", model_json(tensors, ops, [0], [n]))
        proc = run(["tflite", path])
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(proc.stdout.splitlines()[1:], [
            "not run by sqdiff tflite: CONV_2D x 10 (operators 0, 1, 2, 3, 4, 5, 6, 7 and 2 more)",
            "not run by sqdiff tflite: builtin operator 250 x 1 (operator 10)",
            "not run by sqdiff tflite: RESHAPE x 1 (operator 11)",
            "check: 0 operators ok, 12 that sqdiff tflite cannot run"])
        self.assertIn("cannot run 12 operators of 3 kinds (CONV_2D x 10, builtin operator 250 x 1, RESHAPE x 1)",
                      proc.stderr)

    def test_names_from_the_file_cannot_forge_lines(self):
        # Tensor names, custom codes and paths come from outside: every line the program writes
        # holds them escaped (path_text.hpp's one_line_text), so a newline cannot start a forged
        # "sqdiff: error:" line and an escape sequence never reaches the terminal.
        forged = "a\nsqdiff: error: forged"
        tensors = [tensor(forged, [2], "f32"), tensor("b\x1b[31m", [2], "f32"), tensor("c", [2], "f32"),
                   tensor("out\r", [2], "f32")]
        ops = [op(SUB, [0, 1], [2]), op(CUSTOM, [2], [3], custom="My\nOp\x1b]0;title\x07")]
        directory = self.path("dir\nsqdiff: error: x")
        os.mkdir(directory)
        path = write_model(directory, "m", model_json(tensors, ops, [0, 1], [3]))
        check = run(["tflite", path])
        refused = run(["tflite", path, "--random", "1"])
        sub_only = write_model(directory, "sub", model_json(tensors[:3], ops[:1], [0, 1], [2]))
        missing = run(["tflite", sub_only, "--input", forged + "=" + os.path.join(directory, "none.npy")])
        for proc in (check, refused, missing):
            for stream in (proc.stdout, proc.stderr):
                self.assertNotIn("\x1b", stream)
                self.assertNotIn("\x07", stream)
                self.assertNotIn("\r", stream)
            for line in proc.stderr.splitlines():
                self.assertTrue(line.startswith("sqdiff: error: "), line)
        self.assertEqual(len(refused.stderr.splitlines()), 1, refused.stderr)
        self.assertEqual(len(missing.stderr.splitlines()), 1, missing.stderr)
        self.assertEqual(refused.returncode, 1)
        self.assertIn('not run by sqdiff tflite: CUSTOM "My\\nOp\\x1b]0;title\\x07" x 1 (operator 1)', check.stdout)
        self.assertIn("dir\\nsqdiff: error: x/m.tflite: TFLite schema version 3", check.stdout)
        self.assertIn('(CUSTOM "My\\nOp\\x1b]0;title\\x07" x 1)', refused.stderr)
        self.assertIn("dir\\nsqdiff: error: x/none.npy", missing.stderr)
        self.assertEqual(len(check.stdout.splitlines()), 4, check.stdout)  # the header, 2 operators, the summary
        self.assertEqual(len(check.stderr.splitlines()), 1, check.stderr)  # the custom operator refuses the model

    def test_operator_checks(self):
        q = (0.5, 0)
        per_axis = {"scale": [0.5, 0.25, 0.125], "zero_point": [0, 0, 0], "quantized_dimension": 0}
        cases = {
            "per-axis": (model_json([tensor("a", [3], "i8", per_axis), tensor("b", [3], "i8", q),
                                     tensor("out", [3], "i8", q)], [op(SUB, [0, 1], [2])], [0, 1], [2]),
                         'operator 0 (SUB): tensor 0 "a" is quantized per axis (3 scales along dim 0)'),
            "no quantization": (binary_model("u8", SUB, [3], [3], (q, None, q)),
                                'tensor 1 "b" is UINT8 without quantization parameters'),
            "types differ": (model_json([tensor("a", [3], "f32"), tensor("b", [3], "i32"), tensor("out", [3], "f32")],
                                        [op(SUB, [0, 1], [2])], [0, 1], [2]),
                             "its tensors' types differ (FLOAT32, INT32 -> FLOAT32)"),
            "int64": (binary_model("i64", SUB, [3], [3]), "type INT64 is not one sqdiff tflite runs"),
            "float16": (model_json([tensor("a", [3], "f16"), tensor("b", [3], "f16"), tensor("out", [3], "f16")],
                                   [op(SUB, [0, 1], [2])], [0, 1], [2]), "type FLOAT16 is not one"),
            "broadcast": (model_json([tensor("a", [3], "f32"), tensor("b", [4], "f32"), tensor("out", [4], "f32")],
                                     [op(SUB, [0, 1], [2])], [0, 1], [2]), "[3] and [4] do not broadcast"),
            "output shape": (model_json([tensor("a", [2, 3], "f32"), tensor("b", [3], "f32"),
                                         tensor("out", [3], "f32")], [op(SUB, [0, 1], [2])], [0, 1], [2]),
                             'broadcast to [2,3], but the output tensor "out" has shape [3]'),
            "tanh": (model_json([tensor("a", [3], "f32"), tensor("b", [3], "f32"), tensor("out", [3], "f32")],
                                [op(SUB, [0, 1], [2], options=("SubOptions", {"fused_activation_function": "TANH"}))],
                                [0, 1], [2]), "fused activation TANH is not one sqdiff runs"),
            "output scale": (binary_model("i8", SUB, [3], [3], (q, q, (1e-7, 0))),
                             "the output multiplier 2 max(scale_a, scale_b) / (2^20 scale_out) is 1 or more"),
            "zero point": (binary_model("i8", SUB, [3], [3], (q, (0.5, 300), q)), "zero point"),
            "int16 zero point": (binary_model("i16", SQUARED_DIFFERENCE, [3], [3], (q, (0.5, 2), q)), "zero point"),
            "inputs": (model_json([tensor("a", [3], "f32"), tensor("out", [3], "f32")], [op(SUB, [0], [1])], [0],
                                  [1]), "has 1 inputs and 1 outputs, expected 2 and 1"),
            "optional": (model_json([tensor("a", [3], "f32"), tensor("out", [3], "f32")], [op(SUB, [0, -1], [1])],
                                    [0], [1]), "an operand is left out"),
        }
        for name, (model, expected) in cases.items():
            with self.subTest(name):
                err = self.check_refused(model, expected, "check failed")
                self.assertIn("operator 0 (", err)

    def test_model_structure(self):
        f = "f32"
        cases = {
            "buffer index": (model_json([tensor("a", [3], f), tensor("b", [3], f, buffer=7), tensor("o", [3], f)],
                                        [op(SUB, [0, 1], [2])], [0], [2]),
                             'tensor 1 "b": buffer index 7 is out of range (the model has 1 buffers)'),
            "buffer size": (model_json([tensor("a", [3], f), tensor("b", [3], f, data=np.zeros(2)),
                                        tensor("o", [3], f)], [op(SUB, [0, 1], [2])], [0], [2]),
                            'tensor 1 "b": buffer 1 holds 8 bytes, but FLOAT32 [3] needs 12'),
            "negative dim": (binary_model(f, SUB, [3], [3]) | {}, None),
            "tensor index": (model_json([tensor("a", [3], f), tensor("o", [3], f)], [op(SUB, [0, 5], [1])], [0], [1]),
                             "operator 0: input tensor index 5 is out of range (2 tensors)"),
            "opcode": (None, "opcode index 3 is out of range"),
            "external": (model_json([tensor("a", [3], f), tensor("b", [3], f, buffer=1), tensor("o", [3], f)],
                                    [op(SUB, [0, 1], [2])], [0], [2], buffers=[{"offset": 4096, "size": 12}]),
                         "buffer 1's external data (12 bytes at offset 4096) lies outside the file"),
            "no value": (model_json([tensor("a", [3], f), tensor("b", [3], f), tensor("o", [3], f)],
                                    [op(SUB, [0, 1], [2])], [0], [2]), 'reads tensor 1 "b", which has no value'),
            "cycle": (model_json([tensor("a", [3], f), tensor("x", [3], f), tensor("y", [3], f)],
                                 [op(SUB, [0, 2], [1]), op(SUB, [0, 1], [2])], [0], [2]),
                      "the operators form a cycle: operator 0 (SUB), operator 1 (SUB) wait on each other"),
            "written twice": (model_json([tensor("a", [3], f), tensor("x", [3], f)],
                                         [op(SUB, [0, 0], [1]), op(SUB, [0, 0], [1])], [0], [1]),
                              'operator 1 (SUB): writes tensor 1 "x", which operator 0 (SUB) writes too'),
            "rank": (binary_model(f, SUB, [1] * 9, [1]), "rank 9 is more than sqdiff runs (8)"),
            "no subgraph": ({"version": 3, "subgraphs": [], "buffers": [{}]}, "the model has no subgraph"),
        }
        cases["negative dim"][0]["subgraphs"][0]["tensors"][1]["shape"] = [-3]
        cases["negative dim"] = (cases["negative dim"][0], 'tensor 1 "b": dim -3 is negative')
        m = binary_model(f, SUB, [3], [3])
        m["subgraphs"][0]["operators"][0]["opcode_index"] = 3
        cases["opcode"] = (m, "operator 0: opcode index 3 is out of range (the model has 1 operator codes)")
        for name, (model, expected) in cases.items():
            with self.subTest(name):
                self.check_refused(model, expected)

    def test_sparse_constant(self):
        """A constant with `sparsity` holds only its stored values (mediapipe's
        face_detection_full_range_sparse.tflite: FLOAT16 [8,1,1,32] in 154 bytes): read as such,
        not refused for its size; its values are not read."""
        f = "f32"
        stored = np.array([1.5, -2.0], np.float32)  # 8 bytes for a [4] constant
        w = tensor("w", [4], f, data=stored, sparsity={})
        densify = model_json([tensor("a", [4], f), w, tensor("wd", [4], f), tensor("o", [4], f)],
                             [op(124, [1], [2]), op(SUB, [0, 2], [3])], [0], [3])
        proc = run(["tflite", self.model("densify", densify)])
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("operator 1 SUB: FLOAT32 [4] - FLOAT32 [4] -> FLOAT32 [4], activation NONE: ok", proc.stdout)
        self.assertIn("not run by sqdiff tflite: DENSIFY x 1 (operator 0)", proc.stdout)
        self.assertNotIn("bytes", proc.stderr)
        # An operator sqdiff runs that reads the sparse constant itself: refused when it runs.
        direct = model_json([tensor("a", [4], f), w, tensor("o", [4], f)], [op(SUB, [0, 1], [2])], [0], [2])
        path = self.model("direct", direct)
        self.assertIn("check: 1 operator ok", run(["tflite", path]).stdout)
        self.check_refused(path, 'tensor 1 "w" is a sparse constant (LiteRT\'s DENSIFY expands it), which sqdiff '
                                 "tflite does not read")

    def test_inputs(self):
        path = self.good_model()
        a = self.save("a.npy", np.zeros(3, np.int8))
        cases = [
            (["--input", "a=" + a], 'input tensor 1 "b": needs data: pass --input b=FILE.npy, or --random SEED'),
            (["--input", "a=" + self.save("s.npy", np.zeros(4, np.int8)), "--input", "b=" + a],
             'input tensor 0 "a": %s has shape [4] but the tensor has [3]' % self.path("s.npy")),
            (["--input", "a=" + self.save("f.npy", np.zeros(3, np.float32)), "--input", "b=" + a],
             "holds f32 but the tensor is INT8 (i8)"),
            (["--input", "c=" + a], '--input c=%s: the model has no input tensor called "c" (its inputs: "a", "b")' % a),
            (["--input", "a=" + a, "--input", "a=" + a, "--random", "1"], "--input a=...: given twice"),
            (["--input", "a=" + self.path("missing.npy"), "--input", "b=" + a], "missing.npy"),
        ]
        for args, expected in cases:
            with self.subTest(args):
                err = self.run_fails(path, *args, "-o", self.path("o"))
                self.assertIn(expected, err)
                self.assertFalse(os.path.exists(self.path("o")))
        self.assertIn("NAME=FILE.npy", self.run_fails(path, "--input", "a", status=2))
        self.assertIn("tflite", self.run_fails(status=2))


class TfliteDocsTest(TfliteTestCase):
    """docs/tflite.md's console blocks, run in order in a scratch directory, print what the page
    shows (`flatc` lines make the models from examples/tflite/)."""

    def test_page_runs_as_written(self):
        text = self.read(os.path.join(REPO, "docs", "tflite.md")).decode()
        os.symlink(os.path.join(REPO, "examples"), self.path("examples"))
        os.symlink(os.path.join(REPO, "tools"), self.path("tools"))
        count, status = 0, None
        for block in re.findall(r"```console\n(.*?)```", text, re.S):
            command, expected = None, []
            for line in block.splitlines() + ["$ end"]:
                if not line.startswith("$ "):
                    if line:
                        expected.append(line)
                    continue
                if command is not None:
                    with self.subTest(command):
                        if command == "echo $?":
                            self.assertEqual(expected, [str(status)])
                        else:
                            args = shlex.split(command)
                            if args[0] == "build/tools/sqdiff":
                                args[0] = os.environ.get("SQDIFF_BIN", "sqdiff")
                            elif args[0] == "flatc":
                                args[0] = FLATC
                            proc = subprocess.run(args, cwd=self.dir, stdout=subprocess.PIPE,
                                                  stderr=subprocess.PIPE, text=True, timeout=600)
                            status = proc.returncode
                            self.assertEqual(proc.stdout.splitlines() + proc.stderr.splitlines(), expected)
                            count += 1
                command, expected = line[2:], []
        self.assertGreaterEqual(count, 5)

    def test_help_examples_run(self):
        os.symlink(os.path.join(REPO, "examples"), self.path("examples"))
        os.symlink(os.path.join(REPO, "tools"), self.path("tools"))
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(SQDIFF)), os.path.dirname(FLATC),
                                       env.get("PATH", "")])
        examples = help_examples(run(["tflite", "--help"]).stdout)
        self.assertEqual(len(examples), 4)
        for command, _ in examples:
            with self.subTest(command):
                proc = subprocess.run(["bash", "-c", command], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, timeout=120)
                self.assertEqual(proc.returncode, 0, command + ": " + proc.stderr)
        self.assertEqual(np.load(self.path("tflite-out2/out.npy")).tolist(),
                         np.load(self.path("tflite-out/out.npy")).tolist())


if __name__ == "__main__":
    unittest.main()
