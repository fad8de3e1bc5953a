#!/usr/bin/python3
"""Command-level tests of `sqdiff compare` and `sqdiff run --reduce`.

Run by CTest as `/usr/bin/python3 compare_test.py -v CLASS` with SQDIFF_BIN (the
program) and SQDIFF_TEST_TMP (a scratch directory), like cli_test.py, whose
helpers this file shares.

The oracle is independent of the library: sums of squares are computed exactly
with fractions.Fraction from the inputs' exact values and rounded once by
Python (int / int true division is correctly rounded), so the program's
results must match bit for bit; NumPy gives the broadcasting, the NaN/inf
counts and |a - b| (in f64).
"""

import io
import json
import math
import multiprocessing
import os
import resource
import struct
import subprocess
import sys
import time
import unittest
import zipfile
import zlib
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_test import (ALL_DTYPES, FLOATS, INTS, NUMPY_DTYPE, SQDIFF, CliTestCase, assert_bit_exact,  # noqa: E402
                      bf16_to_f32, docs_console_examples, help_examples, ml_dtypes_or_skip, random_array, run,
                      run_with_terminal_stderr, two_byte_void_npy)

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "cli.md")
F64_MAX = Fraction(np.finfo(np.float64).max.item())


# --- the oracle ----------------------------------------------------------------------------------

def as_f64(values, dtype):
    """The inputs' exact values as float64 (exact for every float type)."""
    if dtype == "bf16":
        return bf16_to_f32(values).astype(np.float64)
    return values.astype(np.float64)


def align(a, b, mode, axis):
    """a and b broadcast to their common shape, as the program aligns them."""
    if mode == "pdpd":
        start = a.ndim - b.ndim if axis == -1 else axis
        b = b.reshape((1,) * start + b.shape + (1,) * (a.ndim - start - b.ndim))
    return np.broadcast_arrays(a, b)


def round_to_f64(value):
    """An exact Fraction rounded once to the nearest double (ties to even)."""
    try:
        return value.numerator / value.denominator
    except OverflowError:
        return math.inf


def exact_sums(x, y, dtype):
    """(sum, mean) of (x - y)^2 over all positions, exact then rounded once to f64.

    x, y: the broadcast inputs, flattened (float64 for floats, Python ints for integers)."""
    n = len(x)
    if dtype in FLOATS:
        nan_term = np.isnan(x) | np.isnan(y) | (np.isinf(x) & (x == y))
        inf_term = np.isinf(x) | np.isinf(y)
        if nan_term.any():
            return math.nan, math.nan
        if inf_term.any():
            return math.inf, math.inf
        squares = [(Fraction(p) - Fraction(q)) ** 2 for p, q in zip(x.tolist(), y.tolist())]
        # f64 inputs: a single square beyond f64 gives +inf (SPEC 7: the library does not rescale).
        if dtype == "f64" and any(s > F64_MAX for s in squares):
            return math.inf, math.inf
    else:
        squares = [(int(p) - int(q)) ** 2 for p, q in zip(x, y)]
    total = sum(squares, Fraction(0))
    return round_to_f64(total), (round_to_f64(total / n) if n else math.nan)


def expected_report(a, b, dtype, mode="numpy", axis=-1, peak=None):
    """The values `sqdiff compare --json` must print for inputs a, b (arrays of the file dtype)."""
    ab, bb = align(a, b, mode, axis)
    shape = ab.shape
    if dtype in FLOATS:
        x, y = as_f64(ab, dtype).reshape(-1), as_f64(bb, dtype).reshape(-1)
        with np.errstate(all="ignore"):
            d = np.where(x == y, 0.0, np.abs(x - y))
        valid = ~np.isnan(d)
        differing = int((~((x == y) | (np.isnan(x) & np.isnan(y)))).sum())
        nan = (int(np.isnan(x).sum()), int(np.isnan(y).sum()))
        inf = (int(np.isinf(x).sum()), int(np.isinf(y).sum()))
        if valid.any():
            max_diff = float(d[valid].max())
            position = int(np.flatnonzero(valid & (d == max_diff))[0])
        else:
            max_diff, position = None, None
    else:
        x, y = ab.reshape(-1).tolist(), bb.reshape(-1).tolist()
        diffs = [abs(p - q) for p, q in zip(x, y)]
        differing = sum(1 for e in diffs if e)
        nan = inf = (0, 0)
        if diffs:
            max_diff = max(diffs)
            position = diffs.index(max_diff)
        else:
            max_diff, position = None, None
        if peak is None:
            peak = float(2 ** (8 * a.dtype.itemsize) - 1)
    total, mean = exact_sums(x, y, dtype)
    psnr = None
    if peak is not None:
        psnr = math.inf if mean == 0 else (math.nan if math.isnan(mean) else
                                           20 * math.log10(peak) - 10 * math.log10(mean))
    return {
        "shape": list(shape), "elements": int(np.prod(shape)), "sum_of_squares": total, "mse": mean,
        "rmse": math.sqrt(mean) if not math.isnan(mean) else math.nan, "psnr": psnr, "peak": peak,
        "max_abs_diff": max_diff,
        "max_abs_diff_index": None if position is None else [int(i) for i in np.unravel_index(position, shape)],
        "differing": differing, "nan": {"a": nan[0], "b": nan[1]}, "inf": {"a": inf[0], "b": inf[1]},
        "identical": a.shape == b.shape and differing == 0,
    }


def field(report, key):
    """A float of the report: a JSON number, or null named in the object's "nonfinite" key (docs/cli.md)."""
    value = report[key]
    if value is None:
        return float(report["nonfinite"][key])
    if key in report["nonfinite"] or not isinstance(value, (int, float)) or isinstance(value, bool):
        raise AssertionError("%s: %r with nonfinite %r" % (key, value, report["nonfinite"]))
    return float(value)


def same_double(p, q):
    return (math.isnan(p) and math.isnan(q)) or (p == q and math.copysign(1, p) == math.copysign(1, q))


# --- file names in the report (docs/cli.md: "Paths in the report") ---------------------------------

def one_line_text(name):
    """The text report's spelling of the path `name` (bytes), from docs/cli.md: backslashes doubled;
    \\n, \\t, \\r; other control characters and each byte that is not part of well-formed UTF-8 as
    \\xHH; the C1 controls, U+2028 and U+2029 as \\uXXXX; other UTF-8 as is."""
    out = []
    for char in name.decode("utf-8", "surrogateescape"):  # each ill-formed byte: U+DC80 + the byte
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append("\\x%02x" % (code - 0xDC00))
        elif char in "\\\n\t\r":
            out.append({"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}[char])
        elif code < 0x20 or code == 0x7F:
            out.append("\\x%02x" % code)
        elif 0x80 <= code <= 0x9F or code in (0x2028, 0x2029):
            out.append("\\u%04x" % code)
        else:
            out.append(char)
    return "".join(out)


# Names that a report could garble: bytes that are not UTF-8 (a lone byte, cut-off, overlong and
# surrogate sequences, beyond U+10FFFF), JSON's specials, line breaks of every kind, other controls.
AWKWARD_NAMES = [
    b"x\xffy.npy", b"latin1-caf\xe9.npy", b"cut-\xe2\x82.npy", b"cut-\xe2\x82A.npy", b"overlong-\xc0\xaf.npy",
    b"surrogate-\xed\xa0\x80.npy", b"beyond-\xf4\x90\x80\x80.npy", b"four-\xf0\x80\x80.npy",
    b"new\nline.npy", b"carriage\rreturn.npy", b"tab\there.npy", b'quote".npy', b"back\\slash.npy",
    b"escape\x1b[31m.npy", b"bell\x07\x08\x0c\x7f.npy", b"next-line\xc2\x85.npy",
    b"separators\xe2\x80\xa8\xe2\x80\xa9.npy", "caf\u00e9-\u4e2d-\U0001f600.npy".encode(), b"plain.npy",
]


def random_names(count, seed):
    """Names of random bytes drawn mostly from those that make or break UTF-8 sequences."""
    rng = np.random.default_rng(seed)
    pieces = [bytes([b]) for b in (0x41, 0x5C, 0x22, 0x0A, 0x09, 0x01, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF,
                                   0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF)]
    pieces += ["\u00e9".encode(), "\u0085".encode(), "\u2028".encode(), "\ud7ff".encode(), "\ue000".encode(),
               "\U0010ffff".encode()]
    return [b"r%d-" % i + b"".join(pieces[k] for k in rng.integers(0, len(pieces), size=rng.integers(1, 9)))
            for i in range(count)]


def npz_by_hand(members, zip64=False, forged_size=None):
    """A .npz built record by record: members are (name, array) with their .npy bytes deflated, or
    (name, None) for a central entry that points at the previous member's bytes. zip64: every size and
    offset in the central directory goes through the zip64 extra field, with the zip64 end record and
    locator. forged_size: the uncompressed size the central directory claims for each member."""
    out, central, offset = bytearray(), bytearray(), 0
    for name, array in members:
        if array is not None:
            buffer = io.BytesIO()
            np.save(buffer, array)
            raw = buffer.getvalue()
            squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
            data = squeezer.compress(raw) + squeezer.flush()
            crc, offset = zlib.crc32(raw), len(out)
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(data), len(raw),
                               len(name), 0) + name.encode() + data
        size = forged_size if forged_size is not None else len(raw)
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, size, len(data), offset)
            fields = (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
        else:
            extra, fields = b"", (len(data), size, offset)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 8, 0, 0, crc, fields[0], fields[1],
                               len(name), len(extra), 0, 0, 0, 0, fields[2]) + name.encode() + extra
    start = len(out)
    out += central
    if zip64:
        record = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(members), len(members), len(central),
                           start)
        out += struct.pack("<IIQI", 0x07064B50, 0, record, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), start, 0)
    return bytes(out)


class CompareTestCase(CliTestCase):
    def compare_json(self, a_path, b_path, *extra):
        result = run(["compare", a_path, b_path, "--json", *extra])
        self.assert_ok(result)
        self.assertEqual(result.stderr, "")
        self.assertEqual(len(result.stdout.splitlines()), 1, result.stdout)
        return json.loads(result.stdout)

    def assert_report(self, got, expected, context=""):
        """Bit equality of every exact value; PSNR (libm's log10) within 1e-12 relative."""
        msg = "%s: got %r expected %r" % (context, got, expected)
        for key in ("shape", "elements", "differing", "nan", "inf", "identical", "max_abs_diff_index"):
            self.assertEqual(got[key], expected[key], "%s (%s)" % (msg, key))
        for key in ("sum_of_squares", "mse", "rmse"):
            self.assertTrue(same_double(field(got, key), expected[key]), "%s (%s)" % (msg, key))
        if expected["max_abs_diff"] is None:
            self.assertIsNone(got["max_abs_diff"], msg)
        elif isinstance(expected["max_abs_diff"], int):  # exact integers
            self.assertEqual(got["max_abs_diff"], expected["max_abs_diff"], msg)  # exact integers
            self.assertIsInstance(got["max_abs_diff"], int)
        else:
            self.assertTrue(same_double(field(got, "max_abs_diff"), expected["max_abs_diff"]), msg)
        if expected["psnr"] is None:
            self.assertIsNone(got["psnr"], msg)
            self.assertIsNone(got["peak"], msg)
        else:
            self.assertEqual(field(got, "peak"), expected["peak"], msg)
            psnr, want = field(got, "psnr"), expected["psnr"]
            if math.isfinite(want):
                self.assertAlmostEqual(psnr, want, delta=1e-12 * abs(want) + 1e-12, msg=msg)
            else:
                self.assertTrue(same_double(psnr, want), msg)

    def check(self, a, b, dtype, mode="numpy", axis=-1, extra=(), peak=None):
        a_path, b_path = self.save("a.npy", a), self.save("b.npy", b)
        args = list(extra) + (["--dtype", "bf16"] if dtype == "bf16" else [])
        args += ["--broadcast", mode]  # shapes must match unless asked (the default is none)
        if mode == "pdpd":
            args += ["--axis=%d" % axis]
        if peak is not None:
            args += ["--peak", repr(peak)]
        got = self.compare_json(a_path, b_path, *args)
        self.assertEqual(got["dtype"], dtype)
        self.assertEqual(got["a_shape"], list(a.shape))
        self.assertEqual(got["b_shape"], list(b.shape))
        self.assertEqual(got["broadcast"], mode)
        self.assertEqual((got["a"], got["b"]), (a_path, b_path))
        self.assert_report(got, expected_report(a, b, dtype, mode, axis, peak), "%s %s %s" % (dtype, mode, extra))
        return got


# --- compare: values -----------------------------------------------------------------------------

class CompareTest(CompareTestCase):
    def test_every_dtype_with_specials(self):
        rng = np.random.default_rng(21)
        for dtype in ALL_DTYPES:
            for special in (False, True):
                with self.subTest(dtype=dtype, special=special):
                    a = random_array(rng, dtype, (7, 13), special=special)
                    b = random_array(rng, dtype, (7, 13), special=False)
                    self.check(a, b, dtype)

    def test_every_dtype_close_values(self):
        """Finite, nearby values: a finite sum whose exact value has many more bits than f64."""
        rng = np.random.default_rng(22)
        for dtype in ALL_DTYPES:
            with self.subTest(dtype=dtype):
                a = random_array(rng, dtype, (5, 31), special=False)
                if dtype in INTS:
                    b = a ^ rng.integers(0, 8, size=a.shape).astype(a.dtype)
                elif dtype == "bf16":
                    b = a ^ rng.integers(0, 4, size=a.shape).astype(np.uint16)
                else:
                    b = (a * (1 + rng.standard_normal(a.shape) * 1e-3)).astype(a.dtype)
                got = self.check(a, b, dtype)
                if dtype != "bf16":
                    self.assertFalse(math.isnan(field(got, "mse")))

    def test_bf16_from_two_byte_void_files(self):
        """--dtype bf16 reads '<V2' and '|V2' files (np.save of ml_dtypes.bfloat16) as bf16 bits: the
        exact oracle's report, and the '<u2' bits files' report but for the paths; also beside a '<u2'
        file and broadcast."""
        rng = np.random.default_rng(24)
        a = random_array(rng, "bf16", (6, 11))
        b = random_array(rng, "bf16", (6, 11), special=False)
        bits = self.compare_json(self.save("a_bits.npy", a), self.save("b_bits.npy", b), "--dtype", "bf16")
        for mark in ("<", "|"):
            a_void = self.save_two_byte_void("a_void.npy", a, mark)
            b_void = self.save_two_byte_void("b_void.npy", b, mark)
            for name, b_path in (("bf16", b_void), ("bfloat16", b_void), ("bf16", self.path("b_bits.npy"))):
                with self.subTest(mark=mark, dtype=name, b=b_path):
                    got = self.compare_json(a_void, b_path, "--dtype", name)
                    self.assertEqual((got.pop("a"), got.pop("b")), (a_void, b_path))
                    self.assertEqual(got, {k: v for k, v in bits.items() if k not in ("a", "b")})
                    self.assertEqual(got["dtype"], "bf16")
                    self.assert_report(got, expected_report(a, b, "bf16"), "bf16 %sV2" % mark)
            got = self.compare_json(a_void, self.save_two_byte_void("row.npy", b[2], mark), "--dtype", "bf16",
                                    "--broadcast", "numpy")
            self.assert_report(got, expected_report(a, b[2], "bf16"), "bf16 %sV2 broadcast" % mark)

    def test_bf16_from_np_save_of_ml_dtypes(self):
        ml_dtypes = ml_dtypes_or_skip(self)
        rng = np.random.default_rng(25)
        a = random_array(rng, "bf16", (4, 9))
        b = random_array(rng, "bf16", (4, 9), special=False)
        got = self.compare_json(self.save("a.npy", a.view(ml_dtypes.bfloat16)),
                                self.save("b.npy", b.view(ml_dtypes.bfloat16)), "--dtype", "bf16")
        self.assert_report(got, expected_report(a, b, "bf16"), "np.save of ml_dtypes.bfloat16")

    def test_integer_extremes(self):
        for dtype in INTS:
            info = np.iinfo(NUMPY_DTYPE[dtype])
            a = np.array([info.max, info.min, 0, info.max], dtype=NUMPY_DTYPE[dtype])
            b = np.array([info.min, info.max, 0, info.max], dtype=NUMPY_DTYPE[dtype])
            with self.subTest(dtype=dtype):
                got = self.check(a, b, dtype)
                self.assertEqual(got["max_abs_diff"], int(info.max) - int(info.min))
                self.assertEqual(got["max_abs_diff_index"], [0])  # the first of the two maxima

    def test_broadcast_modes(self):
        rng = np.random.default_rng(23)
        cases = [
            ("numpy", -1, (4, 1, 3), (5, 1)),
            ("numpy", -1, (), (3, 4)),
            ("numpy", -1, (3, 4), ()),
            ("numpy", -1, (1, 6), (5, 1)),
            ("none", -1, (6, 5), (6, 5)),
            ("pdpd", 1, (2, 3, 4, 5), (3, 1)),
            ("pdpd", -1, (2, 3, 4), (3, 4)),
            ("pdpd", 0, (3, 4), (3,)),
        ]
        for dtype in ("f32", "f16", "i16", "u64"):
            for mode, axis, a_shape, b_shape in cases:
                with self.subTest(dtype=dtype, mode=mode, a=a_shape, b=b_shape):
                    a = random_array(rng, dtype, a_shape, special=dtype == "f16")
                    b = random_array(rng, dtype, b_shape, special=False)
                    self.check(a, b, dtype, mode, axis)

    def test_fortran_order(self):
        rng = np.random.default_rng(24)
        a = np.asfortranarray(random_array(rng, "f64", (9, 7), special=False))
        b = random_array(rng, "f64", (9, 7), special=False)
        self.check(a, b, "f64")
        self.check(b, a, "f64", extra=("--chunk-elements", "5"))

    def test_chunks_and_threads_do_not_change_anything(self):
        rng = np.random.default_rng(25)
        for dtype in ("f32", "bf16", "i32"):
            a = random_array(rng, dtype, (6, 5, 7), special=True)
            b = random_array(rng, dtype, (5, 1), special=False)
            first = None
            for chunk in ("1", "3", "7", "34", "1000"):
                for threads in ("1", "2", "3"):
                    with self.subTest(dtype=dtype, chunk=chunk, threads=threads):
                        got = self.check(a, b, dtype, extra=("--chunk-elements", chunk, "--threads", threads))
                        first = first or got
                        self.assertEqual(got, first)

    def test_large_arrays_equal_the_library_and_numpy(self):
        """Too many elements for the Fraction oracle: bit for bit `run --reduce` (one library call
        over the whole arrays) whatever the chunks, and NumPy's f64 sums within 1e-12."""
        rng = np.random.default_rng(29)
        for dtype, shape in (("f32", (1500, 2001)), ("f16", (3, 700001)), ("i16", (2000, 1500))):
            a = random_array(rng, dtype, shape, special=False)
            b = random_array(rng, dtype, shape, special=False)
            a_path, b_path = self.save("a.npy", a), self.save("b.npy", b)
            out = self.path("out.npy")
            library = {}
            for kind in ("sum", "mean"):
                self.assert_ok(run(["run", "--reduce", kind, a_path, b_path, "-o", out, "--out-dtype", "f64"]))
                library[kind] = float(np.load(out))
            d = a.astype(np.float64) - b.astype(np.float64)
            numpy_sum = float(np.sum(d * d))
            for chunk in ("1000003", "65536", "4194304"):
                with self.subTest(dtype=dtype, chunk=chunk):
                    got = self.compare_json(a_path, b_path, "--chunk-elements", chunk)
                    self.assertEqual(got["sum_of_squares"], library["sum"])
                    self.assertEqual(got["mse"], library["mean"])
                    self.assertAlmostEqual(got["sum_of_squares"], numpy_sum, delta=1e-12 * numpy_sum)
                    self.assertEqual(got["max_abs_diff"], float(np.abs(d).max()))

    def test_float32_rows_through_the_fused_pass(self):
        """Contiguous float32 rows take statistics and sums in one pass (kernels/fused_compare.hpp)
        while every block of 256 pairs is finite: against the Fraction oracle, with a NaN or an inf
        in a late block (the chunk falls back to the separate passes), subnormals, differences
        beyond f32's range, ties of the largest |a - b| across blocks, and a sum exactly halfway
        between two doubles (the bound cannot decide it: the exact pass must)."""
        rng = np.random.default_rng(230)
        a = (rng.standard_normal((3, 700)) * 2.0 ** rng.integers(-30, 30, (3, 700))).astype(np.float32)
        b = (a * (1 + rng.standard_normal(a.shape) * 1e-4)).astype(np.float32)
        a[0, 5] = np.float32(1e-45)  # subnormal
        a[0, 6], b[0, 6] = np.finfo(np.float32).max, -np.finfo(np.float32).max
        for row, column in ((1, 300), (1, 600)):  # ties of the largest |a - b|: the first, [0, 6], is reported
            a[row, column], b[row, column] = np.finfo(np.float32).max, -np.finfo(np.float32).max
        a[2, 10], b[2, 10], a[2, 650], b[2, 650] = 8.0, 0.0, 8.0, 0.0
        cases = {"mixed": (a, b)}
        nan_late = (a.copy(), b.copy())
        nan_late[0][2, 530] = np.nan
        cases["nan late"] = nan_late
        halfway_a = np.zeros((2, 600), dtype=np.float32)
        halfway_a[0, 0] = 1.0
        halfway_a[1, 300] = halfway_a[1, 599] = 2.0 ** -27  # 1 + 2 * 2^-54: halfway between doubles
        cases["halfway"] = (halfway_a, np.zeros_like(halfway_a))
        for name, (x, y) in cases.items():
            for chunk in ("600", "700", "2100", "1000000"):
                with self.subTest(case=name, chunk=chunk):
                    got = self.check(x, y, "f32", extra=("--chunk-elements", chunk, "--threads", "2"))
                    if name == "mixed":
                        self.assertEqual(got["max_abs_diff_index"], [0, 6])
                    if name == "halfway":
                        self.assertEqual(got["sum_of_squares"], 1.0)  # ties to even
                        self.assertEqual(got["max_abs_diff_index"], [0, 0])

    def test_max_ties_report_the_first_position(self):
        a = np.array([[0, 5, 0], [5, 0, 0]], dtype=np.float32)
        b = np.zeros((2, 3), dtype=np.float32)
        for chunk in ("1", "2", "1000"):
            got = self.compare_json(self.save("a.npy", a), self.save("b.npy", b), "--chunk-elements", chunk,
                                    "--threads", "2")
            self.assertEqual(got["max_abs_diff_index"], [0, 1])
            self.assertEqual(got["max_abs_diff"], 5)

    def test_empty_arrays(self):
        for dtype in ("f32", "u8"):
            for a_shape, b_shape in (((0,), (0,)), ((0, 3), (3,)), ((2, 0), (2, 1))):
                with self.subTest(dtype=dtype, a=a_shape, b=b_shape):
                    a = np.zeros(a_shape, dtype=NUMPY_DTYPE[dtype])
                    b = np.zeros(b_shape, dtype=NUMPY_DTYPE[dtype])
                    got = self.check(a, b, dtype)
                    self.assertEqual(got["elements"], 0)
                    self.assertEqual(got["sum_of_squares"], 0)
                    self.assertEqual((got["mse"], got["nonfinite"]["mse"]), (None, "nan"))  # a mean over no elements (SPEC 7)
                    self.assertIsNone(got["max_abs_diff"])
                    self.assertIsNone(got["max_abs_diff_index"])

    def test_nan_laden(self):
        a = np.full((4, 5), np.nan, dtype=np.float32)
        b = np.full((4, 5), np.nan, dtype=np.float32)
        got = self.check(a, b, "f32")
        self.assertEqual(got["nan"], {"a": 20, "b": 20})
        self.assertEqual(got["differing"], 0)  # two NaNs are equal here
        self.assertTrue(got["identical"])
        self.assertIsNone(got["max_abs_diff"])
        self.assertEqual((got["sum_of_squares"], got["nonfinite"]["sum_of_squares"]), (None, "nan"))
        b[1, 2] = 7.0
        b[3, 4] = -1.0
        got = self.check(a, b, "f32")
        self.assertEqual(got["differing"], 2)
        self.assertFalse(got["identical"])
        a[:] = 1.0
        a[0, 0] = np.nan
        got = self.check(a, b, "f32", peak=1.0)
        self.assertEqual((got["psnr"], got["nonfinite"]["psnr"]), (None, "nan"))

    def test_infinities(self):
        a = np.array([np.inf, -np.inf, np.inf, 1.0, 2.0], dtype=np.float64)
        b = np.array([np.inf, np.inf, 1.0, 1.0, 2.0], dtype=np.float64)
        got = self.check(a, b, "f64")
        self.assertEqual(got["inf"], {"a": 3, "b": 2})
        self.assertEqual((got["max_abs_diff"], got["nonfinite"]["max_abs_diff"]), (None, "inf"))
        self.assertEqual(got["max_abs_diff_index"], [1])
        self.assertEqual(got["differing"], 2)
        self.assertEqual((got["sum_of_squares"], got["nonfinite"]["sum_of_squares"]), (None, "nan"))  # inf - inf of one sign at [0] is a NaN term
        got = self.check(a[1:], b[1:], "f64")
        self.assertEqual((got["sum_of_squares"], got["nonfinite"]["sum_of_squares"]), (None, "inf"))
        self.assertEqual((got["mse"], got["nonfinite"]["mse"]), (None, "inf"))
        got = self.check(a[:1], b[:1], "f64")
        self.assertEqual((got["sum_of_squares"], got["nonfinite"]["sum_of_squares"]), (None, "nan"))
        self.assertTrue(got["identical"])
        # f16 squares beyond f16's range are fine: the result is f64
        a16 = np.array([60000, -60000], dtype=np.float16)
        b16 = np.array([-60000, 60000], dtype=np.float16)
        got = self.check(a16, b16, "f16")
        self.assertEqual(field(got, "sum_of_squares"), 2 * 120000.0 ** 2)

    def test_integer_psnr(self):
        a = np.array([[0, 10], [20, 30]], dtype=np.uint8)
        b = np.array([[0, 12], [20, 27]], dtype=np.uint8)
        got = self.check(a, b, "u8")
        self.assertEqual(got["peak"], 255)
        self.assertEqual(got["mse"], 13 / 4)
        self.assertAlmostEqual(field(got, "psnr"), 10 * math.log10(255 ** 2 / 3.25), delta=1e-12)
        got = self.check(a, b, "u8", peak=100.0)  # --peak overrides the type's range
        self.assertEqual(got["peak"], 100)
        got = self.check(a.astype(np.int16), b.astype(np.int16), "i16")
        self.assertEqual(got["peak"], 65535)
        got = self.check(a, a, "u8")
        self.assertEqual((got["psnr"], got["nonfinite"]["psnr"]), (None, "inf"))
        self.assertTrue(got["identical"])

    def test_float_psnr_needs_peak(self):
        a = np.array([0.0, 0.5, 1.0], dtype=np.float32)
        b = np.array([0.0, 0.25, 1.0], dtype=np.float32)
        got = self.check(a, b, "f32")
        self.assertIsNone(got["psnr"])
        got = self.check(a, b, "f32", peak=1.0)
        self.assertAlmostEqual(field(got, "psnr"), 10 * math.log10(1 / (0.0625 / 3)), delta=1e-12)
        text = run(["compare", self.path("a.npy"), self.path("b.npy")]).stdout
        self.assertIn("PSNR: n/a", text)

    def test_identical_needs_equal_shapes(self):
        a = np.ones((2, 3), dtype=np.float32)
        got = self.check(a, np.ones((3,), dtype=np.float32), "f32")
        self.assertEqual(got["differing"], 0)
        self.assertFalse(got["identical"])  # equal values, but b was broadcast
        got = self.check(np.array([0.0], np.float32), np.array([-0.0], np.float32), "f32")
        self.assertTrue(got["identical"])  # +0 equals -0

    def test_text_report_matches_json(self):
        rng = np.random.default_rng(26)
        a = random_array(rng, "i32", (3, 4), special=False)
        b = random_array(rng, "i32", (3, 4), special=False)
        a_path, b_path = self.save("a.npy", a), self.save("b.npy", b)
        data = self.compare_json(a_path, b_path)
        result = run(["compare", a_path, b_path])
        self.assert_ok(result)
        lines = result.stdout.splitlines()
        self.assertEqual(lines[0], "a: %s (i32 [3,4])" % a_path)
        self.assertEqual(lines[1], "b: %s (i32 [3,4])" % b_path)
        self.assertEqual(lines[2], "elements: 12 (shape [3,4])")
        self.assertEqual(float(lines[3].split(": ")[1]), field(data, "sum_of_squares"))
        self.assertEqual(float(lines[4].split(": ")[1]), field(data, "mse"))
        self.assertEqual(lines[7], "max |a - b|: %d at [%s]" % (
            data["max_abs_diff"], ",".join(map(str, data["max_abs_diff_index"]))))
        self.assertEqual(lines[-2], "identical: no")
        self.assertEqual(lines[-1], "result: pass")  # no gate asked for

    def test_numbers_round_trip(self):
        """Shortest round-trip printing: the JSON text reads back as the very double."""
        a = np.array([0.1, 1e-300, 3.0], dtype=np.float64)
        b = np.array([0.0, 0.0, 0.0], dtype=np.float64)
        got = self.check(a, b, "f64")
        raw = run(["compare", self.path("a.npy"), self.path("b.npy"), "--json"]).stdout
        self.assertRegex(raw, r'"max_abs_diff": 3[,}]')
        self.assertEqual(field(got, "sum_of_squares"), expected_report(a, b, "f64")["sum_of_squares"])

    def test_fail_above(self):
        a = self.save("a.npy", np.array([1.0, 2.0], dtype=np.float32))
        b = self.save("b.npy", np.array([1.0, 4.0], dtype=np.float32))  # MSE 2
        for threshold, status in (("1.5", 3), ("2", 0), ("2.5", 0)):
            result = run(["compare", a, b, "--fail-above", threshold])
            self.assertEqual(result.returncode, status, threshold)
            self.assertIn("MSE: 2\n", result.stdout)  # the report is printed either way
        nan = self.save("n.npy", np.array([np.nan, 0.0], dtype=np.float32))
        self.assertEqual(run(["compare", a, nan, "--fail-above", "1e300"]).returncode, 3)
        self.assertEqual(run(["compare", a, nan]).returncode, 0)  # differences alone never fail

    def test_fail_above_inf_fails_only_a_nan_mse(self):
        a = self.save("a.npy", np.array([0.0, 3e38], dtype=np.float32))
        b = self.save("b.npy", np.array([0.0, -3e38], dtype=np.float32))  # MSE inf
        nan = self.save("n.npy", np.array([np.nan, 0.0], dtype=np.float32))
        self.assertEqual(run(["compare", a, b, "--fail-above", "inf"]).returncode, 0)
        self.assertEqual(run(["compare", a, b, "--fail-above", "1e999"]).returncode, 0)  # strtod: inf
        self.assertEqual(run(["compare", a, nan, "--fail-above", "inf"]).returncode, 3)
        self.assertEqual(run(["compare", a, a, "--fail-above", "0"]).returncode, 0)  # MSE 0 is not above 0
        self.assertEqual(run(["compare", a, a, "--fail-above=-0"]).returncode, 0)

    def compare_names(self, names, *extra):
        """Runs compare on a copy of a.npy under each name (bytes) against b.npy, from self.dir;
        returns {name: the run's stdout (bytes)}."""
        a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
        self.save("b.npy", np.array([1.0, 2.0, 5.0], dtype=np.float32))
        outputs = {}
        for name in names:
            with open(os.path.join(os.fsencode(self.dir), name), "wb") as f:
                np.save(f, a)
            result = subprocess.run([os.fsencode(SQDIFF), b"compare", name, b"b.npy", *extra], cwd=self.dir,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            self.assertEqual((result.returncode, result.stderr), (0, b""), name)
            outputs[name] = result.stdout
        return outputs

    def assert_json_names(self, outputs):
        for name, stdout in outputs.items():
            with self.subTest(name=name):
                self.assertEqual(stdout.count(b"\n"), 1, stdout)
                report = json.loads(stdout)  # bytes: must be valid UTF-8 and valid JSON
                self.assertEqual(report["a"], name.decode("utf-8", "replace"))
                self.assertEqual(report["b"], "b.npy")
                self.assertNotIn("b_bytes", report)
                try:
                    name.decode("utf-8")
                    self.assertNotIn("a_bytes", report)
                except UnicodeDecodeError:
                    self.assertEqual(bytes.fromhex(report["a_bytes"]), name)  # lossless
                self.assertEqual(report["mse"], 4 / 3)
                keys = list(report)
                self.assertEqual(keys[:2], ["a", "a_bytes"] if "a_bytes" in report else ["a", "b"])

    def test_file_names_in_json(self):
        self.assert_json_names(self.compare_names(AWKWARD_NAMES, b"--json"))

    def test_random_file_names_in_json(self):
        self.assert_json_names(self.compare_names(random_names(150, 51), b"--json"))

    def test_file_names_in_text_stay_on_their_line(self):
        outputs = self.compare_names(AWKWARD_NAMES + random_names(60, 52))
        for name, stdout in outputs.items():
            with self.subTest(name=name):
                text = stdout.decode("utf-8")  # valid UTF-8 whatever the name
                lines = text.splitlines()  # splits at every Unicode line break, U+0085 and U+2028 included
                self.assertEqual(len(lines), 14, text)
                self.assertEqual(lines[0], "a: %s (f32 [3])" % one_line_text(name))
                self.assertEqual(lines[1], "b: b.npy (f32 [3])")
                self.assertEqual(lines[4], "MSE: 1.3333333333333333")
        self.assertEqual(one_line_text(b"x\xffy\n\\.npy"), "x\\xffy\\n\\\\.npy")  # the oracle itself

    def test_progress_bar_only_on_a_terminal(self):
        # 4100 x 4100 f32 positions = 64.1 MiB of one input's dtype: just above the threshold.
        a = self.save("a.npy", np.ones((4100, 1), dtype=np.float32))
        b = self.save("b.npy", np.zeros((4100,), dtype=np.float32))
        args = [SQDIFF, "compare", a, b, "--json", "--broadcast", "numpy"]

        def on_pty(extra):
            text, stdout, status = run_with_terminal_stderr(args + extra, stdout=subprocess.PIPE)
            self.assertEqual(status, 0)
            self.assertEqual(json.loads(stdout)["mse"], 1.0)  # the report is untouched by the bar
            return text

        text = on_pty([])
        self.assertIn("100%", text)
        self.assertIn("sqdiff compare", text)
        self.assertEqual(on_pty(["--quiet"]), "")
        result = run(args[1:])  # stderr is a pipe: no bar
        self.assert_ok(result)
        self.assertEqual(result.stderr, "")

    def test_help_examples_run(self):
        """`sqdiff compare --help`'s examples run as written."""
        examples = help_examples(run(["compare", "--help"]).stdout)
        self.assertGreaterEqual(len(examples), 3)
        rng = np.random.default_rng(27)
        self.save("ref.npy", rng.standard_normal((16, 16)).astype(np.float32))
        self.save("out.npy", rng.standard_normal((16, 16)).astype(np.float32))
        self.save("image_a.npy", np.full((8, 8, 3), 100, dtype=np.uint8))
        self.save("image_b.npy", np.full((8, 8, 3), 100, dtype=np.uint8))
        np.savez(self.path("ref_outputs.npz"), logits=np.ones((2, 3), np.float32))
        np.savez_compressed(self.path("outputs.npz"), logits=np.ones((2, 3), np.float32))
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(os.path.abspath(SQDIFF)) + os.pathsep + env.get("PATH", "")
        for command, expected in examples:
            with self.subTest(command=command):
                result = subprocess.run(["bash", "-c", command], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, timeout=120)
                # 3: a gate failed on these random arrays (the tolerance example); the report is printed
                self.assertIn(result.returncode, (0, 3), command + ": " + result.stderr)
                self.assertEqual(result.stderr, "")
                if expected:
                    self.assertEqual(result.stdout.splitlines(), expected)


# --- compare as a gate: tolerance, non-finite values, sets (issue 24, item 1) ---------------------

def allclose_oracle(a, b, atol, rtol, equal_nan):
    """NumPy's isclose on f64 arrays (the program evaluates the rule in f64), per element."""
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


class CompareGateTest(CompareTestCase):
    def gate(self, a, b, *extra):
        result = run(["compare", self.save("a.npy", a), self.save("b.npy", b), "--json", *extra])
        self.assertIn(result.returncode, (0, 3), result.stderr)
        report = json.loads(result.stdout)
        self.assertEqual(report["passed"], result.returncode == 0)
        return report, result.returncode

    def test_tolerance_against_numpy_isclose(self):
        rng = np.random.default_rng(61)
        for trial in range(30):
            a = rng.standard_normal((7, 11))
            b = a + rng.standard_normal((7, 11)) * 10.0 ** rng.integers(-9, 0)
            b[rng.random((7, 11)) < 0.05] = np.nan
            a[rng.random((7, 11)) < 0.05] = np.inf
            atol, rtol = 10.0 ** rng.integers(-9, -1), 10.0 ** rng.integers(-7, -1)
            equal_nan = bool(trial % 2)
            extra = ["--atol", repr(atol), "--rtol", repr(rtol)] + (["--equal-nan"] if equal_nan else [])
            with self.subTest(trial=trial):
                report, status = self.gate(a, b, *extra, "--chunk-elements", str(1 + trial))
                close = allclose_oracle(a, b, atol, rtol, equal_nan)
                t = report["tolerance"]
                self.assertEqual((t["atol"], t["rtol"], t["equal_nan"]), (atol, rtol, equal_nan))
                self.assertEqual(t["out_of_tolerance"], int((~close).sum()))
                self.assertEqual(status, 0 if close.all() else 3)
                if close.all():
                    self.assertIsNone(t["worst_index"])
                    continue
                # The worst: the largest |a - b| among the violations, a NaN difference above all.
                with np.errstate(invalid="ignore"):
                    d = np.abs(a - b)
                key = np.where(np.isnan(d), np.inf, d)
                key[close] = -1
                ranked = np.where(np.isnan(d) & ~close, 2.0, 0.0) + np.where(np.isinf(key), 1.0, 0.0)
                order = np.lexsort((-np.arange(key.size), key.reshape(-1), ranked.reshape(-1)))
                worst = int(order[-1]) if ranked.max() == 0 else int(np.flatnonzero(
                    (ranked.reshape(-1) == ranked.max()))[0])
                self.assertEqual(t["worst_index"], list(np.unravel_index(worst, a.shape)))
                want = d.reshape(-1)[worst]
                self.assertTrue(same_double(field(t, "worst_abs_error"), want))
                with np.errstate(divide="ignore", invalid="ignore"):
                    self.assertTrue(same_double(field(t, "worst_rel_error"), want / abs(b.reshape(-1)[worst])))

    def test_tolerance_defaults_exit_status_and_text(self):
        a = np.array([1.0, 2.0, 3.0], dtype=np.float32)
        b = np.array([1.0, 2.0, 3.001], dtype=np.float32)
        report, status = self.gate(a, b, "--atol", "0.01")
        self.assertEqual((status, report["tolerance"]["rtol"]), (0, 1e-05))  # np.allclose's default rtol
        report, status = self.gate(a, b, "--rtol", "1e-5")
        self.assertEqual((status, report["tolerance"]["atol"]), (3, 1e-08))  # np.allclose's default atol
        self.assertEqual(report["tolerance"]["worst_index"], [2])
        self.assertIsNone(self.gate(a, b)[0]["tolerance"])  # no gate: today's behaviour
        self.assertEqual(self.gate(a, b)[1], 0)
        text = run(["compare", self.path("a.npy"), self.path("b.npy"), "--rtol", "1e-5"])
        self.assertEqual(text.returncode, 3)
        lines = text.stdout.splitlines()
        self.assertTrue(lines[-3].startswith("tolerance: atol 1e-08, rtol 1e-05: 1 of 3 out of tolerance, "
                                             "worst at [2]: |a - b| 0.0009999275207519531, relative "), lines)
        self.assertEqual(lines[-1], "result: FAIL (1 out of tolerance)")
        # Both gates at once: each failure named.
        text = run(["compare", self.path("a.npy"), self.path("b.npy"), "--rtol", "1e-5", "--fail-above", "0"])
        d = float(np.float32(3.001)) - 3.0  # d * d is exact; one rounding in the division, as the exact MSE
        self.assertEqual(text.stdout.splitlines()[-1], "result: FAIL (1 out of tolerance, MSE %r above 0)" % (d * d / 3))
        result = run(["compare", self.path("a.npy"), self.path("b.npy"), "--equal-nan"])
        self.assertEqual((result.returncode, result.stdout), (2, ""))
        self.assertIn("--equal-nan: applies to the tolerance gate", result.stderr)
        for value in ("-1", "nan", "inf", "x"):
            result = run(["compare", self.path("a.npy"), self.path("b.npy"), "--atol=" + value])
            self.assertEqual((result.returncode, result.stderr),
                             (2, "sqdiff: error: --atol: value %s is not a finite number, 0 or more "
                                 "(see sqdiff compare --help)\n" % value))

    def test_integer_tolerance_is_exact(self):
        info = np.iinfo(np.int64)
        a = np.array([info.min, 5, 7], dtype=np.int64)
        b = np.array([info.max, 5, 9], dtype=np.int64)
        report, status = self.gate(a, b, "--atol", "2")
        self.assertEqual(status, 3)
        t = report["tolerance"]
        self.assertEqual((t["out_of_tolerance"], t["worst_index"], t["worst_abs_error"]), (1, [0], 2 ** 64 - 1))
        self.assertEqual(t["worst_rel_error"], 2.0 ** 64 / 2.0 ** 63)

    def test_nan_and_inf_positions_and_finite_statistics(self):
        a = np.zeros((3, 4), dtype=np.float32)
        b = np.zeros((3, 4), dtype=np.float32)
        b[0, 1] = 3.0
        a[1, 2] = np.nan
        b[2, 0] = np.nan
        b[2, 3] = -np.inf
        a[2, 1] = np.inf
        for chunk in ("1", "5", "100"):
            report, _ = self.gate(a, b, "--chunk-elements", chunk, "--threads", "2")
            self.assertEqual(report["nan"], {"a": 1, "b": 1})
            self.assertEqual(report["first_nan"], {"a": [1, 2], "b": [2, 0]})
            self.assertEqual(report["first_inf"], {"a": [2, 1], "b": [2, 3]})
            self.assertEqual((report["sum_of_squares"], report["nonfinite"]["sum_of_squares"]), (None, "nan"))
            finite = report["finite"]
            self.assertEqual(finite, {"elements": 8, "sum_of_squares": 9, "mse": 1.125, "rmse": math.sqrt(1.125),
                                      "max_abs_diff": 3, "max_abs_diff_index": [0, 1], "nonfinite": {}})
            self.assertEqual(report["max_abs_diff_index"], [2, 1])  # inf: over the pairs without a NaN
        text = run(["compare", self.path("a.npy"), self.path("b.npy")]).stdout.splitlines()
        self.assertIn("NaN: a 1 (first at [1,2]), b 1 (first at [2,0])", text)
        self.assertIn("finite pairs: 8: sum of squares 9, MSE 1.125, max |a - b| 3 at [0,1]", text)

    def test_finite_sums_are_exact(self):
        rng = np.random.default_rng(62)
        for dtype in ("f16", "f32", "f64"):
            a = random_array(rng, dtype, (9, 13), special=True)
            b = random_array(rng, dtype, (9, 13), special=False)
            with self.subTest(dtype=dtype):
                report, _ = self.gate(a, b, "--chunk-elements", "17")
                x, y = as_f64(a, dtype).reshape(-1), as_f64(b, dtype).reshape(-1)
                keep = np.isfinite(x) & np.isfinite(y)
                total, mean = exact_sums(x[keep], y[keep], dtype)
                self.assertEqual(report["finite"]["elements"], int(keep.sum()))
                self.assertTrue(same_double(field(report["finite"], "sum_of_squares"), total))
                self.assertTrue(same_double(field(report["finite"], "mse"), mean))

    def test_shapes_must_match_unless_broadcast(self):
        a = self.save("a.npy", np.ones((1000, 1), dtype=np.float32))
        b = self.save("b.npy", np.ones((1000,), dtype=np.float32))
        result = run(["compare", a, b])
        self.assertEqual(result.returncode, 1)
        self.assertIn("shapes must match (give --broadcast numpy to broadcast)", result.stderr)
        report = self.compare_json(a, b, "--broadcast", "numpy")
        self.assertEqual((report["broadcasted"], report["elements"], report["shape"]), (True, 10 ** 6, [1000, 1000]))
        self.assertFalse(self.compare_json(a, a)["broadcasted"])

    def test_json_types_are_fixed(self):
        """Every key present, each of one JSON type (or null where documented), whatever the data."""
        rng = np.random.default_rng(63)
        cases = [(np.array([np.nan, np.inf, 1.0]), np.array([np.nan, -np.inf, 2.0])),
                 (np.zeros(0), np.zeros(0)), (np.array([1e308, -1e308]), np.array([-1e308, 1e308])),
                 (random_array(rng, "f32", (4, 4), special=True), random_array(rng, "f32", (4, 4), special=True))]
        keys = None
        for a, b in cases:
            for extra in ([], ["--atol", "0", "--peak", "1", "--fail-above", "inf"]):
                report, _ = self.gate(a, b, *extra)
                names = list(report)
                keys = keys or names
                self.assertEqual(names, keys)
                for obj in (report, report["finite"]) + ((report["tolerance"],) if report["tolerance"] else ()):
                    for key, kind in obj["nonfinite"].items():
                        self.assertIsNone(obj[key])
                        self.assertIn(kind, ("nan", "inf", "-inf"))
                    for key, value in obj.items():
                        self.assertNotIsInstance(value, str if key not in ("dtype", "broadcast", "a", "b") else
                                                 type(None), key)

    def make_set(self, kind, name, arrays):
        path = self.path(name)
        if kind == "folder":
            os.mkdir(path)
            for key, value in arrays.items():
                np.save(os.path.join(path, key + ".npy"), value)
            with open(os.path.join(path, "notes.txt"), "w") as f:
                f.write("not a tensor")  # ignored
        elif kind == "npz":
            np.savez(path, **arrays)
        else:
            np.savez_compressed(path, **arrays)
        return path

    def test_sets_of_tensors(self):
        rng = np.random.default_rng(64)
        ref = {"logits": rng.standard_normal((3, 5)).astype(np.float32), "boxes": rng.standard_normal(4),
               "count": np.array([3, 4], dtype=np.int32), "only_ref": np.zeros(2)}
        out = {"logits": ref["logits"] + np.float32(1e-3), "boxes": ref["boxes"].copy(),
               "count": np.array([3, 4], dtype=np.int32), "only_out": np.zeros(2)}
        for kind_a in ("folder", "npz", "npz_compressed"):
            for kind_b in ("folder", "npz", "npz_compressed"):
                with self.subTest(a=kind_a, b=kind_b):
                    a = self.make_set(kind_a, "a_%s_%s%s" % (kind_a, kind_b, "" if kind_a == "folder" else ".npz"), ref)
                    b = self.make_set(kind_b, "b_%s_%s%s" % (kind_a, kind_b, "" if kind_b == "folder" else ".npz"), out)
                    result = run(["compare", a, b, "--json", "--atol", "1e-4"])
                    self.assertEqual(result.returncode, 3, result.stderr)
                    report = json.loads(result.stdout)
                    self.assertEqual([t["name"] for t in report["tensors"]], ["boxes", "count", "logits"])
                    self.assertEqual(report["missing"], [{"name": "only_ref"}])
                    self.assertEqual(report["extra"], [{"name": "only_out"}])
                    self.assertEqual((report["compared"], report["failed"], report["passed"]), (3, 1, False))
                    by_name = {t["name"]: t for t in report["tensors"]}
                    self.assertEqual(by_name["logits"]["tolerance"]["out_of_tolerance"], 15)
                    self.assertTrue(by_name["boxes"]["passed"] and by_name["count"]["passed"])
                    self.assertEqual(by_name["count"]["dtype"], "i32")
                    # Each tensor's entry is the pair report of the same arrays, name for paths.
                    single = self.gate(ref["logits"], out["logits"], "--atol", "1e-4")[0]
                    del single["a"], single["b"]
                    entry = dict(by_name["logits"])
                    del entry["name"]
                    self.assertEqual(entry, single)
        # Same names on both sides and all within tolerance: status 0, and the text table.
        a = self.make_set("npz", "same_a.npz", {"x": np.ones(3)})
        b = self.make_set("npz_compressed", "same_b.npz", {"x": np.ones(3)})
        result = run(["compare", a, b, "--atol", "0"])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines()[-1], "result: pass (1 compared, 0 failed, 0 missing, 0 extra)")
        self.assertIn("x\tf64\t[3]\t0\t0\t0/0\t0/0\t0\tpass", result.stdout.splitlines())

    def test_sets_of_bf16_two_byte_void_members(self):
        """.npz archives (stored and deflated members) and folders of '<V2' files: --dtype bf16 reads
        every member as bf16 bits, each tensor's entry the pair report of its bits files."""
        rng = np.random.default_rng(65)
        ref = {"x": random_array(rng, "bf16", (3, 5)), "y": random_array(rng, "bf16", (7,), special=False)}
        out = {"x": random_array(rng, "bf16", (3, 5), special=False), "y": ref["y"].copy()}
        for kind in ("folder", "npz", "npz_compressed"):
            paths = []
            for side, arrays in (("a", ref), ("b", out)):
                path = self.path("%s_%s" % (side, kind) + ("" if kind == "folder" else ".npz"))
                if kind == "folder":
                    os.mkdir(path)
                    for key, value in arrays.items():
                        with open(os.path.join(path, key + ".npy"), "wb") as f:
                            f.write(two_byte_void_npy(value))
                else:
                    method = zipfile.ZIP_STORED if kind == "npz" else zipfile.ZIP_DEFLATED
                    with zipfile.ZipFile(path, "w", compression=method) as archive:
                        for key, value in arrays.items():
                            archive.writestr(key + ".npy", two_byte_void_npy(value))
                paths.append(path)
            with self.subTest(kind=kind):
                result = run(["compare", *paths, "--json", "--dtype", "bf16", "--atol", "1"])
                self.assertIn(result.returncode, (0, 3), result.stderr)
                report = json.loads(result.stdout)
                self.assertEqual([t["name"] for t in report["tensors"]], ["x", "y"])
                for entry in report["tensors"]:
                    single = self.gate(ref[entry["name"]], out[entry["name"]], "--dtype", "bf16", "--atol", "1")[0]
                    del single["a"], single["b"]
                    entry = dict(entry)
                    del entry["name"]
                    self.assertEqual(entry, single)
                result = run(["compare", *paths])
                self.assertEqual(result.returncode, 1)
                self.assertIn("unsupported dtype descr '<V2'", result.stderr)
                self.assertIn("pass --dtype bf16", result.stderr)

    def test_set_errors(self):
        a = self.make_set("npz", "a.npz", {"x": np.ones(3)})
        one = self.save("one.npy", np.ones(3))
        self.expect_status(["compare", a, one], 1, "is a set of tensors (.npz file or folder) but b is not")
        bad = self.make_set("npz", "bad.npz", {"x": np.ones(3, np.float32)})
        self.expect_status(["compare", a, bad], 1, "compare: tensor x: mixed dtypes")
        shape = self.make_set("npz", "shape.npz", {"x": np.ones(4)})
        self.expect_status(["compare", a, shape], 1, "compare: tensor x: cannot broadcast [3] with [4] (none)")
        with open(self.path("corrupt.npz"), "wb") as f:
            with open(a, "rb") as g:
                data = bytearray(g.read())
            f.write(bytes(data[: len(data) // 2]))
        self.expect_status(["compare", self.path("corrupt.npz"), a], 1, "corrupt.npz: not a")
        compressed = self.make_set("npz_compressed", "c.npz", {"x": np.arange(1000.0)})
        with open(compressed, "rb") as g:
            data = bytearray(g.read())
        data[100] ^= 0xFF  # inside the deflated stream
        with open(self.path("flipped.npz"), "wb") as f:
            f.write(bytes(data))
        self.expect_status(["compare", self.path("flipped.npz"), compressed], 1, "flipped.npz: member x.npy")

    def test_stored_member_with_a_bad_crc(self):
        # numpy.savez stores members: a flipped byte of a member's data leaves every zip record valid
        # and only the CRC-32 wrong, which numpy.load refuses ("Bad CRC-32"), and so does sqdiff.
        x = np.arange(4096, dtype=np.float32)
        good = self.make_set("npz", "good.npz", {"x": x, "y": x + 1})
        with open(good, "rb") as g:
            data = bytearray(g.read())
        at = bytes(data).find(np.float32(1234).tobytes())  # inside member x's data
        self.assertGreater(at, 0)
        data[at] ^= 0x01
        path = self.path("flipped_stored.npz")
        with open(path, "wb") as f:
            f.write(bytes(data))
        with self.assertRaisesRegex(Exception, "Bad CRC-32"):
            np.load(path)["x"]
        self.expect_status(["compare", path, good], 1,
                           "flipped_stored.npz: member x.npy: corrupt member: CRC-32 mismatch (the archive says ")
        self.expect_status(["compare", good, path], 1, "flipped_stored.npz: member x.npy: corrupt member")
        # The same archive with its byte put back compares as identical.
        data[at] ^= 0x01
        with open(path, "wb") as f:
            f.write(bytes(data))
        self.assertEqual(run(["compare", path, good]).returncode, 0)

    def test_forged_npz_sizes(self):
        # A deflated member can expand at most 1032 times (deflate's limit); one claiming more is refused
        # before its buffer is allocated (it was allocated whole: 4 GiB here, 1 PiB through zip64).
        good = self.make_set("npz_compressed", "good.npz", {"x": np.zeros(4)})
        with open(good, "rb") as g:
            data = bytearray(g.read())
        entry = data.find(b"PK\x01\x02")
        compressed = int.from_bytes(data[entry + 20:entry + 24], "little")
        data[entry + 24:entry + 28] = (0xFFFFFFF0).to_bytes(4, "little")  # the central entry's uncompressed size
        with open(self.path("forged.npz"), "wb") as f:
            f.write(bytes(data))
        self.expect_status(["compare", self.path("forged.npz"), good], 1,
                           "forged.npz: member x.npy: not a valid .npz file (its size, 4294967280 bytes, is more than "
                           "%d deflated bytes can hold)" % compressed)
        with open(self.path("forged64.npz"), "wb") as f:
            f.write(npz_by_hand([("x.npy", np.zeros(4))], zip64=True, forged_size=1 << 50))
        self.expect_status(["compare", self.path("forged64.npz"), good], 1,
                           "forged64.npz: member x.npy: not a valid .npz file (its size, 1125899906842624 bytes")
        # The same archive with its true size reads (the hand-made zip64 records are right).
        with open(self.path("zip64.npz"), "wb") as f:
            f.write(npz_by_hand([("x.npy", np.zeros(4))], zip64=True))
        result = run(["compare", self.path("zip64.npz"), good])
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.splitlines()[-1], "result: pass (1 compared, 0 failed, 0 missing, 0 extra)")

    def test_npz_members_sharing_bytes(self):
        # Central entries pointing at one deflated member would each inflate it (memory growing with the
        # square of the file's size): refused. Before, such an archive read as two arrays.
        good = self.make_set("npz", "ab.npz", {"a": np.zeros(4), "b": np.zeros(4)})
        with open(self.path("shared.npz"), "wb") as f:
            f.write(npz_by_hand([("a.npy", np.zeros(4)), ("b.npy", None)]))
        self.expect_status(["compare", self.path("shared.npz"), good], 1,
                           "shared.npz: not a valid .npz file (members a.npy and b.npy share bytes)")

    def expect_status(self, args, status, fragment):
        result = run(args)
        self.assertEqual(result.returncode, status, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertIn(fragment, result.stderr)


# --- compare: errors -----------------------------------------------------------------------------

class CompareErrorTest(CompareTestCase):
    def setUp(self):
        super().setUp()
        self.a = self.save("a.npy", np.ones((2, 3), dtype=np.float32))
        self.b = self.save("b.npy", np.ones((3,), dtype=np.float32))

    def expect(self, args, status, *fragments):
        result = run(args)
        self.assert_error(result, *fragments)
        self.assertEqual(result.returncode, status, result.stderr)

    def test_missing_and_unreadable_files(self):
        missing = self.path("missing.npy")
        self.expect(["compare", missing, self.b], 1, missing, "No such file")
        self.expect(["compare", self.a, missing], 1, missing, "No such file")
        self.expect(["compare", self.dir, self.b], 1, self.dir, "is a set of tensors (.npz file or folder) but b is not")
        junk = self.path("junk.npy")
        with open(junk, "wb") as f:
            f.write(b"not an npy file")
        self.expect(["compare", self.a, junk], 1, junk)

    def test_dtype_mismatch(self):
        d = self.save("d.npy", np.ones(3, dtype=np.float64))
        self.expect(["compare", self.a, d], 1, "compare: mixed dtypes", "f32", "f64", "no promotion")
        i = self.save("i.npy", np.ones(3, dtype=np.uint8))
        self.expect(["compare", i, self.b], 1, "compare: mixed dtypes", "u8", "f32")
        self.expect(["compare", self.a, self.b, "--dtype", "bf16"], 1, "cannot be read as bf16")
        # '<V2' (np.save of ml_dtypes.bfloat16) needs --dtype bf16, and the error says so.
        void = self.save_two_byte_void("void.npy", np.array([0x3F80, 0x4000, 0xC040], dtype=np.uint16))
        for extra in ((), ("--dtype", "f32")):
            self.expect(["compare", void, void, *extra], 1, void, "unsupported dtype descr '<V2' (void/raw bytes)",
                        "pass --dtype bf16 to sqdiff run or sqdiff compare")
        f32 = self.save("f32.npy", np.ones(3, dtype=np.float32))
        self.expect(["compare", void, f32, "--dtype", "bf16"], 1, f32, "holds f32 data, which cannot be read as bf16")

    def test_bad_shapes(self):
        c = self.save("c.npy", np.ones((3, 2), dtype=np.float32))
        self.expect(["compare", self.a, c], 1, "compare: cannot broadcast [2,3] with [3,2] (none)",
                    "shapes must match (give --broadcast numpy to broadcast)")
        self.expect(["compare", self.a, self.b], 1, "cannot broadcast [2,3] with [3] (none)")  # the default
        self.expect(["compare", self.a, c, "--broadcast", "numpy"], 1, "compare: cannot broadcast [2,3] with [3,2] (numpy)")
        self.expect(["compare", self.a, self.b, "--broadcast", "none"], 1, "cannot broadcast [2,3] with [3] (none)")
        self.expect(["compare", self.a, self.b, "--broadcast", "pdpd", "--axis=0"], 1, "(pdpd, axis 0)")

    def test_bad_options(self):
        self.expect(["compare", self.a, self.b, "--broadcast", "explicit"], 2, "--broadcast")
        self.expect(["compare", self.a], 2, "b")
        self.expect(["compare", self.a, self.b, "--bogus"], 2, "--bogus")

    def expect_usage_error(self, option_and_value, message):
        """Status 2 and exactly this line, before any file is read (the inputs here do not exist)."""
        result = run(["compare", self.path("none_a.npy"), self.path("none_b.npy"), option_and_value])
        self.assertEqual((result.returncode, result.stdout, result.stderr),
                         (2, "", "sqdiff: error: %s (see sqdiff compare --help)\n" % message))

    def test_bad_option_values_exit_with_2(self):
        for value in ("0", "-1", "-0", "nan", "inf", "-inf", "1e999", "1e-400", "x", "1,5"):
            with self.subTest(peak=value):
                self.expect_usage_error("--peak=" + value,
                                        "--peak: value %s is not a finite number greater than 0" % value)
        for value in ("nan", "-nan", "-inf", "-1", "-1e-300", "x", "0x"):
            with self.subTest(fail_above=value):
                self.expect_usage_error("--fail-above=" + value,
                                        "--fail-above: value %s is not a number from 0 to inf" % value)
        for value in ("float128", "F32", "bool"):
            with self.subTest(dtype=value):
                self.expect_usage_error("--dtype=" + value, "--dtype: %s not in {f16,bf16,bfloat16,f32,f64,i8,i16,"
                                                            "i32,i64,u8,u16,u32,u64}" % value)
        for value in ("-1", "2147483648", "99999999999999999999"):
            with self.subTest(threads=value):
                self.expect_usage_error("--threads=" + value,
                                        "--threads: value %s is out of range (0 to 2147483647)" % value)
        self.expect_usage_error("--threads=1.5", "--threads: value 1.5 is not an integer")
        self.expect_usage_error("--axis=99999999999999999999", "--axis: value 99999999999999999999 is out of "
                                                               "range (-9223372036854775808 to 9223372036854775807)")


# --- compare: a pair over 2 GiB through the mapped path, in bounded memory --------------------------

class CompareLargeTest(CompareTestCase):
    @staticmethod
    def write_inputs(a_path, b_path, rows, cols, big_row, big_col):
        """Writes the two files; returns (exact sum of squares, differing pairs). Run in a child
        process, so that this process's peak memory stays small (see test_two_inputs_over_2_gib)."""
        rng = np.random.default_rng(28)
        # A random block of 67 rows (67 Mi elements, not a multiple of the 4 Mi chunks), repeated:
        # cheap to write and to sum exactly, and a chunk read from the wrong offset changes the sum.
        period = 67
        x = rng.integers(0, 100, size=(period, cols), dtype=np.uint8)
        y = rng.integers(0, 100, size=(period, cols), dtype=np.uint8)
        row_sums = [int(np.square(x[r].astype(np.int32) - y[r].astype(np.int32)).sum(dtype=np.int64))
                    for r in range(period)]
        row_differing = [int((x[r] != y[r]).sum()) for r in range(period)]
        total = sum(row_sums[r % period] for r in range(rows))
        differing = sum(row_differing[r % period] for r in range(rows))
        arrays = [np.lib.format.open_memmap(p, mode="w+", dtype=np.uint8, shape=(rows, cols))
                  for p in (a_path, b_path)]
        for r in range(0, rows, period):
            n = min(period, rows - r)
            arrays[0][r:r + n], arrays[1][r:r + n] = x[:n], y[:n]
        # One difference of 255, the largest, at (big_row, big_col).
        old = int(arrays[0][big_row, big_col]) - int(arrays[1][big_row, big_col])
        arrays[0][big_row, big_col], arrays[1][big_row, big_col] = 255, 0
        for array in arrays:
            array.flush()
        return total + 255 * 255 - old * old, differing + (old == 0)

    def test_two_inputs_over_2_gib(self):
        rows, cols = 2056, 1 << 20  # 2056 Mi u8 elements: 2.008 GiB per file, positions beyond 2^31
        big_row, big_col = 2050, 12345
        self.assertGreater(big_row * cols + big_col, 2 ** 31)
        a_path, b_path = self.path("big_a.npy"), self.path("big_b.npy")
        started = time.time()
        with multiprocessing.get_context("fork").Pool(1) as pool:
            total, differing = pool.apply(self.write_inputs, (a_path, b_path, rows, cols, big_row, big_col))
        self.assertGreater(os.path.getsize(a_path), 2 ** 31)
        generated = time.time()
        # The program's own peak RSS, from wait4 on it alone. (RUSAGE_CHILDREN would take the
        # largest child, and a child's peak includes its parent's at the fork or vfork: hence the
        # writing in another process and a small parent.)
        own_peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with subprocess.Popen([SQDIFF, "compare", a_path, b_path, "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) as proc:
            stdout, stderr = proc.stdout.read(), proc.stderr.read()
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        computed = time.time()
        for path in (a_path, b_path):
            os.remove(path)
        self.assertEqual(proc.returncode, 0, stderr)
        got = json.loads(stdout)
        n = rows * cols
        self.assertEqual(got["elements"], n)
        self.assertEqual(got["sum_of_squares"], float(total))
        self.assertEqual(got["mse"], round_to_f64(Fraction(total, n)))
        self.assertEqual(got["max_abs_diff"], 255)
        self.assertEqual(got["differing"], differing)
        self.assertEqual(got["max_abs_diff_index"], [big_row, big_col])
        peak_rss_kib = usage.ru_maxrss
        self.assertLess(peak_rss_kib, 600 * 1024, "the program's peak resident set: %d KiB" % peak_rss_kib)
        sys.stderr.write("generate %.1f s, sqdiff compare %.1f s, its peak RSS %d MiB (this process's: %d MiB)\n" % (
            generated - started, computed - generated, peak_rss_kib // 1024, own_peak_kib // 1024))


# --- run --reduce --------------------------------------------------------------------------------

def exact_reduction(a, b, dtype, axes, keepdims, mean, mode="numpy", axis=-1):
    """The exact sums (Fractions; None for a NaN, +inf for an infinite term) per output element."""
    ab, bb = align(a, b, mode, axis)
    rank = ab.ndim
    reduced = tuple(range(rank)) if axes is None else tuple(x % rank for x in axes)
    kept = [d for d in range(rank) if d not in reduced]
    x = np.moveaxis(as_f64(ab, dtype) if dtype in FLOATS else ab, kept + list(reduced), list(range(rank)))
    y = np.moveaxis(as_f64(bb, dtype) if dtype in FLOATS else bb, kept + list(reduced), list(range(rank)))
    out_shape = tuple(ab.shape[d] for d in kept)
    count = int(np.prod([ab.shape[d] for d in reduced]))
    x = x.reshape(out_shape + (count,))
    y = y.reshape(out_shape + (count,))
    values = []
    for index in np.ndindex(*out_shape):
        p, q = x[index].tolist(), y[index].tolist()
        if dtype in FLOATS:
            if any(math.isnan(u) or math.isnan(v) or (math.isinf(u) and u == v) for u, v in zip(p, q)):
                values.append(None)
                continue
            if any(math.isinf(u) or math.isinf(v) for u, v in zip(p, q)):
                values.append(math.inf)
                continue
            s = sum(((Fraction(u) - Fraction(v)) ** 2 for u, v in zip(p, q)), Fraction(0))
        else:
            s = sum((int(u) - int(v)) ** 2 for u, v in zip(p, q))
        values.append(None if (mean and count == 0) else (Fraction(s, count) if mean else s))
    shape = tuple(1 if d in reduced else ab.shape[d] for d in range(rank)) if keepdims else out_shape
    return values, shape


def rounded(value, np_dtype):
    """An exact value (Fraction or int, None = NaN, inf) rounded once to np_dtype (ties to even)."""
    if value is None:
        return np_dtype(np.nan)
    if value == math.inf:
        return np_dtype(np.inf)
    if np.issubdtype(np_dtype, np.integer):
        return np_dtype(int(value))
    as_f64 = round_to_f64(Fraction(value))
    if np_dtype == np.float64:
        return np.float64(as_f64)
    # Narrower: round to f32/f16 from the exact value, not via f64 (no double rounding).
    candidate = np_dtype(as_f64)
    if not np.isfinite(candidate):
        return candidate
    exact = Fraction(value)
    below = candidate if Fraction(float(candidate)) <= exact else np.nextafter(candidate, np_dtype(-np.inf))
    above = np.nextafter(below, np_dtype(np.inf))
    d_below, d_above = exact - Fraction(float(below)), Fraction(float(above)) - exact
    if d_below < d_above:
        return below
    if d_above < d_below:
        return above
    return below if int(below.view(np.uint16 if np_dtype == np.float16 else np.uint32)) % 2 == 0 else above


class ReduceTest(CliTestCase):
    def reduce(self, a, b, dtype, kind, axes=None, keepdims=False, out_dtype=None, mode="numpy", axis=-1, extra=()):
        a_path, b_path, out = self.save("a.npy", a), self.save("b.npy", b), self.path("out.npy")
        args = ["run", "--reduce", kind, a_path, b_path, "-o", out, *extra]
        if axes is not None:
            args.append("--axes=" + (",".join(map(str, axes)) if axes else "none"))
        if keepdims:
            args.append("--keepdims")
        if out_dtype:
            args += ["--out-dtype", out_dtype]
        if mode != "numpy":
            args += ["--broadcast", mode] + (["--axis=%d" % axis] if mode == "pdpd" else [])
        self.assert_ok(run(args))
        got = np.load(out)
        values, shape = exact_reduction(a, b, dtype, axes, keepdims, kind == "mean", mode, axis)
        default = {"sum": {"i": np.int64, "u": np.uint64}, "mean": {"i": np.float64, "u": np.float64}}
        np_dtype = (NUMPY_DTYPE[out_dtype] if out_dtype else
                    NUMPY_DTYPE[dtype] if dtype in FLOATS else default[kind][dtype[0]])
        self.assertEqual(got.dtype, np_dtype)
        expected = np.array([rounded(v, np_dtype) for v in values], dtype=np_dtype).reshape(shape)
        assert_bit_exact(self, got, expected, out_dtype or dtype)
        return got

    def test_sum_and_mean_every_dtype(self):
        rng = np.random.default_rng(31)
        for dtype in [d for d in ALL_DTYPES if d != "bf16"]:
            for kind in ("sum", "mean"):
                with self.subTest(dtype=dtype, kind=kind):
                    a = random_array(rng, dtype, (3, 4, 5), special=False)
                    b = random_array(rng, dtype, (4, 1), special=False)
                    if dtype in INTS and a.itemsize >= 4:  # |values| < 2^26: sums well within i64/u64
                        a, b = a >> (8 * a.itemsize - 27), b >> (8 * b.itemsize - 27)
                    self.reduce(a, b, dtype, kind)
                    self.reduce(a, b, dtype, kind, axes=(0, 2))
                    self.reduce(a, b, dtype, kind, axes=(-1,), keepdims=True)
                    self.reduce(a, b, dtype, kind, axes=())

    def test_output_types(self):
        rng = np.random.default_rng(32)
        a = random_array(rng, "f16", (6, 7), special=True)
        b = random_array(rng, "f16", (6, 7), special=False)
        for out_dtype in ("f16", "f32", "f64"):
            for kind in ("sum", "mean"):
                with self.subTest(out=out_dtype, kind=kind):
                    self.reduce(a, b, "f16", kind, axes=(1,), out_dtype=out_dtype)
        i = random_array(rng, "i32", (5, 3), special=False)
        j = random_array(rng, "i32", (5, 3), special=False)
        self.reduce(i, j, "i32", "sum", out_dtype="f64")
        self.reduce(i, j, "i32", "mean", axes=(0,), out_dtype="f32")

    def test_pdpd_and_specials(self):
        rng = np.random.default_rng(33)
        a = random_array(rng, "f32", (2, 3, 4), special=True)
        b = random_array(rng, "f32", (3,), special=False)
        self.reduce(a, b, "f32", "sum", axes=(0, 2), mode="pdpd", axis=1)
        self.reduce(a, b, "f32", "mean", axes=(1,), keepdims=True, mode="pdpd", axis=1)

    def test_bf16(self):
        rng = np.random.default_rng(34)
        a = random_array(rng, "bf16", (4, 6), special=False)
        b = random_array(rng, "bf16", (4, 6), special=False)
        out = self.path("out.npy")
        self.assert_ok(run(["run", "--reduce", "sum", self.save("a.npy", a), self.save("b.npy", b), "-o", out,
                            "--dtype", "bf16", "--out-dtype", "f64", "--axes", "1"]))
        values, _ = exact_reduction(a, b, "bf16", (1,), False, False)
        self.assertEqual(np.load(out).tolist(), [round_to_f64(Fraction(v)) for v in values])

    def test_bf16_from_two_byte_void_files(self):
        """run --reduce --dtype bf16 reads '<V2' files (np.save of ml_dtypes.bfloat16) as bf16 bits."""
        rng = np.random.default_rng(35)
        a = random_array(rng, "bf16", (4, 6), special=False)
        b = random_array(rng, "bf16", (6,), special=False)
        a_path, b_path = self.save_two_byte_void("a.npy", a), self.save_two_byte_void("b.npy", b, "|")
        for kind, out_dtype in (("sum", "f64"), ("mean", "f32")):
            with self.subTest(kind=kind):
                out = self.path("out.npy")
                self.assert_ok(run(["run", "--reduce", kind, a_path, b_path, "-o", out, "--dtype", "bf16",
                                    "--axes", "1", "--out-dtype", out_dtype]))
                values, shape = exact_reduction(a, b, "bf16", (1,), False, kind == "mean")
                np_dtype = NUMPY_DTYPE[out_dtype]
                expected = np.array([rounded(v, np_dtype) for v in values], dtype=np_dtype).reshape(shape)
                assert_bit_exact(self, np.load(out), expected, out_dtype)

    def test_empty(self):
        a = np.zeros((0, 3), dtype=np.float32)
        out = self.path("out.npy")
        self.assert_ok(run(["run", "--reduce", "sum", self.save("a.npy", a), self.save("b.npy", a), "-o", out]))
        self.assertEqual(np.load(out).tolist(), 0.0)
        self.assert_ok(run(["run", "--reduce", "mean", self.path("a.npy"), self.path("b.npy"), "-o", out,
                            "--axes", "0"]))
        self.assertTrue(np.isnan(np.load(out)).all() and np.load(out).shape == (3,))

    def test_errors_write_nothing(self):
        a = self.save("a.npy", np.ones((2, 3), dtype=np.float32))
        out = self.path("out.npy")
        with open(out, "wb") as f:
            f.write(b"keep me")
        cases = [
            (["--axes", "2"], 1, "sum_squared_difference: axis 2 is out of range"),
            (["--axes", "0,0"], 1, "listed twice"),
            (["--out-dtype", "i64"], 1, "output type"),
            (["--op", "subtract"], 2, "--op must be squared_difference"),
        ]
        for extra, status, fragment in cases:
            with self.subTest(extra=extra):
                result = run(["run", "--reduce", "sum", a, a, "-o", out, *extra])
                self.assert_error(result, fragment)
                self.assertEqual(result.returncode, status)
        big = self.save("big.npy", np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], dtype=np.int64))
        small = self.save("small.npy", np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], dtype=np.int64))
        result = run(["run", "--reduce", "sum", big, small, "-o", out])
        self.assertEqual(result.returncode, 1)
        with open(out, "rb") as f:
            self.assertEqual(f.read(), b"keep me")
        self.assertEqual(sorted(os.listdir(self.dir)), ["a.npy", "big.npy", "out.npy", "small.npy"])
        result = run(["run", a, a, "-o", out, "--op", "subtract", "--keepdims"])
        self.assert_error(result, "--reduce")

    def test_bad_option_values_exit_with_2(self):
        # Refused as the command line is read (status 2, exactly this line), before the inputs are
        # opened: they do not exist here.
        out_dtypes = "{f16,bf16,bfloat16,f32,f64,i64,u64}"
        int64_range = "(-9223372036854775808 to 9223372036854775807)"
        cases = [
            ("--axes=x", '--axes: "x" is not a comma-separated list of integers (e.g. 0,2 or -1) or none'),
            ("--axes=0,,1", '--axes: "0,,1" is not a comma-separated list of integers (e.g. 0,2 or -1) or none'),
            ("--axes=1.0", '--axes: "1.0" is not a comma-separated list of integers (e.g. 0,2 or -1) or none'),
            ("--axes=0,", '--axes: "0," is not a comma-separated list of integers (e.g. 0,2 or -1) or none'),
            ("--axes=99999999999999999999", "--axes: axis 99999999999999999999 is out of range " + int64_range),
            ("--axes=0,-9223372036854775809", "--axes: axis -9223372036854775809 is out of range " + int64_range),
            ("--out-dtype=float128", "--out-dtype: float128 not in " + out_dtypes),
            ("--out-dtype=i32", "--out-dtype: i32 not in " + out_dtypes),
            ("--dtype=float128", "--dtype: float128 not in {f16,bf16,bfloat16,f32,f64,i8,i16,i32,i64,u8,u16,u32,"
                                 "u64}"),
            ("--threads=-1", "--threads: value -1 is out of range (0 to 2147483647)"),
        ]
        for option, message in cases:
            with self.subTest(option=option):
                result = run(["run", "--reduce", "sum", self.path("none_a.npy"), self.path("none_b.npy"), "-o",
                              self.path("out.npy"), option])
                self.assertEqual((result.returncode, result.stdout, result.stderr),
                                 (2, "", "sqdiff: error: %s (see sqdiff run --help)\n" % message))
        self.assertEqual(os.listdir(self.dir), [])


# --- docs/cli.md's examples ----------------------------------------------------------------------

class DocsExamplesTest(CliTestCase):
    def test_docs_examples_print_what_they_say(self):
        """docs/cli.md's inputs: ref.npy = [[0, 0.5], [1, 1]] and out.npy = [[0, 0.25], [1, 3]] (f32),
        img_a.npy = [10, 20, 30] and img_b.npy = [12, 20, 25] (u8)."""
        self.save("ref.npy", np.array([[0, 0.5], [1, 1]], dtype=np.float32))
        self.save("out.npy", np.array([[0, 0.25], [1, 3]], dtype=np.float32))
        self.save("img_a.npy", np.array([10, 20, 30], dtype=np.uint8))
        self.save("img_b.npy", np.array([12, 20, 25], dtype=np.uint8))
        examples = docs_console_examples(DOCS, "compare_test.py")
        self.assertGreaterEqual(len(examples), 5)
        # The examples' `python3` is one with NumPy: /usr/bin/python3, first on PATH.
        bin_dir = self.path("bin")
        os.mkdir(bin_dir)
        os.symlink("/usr/bin/python3", os.path.join(bin_dir, "python3"))
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([bin_dir, os.path.dirname(os.path.abspath(SQDIFF)), env.get("PATH", "")])
        for command, expected in examples:
            with self.subTest(command=command):
                result = subprocess.run(["bash", "-c", command], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, timeout=120)
                self.assertEqual(result.stdout.splitlines(), expected, result.stderr)


if __name__ == "__main__":
    unittest.main()
