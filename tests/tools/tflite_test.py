#!/usr/bin/python3
"""`sqdiff tflite MODEL.tflite` (tools/tflite/): .tflite models written here, from JSON, by
Debian's `flatc -b` with the project's schema (tools/tflite/tflite_subset.fbs, whose field slots
are LiteRT's). Quantized results are checked bit for bit against the integer oracle of
quant_run_test.py (SPEC 9 in Python ints, independent of the library) and a few values worked
by hand; float32 and int32 against NumPy; MEAN against the oracle below (LiteRT's reference
kernel's arithmetic: float32 sums in its order, quantized sums in Python ints); then the output
directory, and every refusal.

Run by CTest as `/usr/bin/python3 tflite_test.py -v CLASS` with SQDIFF_BIN and SQDIFF_TEST_TMP
set, as cli_test.py is; FLATC names flatc (default: the one on PATH).
"""

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import unittest
from fractions import Fraction

import numpy as np

from cli_test import SQDIFF, CliTestCase, assert_bit_exact, help_examples, run
from quant_run_test import (TYPES, Refused, quant_oracle, quantize_multiplier, random_params, random_values, rdbpot,
                            round_half_away, srdhm)

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMA = os.path.join(REPO, "tools", "tflite", "tflite_subset.fbs")
FLATC = os.environ.get("FLATC") or shutil.which("flatc") or "flatc"

TFLITE_TYPE = {"f32": "FLOAT32", "i32": "INT32", "u8": "UINT8", "i16": "INT16", "i8": "INT8", "i64": "INT64",
               "f16": "FLOAT16"}
NUMPY = {"f32": np.float32, "i32": np.int32, "u8": np.uint8, "i16": np.int16, "i8": np.int8, "i64": np.int64,
         "f16": np.float16}
SUB, SQUARED_DIFFERENCE, ADD, CUSTOM = 41, 99, 0, 32
MUL, MAXIMUM, MINIMUM, SQUARE, MEAN = 18, 55, 57, 92, 40
RELU, RELU_N1_TO_1, RELU6, RELU_0_TO_1 = 19, 20, 21, 152
QUANTIZE, DEQUANTIZE = 114, 6


def wrap32(x):
    """x modulo 2^32 as a two's complement int32: LiteRT's build wraps where its int32 arithmetic
    overflows (QUANTIZE, DEQUANTIZE and MEAN follow it there; SPEC 9's library ops do not)."""
    return (x + 2**31) % 2**32 - 2**31


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


def mean_model(dtype, shape, axes, keep_dims=None, quants=(None, None), out_shape=None, axis_dtype="i32",
               axis_input=False):
    """out = MEAN(x, axis): axis an INT32 constant (a model input with axis_input); keep_dims None
    leaves the ReducerOptions table out (LiteRT's zeroed parameters: keep_dims false)."""
    axes = np.array(axes, NUMPY[axis_dtype])
    if out_shape is None:
        out_shape = mean_shape(shape, axes.tolist(), bool(keep_dims))
    tensors = [tensor("x", shape, dtype, quants[0]),
               tensor("axis", axes.shape, axis_dtype, data=None if axis_input else axes),
               tensor("out", out_shape, dtype, quants[1])]
    options = None if keep_dims is None else ("ReducerOptions", {"keep_dims": keep_dims})
    return model_json(tensors, [op(MEAN, [0, 1], [2], options=options)], [0, 1] if axis_input else [0], [2])


# --- MEAN's oracle: LiteRT's reference kernel (reduce.cc EvalMean<kReference>, reference/reduce.h) ---

def resolve_axes(rank, axes):
    """ResolveAxis: negative axes from the end, each once, in first order; none for rank 0."""
    resolved = []
    for axis in axes if rank else []:
        axis = axis + rank if axis < 0 else axis
        assert 0 <= axis < rank
        if axis not in resolved:
            resolved.append(axis)
    return resolved


def mean_shape(shape, axes, keep_dims):
    resolved = resolve_axes(len(shape), axes)
    if keep_dims:
        return [1 if d in resolved else n for d, n in enumerate(shape)]
    return [n for d, n in enumerate(shape) if d not in resolved]


def mean_groups(x, axes):
    """(one row per output element, row-major; each row the reduced elements in the input's
    row-major order, the order LiteRT adds them in), n."""
    resolved = resolve_axes(x.ndim, axes)
    kept = [d for d in range(x.ndim) if d not in resolved]
    rows = int(np.prod([x.shape[d] for d in kept], dtype=np.int64))
    n = int(np.prod([x.shape[d] for d in resolved], dtype=np.int64))
    return np.transpose(x, kept + sorted(resolved)).reshape(rows, n), n


def mean_oracle(x, axes, keep_dims, dtype, quants=(None, None)):
    """What LiteRT's reference MEAN writes, computed element by element."""
    shape = mean_shape(x.shape, axes, keep_dims)
    if x.size == 0:  # InitializeMeanOutput: quiet_NaN<T>(), 0 for integer types
        return np.full(shape, np.nan if dtype == "f32" else 0, NUMPY[dtype])
    rows, n = mean_groups(x, axes)
    out = []
    if dtype == "f32":  # float32 additions from 0 in order, then a float32 division by float(n)
        with np.errstate(all="ignore"):
            for row in rows:
                total = np.float32(0)
                for v in row:
                    total = np.float32(total + v)
                out.append(np.float32(total / np.float32(n)))
    elif dtype in ("i32", "i64"):  # int64 sums (wrapping), C's truncating division, then the type
        for row in rows:
            total = (sum(int(v) for v in row) + 2**63) % 2**64 - 2**63
            quotient = abs(total) // n * (1 if total >= 0 else -1)
            out.append(wrap32(quotient) if dtype == "i32" else quotient)
    else:  # QuantizedMeanOrSum: int32 sums (wrapping), the multiplier with 1/n folded in
        (scale_in, zp_in), (scale_out, zp_out) = quants
        m, e = quantize_multiplier(float(np.float32(scale_in)) / float(np.float32(scale_out)), False)
        fold = min(n.bit_length() - 1, 32, 31 + e)
        m, e = (m << fold) // n, e - fold
        _, low, high = TYPES[dtype]
        for row in rows:
            shifted = wrap32(wrap32(sum(int(v) for v in row)) - zp_in * n)
            left, right = max(e, 0), max(-e, 0)
            # int32 x * (1 << left): wraps, and a shift of 32 or more counts modulo 32 (x86-64, AArch64)
            scaled = rdbpot(srdhm(wrap32(shifted << (left % 32)), m), right)
            out.append(min(max(wrap32(scaled + zp_out), low), high))
    return np.array(out, NUMPY[dtype]).reshape(shape)


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

    def test_relu_operators_against_an_oracle(self):
        # The activations as operators of their own (the converter's clip_by_value): float32
        # `x > hi ? hi : (x < lo ? lo : x)`, NaN and -0 kept; quantized, LiteRT's QuantizedReluX:
        # zp_out + MultiplyByQuantizedMultiplier(x - zp_in, QuantizeMultiplier(float32(s_in / s_out)))
        # clamped to the bounds zp_out + roundf(bound / s_out), within the type.
        bounds = {RELU: (0.0, math.inf), RELU_N1_TO_1: (-1.0, 1.0), RELU6: (0.0, 6.0), RELU_0_TO_1: (0.0, 1.0)}
        x = np.float32([np.nan, -0.0, 0.0, -1.5, -1.0, 0.5, 1.0, 1.0000001, 5.9999995, 6.0, 7.0, np.inf, -np.inf])
        for code, (lo, hi) in bounds.items():
            with self.subTest(code=code, dtype="f32"):
                model = model_json([tensor("x", [13], "f32"), tensor("y", [13], "f32")], [op(code, [0], [1])], [0], [1])
                got = self.run_model(self.model("relu%d" % code, model), {"x": x}, "relu%d" % code)["y.npy"]
                expected = [v if math.isnan(v) else hi if v > hi else lo if v < lo else v for v in x.tolist()]
                self.assertEqual(got.view(np.uint32)[1], 0x80000000)  # -0 stays -0
                self.assertTrue(np.isnan(got[0]))
                self.assertEqual(got[1:].tolist(), [float(np.float32(v)) for v in expected[1:]])
        rng = np.random.default_rng(19)
        for code, (lo, hi) in bounds.items():
            for dtype in ("i8", "u8", "i16") if code in (RELU, RELU6) else ("i8", "u8"):
                low, high = TYPES[dtype][1], TYPES[dtype][2]
                for case in range(4):
                    s_in = float(np.float32(10.0 ** rng.uniform(-3, 0)))
                    s_out = s_in if case == 0 else float(np.float32(10.0 ** rng.uniform(-3, 0)))
                    zp_in = 0 if dtype == "i16" else int(rng.integers(low, high, endpoint=True))
                    zp_out = 0 if dtype == "i16" else [low, high, int(rng.integers(low, high, endpoint=True))][case % 3]
                    values = (np.arange(low, high + 1) if dtype != "i16" else
                              rng.integers(low, high, 2000, endpoint=True)).astype(NUMPY[dtype])
                    name = "relu%d_%s_%d" % (code, dtype, case)
                    with self.subTest(name=name, s_in=s_in, s_out=s_out, zp_in=zp_in, zp_out=zp_out):
                        model = model_json([tensor("x", values.shape, dtype, (s_in, zp_in)),
                                            tensor("y", values.shape, dtype, (s_out, zp_out))],
                                           [op(code, [0], [1])], [0], [1])
                        got = self.run_model(self.model(name, model), {"x": values}, name)["y.npy"]
                        m, e = quantize_multiplier(float(np.float32(s_in) / np.float32(s_out)), False)
                        q_lo = max(low, zp_out + round_half_away(float(np.float32(lo) / np.float32(s_out))))
                        q_hi = high if math.isinf(hi) else min(
                            high, zp_out + round_half_away(float(np.float32(hi) / np.float32(s_out))))
                        left, right = max(e, 0), max(-e, 0)
                        expected = [min(q_hi, max(q_lo, zp_out + rdbpot(srdhm((int(v) - zp_in) << left, m), right)))
                                    for v in values.tolist()]
                        self.assertEqual(got.tolist(), expected)

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

        def peak_of(model_path, out_name):
            proc = subprocess.run(["/usr/bin/python3", "-c", measure, SQDIFF, "tflite", model_path, "--input",
                                   "a=" + a, "-o", self.path(out_name)], capture_output=True, text=True, timeout=600)
            status, peak = map(int, proc.stdout.split())
            self.assertEqual(status, 0, proc.stderr)
            return peak

        # The same run on a model without the large constant: the program's own
        # footprint (tens of MiB more under AddressSanitizer) is the baseline.
        small = self.model("small", model_json(
            [tensor("a", [4], "f32"), tensor("c", [4], "f32", data=c), tensor("out", [4], "f32")],
            [op(SUB, [0, 1], [2])], [0], [2]))
        baseline_kib = peak_of(small, "small_out")
        self.assertEqual(np.load(self.path("small_out/out.npy")).tolist(), [-0.5, 4.0, 2.75, -4.0])
        peak_kib = peak_of(path, "large_out")
        self.assertEqual(np.load(self.path("large_out/out.npy")).tolist(), [-0.5, 4.0, 2.75, -4.0])
        self.assertLess(peak_kib - baseline_kib, 64 * 1024, "the 2 GiB constant no operator reads must not be read")

    def test_timings_say_where_the_run_went(self):
        path = self.model("timed", binary_model("f32", SUB, [64, 64], [64]))
        proc = self.run_ok(path, "--random", "1", "--timings", "-o", self.path("timed"))
        last = proc.stdout.splitlines()[-1]
        self.assertRegex(last, r"^timings: model read and checked \d+\.\d\d ms, inputs \d+\.\d\d ms, "
                               r"operators \d+\.\d\d ms, files written \d+\.\d\d ms$")
        # Without --timings there is no such line, and the check alone has none either.
        self.assertNotIn("timings:", self.run_ok(path, "--random", "1").stdout)
        self.assertNotIn("timings:", self.run_ok(path, "--timings").stdout)

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


# --- QUANTIZE and DEQUANTIZE: an oracle of LiteRT 2.3.0's reference kernels in Python ints ---------

INT32_MIN = -2**31
RANGES = {"i8": (-128, 127), "u8": (0, 255), "i16": (-32768, 32767), "i32": (-2**31, 2**31 - 1)}


def quantize_oracle(x, scale, zero_point, dtype):
    """reference_ops::AffineQuantize: q = int32(roundf(x / scale)) + zero_point, clamped to the type.
    The division is float32's (NumPy's float32 division is IEEE's); roundf rounds ties away from
    zero. Where C++ is undefined, the x86-64 build's values (docs/SPEC_DECISIONS.md): a NaN or a
    quotient outside [-2^31, 2^31) converts to INT32_MIN, and the int32 addition wraps."""
    low, high = RANGES[dtype]
    with np.errstate(all="ignore"):
        quotients = np.asarray(x, np.float32) / np.float32(scale)
    out = []
    for f in quotients.ravel().tolist():
        rounded = round_half_away(f) if math.isfinite(f) else INT32_MIN
        if not -2**31 <= rounded < 2**31:
            rounded = INT32_MIN
        out.append(min(max(wrap32(rounded + zero_point), low), high))
    return np.array(out, NUMPY[dtype]).reshape(np.shape(x))


def requantize_multiplier(scale_in, scale_out):
    """QuantizeMultiplier of the double quotient of the float32 scales; an infinite or NaN quotient
    gives the multiplier 0 (LiteRT's int64 conversion of inf or NaN on x86-64)."""
    with np.errstate(all="ignore"):
        ratio = float(np.float64(np.float32(scale_in)) / np.float64(np.float32(scale_out)))
    if ratio == 0 or not math.isfinite(ratio):
        return 0, 0
    return quantize_multiplier(ratio, False)


def requantize_oracle(x, qin, qout, din, dout):
    """reference_ops::Requantize: clamp(MultiplyByQuantizedMultiplier(x - zp_in, m, shift) + zp_out)
    (gemmlowp's double rounding), int32 arithmetic wrapping and the left shift's count taken
    modulo 32, as on x86-64; the fast path of a ratio of exactly 1 between int8 and uint8 with zero
    points 128 apart flips the top bit."""
    m, e = requantize_multiplier(qin[0], qout[0])
    low, high = RANGES[dout]
    flip = m == 2**30 and e == 1 and ((din, dout, wrap32(qin[1] - qout[1])) in (("i8", "u8", -128), ("u8", "i8", 128)))
    out = []
    for v in np.asarray(x).ravel().tolist():
        if flip:
            out.append((v ^ 0x80) & 0xFF)
            continue
        left, right = max(e, 0), max(-e, 0)
        y = rdbpot(srdhm(wrap32(wrap32(v - qin[1]) * 2**(left % 32)), m), right)
        out.append(min(max(wrap32(y + qout[1]), low), high))
    return np.array(out, np.int64).astype(NUMPY[dout]).reshape(np.shape(x))


def dequantize_oracle(x, scale, zero_point):
    """float(double(scale) * (x - zero_point)): one double product (exact or rounded once), then
    rounded to float32; the int32 subtraction wraps."""
    centred = np.array([wrap32(v - zero_point) for v in np.asarray(x).ravel().tolist()], np.float64)
    with np.errstate(all="ignore"):
        return (np.float64(np.float32(scale)) * centred).astype(np.float32).reshape(np.shape(x))


def half_bits_to_float_bits(h):
    """binary16 to binary32, exactly, from the bits; a NaN's payload kept, a signalling one too."""
    sign, exponent, mantissa = (h & 0x8000) << 16, (h >> 10) & 0x1F, h & 0x3FF
    if exponent == 0x1F:
        return sign | 0x7F800000 | (mantissa << 13)
    value = Fraction(mantissa, 1024) * 2**-14 if exponent == 0 else (1 + Fraction(mantissa, 1024)) * 2**(exponent - 15)
    return sign | int(np.float32(float(value)).view(np.uint32))


def unary_op(code, x, y, version_options=None):
    options = version_options or (("QuantizeOptions", {}) if code == QUANTIZE else ("DequantizeOptions", {}))
    return op(code, [x], [y], options=options)


def ops_model(code, configs):
    """One model of independent operators: config i reads x<i> and writes y<i>; each config is
    (input type, output type, shape, input quant, output quant, constant data or None)."""
    tensors, ops, inputs = [], [], []
    for i, (din, dout, shape, qin, qout, data) in enumerate(configs):
        tensors += [tensor("x%d" % i, shape, din, qin, data), tensor("y%d" % i, shape, dout, qout)]
        ops.append(unary_op(code, 2 * i, 2 * i + 1))
        if data is None:
            inputs.append(2 * i)
    return model_json(tensors, ops, inputs, [2 * i + 1 for i in range(len(configs))])


def float_inputs(rng, scale, zero_point, dtype, count=96):
    """float32 values for QUANTIZE at (scale, zero point): the specials, quotients on and a hair
    off the rounding ties, at the clamps and at int32's ends, and random ones over the range."""
    low, high = RANGES[dtype]
    s = np.float32(scale)
    big = np.finfo(np.float32).max
    values = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 3e-45, big, -big, 2.0**31, -2.0**31,
              2147483520.0, -2147483904.0]
    with np.errstate(all="ignore"):
        for k in list(rng.integers(low - zero_point - 3, high - zero_point + 3, 12)) + [low - zero_point,
                                                                                        high - zero_point]:
            tie = np.float32((float(k) + 0.5) * float(s))
            values += [tie, np.nextafter(tie, np.float32(np.inf)), np.nextafter(tie, np.float32(-np.inf))]
        edge = np.float32(2.0**31 * float(s))
        values += [edge, np.nextafter(edge, np.float32(0)), -edge]
        spread = (rng.standard_normal(count) * (high - low) * 0.6 + (low + high) / 2 - zero_point) * float(s)
        values += list(spread.astype(np.float32))
    return np.array(values, np.float32)


def int_inputs(rng, dtype, count=200):
    low, high = RANGES[dtype]
    if high - low < 256:
        return np.arange(low, high + 1).astype(NUMPY[dtype])
    values = [low, low + 1, -1, 0, 1, high - 1, high] if low < 0 else [0, 1, high]
    values += list(rng.integers(-300, 300, count // 2)) + list(rng.integers(low, high, count // 2, endpoint=True))
    return np.array(values, np.int64).astype(NUMPY[dtype])


class TfliteQuantizeTest(TfliteTestCase):
    """QUANTIZE and DEQUANTIZE against the oracle above, every type pair LiteRT runs."""

    def run_ops(self, name, code, configs, inputs):
        files = self.run_model(self.model(name, ops_model(code, configs)), inputs, name)
        return [files["y%d.npy" % i] for i in range(len(configs))]

    def test_quantize_float32_by_hand(self):
        x = np.float32([0.25, -0.25, 0.75, 1.25, -1.25, 63.75, 64.0, -64.25, np.nan, np.inf, -np.inf, -0.0, 1e-45])
        configs = [("f32", "i8", [13], None, (0.5, 0), None), ("f32", "i8", [13], None, (0.5, -1), None),
                   ("f32", "u8", [13], None, (0.5, 128), None), ("f32", "i16", [13], None, (0.5, 0), None)]
        got = self.run_ops("by_hand", QUANTIZE, configs, {"x%d" % i: x for i in range(4)})
        # Quotients 0.5 -0.5 1.5 2.5 -2.5 127.5 128 -128.5: ties away from zero, then the clamp. NaN
        # and +-inf convert to INT32_MIN: the type's minimum, or with zero point -1 (INT32_MIN - 1
        # wraps to INT32_MAX) its maximum.
        self.assertEqual(got[0].tolist(), [1, -1, 2, 3, -3, 127, 127, -128, -128, -128, -128, 0, 0])
        self.assertEqual(got[1].tolist(), [0, -2, 1, 2, -4, 127, 127, -128, 127, 127, 127, -1, -1])
        self.assertEqual(got[2].tolist(), [129, 127, 130, 131, 125, 255, 255, 0, 0, 0, 0, 128, 128])
        self.assertEqual(got[3].tolist(), [1, -1, 2, 3, -3, 128, 128, -129, -32768, -32768, -32768, 0, 0])

    def test_quantize_float32_against_the_oracle(self):
        rng = np.random.default_rng(114)
        ran = 0
        for dtype in ("i8", "u8", "i16"):
            low, high = RANGES[dtype]
            configs, inputs, params = [], {}, []
            scales = [0.5, 1 / 3, 2.0**-7, 1e-3, 7.0, 3e-5, 1e-45, 1e30, 0.0, -0.25, np.nan, np.inf]
            scales += list(10.0 ** rng.uniform(-6, 3, 6))
            zero_points = [low, high, 0, int(rng.integers(low, high)), low - 1000, high + 1000, -2**31, 2**31 - 1]
            for i, scale in enumerate(scales):
                scale = float(np.float32(scale))
                zp = zero_points[i % len(zero_points)]
                x = float_inputs(rng, scale if math.isfinite(scale) and scale > 0 else 1.0, zp, dtype)
                configs.append(("f32", dtype, [x.size], None, (scale, zp), None))
                inputs["x%d" % i] = x
                params.append((scale, zp))
            got = self.run_ops("quantize_" + dtype, QUANTIZE, configs, inputs)
            for i, (scale, zp) in enumerate(params):
                with self.subTest(dtype=dtype, scale=scale, zero_point=zp):
                    expected = quantize_oracle(inputs["x%d" % i], scale, zp, dtype)
                    self.assertEqual(got[i].dtype, NUMPY[dtype])
                    self.assertEqual(got[i].tolist(), expected.tolist())
                    ran += 1
        self.assertEqual(ran, 54)

    def test_requantize_by_hand(self):
        u = np.uint8([0, 1, 127, 128, 129, 255])
        i = np.int8([-128, -1, 0, 1, 127, 64])
        configs = [("u8", "i8", [6], (0.5, 128), (0.5, 0), None),    # the converter's uint8 input: q - 128
                   ("i8", "u8", [6], (0.5, 0), (0.5, 128), None),    # and back: q + 128
                   ("i8", "i8", [6], (0.5, 0), (0.25, 0), None),     # doubling, clamped
                   ("i8", "i16", [6], (0.5, 0), (0.25, 0), None),    # doubling, not clamped
                   ("u8", "u8", [6], (1.0, 0), (3.0, 0), None)]      # thirds, rounded twice
        got = self.run_ops("requantize", QUANTIZE, configs, {"x0": u, "x1": i, "x2": i, "x3": i, "x4": u})
        self.assertEqual(got[0].tolist(), [-128, -127, -1, 0, 1, 127])
        self.assertEqual(got[1].tolist(), [0, 127, 128, 129, 255, 192])
        self.assertEqual(got[2].tolist(), [-128, -2, 0, 2, 127, 127])
        self.assertEqual(got[3].tolist(), [-256, -2, 0, 2, 254, 128])
        # 1/3 is 2/3 * 2^-1: 1 * 2/3 rounds to 1, then 1/2 rounds away from zero to 1 (gemmlowp's
        # double rounding); 127: 84.67 -> 85 -> 42.5 -> 43.
        self.assertEqual(got[4].tolist(), [0, 1, 43, 43, 43, 85])

    def test_requantize_every_type_pair_against_the_oracle(self):
        rng = np.random.default_rng(1140)
        pairs = [("i8", "i8"), ("i8", "u8"), ("i8", "i16"), ("u8", "i8"), ("u8", "u8"), ("u8", "i16"),
                 ("i16", "i8"), ("i16", "i16"), ("i16", "i32"), ("i32", "i8"), ("i32", "i16")]
        ran = 0
        for din, dout in pairs:
            configs, inputs, params = [], {}, []
            ratios = [1.0, 1.0, 2.0, 0.5, 2.0**30, 2.0**31, 2.0**40, 2.0**-31, 2.0**-33, 1 / 3]
            ratios += list(10.0 ** rng.uniform(-4, 4, 6))
            symmetric = (din, dout) == ("i16", "i16")  # LiteRT's Prepare: zero points 0
            for k, ratio in enumerate(ratios):
                scale_out = float(np.float32(10.0 ** rng.uniform(-3, 1)))
                scale_in = scale_out if k == 0 else float(np.float32(ratio * scale_out))
                zin = 0 if symmetric else self.zero_point(rng, din, k)
                zout = 0 if symmetric else self.zero_point(rng, dout, k)
                if k == 0 and {din, dout} == {"i8", "u8"}:  # the same scale, zero points 128 apart
                    zout = zin + 128 if din == "i8" else zin - 128
                params.append(((scale_in, zin), (scale_out, zout)))
            # LiteRT runs these too: an output scale of 0 (an infinite ratio), a NaN or negative
            # input scale, an input scale of 0.
            for scale_in, scale_out in ((1.0, 0.0), (math.nan, 1.0), (-0.75, 0.5), (0.0, 1.0)):
                params.append(((scale_in, 0 if symmetric else 1), (scale_out, 0 if symmetric else -1)))
            for k, (qin, qout) in enumerate(params):
                x = int_inputs(rng, din)
                configs.append((din, dout, [x.size], qin, qout, None))
                inputs["x%d" % k] = x
            got = self.run_ops("requantize_%s_%s" % (din, dout), QUANTIZE, configs, inputs)
            for k, (qin, qout) in enumerate(params):
                with self.subTest(din=din, dout=dout, qin=qin, qout=qout):
                    expected = requantize_oracle(inputs["x%d" % k], qin, qout, din, dout)
                    self.assertEqual(got[k].dtype, NUMPY[dout])
                    self.assertEqual(got[k].tolist(), expected.tolist())
                    ran += 1
        self.assertEqual(ran, 11 * 20)

    @staticmethod
    def zero_point(rng, dtype, k):
        if dtype == "i16":
            return 0 if k % 3 else int(rng.integers(-40000, 40000))
        if dtype == "i32":
            return [0, -5, 7, 2**31 - 1, -2**31, int(rng.integers(-2**31, 2**31))][k % 6]
        low, high = RANGES[dtype]
        return [low, high, 0, int(rng.integers(low, high)), low - 500, high + 500, -2**31, 2**31 - 1][k % 8]

    def test_dequantize_against_the_oracle(self):
        rng = np.random.default_rng(6)
        ran = 0
        for dtype in ("i8", "u8", "i16"):
            low, high = RANGES[dtype]
            configs, inputs, params = [], {}, []
            scales = [0.5, 1 / 3, 1e-45, 3e38, 1e-40, 0.0, -0.75, np.nan, np.inf] + list(10.0 ** rng.uniform(-6, 3, 5))
            zero_points = [low, high, 0, int(rng.integers(low, high)), -2**31, 2**31 - 1, low - 7]
            for k, scale in enumerate(scales):
                zp = 0 if dtype == "i16" else zero_points[k % len(zero_points)]
                x = int_inputs(rng, dtype)
                configs.append((dtype, "f32", [x.size], (float(np.float32(scale)), zp), None, None))
                inputs["x%d" % k] = x
                params.append((float(np.float32(scale)), zp))
            got = self.run_ops("dequantize_" + dtype, DEQUANTIZE, configs, inputs)
            for k, (scale, zp) in enumerate(params):
                with self.subTest(dtype=dtype, scale=scale, zero_point=zp):
                    expected = dequantize_oracle(inputs["x%d" % k], scale, zp)
                    self.assertEqual(got[k].dtype, np.float32)
                    # Bit for bit, NaN's bits too: they come from one product, and +-0 matters.
                    self.assertEqual(got[k].view(np.uint32).tolist(), expected.view(np.uint32).tolist())
                    ran += 1
        self.assertEqual(ran, 42)

    def test_dequantize_by_hand(self):
        configs = [("i8", "f32", [4], (0.5, 3), None, None), ("u8", "f32", [4], (0.1, 128), None, None),
                   ("i16", "f32", [4], (2.0**-15, 0), None, None)]
        got = self.run_ops("deq", DEQUANTIZE, configs, {"x0": np.int8([-128, 3, 4, 127]),
                                                         "x1": np.uint8([0, 127, 128, 255]),
                                                         "x2": np.int16([-32768, -1, 0, 32767])})
        self.assertEqual(got[0].tolist(), [-65.5, 0.0, 0.5, 62.0])
        # 0.1 is float32's 0.100000001490116...; times -128, -1, 127 in double, then rounded to float32.
        self.assertEqual(got[1].tolist(), [float(np.float32(-12.800000190734863)), float(np.float32(-0.10000000149011612)),
                                           0.0, float(np.float32(12.700000189244747))])
        self.assertEqual(got[2].tolist(), [-1.0, -2.0**-15, 0.0, 1 - 2.0**-15])
        # Scale 0 times a negative difference is -0.
        got = self.run_ops("deq0", DEQUANTIZE, [("u8", "f32", [2], (0.0, 1), None, None)], {"x0": np.uint8([0, 2])})
        self.assertEqual(got[0].view(np.uint32).tolist(), [0x80000000, 0])

    def test_dequantize_float16_constant(self):
        # What the converter writes for float16 weights: a FLOAT16 constant buffer and a DEQUANTIZE.
        bits = np.uint16([0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0x3555, 0x7BFF, 0xFBFF,
                          0x7C00, 0xFC00, 0x7C01, 0x7E00, 0xFE01, 0x7FFF, 0x7D23])
        half = bits.view(np.float16)
        configs = [("f16", "f32", [bits.size], None, None, half), ("f16", "f32", [bits.size], None, None, None)]
        got = self.run_ops("half", DEQUANTIZE, configs, {"x1": half})
        expected = [half_bits_to_float_bits(int(h)) for h in bits]
        self.assertEqual(expected[12], 0x7F802000)  # a signalling NaN stays signalling, as in LiteRT
        for result in got:
            self.assertEqual(result.dtype, np.float32)
            self.assertEqual(result.view(np.uint32).tolist(), expected)
        self.assertEqual(got[0][:8].tolist(), [0.0, -0.0, 2.0**-24, -2.0**-24, 1023 * 2.0**-24, 2.0**-14, 1.0,
                                               float(np.float16(1 / 3))])

    def test_float_model_around_an_integer_one(self):
        # The converter's full-integer model with float input and output: QUANTIZE, the int8
        # operator, DEQUANTIZE; here with a uint8 input requantized to int8 too.
        q_in, q_sq = (0.05, -3), (0.02, -128)
        c = np.int8([10, -20, 0])
        tensors = [tensor("x", [2, 3], "f32"), tensor("xq", [2, 3], "i8", q_in), tensor("c", [3], "i8", q_in, c),
                   tensor("d", [2, 3], "i8", q_sq), tensor("out", [2, 3], "f32"),
                   tensor("u", [3], "u8", (0.05, 125)), tensor("uq", [3], "i8", q_in),
                   tensor("e", [3], "i8", q_sq), tensor("out2", [3], "f32")]
        ops = [unary_op(QUANTIZE, 0, 1), op(SQUARED_DIFFERENCE, [1, 2], [3]), unary_op(DEQUANTIZE, 3, 4),
               unary_op(QUANTIZE, 5, 6), op(SQUARED_DIFFERENCE, [6, 2], [7]), unary_op(DEQUANTIZE, 7, 8)]
        path = self.model("wrapped", model_json(tensors, ops, [0, 5], [4, 8]))
        x = np.float32([[0.5, -1.0, 1.5], [0.024999, 0.025, 7.0]])
        u = np.uint8([0, 125, 255])
        files = self.run_model(path, {"x": x, "u": u})
        xq = quantize_oracle(x, *q_in, "i8")
        d = quant_oracle("squared_difference", xq, c, "i8", q_in, q_in, q_sq)
        assert_bit_exact(self, files["out.npy"], dequantize_oracle(d, *q_sq), "f32")
        uq = requantize_oracle(u, (0.05, 125), q_in, "u8", "i8")
        e = quant_oracle("squared_difference", uq, c, "i8", q_in, q_in, q_sq)
        assert_bit_exact(self, files["out2.npy"], dequantize_oracle(e, *q_sq), "f32")
        self.assertEqual(xq.tolist(), [[7, -23, 27], [-3, -2, 127]])  # 0.024999/0.05 rounds down, 0.025 is a tie
        # Row 0: 0.5 - 0.65, -1 - -0.85, 1.5 - 0.15, squared: 1.125, 1.125 and 91.125 steps of 0.02.
        step = float(np.float32(0.02))
        self.assertEqual(files["out.npy"].tolist()[0], [step, step, float(np.float32(91 * step))])

    def test_refusals(self):
        q = (0.5, 0)
        per_axis = {"scale": [0.5, 0.25, 0.125], "zero_point": [0, 0, 0], "quantized_dimension": 0}

        def one(code, din, dout, qin=None, qout=None, shape_in=(3,), shape_out=(3,), options=None, data=None):
            tensors = [tensor("x", list(shape_in), din, qin, data), tensor("y", list(shape_out), dout, qout)]
            return model_json(tensors, [unary_op(code, 0, 1, options)], [] if data is not None else [0], [1])
        cases = {
            "float16 to int8": (one(QUANTIZE, "f16", "i8", qout=q),
                                "operator 0 (QUANTIZE): it takes FLOAT16 to INT8, not a pair LiteRT's QUANTIZE runs "
                                "(FLOAT32, INT8 or UINT8 to INT8, UINT8 or INT16; INT16 to INT8, INT16 or INT32; "
                                "INT32 to INT8 or INT16)"),
            "int8 to int32": (one(QUANTIZE, "i8", "i32", q, q), "it takes INT8 to INT32, not a pair"),
            "int32 to uint8": (one(QUANTIZE, "i32", "u8", q, q), "it takes INT32 to UINT8, not a pair"),
            "float32 to float32": (one(QUANTIZE, "f32", "f32", None, q), "it takes FLOAT32 to FLOAT32, not a pair"),
            "quantize per axis": (one(QUANTIZE, "f32", "i8", None, per_axis),
                                  'tensor 1 "y" is quantized per axis (3 scales along dim 0)'),
            "quantize output without parameters": (one(QUANTIZE, "f32", "u8"),
                                                   'tensor 1 "y" is UINT8 without quantization parameters'),
            "requantize input without parameters": (one(QUANTIZE, "u8", "i8", None, q),
                                                    'tensor 0 "x" is UINT8 without quantization parameters'),
            "int16 zero points": (one(QUANTIZE, "i16", "i16", (0.5, 3), q),
                                  "INT16 -> INT16 requantization takes zero points 0, as LiteRT's Prepare requires "
                                  "(input 3, output 0)"),
            "quantize shape": (one(QUANTIZE, "f32", "i8", None, q, shape_out=(1, 3)),
                               'the input has shape [3], but the output tensor "y" has shape [1,3]'),
            "quantize options": (one(QUANTIZE, "f32", "i8", None, q, options=("DequantizeOptions", {})),
                                 "its builtin options are of type 38, not QuantizeOptions (89)"),
            "dequantize float32": (one(DEQUANTIZE, "f32", "f32", q),
                                   "the input has type FLOAT32, not one sqdiff tflite runs for DEQUANTIZE "
                                   "(INT8, UINT8, INT16, FLOAT16)"),
            "dequantize to float16": (one(DEQUANTIZE, "i8", "f16", q),
                                      "the output has type FLOAT16, not one sqdiff tflite runs for DEQUANTIZE (FLOAT32)"),
            "dequantize per axis": (one(DEQUANTIZE, "i8", "f32", per_axis),
                                    'tensor 0 "x" is quantized per axis (3 scales along dim 0)'),
            "dequantize float16 per axis": (one(DEQUANTIZE, "f16", "f32", per_axis), "is quantized per axis"),
            "dequantize without parameters": (one(DEQUANTIZE, "i8", "f32"),
                                              'tensor 0 "x" is INT8 without quantization parameters'),
            "dequantize int16 zero point": (one(DEQUANTIZE, "i16", "f32", (0.5, 3)),
                                            "INT16 input with zero point 3: LiteRT's DEQUANTIZE takes INT16 with "
                                            "zero point 0 only"),
            "dequantize shape": (one(DEQUANTIZE, "i8", "f32", q, shape_in=(3,), shape_out=(2, 3)),
                                 'the input has shape [3], but the output tensor "y" has shape [2,3]'),
            "two inputs": (model_json([tensor("x", [3], "f32"), tensor("y", [3], "i8", q)],
                                      [op(QUANTIZE, [0, 0], [1], options=("QuantizeOptions", {}))], [0], [1]),
                           "has 2 inputs and 1 outputs, expected 1 and 1"),
        }
        for name, (model, expected) in cases.items():
            with self.subTest(name):
                err = self.run_fails(self.model("bad", model), "--random", "1", "-o", self.path("o"))
                self.assertIn(expected, err)
                self.assertIn("operator 0 (", err)
                self.assertFalse(os.path.exists(self.path("o")))


class TfliteMeanTest(TfliteTestCase):
    """MEAN, element by element against mean_oracle (LiteRT's reference kernel's arithmetic) and
    values worked by hand or read from ai-edge-litert 2.3.0's BUILTIN_REF."""

    def mean(self, name, model, x):
        return self.run_model(self.model(name, model), {"x": x}, name)["out.npy"]

    def test_float32_is_litert_order_not_the_exact_mean(self):
        # 1e8 + 1 rounds to 1e8 in float32, so the sum in LiteRT's order is 0 + 1 = 1: 0.25, where
        # the exact mean is 0.5. Reversed, the order gives 0.
        x = np.array([1e8, 1, -1e8, 1], np.float32)
        self.assertEqual(self.mean("order", mean_model("f32", [4], [0]), x).tolist(), 0.25)
        self.assertEqual(self.mean("reversed", mean_model("f32", [4], [0]), x[::-1].copy()).tolist(), 0.0)
        # A sum 2^24 times its terms stops moving: 2^24 + 1 rounds to even, 2^24. Exact: 4194304.75.
        x = np.array([16777216, 1, 1, 1], np.float32)
        self.assertEqual(self.mean("stall", mean_model("f32", [4], [-1]), x).tolist(), 4194304.0)
        # Rows of [2,3] over axis 0 and over axis 1; -0 sums from +0, so it gives +0; NaN and inf kept.
        x = np.array([[-0.0, -0.0, np.inf], [-0.0, np.nan, 1.0]], np.float32)
        over0 = self.mean("axis0", mean_model("f32", [2, 3], [0]), x)
        self.assertEqual(over0[0].tobytes(), np.float32(0).tobytes())
        self.assertTrue(np.isnan(over0[1]))
        self.assertEqual(over0[2], np.inf)
        over1 = self.mean("axis1", mean_model("f32", [2, 3], [-1], keep_dims=True), x)
        self.assertEqual(over1.shape, (2, 1))
        self.assertEqual(over1[0, 0], np.inf)
        self.assertTrue(np.isnan(over1[1, 0]))
        # A rank-0 input: the axes are not read (5 and -9 are fine), the output is rank 0.
        got = self.mean("scalar", mean_model("f32", [], [5, -9], keep_dims=True, out_shape=[]), np.float32(-0.0))
        self.assertEqual((got.shape, got.tobytes()), ((), np.float32(0).tobytes()))
        # An empty input: NaN for float32, 0 for quantized types whatever the zero point.
        got = self.mean("empty", mean_model("f32", [0, 3], [0]), np.zeros((0, 3), np.float32))
        self.assertTrue(np.isnan(got).all() and got.shape == (3,))
        got = self.mean("empty8", mean_model("i8", [2, 0, 3], [1], True, ((0.5, 7), (0.5, 7))),
                        np.zeros((2, 0, 3), np.int8))
        self.assertEqual(got.tolist(), [[[0, 0, 0]], [[0, 0, 0]]])

    def test_quantized_values_by_hand(self):
        # Scales equal: the multiplier 1 is 2^30 with exponent 1, n = 4 folds to 2^30 with exponent
        # -1: SRDHM halves with rounding, then RDBPOT halves again. So the mean 1.25 of [1, 1, 1, 2]
        # rounds twice (2.5 -> 3, 1.5 -> 2) and gives 2, where one rounding gives 1; 2.5 gives 3 and
        # -2.5 gives -3 (ties away from zero).
        x = np.array([[1, 2, 3, 4], [-1, -2, -3, -4], [1, 1, 1, 2], [3, 3, 3, 3]], np.int8)
        got = self.mean("i8", mean_model("i8", [4, 4], [-1], True, ((0.5, 0), (0.5, 0))), x)
        self.assertEqual(got.tolist(), [[3], [-3], [2], [3]])
        # int16 sums wrap modulo 2^32: 70000 x 32767 is 2293690000, read back as -2001277296;
        # / 70000 -> -28590 (LiteRT's value).
        x = np.full(70000, 32767, np.int16)
        self.assertEqual(self.mean("wrap", mean_model("i16", [70000], [0], False, ((1.0, 0), (1.0, 0))), x).tolist(),
                         -28590)
        # An output scale 2^33 times below the input's: the exponent 34 less the fold 1 leaves a left
        # shift of 33, which LiteRT's int32 `1 << 33` takes as 1 << 1 (x86-64 and AArch64 count
        # modulo 32): 19 steps of 2^-33 come out as 38, not 127. These are LiteRT's values.
        x = np.array([[100, -50, 7], [127, 127, 127], [-128, 5, 3], [1, 2, 3]], np.int8)
        for out_scale, expected in ((2.0 ** -33, [38, 127, -80, 4]), (2.0 ** -40, [127, 127, -128, 127])):
            name = "shift_%d" % -np.log2(out_scale)
            model = mean_model("i8", [4, 3], [1], False, ((1.0, 0), (out_scale, 0)))
            self.assertEqual(self.mean(name, model, x).tolist(), expected)

    def test_against_the_oracle(self):
        rng = np.random.default_rng(40)
        ran = 0
        for dtype in ("f32", "i8", "u8", "i16", "i32", "i64"):
            cases = [((2, 5, 7, 3), [1, 2], True), ((2, 5, 7, 3), [2, 1], True), ((2, 5, 7, 3), [1, 2], False),
                     ((3, 4), [0, 1], False), ((3, 4), [-1, -2, 1], True), ((2, 3, 4), [1, 1, -2], False),
                     ((2, 3, 4), [-3], None), ((4, 1, 3, 1, 2, 3), [5, 0, -3], True), ((5,), [0], None)]
            for _ in range(9):
                rank = int(rng.integers(1, 7))
                shape = tuple(int(v) for v in rng.integers(1, 5, rank))
                axes = [int(v) for v in rng.integers(-rank, rank, int(rng.integers(1, rank + 2)))]
                cases.append((shape, axes, [None, False, True][int(rng.integers(0, 3))]))
            for i, (shape, axes, keep_dims) in enumerate(cases):
                if dtype == "f32":  # magnitudes 1e-3..1e7: the order of the additions matters
                    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 8, shape)).astype(np.float32)
                elif dtype in TYPES:
                    x = random_values(rng, dtype, shape)
                else:
                    info = np.iinfo(NUMPY[dtype])
                    x = rng.integers(info.min, info.max, shape, endpoint=True, dtype=NUMPY[dtype])
                quants = (None, None)
                if dtype in TYPES:
                    q_in = random_params(rng, dtype)
                    quants = (q_in, q_in if i % 3 == 0 else random_params(rng, dtype))
                with self.subTest(dtype=dtype, shape=shape, axes=axes, keep_dims=keep_dims, quants=quants):
                    name = "%s_%d" % (dtype, i)
                    got = self.mean(name, mean_model(dtype, list(shape), axes, keep_dims, quants), x)
                    assert_bit_exact(self, got, mean_oracle(x, axes, keep_dims, dtype, quants), dtype)
                    ran += 1
        self.assertEqual(ran, 6 * 18)

    def test_mean_squared_error_chain(self):
        # reduce_mean(squared_difference(a, b)) as the converter writes it: SQUARED_DIFFERENCE into
        # an intermediate tensor, then MEAN over every axis (and over the last one, keep_dims).
        rng = np.random.default_rng(41)
        a32 = (rng.standard_normal((3, 5)) * 3).astype(np.float32)
        b32 = (rng.standard_normal((5,)) * 3).astype(np.float32)
        a8, b8 = random_values(rng, "i8", (3, 5)), random_values(rng, "i8", (5,))
        for dtype, a, b, q in (("f32", a32, b32, (None, None, None, None)),
                               ("i8", a8, b8, ((0.05, -3), (0.04, 10), (0.02, -128), (0.01, -100)))):
            for axes, keep_dims in (([0, 1], False), ([-1], True)):
                with self.subTest(dtype=dtype, axes=axes):
                    d_shape = [3, 5]
                    tensors = [tensor("a", [3, 5], dtype, q[0]), tensor("b", [5], dtype, q[1]),
                               tensor("d", d_shape, dtype, q[2]),
                               tensor("axis", [len(axes)], "i32", data=np.array(axes, np.int32)),
                               tensor("loss", mean_shape(d_shape, axes, keep_dims), dtype, q[3])]
                    ops = [op(SQUARED_DIFFERENCE, [0, 1], [2]),
                           op(MEAN, [2, 3], [4], options=("ReducerOptions", {"keep_dims": keep_dims}))]
                    name = "mse_%s_%d" % (dtype, len(axes))
                    path = self.model(name, model_json(tensors, ops, [0, 1], [4]))
                    files = self.run_model(path, {"a": a, "b": b}, name)
                    if dtype == "f32":
                        d = (a - b) * (a - b)
                    else:
                        d = quant_oracle("squared_difference", a, b, "i8", q[0], q[1], q[2])
                    assert_bit_exact(self, files["loss.npy"], mean_oracle(d, axes, keep_dims, dtype, (q[2], q[3])),
                                     dtype)

    def test_check_line(self):
        model = mean_model("i8", [2, 3, 4], [-1, 0, -1], True, ((0.5, 3), (0.25, -1)))
        proc = self.run_ok(self.model("line", model))
        self.assertEqual(proc.stdout.splitlines()[1:], [
            "operator 0 MEAN: INT8 [2,3,4] (scale 0.5, zero point 3) over axes [-1,0,-1] -> "
            "INT8 [1,3,1] (scale 0.25, zero point -1), keep_dims true: ok",
            "check: 1 operator ok"])


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

    def test_mean_checks(self):
        q = (0.5, 0)
        cases = {
            "axis input": (mean_model("f32", [2, 3], [1], axis_input=True, out_shape=[2]),
                           'the axis tensor "axis" is not a constant: sqdiff tflite needs the axes when it checks'),
            "axis type": (mean_model("f32", [2, 3], [1], axis_dtype="i64", out_shape=[2]),
                          "the axis tensor has type INT64, not one sqdiff tflite runs for MEAN (INT32)"),
            "axis range": (mean_model("f32", [2, 3], [0, 2], out_shape=[2]),
                           'axis 2 is outside [-2, 2) for the input\'s rank 2 (LiteRT: "Invalid axis index")'),
            "negative range": (mean_model("f32", [2, 3], [-3], out_shape=[2]), "axis -3 is outside [-2, 2)"),
            "output shape": (mean_model("f32", [2, 3], [1], keep_dims=True, out_shape=[2]),
                             "the mean of [2,3] over axes [1] with keep_dims true has shape [2,1], but the output "
                             'tensor "out" has shape [2]'),
            "output type": (model_json([tensor("x", [2], "f32"), tensor("axis", [1], "i32", data=np.zeros(1)),
                                        tensor("out", [], "i32")], [op(MEAN, [0, 1], [2])], [0], [2]),
                            "the output has type INT32 and the input FLOAT32: LiteRT's MEAN writes the input's type"),
            "float16": (mean_model("f16", [2], [0]), "the input has type FLOAT16, not one sqdiff tflite runs for MEAN"),
            "no quantization": (mean_model("u8", [2], [0], quants=(q, None)),
                                'tensor 2 "out" is UINT8 without quantization parameters'),
            "scale": (mean_model("i8", [2], [0], quants=(q, (0.0, 0))),
                      'tensor 2 "out" has scale 0; a scale must be a positive finite float32'),
            "zero point": (mean_model("u8", [2], [0], quants=((0.5, 300), q)),
                           'tensor 0 "x" (the input) has zero point 300, outside the range [0, 255] of UINT8'),
            "int16 zero point": (mean_model("i16", [2], [0], quants=(q, (0.5, 4))),
                                 'tensor 2 "out" (the output) has zero point 4: int16 tensors are quantized '
                                 "symmetrically"),
            "options": (model_json([tensor("x", [2], "f32"), tensor("axis", [1], "i32", data=np.zeros(1)),
                                    tensor("out", [], "f32")],
                                   [op(MEAN, [0, 1], [2], options=("SubOptions", {}))], [0], [2]),
                        "its builtin options are of type 28, not ReducerOptions (27)"),
            "inputs": (model_json([tensor("x", [2], "f32"), tensor("out", [], "f32")], [op(MEAN, [0], [1])], [0], [1]),
                       "has 1 inputs and 1 outputs, expected 2 and 1"),
        }
        for name, (model, expected) in cases.items():
            with self.subTest(name):
                err = self.check_refused(model, "operator 0 (MEAN): " + expected, "check failed")
                self.assertNotIn("operator 0 (MEAN): operator", err)

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


class TfliteTensorsTest(TfliteTestCase):
    """`--tensors DIR`: each operator computed on its own from DIR/<tensor index>.npy and the
    model's constants (what sqdiff.verify checks a runtime's intermediate tensors against)."""

    def mixed_model(self):
        """t = ADD(x, y) (not run by sqdiff), d = SUB(t, y) relu, out = SQUARED_DIFFERENCE(d, c)
        with c a constant, e = SUB(x, y) with TANH (refused), q = SQUARED_DIFFERENCE(qa, qb) int8."""
        c = np.array([0.5, -1.5, 2.0], np.float32)
        tensors = [tensor("x", [2, 3], "f32"), tensor("y", [3], "f32"), tensor("t", [2, 3], "f32"),
                   tensor("d", [2, 3], "f32"), tensor("c", [3], "f32", data=c), tensor("out", [2, 3], "f32"),
                   tensor("e", [2, 3], "f32"), tensor("qa", [4], "i8", (0.5, 1)), tensor("qb", [4], "i8", (0.25, -3)),
                   tensor("q", [4], "i8", (0.125, -128))]
        ops = [op(ADD, [0, 1], [2]), op(SUB, [2, 1], [3], "relu"), op(SQUARED_DIFFERENCE, [3, 4], [5]),
               op(SUB, [0, 1], [6], options=("SubOptions", {"fused_activation_function": "TANH"})),
               op(SQUARED_DIFFERENCE, [7, 8], [9])]
        return self.model("mixed", model_json(tensors, ops, [0, 1, 7, 8], [5, 6, 9])), c

    def tensors_json(self, *args):
        return json.loads(self.run_ok(*args, "--json").stdout)

    def test_each_operator_from_the_given_tensors(self):
        path, c = self.mixed_model()
        tensors = self.path("tensors")
        os.mkdir(tensors)
        rng = np.random.default_rng(3)
        t = rng.normal(size=(2, 3)).astype(np.float32)
        y = rng.normal(size=3).astype(np.float32)
        # d is not SUB(t, y): each operator reads the given tensors, not another operator's result.
        d = np.array([[1.0, -0.0, np.inf], [np.nan, 3.5, -2.25]], np.float32)
        qa = np.array([-128, 0, 5, 127], np.int8)
        qb = np.array([127, -3, 5, -128], np.int8)
        for index, value in ((2, t), (1, y), (3, d), (7, qa), (8, qb), (4, np.zeros(3, np.float32))):
            np.save(os.path.join(tensors, "%d.npy" % index), value)
        out = self.path("out")
        proc = self.run_ok(path, "--tensors", tensors, "-o", out)
        self.assertEqual(self.listing(out), [".sqdiff-output", "operator_1.npy", "operator_2.npy", "operator_4.npy"])
        assert_bit_exact(self, np.load(os.path.join(out, "operator_1.npy")), np.maximum(t - y, np.float32(0)), "f32")
        # The constant c is the model's, not DIR/4.npy (zeros).
        assert_bit_exact(self, np.load(os.path.join(out, "operator_2.npy")), np.square(d - c), "f32")
        assert_bit_exact(self, np.load(os.path.join(out, "operator_4.npy")),
                         quant_oracle("squared_difference", qa, qb, "i8", (0.5, 1), (0.25, -3), (0.125, -128)), "i8")
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], path + ": TFLite schema version 3, subgraph 0 \"main\" of 1: 10 tensors, 5 operators")
        self.assertEqual(lines[1], "operator 1 SUB: FLOAT32 [2,3] - FLOAT32 [3] -> FLOAT32 [2,3], activation RELU: "
                                   "computed from %s/2.npy, %s/1.npy: %s/operator_1.npy" % (tensors, tensors, out))
        self.assertEqual(lines[2], "operator 2 SQUARED_DIFFERENCE: FLOAT32 [2,3] vs FLOAT32 [3] constant -> "
                                   "FLOAT32 [2,3]: computed from %s/3.npy: %s/operator_2.npy" % (tensors, out))
        self.assertRegex(lines[3], r"^operator 3 SUB: .*: refused: operator 3 \(SUB\): .*TANH")
        self.assertTrue(lines[4].startswith("operator 4 SQUARED_DIFFERENCE: INT8 [4] "), lines[4])
        self.assertEqual(lines[5:], ["not run by sqdiff tflite: ADD x 1 (operator 0)",
                                     "tensors: 3 computed, 0 ready, 0 skipped, 1 refused, 1 not run by sqdiff tflite"])

    def test_json_report_and_missing_tensors(self):
        path, _ = self.mixed_model()
        tensors = self.path("tensors")
        os.mkdir(tensors)
        np.save(os.path.join(tensors, "3.npy"), np.ones((2, 3), np.float32))
        np.save(os.path.join(tensors, "7.npy"), np.ones(4, np.int8))
        # Without -o nothing is computed or written: the report says which operators could be.
        report = self.tensors_json(path, "--tensors", tensors)
        self.assertEqual(self.listing(), ["mixed.json", "mixed.tflite", "tensors"])
        self.assertEqual(report["runs"], ["DEQUANTIZE", "MAXIMUM", "MEAN", "MINIMUM", "MUL", "QUANTIZE", "RELU", "RELU6",
                                          "RELU_0_TO_1", "RELU_N1_TO_1", "SQUARE", "SQUARED_DIFFERENCE", "SUB"])
        self.assertEqual((report["model"], report["tensors"], report["output_dir"]), (path, tensors, None))
        self.assertEqual([(o["index"], o["kind"], o["status"]) for o in report["operators"]],
                         [(0, "ADD", "not run"), (1, "SUB", "skipped"), (2, "SQUARED_DIFFERENCE", "ready"),
                          (3, "SUB", "refused"), (4, "SQUARED_DIFFERENCE", "skipped")])
        self.assertEqual([report[k] for k in ("computed", "ready", "skipped", "refused", "not_run")], [0, 1, 2, 1, 1])
        sub, sqd, tanh, qsqd = report["operators"][1:]
        self.assertEqual((sub["inputs"], sub["outputs"], sub["read"], sub["missing"]), ([2, 1], [3], [2, 1], [2, 1]))
        self.assertEqual((sqd["inputs"], sqd["read"], sqd["missing"], sqd["file"]), ([3, 4], [3], [], None))
        self.assertEqual(qsqd["missing"], [8])
        self.assertEqual(len(tanh["problems"]), 1)
        self.assertIn("TANH", tanh["problems"][0])
        self.assertEqual(sqd["summary"], "FLOAT32 [2,3] vs FLOAT32 [3] constant -> FLOAT32 [2,3]")
        out = self.path("out")
        report = self.tensors_json(path, "--tensors", tensors, "-o", out)
        self.assertEqual(report["operators"][2]["status"], "computed")
        self.assertEqual(report["operators"][2]["file"], os.path.join(out, "operator_2.npy"))
        self.assertEqual(self.listing(out), [".sqdiff-output", "operator_2.npy"])

    def test_refusals(self):
        path, _ = self.mixed_model()
        tensors = self.path("tensors")
        os.mkdir(tensors)
        np.save(os.path.join(tensors, "3.npy"), np.ones((2, 3), np.float64))
        err = self.run_fails(path, "--tensors", tensors, "-o", self.path("out"))
        self.assertIn('operator 2 (SQUARED_DIFFERENCE): tensor 3 "d": %s/3.npy holds f64 but the tensor is FLOAT32'
                      % tensors, err)
        self.assertFalse(os.path.exists(self.path("out")))  # nothing written
        np.save(os.path.join(tensors, "3.npy"), np.ones((3, 2), np.float32))
        self.assertIn("has shape [3,2] but the tensor has [2,3]", self.run_fails(path, "--tensors", tensors, "-o",
                                                                                  self.path("out")))
        self.assertIn("not a directory", self.run_fails(path, "--tensors", self.path("none")))
        self.assertIn("excludes", self.run_fails(path, "--tensors", tensors, "--random", "1", status=2))
        self.assertIn("requires", self.run_fails(path, "--json", status=2))


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
