#!/usr/bin/python3
"""`sqdiff run` on quantized int8, uint8 and int16 .npy files (--quant-a/--quant-b/--quant-out,
--activation, --rounding, --pot-scale-int16): results checked bit for bit against an integer
oracle written here from SPEC section 9 in plain Python ints (independent of the library and of
its own tests), every error path with its exit status, and nothing written when a run fails.

Run by CTest as `/usr/bin/python3 quant_run_test.py -v CLASS` with SQDIFF_BIN and SQDIFF_TEST_TMP
set, as cli_test.py (whose helpers it uses) is.
"""

import io
import math
import os
import subprocess
import unittest
from fractions import Fraction

import numpy as np

from cli_test import SQDIFF, CliTestCase, docs_console_examples, help_examples, run

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")

TYPES = {"i8": (np.int8, -128, 127), "u8": (np.uint8, 0, 255), "i16": (np.int16, -32768, 32767)}
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


# --- the oracle: SPEC section 9 in Python ints ------------------------------------------------

def srdhm(a, b):
    """gemmlowp's SaturatingRoundingDoublingHighMul: (a*b + nudge) / 2^31, C's division truncating
    toward zero, the nudge 2^30 or 1 - 2^30 by the product's sign."""
    if a == b == INT32_MIN:
        return INT32_MAX
    product = a * b
    numerator = product + ((1 << 30) if product >= 0 else 1 - (1 << 30))
    quotient = abs(numerator) // 2**31
    return quotient if numerator >= 0 else -quotient


def rdbpot(x, exponent):
    """x / 2^exponent rounded to nearest, ties away from zero (gemmlowp's RoundingDivideByPOT)."""
    mask = (1 << exponent) - 1
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if (x & mask) > threshold else 0)


def round_half_away(value):
    """A float rounded to the nearest integer, ties away from zero, exactly."""
    magnitude = math.floor(abs(Fraction(value)) + Fraction(1, 2))
    return magnitude if value >= 0 else -magnitude


def quantize_multiplier(real, single):
    """TFLite's QuantizeMultiplier: (m, e) with real ~ m * 2^(e - 31)."""
    if real == 0:
        return 0, 0
    fraction, exponent = math.frexp(real)
    multiplier = round_half_away(Fraction(fraction) * 2**31)
    if multiplier == 2**31:
        multiplier, exponent = 2**30, exponent + 1
    if exponent < -31:
        return 0, 0
    if single and exponent > 30:
        return 2**31 - 1, 30
    return multiplier, exponent


def mbqm(x, multiplier, exponent, single):
    """TFLite's MultiplyByQuantizedMultiplier, double rounding (gemmlowp) or single rounding, in
    exact integers: where TFLite-Micro's int32 product overflows (a squared difference's output
    multiplier of 2 or more), SPEC 9 takes it in 64 bits, and the clamp saturates the result."""
    if single:
        total = 31 - exponent
        return (x * multiplier + (1 << (total - 1))) >> total
    left, right = max(exponent, 0), max(-exponent, 0)
    return rdbpot(srdhm(x << left, multiplier), right)


def checked_log2(scale):
    """TFLite's CheckedLog2: (whether log2(scale) is within 1e-3 of an integer, that integer). The
    tests use scales far from the 1e-3 edge, where float32 and exact logs agree."""
    exact = math.log2(scale)
    rounded = round_half_away(exact)
    distance = abs(exact - rounded)
    assert not 0.5e-3 < distance < 2e-3, "scale %r is too near CheckedLog2's edge for this oracle" % scale
    return distance < 1e-3, rounded


def activation_range(activation, out_scale, out_zero_point, low, high):
    """TFLite's CalculateActivationRangeQuantized: zero_point + round(f / scale) in float32."""
    def quantize(real):
        return out_zero_point + round_half_away(float(np.float32(real) / np.float32(out_scale)))
    if activation == "relu":
        return max(low, quantize(0.0)), high
    if activation == "relu6":
        return max(low, quantize(0.0)), min(high, quantize(6.0))
    if activation == "relu_n1_to_1":
        return max(low, quantize(-1.0)), min(high, quantize(1.0))
    return low, high


class Refused(Exception):
    """SPEC 9 refuses these parameters (the program exits with 1)."""


def element_function(op, dtype, qa, qb, qout, activation="none", single=False, pot=True):
    """The per-element function f(x, y) -> stored output of SPEC 9's table for these parameters
    (qa, qb, qout: (float32 scale, zero point)); raises Refused where SPEC 9 refuses them."""
    _, low, high = TYPES[dtype]
    sa, sb, so = (float(np.float32(q[0])) for q in (qa, qb, qout))
    za, zb, zo = qa[1], qb[1], qout[1]
    subtract = op == "subtract"
    act_low, act_high = activation_range(activation, so, zo, low, high) if subtract else (low, high)

    def clamp(value):
        return min(act_high, max(act_low, value))

    if subtract and dtype == "i16" and pot:
        checks = [checked_log2(s) for s in (sa, sb, so)]
        if all(is_pot for is_pot, _ in checks):
            shift_a, shift_b = checks[0][1] - checks[2][1], checks[1][1] - checks[2][1]
            if (shift_a != 0 and shift_b != 0) or shift_a > 0 or shift_b > 0:
                raise Refused("power-of-two scales LiteRT refuses")
            return lambda x, y: clamp(max(-32768, min(32767, rdbpot(x, -shift_a) - rdbpot(y, -shift_b))))

    left = (15 if dtype == "i16" else 20) if subtract else (0 if dtype == "i16" else 7)
    twice_max = 2.0 * max(sa, sb)
    ma, ea = quantize_multiplier(sa / twice_max, single)
    mb, eb = quantize_multiplier(sb / twice_max, single)
    if subtract:
        mo, eo = quantize_multiplier(twice_max / (so * 2.0**left), single)
        if eo > 0:
            raise Refused("output multiplier of 1 or more")
    else:
        mo, eo = quantize_multiplier(twice_max * twice_max / (so * 2.0**(2 * left)), single)

    def f(x, y):
        ca = mbqm((x - za) << left, ma, ea, single)
        cb = mbqm((y - zb) << left, mb, eb, single)
        d = ca - cb
        raw = mbqm(d * d if not subtract else d, mo, eo, single)
        return clamp(raw + zo)
    return f


def quant_oracle(op, a, b, dtype, qa, qb, qout, activation="none", single=False, pot=True, mode="numpy", axis=-1):
    """The expected output array for inputs a, b (NumPy arrays) under SPEC 9 and SPEC 3's broadcasting."""
    f = element_function(op, dtype, qa, qb, qout, activation, single, pot)
    if mode == "pdpd":
        start = a.ndim - b.ndim if axis == -1 else axis
        b = b.reshape((1,) * start + b.shape + (1,) * (a.ndim - start - b.ndim))
    wide_a, wide_b = np.broadcast_arrays(a, b)
    values = [f(x, y) for x, y in zip(wide_a.ravel().tolist(), wide_b.ravel().tolist())]
    return np.array(values, dtype=TYPES[dtype][0]).reshape(wide_a.shape)


def text(params):
    """--quant-X's value for (float32 scale, zero point): the shortest decimal that reads back as
    that float32."""
    return "%s,%d" % (np.format_float_positional(np.float32(params[0]), unique=True, trim="-")
                      if 1e-4 <= params[0] < 1e6 else np.format_float_scientific(np.float32(params[0]), unique=True),
                      params[1])


class OracleSelfTest(unittest.TestCase):
    """The oracle's primitives on values worked by hand (SPEC 9's definitions)."""

    def test_primitives(self):
        self.assertEqual(srdhm(3, 2**30), 2)          # 1.5 rounds up
        self.assertEqual(srdhm(-3, 2**30), -1)        # -1.5 rounds up too (floor of x + 1/2)
        self.assertEqual(srdhm(INT32_MIN, INT32_MIN), INT32_MAX)
        self.assertEqual([rdbpot(x, 1) for x in (3, -3, 2, -2, 1, -1)], [2, -2, 1, -1, 1, -1])
        self.assertEqual(rdbpot(5, 0), 5)
        self.assertEqual(quantize_multiplier(0.5, False), (2**30, 0))
        self.assertEqual(quantize_multiplier(0.75, False), (3 * 2**29, 0))
        self.assertEqual(quantize_multiplier(0.5 + 2**-32, False), (2**30 + 1, 0))  # a tie, away from zero
        self.assertEqual(quantize_multiplier(1 - 2**-40, False), (2**30, 1))  # m = 2^31 becomes 2^30, e + 1
        self.assertEqual(quantize_multiplier(2**-40, False), (0, 0))
        self.assertEqual(quantize_multiplier(2.0**40, True), (2**31 - 1, 30))
        self.assertEqual(mbqm(100, 2**30, -1, False), 25)
        self.assertEqual(mbqm(100, 2**30, -1, True), 25)
        self.assertEqual(mbqm(-6, 3 * 2**29, -1, False), -2)   # -2.25 -> -2
        self.assertEqual(activation_range("relu6", 0.125, -128, -128, 127), (-128, -80))


# --- sqdiff run with --quant-* ----------------------------------------------------------------

def random_params(rng, dtype):
    """A random (float32 scale in 1e-4..10, zero point) with the type's extremes now and then."""
    scale = float(np.float32(10.0 ** rng.uniform(-4, 1)))
    if dtype == "i16":
        return scale, 0
    _, low, high = TYPES[dtype]
    zero_point = int(rng.choice([low, high, int(rng.integers(low, high, endpoint=True))]))
    return scale, zero_point


def random_values(rng, dtype, shape):
    np_dtype, low, high = TYPES[dtype]
    values = rng.integers(low, high, size=shape, endpoint=True).astype(np_dtype)
    flat = values.reshape(-1)
    extremes = np.array([low, high, 0 if low < 0 else low], dtype=np_dtype)
    flat[: min(3, flat.size)] = extremes[: flat.size]
    return values


class QuantTestCase(CliTestCase):
    def run_quant(self, op, a, b, dtype, qa, qb, qout, activation="none", single=False, pot=True, mode="numpy",
                  axis=None, extra=()):
        """Runs sqdiff on a, b and checks the output bit for bit against the oracle."""
        args = ["run", "--op", op, self.save("a.npy", a), self.save("b.npy", b), "-o", self.path("out.npy"),
                "--quant-a", text(qa), "--quant-b", text(qb), "--quant-out", text(qout), "--broadcast", mode]
        if axis is not None:
            args.append("--axis=%d" % axis)
        if activation != "none":
            args += ["--activation", activation]
        if single:
            args += ["--rounding", "single"]
        if not pot:
            args += ["--pot-scale-int16", "off"]
        result = run(args + list(extra))
        self.assert_ok(result)
        self.assertEqual(result.stdout + result.stderr, "")
        got = np.load(self.path("out.npy"))
        self.assertEqual(got.dtype, np.dtype(TYPES[dtype][0]))
        expected = quant_oracle(op, a, b, dtype, qa, qb, qout, activation, single, pot, mode,
                                -1 if axis is None else axis)
        self.assertEqual(got.shape, expected.shape)
        mismatches = np.argwhere(got != expected)
        self.assertEqual(len(mismatches), 0, "%s %s %s %s %s %s: %d mismatches, first at %s: got %s, expected %s" % (
            op, dtype, qa, qb, qout, activation, len(mismatches), mismatches[:3].tolist(),
            [got[tuple(w)] for w in mismatches[:3]], [expected[tuple(w)] for w in mismatches[:3]]))
        return got


class QuantRunTest(QuantTestCase):
    def test_docs_values_by_hand(self):
        # docs/quantized.md's example: a = 0.5 q, b = 0.25 (q - 10), out in steps of 0.125 from -128.
        a = np.array([[2, 4, 6], [8, 10, 12]], dtype=np.int8)
        b = np.array([14, 18, 22], dtype=np.int8)
        got = self.run_quant("squared_difference", a, b, "i8", (0.5, 0), (0.25, 10), (0.125, -128))
        self.assertEqual(got.tolist(), [[-128, -128, -128], [-56, -56, -56]])
        got = self.run_quant("subtract", b, a, "i8", (0.25, 10), (0.5, 0), (0.125, 0))
        self.assertEqual(got.tolist(), [[0, 0, 0], [-24, -24, -24]])
        got = self.run_quant("subtract", b, a, "i8", (0.25, 10), (0.5, 0), (0.125, 0), activation="relu")
        self.assertEqual(got.tolist(), [[0, 0, 0], [0, 0, 0]])

    def test_random_parameters_every_type_and_op(self):
        rng = np.random.default_rng(25)
        shapes = [((5, 1, 7), (3, 7)), ((40,), (40,)), ((2, 3, 4), (1,)), ((1,), (6, 5)), ((3, 1), (1, 9))]
        for dtype in TYPES:
            for op in ("squared_difference", "subtract"):
                done = 0
                while done < 12:
                    qa, qb, qout = (random_params(rng, dtype) for _ in range(3))
                    activation = str(rng.choice(["none", "relu", "relu6", "relu_n1_to_1"])) if op == "subtract" \
                        else "none"
                    single = bool(rng.integers(0, 2))
                    try:
                        element_function(op, dtype, qa, qb, qout, activation, single)
                    except Refused:
                        continue  # QuantRunErrorTest covers refused parameters
                    a_shape, b_shape = shapes[done % len(shapes)]
                    a, b = random_values(rng, dtype, a_shape), random_values(rng, dtype, b_shape)
                    with self.subTest(dtype=dtype, op=op, qa=qa, qb=qb, qout=qout, activation=activation,
                                      single=single):
                        self.run_quant(op, a, b, dtype, qa, qb, qout, activation, single)
                    done += 1

    def test_broadcast_modes_layouts_and_scalars(self):
        rng = np.random.default_rng(3)
        qa, qb, qout = (0.02, 3), (0.05, -7), (0.01, -2)
        x = random_values(rng, "i8", (2, 3, 4, 5))
        y = random_values(rng, "i8", (3, 1))
        for op in ("squared_difference", "subtract"):
            with self.subTest(op=op, mode="pdpd"):
                self.run_quant(op, x, y, "i8", qa, qb, qout, mode="pdpd", axis=1)
            with self.subTest(op=op, mode="none"):
                self.run_quant(op, x, random_values(rng, "i8", x.shape), "i8", qa, qb, qout, mode="none")
            with self.subTest(op=op, layout="fortran"):
                self.run_quant(op, np.asfortranarray(random_values(rng, "i8", (6, 7))), random_values(rng, "i8", (7,)),
                               "i8", qa, qb, qout)
            with self.subTest(op=op, layout="0-d"):
                self.run_quant(op, np.array(100, dtype=np.int8), random_values(rng, "i8", (4,)), "i8", qa, qb, qout)
            with self.subTest(op=op, layout="empty"):
                got = self.run_quant(op, np.zeros((0, 3), dtype=np.int8), random_values(rng, "i8", (3,)), "i8",
                                     qa, qb, qout)
                self.assertEqual(got.shape, (0, 3))

    def test_activations_clamp(self):
        a = np.arange(0, 256, dtype=np.int64).astype(np.uint8)  # real 0.05 (q - 128): -6.4 .. 6.35
        b = np.array([128], dtype=np.uint8)                     # real 0
        # out = 0.1 (q - 100): a - b spans 36 .. 164; relu clamps at 0 (q 100), relu6 at 6 (q 160),
        # relu_n1_to_1 at -1 and 1 (q 90 and 110).
        ranges = {"none": (36, 164), "relu": (100, 164), "relu6": (100, 160), "relu_n1_to_1": (90, 110)}
        for activation, (low, high) in ranges.items():
            with self.subTest(activation=activation):
                got = self.run_quant("subtract", a, b, "u8", (0.05, 128), (0.5, 128), (0.1, 100), activation)
                self.assertEqual((int(got.min()), int(got.max())), (low, high))

    def test_single_rounding_differs_from_double(self):
        # Every pair of int8 values: a column against b's row.
        a = np.arange(-128, 128, dtype=np.int8).reshape(256, 1)
        b = np.arange(-128, 128, dtype=np.int8)
        for op, params in (("subtract", ((0.0229, -3), (0.0025, 17), (0.0162, 5))),
                           ("squared_difference", ((0.0123, -3), (0.0456, 17), (0.0789, 5)))):
            with self.subTest(op=op):
                double = self.run_quant(op, a, b, "i8", *params)
                single = self.run_quant(op, a, b, "i8", *params, single=True)
                # Both match their oracles; on a few elements they differ by one step (SPEC 9).
                differ = np.abs(double.astype(int) - single.astype(int))
                self.assertGreater(int((differ == 1).sum()), 0)
                self.assertEqual(int(differ.max()), 1)

    def test_int16_power_of_two_path(self):
        rng = np.random.default_rng(16)
        a = random_values(rng, "i16", (3, 1000))
        b = random_values(rng, "i16", (1000,))
        for qa, qb, qout, paths_differ in [
                ((2**-10, 0), (2**-12, 0), (2**-10, 0), True),        # b shifted right by 2
                ((2**-9, 0), (2**-3, 0), (2**-3, 0), True),           # a shifted right by 6
                ((2**-8 * 1.0003, 0), (2**-8, 0), (2**-8, 0), True),  # a hair from 2^-8 counts as one
                ((2**-4, 0), (2**-25, 0), (2**-4, 0), False)]:        # a shift of 21: b rounds to 0 either way
            with self.subTest(qa=qa, qb=qb, qout=qout):
                pot = self.run_quant("subtract", a, b, "i16", qa, qb, qout, activation="relu")
                general = self.run_quant("subtract", a, b, "i16", qa, qb, qout, activation="relu", pot=False)
                # Sub16 rounds the shifted input once (ties away from zero) before subtracting; the
                # general path rounds the difference: they differ on ties (and on the hair).
                self.assertEqual(bool((pot != general).any()), paths_differ)
        # A scale that is not a power of two takes the general path whatever --pot-scale-int16 says.
        params = (2**-10 * 1.01, 0), (2**-12, 0), (2**-10, 0)
        on = self.run_quant("subtract", a, b, "i16", *params)
        off = self.run_quant("subtract", a, b, "i16", *params, pot=False)
        self.assertEqual(on.tolist(), off.tolist())

    def test_squared_difference_output_multiplier_of_one_or_more(self):
        # LiteRT aborts here; SPEC 9 computes it as TFLite-Micro does (a left shift first).
        # a = 0 and b in steps of 2^-7: (a - b)^2 in steps of 2^-13 is 2 d^2, d = b's rescaled value.
        zeros, steps = np.zeros(16, dtype=np.int8), np.arange(-8, 8, dtype=np.int8)
        for single in (False, True):
            got = self.run_quant("squared_difference", zeros, steps, "i8", (1.0, 0), (2**-7, 0), (2**-13, -128),
                                 single=single)
            self.assertGreater(len(set(got.tolist()) - {-128, 127}), 3)
        # Large differences: the left-shifted product leaves int32 (TFLite-Micro wraps there), SPEC 9
        # takes it in 64 bits, and the output saturates at the type's maximum, never wraps below it.
        rng = np.random.default_rng(7)
        a, b = random_values(rng, "i8", (300,)), random_values(rng, "i8", (300,))
        got = self.run_quant("squared_difference", a, b, "i8", (0.5, 0), (0.5, 0), (2**-17, 0))
        far = np.abs(a.astype(int) - b) >= 8  # (a - b)^2 2^-2 in steps of 2^-17: at least 2^19 steps
        self.assertTrue(far.any())
        self.assertEqual(set(got[far].tolist()), {127})
        c, d = random_values(rng, "i16", (300,)), random_values(rng, "i16", (300,))
        got = self.run_quant("squared_difference", c, d, "i16", (1e-3, 0), (2e-3, 0), (1e-7, 0))
        far = np.abs(c * 1e-3 - d * 2e-3) >= 1
        self.assertTrue(far.any())
        self.assertEqual(set(got[far].tolist()), {32767})
        for single in (False, True):
            got = self.run_quant("squared_difference", np.array([127, -128, 3, 3], np.int8),
                                 np.array([-128, 127, 3, 4], np.int8), "i8", (1.0, 0), (1.0, 0), (2.0**-20, -100),
                                 single=single)
            self.assertEqual(got.tolist(), [127, 127, -100, 127])

    def test_chunks_threads_and_in_place(self):
        rng = np.random.default_rng(5)
        a = random_values(rng, "u8", (30, 1, 17))
        b = random_values(rng, "u8", (9, 17))
        params = (0.3, 200), (0.07, 0), (0.9, 255)
        for extra in (["--chunk-bytes", "7"], ["--threads", "2"], ["--chunk-bytes", "100", "--threads", "2"]):
            for op in ("squared_difference", "subtract"):
                with self.subTest(extra=extra, op=op):
                    self.run_quant(op, a, b, "u8", *params, extra=extra)
        # The output may replace an input.
        expected = quant_oracle("subtract", a[:, 0, :], b[0], "u8", *params)
        self.save("x.npy", a[:, 0, :])
        self.save("y.npy", b[0])
        self.assert_ok(run(["run", "--op", "subtract", self.path("x.npy"), self.path("y.npy"), "-o", self.path("x.npy"),
                            "--quant-a", text(params[0]), "--quant-b", text(params[1]),
                            "--quant-out", text(params[2])]))
        self.assertEqual(np.load(self.path("x.npy")).tolist(), expected.tolist())

    def test_written_through_to_a_pipe(self):
        a = np.array([[2, 4, 6], [8, 10, 12]], dtype=np.int8)
        b = np.array([14, 18, 22], dtype=np.int8)
        result = subprocess.run([SQDIFF, "run", "--op", "squared_difference", self.save("a.npy", a),
                                 self.save("b.npy", b), "-o", "-", "--quant-a", "0.5,0", "--quant-b", "0.25,10",
                                 "--quant-out", "0.125,-128"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=60)
        self.assertEqual((result.returncode, result.stderr), (0, b""))
        self.assertEqual(np.load(io.BytesIO(result.stdout)).tolist(), [[-128, -128, -128], [-56, -56, -56]])


# --- errors -----------------------------------------------------------------------------------

class QuantRunErrorTest(QuantTestCase):
    def setUp(self):
        super().setUp()
        self.save("i8_a.npy", np.array([1, 2, 3], dtype=np.int8))
        self.save("i8_b.npy", np.array([4, 5, 6], dtype=np.int8))
        self.save("u8.npy", np.array([1, 2, 3], dtype=np.uint8))
        self.save("i16.npy", np.array([1, 2, 3], dtype=np.int16))
        self.save("u16.npy", np.array([1, 2, 3], dtype=np.uint16))
        self.save("i32.npy", np.array([1, 2, 3], dtype=np.int32))
        self.save("f32.npy", np.array([1, 2, 3], dtype=np.float32))
        self.save("i8_4.npy", np.array([1, 2, 3, 4], dtype=np.int8))
        self.inputs = self.listing()

    def attempt(self, op, a, b, *options):
        """Runs op on the named inputs into out.npy: the result, after checking that no file was left."""
        result = run(["run", "--op", op, self.path(a), self.path(b), "-o", self.path("out.npy")] + list(options))
        self.assertEqual(self.listing(), self.inputs, "a failed run left files behind")
        return result

    def assert_usage_error(self, result, message):
        """Status 2 and exactly the one line CLI11's failure message makes."""
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (2, "", "sqdiff: error: %s (see sqdiff run --help)\n" % message))

    def test_quant_options_go_together(self):
        given = {"--quant-a": "0.5,0", "--quant-b": "0.5,0", "--quant-out": "0.5,0"}
        for left_out in (["--quant-a"], ["--quant-b"], ["--quant-out"], ["--quant-a", "--quant-b"],
                         ["--quant-b", "--quant-out"], ["--quant-a", "--quant-out"]):
            options = [word for name, value in given.items() if name not in left_out for word in (name, value)]
            with self.subTest(left_out=left_out):
                self.assert_usage_error(
                    self.attempt("subtract", "i8_a.npy", "i8_b.npy", *options),
                    "--quant-a, --quant-b and --quant-out: they go together (quantized data needs all three); "
                    "missing " + " and ".join(left_out))

    def test_malformed_values_are_usage_errors(self):
        cases = [
            ("0.5", '"0.5" is not S,ZP (a scale and a zero point, e.g. 0.5,-3)'),
            ("0.5,0,1", '"0.5,0,1" is not S,ZP (a scale and a zero point, e.g. 0.5,-3)'),
            (",0", 'the scale "" is not a positive finite float32 (in ",0": a scale and a zero point, e.g. 0.5,-3)'),
            ("0.5,", 'the zero point "" is not an integer (in "0.5,": a scale and a zero point, e.g. 0.5,-3)'),
            ("0,0", 'the scale 0 is not a positive finite float32 (in "0,0": a scale and a zero point, e.g. 0.5,-3)'),
            ("-0.5,0", 'the scale -0.5 is not a positive finite float32 (in "-0.5,0": a scale and a zero point, '
                       'e.g. 0.5,-3)'),
            ("inf,0", 'the scale inf is not a positive finite float32 (in "inf,0": a scale and a zero point, '
                      'e.g. 0.5,-3)'),
            ("nan,0", 'the scale nan is not a positive finite float32 (in "nan,0": a scale and a zero point, '
                      'e.g. 0.5,-3)'),
            ("0x1p-3,0", 'the scale 0x1p-3 is not a positive finite float32 (in "0x1p-3,0": a scale and a zero '
                         'point, e.g. 0.5,-3)'),
            (" 0.5,0", 'the scale  0.5 is not a positive finite float32 (in " 0.5,0": a scale and a zero point, '
                       'e.g. 0.5,-3)'),
            ("1e39,0", "the scale 1e39 overflows float32 (at most 3.40282347e+38); a scale must be a positive "
                       "finite float32"),
            ("1e-46,0", "the scale 1e-46 rounds to 0 as a float32; a scale must be a positive finite float32"),
            ("1e-46x,0", 'the scale 1e-46x is not a positive finite float32 (in "1e-46x,0": a scale and a zero '
                         'point, e.g. 0.5,-3)'),
            ("1e39.5,0", 'the scale 1e39.5 is not a positive finite float32 (in "1e39.5,0": a scale and a zero '
                         'point, e.g. 0.5,-3)'),
            ("0.5,1.5", 'the zero point 1.5 is not an integer (in "0.5,1.5": a scale and a zero point, e.g. 0.5,-3)'),
            ("0.5,1e2", 'the zero point 1e2 is not an integer (in "0.5,1e2": a scale and a zero point, e.g. 0.5,-3)'),
            ("0.5,x", 'the zero point x is not an integer (in "0.5,x": a scale and a zero point, e.g. 0.5,-3)'),
            ("0.5,2147483648", "the zero point 2147483648 is out of range (-2147483648 to 2147483647)"),
            ("0.5,-2147483649", "the zero point -2147483649 is out of range (-2147483648 to 2147483647)"),
        ]
        for option in ("--quant-a", "--quant-b", "--quant-out"):
            for value, message in cases:
                options = {"--quant-a": "0.5,0", "--quant-b": "0.5,0", "--quant-out": "0.5,0"}
                options[option] = value
                words = ["%s=%s" % item for item in options.items()]
                with self.subTest(option=option, value=value):
                    self.assert_usage_error(self.attempt("subtract", "i8_a.npy", "i8_b.npy", *words),
                                            "%s: %s" % (option, message))

    def test_option_mistakes_come_before_the_files(self):
        # Neither input exists: the options are judged first (status 2), as docs/cli.md says.
        for options, message in (
                (["--quant-a", "0.5;0", "--quant-b", "0.5,0", "--quant-out", "0.5,0"],
                 '--quant-a: "0.5;0" is not S,ZP (a scale and a zero point, e.g. 0.5,-3)'),
                (["--quant-a", "0.5,0"], "--quant-a, --quant-b and --quant-out: they go together (quantized data "
                                         "needs all three); missing --quant-b and --quant-out")):
            with self.subTest(options=options):
                result = run(["run", "--op", "subtract", "missing_a.npy", "missing_b.npy", "-o", "c.npy"] + options,
                             cwd=self.dir)
                self.assert_usage_error(result, message)
                self.assertEqual(self.listing(), self.inputs)

    def test_well_formed_edge_values_are_accepted(self):
        # A subnormal float32 scale, '+' signs, -0: well-formed (the library then judges them).
        for option, value in (("--quant-a", "1e-45,0"), ("--quant-b", "+0.5,+0"), ("--quant-a", "0.5,-0"),
                              ("--quant-out", "3.4028235e38,0")):
            options = {"--quant-a": "0.5,0", "--quant-b": "0.5,0", "--quant-out": "1,0"}
            options[option] = value
            with self.subTest(option=option, value=value):
                result = run(["run", "--op", "subtract", self.path("i8_a.npy"), self.path("i8_b.npy"), "-o",
                              self.path("ok.npy")] + ["%s=%s" % item for item in options.items()])
                self.assert_ok(result)
                os.remove(self.path("ok.npy"))

    def test_options_that_need_the_quant_ones(self):
        for option in (["--activation", "relu"], ["--activation", "none"], ["--rounding", "single"],
                       ["--pot-scale-int16", "off"]):
            with self.subTest(option=option):
                self.assert_usage_error(self.attempt("subtract", "i8_a.npy", "i8_b.npy", *option),
                                        "--activation, --rounding and --pot-scale-int16: they go with --quant-a, "
                                        "--quant-b and --quant-out")

    def test_activation_on_squared_difference(self):
        quant = ["--quant-a", "0.5,0", "--quant-b", "0.5,0", "--quant-out", "0.5,0"]
        for activation in ("relu", "relu6", "relu_n1_to_1"):
            with self.subTest(activation=activation):
                self.assert_usage_error(
                    self.attempt("squared_difference", "i8_a.npy", "i8_b.npy", *quant, "--activation", activation),
                    "--activation: squared_difference has no fused activation (SPEC 9): --activation %s goes with "
                    "--op subtract" % activation)
        # none is what squared_difference has.
        self.assert_ok(run(["run", "--op", "squared_difference", self.path("i8_a.npy"), self.path("i8_b.npy"), "-o",
                            self.path("ok.npy")] + quant + ["--activation", "none"]))

    def test_quant_with_reduce(self):
        result = run(["run", "--reduce", "sum", self.path("i8_a.npy"), self.path("i8_b.npy"), "-o",
                      self.path("out.npy"), "--quant-a", "0.5,0", "--quant-b", "0.5,0", "--quant-out", "0.5,0"])
        self.assertEqual(self.listing(), self.inputs)
        self.assert_usage_error(result, "--quant-a, --quant-b and --quant-out: quantized data runs with --op "
                                        "squared_difference or subtract, not --reduce")

    def test_unknown_names(self):
        quant = ["--quant-a", "0.5,0", "--quant-b", "0.5,0", "--quant-out", "0.5,0"]
        for option, value, names in (("--activation", "sigmoid", "{none,relu,relu6,relu_n1_to_1}"),
                                     ("--rounding", "triple", "{double,single}"),
                                     ("--pot-scale-int16", "yes", "{on,off}")):
            with self.subTest(option=option):
                self.assert_usage_error(self.attempt("subtract", "i8_a.npy", "i8_b.npy", *quant, option, value),
                                        "%s: %s not in %s" % (option, value, names))

    def test_library_refusals_are_job_errors(self):
        """SPEC 9's errors: status 1, the library's message, nothing written (also into a pipe), an
        existing output untouched."""
        cases = [
            ("subtract", "u8.npy", "u8.npy", ("0.5,256", "0.5,0", "0.5,0"),
             "quantized_subtract: the zero point of a is 256, outside the range [0, 255] of u8"),
            ("squared_difference", "u8.npy", "u8.npy", ("0.5,0", "0.5,-1", "0.5,0"),
             "quantized_squared_difference: the zero point of b is -1, outside the range [0, 255] of u8"),
            ("subtract", "i8_a.npy", "i8_b.npy", ("0.5,0", "0.5,0", "0.5,128"),
             "quantized_subtract: the zero point of out is 128, outside the range [-128, 127] of i8"),
            ("squared_difference", "i16.npy", "i16.npy", ("0.5,1", "0.5,0", "0.5,0"),
             "quantized_squared_difference: the zero point of a is 1; int16 tensors are quantized symmetrically "
             "(zero point 0), as LiteRT requires"),
            ("subtract", "f32.npy", "f32.npy", ("0.5,0", "0.5,0", "0.5,0"),
             "quantized_subtract: a has type f32; quantized tensors are i8, u8 or i16"),
            ("squared_difference", "i32.npy", "i32.npy", ("0.5,0", "0.5,0", "0.5,0"),
             "quantized_squared_difference: a has type i32; quantized tensors are i8, u8 or i16"),
            ("subtract", "i8_a.npy", "i8_b.npy", ("0.5,0", "0.5,0", "1e-7,0"),
             "quantized_subtract: the output multiplier 2 max(scale_a, scale_b) / (2^20 scale_out) is 1 or more "
             "(scales a 0.5, b 0.5, out 1.00000001e-07): the output scale must exceed 2 max(scale_a, scale_b) / "
             "2^20, as LiteRT requires"),
            ("subtract", "i16.npy", "i16.npy", ("0.5,0", "0.5,0", "1e-5,0"),
             "quantized_subtract: the output multiplier 2 max(scale_a, scale_b) / (2^15 scale_out) is 1 or more"),
            ("subtract", "i16.npy", "i16.npy", ("0.0009765625,0", "0.00390625,0", "0.0009765625,0"),
             "quantized_subtract: int16 scales that are powers of two (a 2^-10, b 2^-8, out 2^-10) take LiteRT's "
             "power-of-two path"),
            ("subtract", "i8_a.npy", "u8.npy", ("0.5,0", "0.5,0", "0.5,0"),
             "subtract: mixed dtypes"),
            ("squared_difference", "i8_a.npy", "i8_4.npy", ("0.5,0", "0.5,0", "0.5,0"),
             "squared_difference: cannot broadcast [3] with [4]"),
        ]
        for op, a, b, (qa, qb, qout), message in cases:
            quant = ["--quant-a", qa, "--quant-b", qb, "--quant-out", qout]
            with self.subTest(op=op, a=a, b=b, quant=quant):
                result = self.attempt(op, a, b, *quant)
                self.assertEqual(result.returncode, 1)
                self.assert_error(result, "sqdiff: error: " + message)
                # Into a pipe: not even the .npy header is sent.
                piped = subprocess.run([SQDIFF, "run", "--op", op, self.path(a), self.path(b), "-o", "-"] + quant,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
                self.assertEqual((piped.returncode, piped.stdout), (1, b""))
                # An existing output is left as it was.
                with open(self.path("keep.npy"), "wb") as f:
                    f.write(b"keep")
                result = run(["run", "--op", op, self.path(a), self.path(b), "-o", self.path("keep.npy")] + quant)
                self.assertEqual(result.returncode, 1)
                with open(self.path("keep.npy"), "rb") as f:
                    self.assertEqual(f.read(), b"keep")
                os.remove(self.path("keep.npy"))
                self.assertEqual(self.listing(), self.inputs)
        # --dtype bf16 reads u16 files as bf16, which is not a quantized type.
        result = self.attempt("subtract", "u16.npy", "u16.npy", "--dtype", "bf16", "--quant-a", "0.5,0",
                              "--quant-b", "0.5,0", "--quant-out", "0.5,0")
        self.assertEqual(result.returncode, 1)
        self.assert_error(result, "quantized_subtract: a has type bf16; quantized tensors are i8, u8 or i16")


# --- the examples of docs/cli.md and of `sqdiff run --help` -----------------------------------

class QuantExamplesTest(QuantTestCase):
    def prepare(self):
        """The examples' inputs: qa.npy = [[2, 4, 6], [8, 10, 12]] and qb.npy = [14, 18, 22], int8."""
        self.qa = np.array([[2, 4, 6], [8, 10, 12]], dtype=np.int8)
        self.qb = np.array([14, 18, 22], dtype=np.int8)
        self.save("qa.npy", self.qa)
        self.save("qb.npy", self.qb)
        # The examples' `python3` is one with NumPy: /usr/bin/python3, first on PATH.
        bin_dir = self.path("bin")
        os.mkdir(bin_dir)
        os.symlink("/usr/bin/python3", os.path.join(bin_dir, "python3"))
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([bin_dir, os.path.dirname(os.path.abspath(SQDIFF)), env.get("PATH", "")])
        return env

    def shell(self, command, env):
        return subprocess.run(["bash", "-c", command], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=120)

    def test_docs_examples_print_what_they_say(self):
        env = self.prepare()
        examples = docs_console_examples(DOCS, "quant_run_test.py")
        self.assertGreaterEqual(len(examples), 3)
        for command, expected in examples:
            with self.subTest(command=command):
                result = self.shell(command, env)
                self.assertEqual((result.stdout.splitlines(), result.stderr), (expected, ""))

    def test_help_example_computes_what_it_says(self):
        env = self.prepare()
        examples = [command for command, _ in help_examples(run(["run", "--help"]).stdout) if "--quant-a" in command]
        self.assertEqual(len(examples), 1)
        result = self.shell(examples[0], env)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        expected = quant_oracle("subtract", self.qa, self.qb, "i8", (0.5, 0), (0.25, 10), (0.125, 0), "relu")
        self.assertEqual(np.load(self.path("qd.npy")).tolist(), expected.tolist())
        self.assertEqual(expected.tolist(), [[0, 0, 0], [24, 24, 24]])


if __name__ == "__main__":
    unittest.main()
