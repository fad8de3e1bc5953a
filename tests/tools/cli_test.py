#!/usr/bin/python3
"""Command-level tests of the `sqdiff` program: they run the built binary.

Run by CTest as `/usr/bin/python3 cli_test.py -k PATTERN` with the environment
variables SQDIFF_BIN (the program) and SQDIFF_TEST_TMP (a scratch directory).
Inputs are made with NumPy; outputs are checked bit-exactly against an oracle
written from SPEC sections 1-3 (f16/bf16 via f32 and one rounding, integers
wrap around).
"""

import io
import os
import pty
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

SQDIFF = os.environ.get("SQDIFF_BIN", "sqdiff")
TMP_ROOT = os.environ.get("SQDIFF_TEST_TMP", tempfile.gettempdir())

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
ALL_DTYPES = FLOATS + INTS
NUMPY_DTYPE = {
    "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
UNSIGNED_OF = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def run(args, cwd=None, env=None):
    return subprocess.run([SQDIFF] + [str(a) for a in args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=600)


def run_with_terminal_stderr(args, stdout=subprocess.DEVNULL, timeout=120):
    """Runs a command whose stderr is a terminal (a pty), where progress bars show;
    returns (what it wrote there, its stdout bytes or None, its exit status)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdout=stdout, stderr=slave)
    os.close(slave)
    output = b""
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            break
        try:
            data = os.read(master, 4096)
        except OSError:  # the pty is closed when the program exits
            break
        if not data:
            break
        output += data
    os.close(master)
    out, _ = proc.communicate(timeout=timeout * 2)
    return output.decode(errors="replace"), out, proc.returncode


def docs_console_examples(path, checked_by):
    """[(command, expected stdout lines)] from the ```console blocks of the Markdown file `path`
    marked `<!-- checked by CHECKED_BY -->`."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    examples = []
    pattern = r"<!-- checked by %s -->\n```console\n(.*?)```" % re.escape(checked_by)
    for block in re.findall(pattern, text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            elif examples:
                examples[-1][1].append(line)
    return examples


# --- the oracle (SPEC sections 1 and 2) ----------------------------------------

def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(values):
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = ((bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16))
    return rounded.astype(np.uint16)


def oracle(op, a, b, dtype, mode="numpy", axis=-1):
    """Expected output for inputs a, b (NumPy arrays of the file dtype)."""
    if mode == "pdpd":
        # Reshape b so that NumPy broadcasting aligns it at `axis` of a.
        start = a.ndim - b.ndim if axis == -1 else axis
        b = b.reshape((1,) * start + b.shape + (1,) * (a.ndim - start - b.ndim))
    with np.errstate(all="ignore"):
        if dtype in ("f32", "f64"):
            d = a - b
            return d if op == "subtract" else d * d
        if dtype == "f16":
            d = a.astype(np.float32) - b.astype(np.float32)
            return (d if op == "subtract" else d * d).astype(np.float16)
        if dtype == "bf16":
            d = bf16_to_f32(a) - bf16_to_f32(b)
            return f32_to_bf16(d if op == "subtract" else d * d)
        unsigned = UNSIGNED_OF[a.dtype.itemsize]
        d = a.view(unsigned) - b.view(unsigned)
        out = d if op == "subtract" else d * d
        return out.view(a.dtype)


def is_nan(values, dtype):
    if dtype == "bf16":
        return np.isnan(bf16_to_f32(values))
    if dtype in ("f16", "f32", "f64"):
        return np.isnan(values)
    return np.zeros(values.shape, dtype=bool)


def assert_bit_exact(testcase, got, expected, dtype):
    testcase.assertEqual(got.shape, expected.shape)
    expected = np.ascontiguousarray(expected, dtype=got.dtype)
    unsigned = UNSIGNED_OF[got.dtype.itemsize]
    same = got.view(unsigned) == expected.view(unsigned)
    # NaN payloads may differ across SIMD targets (SPEC section 4): a NaN is a NaN.
    same |= is_nan(got, dtype) & is_nan(expected, dtype)
    if not same.all():
        where = np.argwhere(~same)[:5]
        testcase.fail("%d mismatches, first at %s: got %r expected %r" % (
            (~same).sum(), where.tolist(), [got[tuple(w)] for w in where], [expected[tuple(w)] for w in where]))


def two_byte_void_npy(bits, mark="<"):
    """The .npy bytes np.save writes for an ml_dtypes.bfloat16 array holding these bf16 bits (descr
    '<V2'; other writers mark a void '|V2'), made without ml_dtypes: NumPy's uint16 file with the
    descr rewritten, which keeps the header's length and padding (RunTest checks the bytes against
    a real np.save where ml_dtypes is installed)."""
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(bits, dtype=np.uint16))
    raw = buffer.getvalue()
    assert raw.count(b"'<u2'") == 1
    return raw.replace(b"'<u2'", b"'" + mark.encode() + b"V2'")


def ml_dtypes_or_skip(testcase):
    """ml_dtypes, or a skip of the test saying why (the hand-written '<V2' files need none)."""
    try:
        import ml_dtypes
    except ImportError:
        testcase.skipTest("ml_dtypes is not installed for %s (requirements/test.txt installs it in scripts/test.sh's "
                          "venv; Debian has no package)" % sys.executable)
    return ml_dtypes


def random_array(rng, dtype, shape, special=True):
    """Random values of a dtype; floats include infinities, NaN, -0 and subnormals."""
    if dtype in INTS:
        info = np.iinfo(NUMPY_DTYPE[dtype])
        return rng.integers(info.min, info.max, size=shape, dtype=NUMPY_DTYPE[dtype], endpoint=True)
    if dtype == "bf16":
        values = (rng.standard_normal(shape) * 100).astype(np.float32)
        bits = f32_to_bf16(values).reshape(shape)
        if special and bits.size:
            flat = bits.reshape(-1)
            specials = np.array([0x7F80, 0xFF80, 0x7FC0, 0x8000, 0x0001, 0x7F7F, 0x0000], dtype=np.uint16)
            flat[: min(len(specials), flat.size)] = specials[: flat.size]
        return bits
    np_dtype = NUMPY_DTYPE[dtype]
    values = (rng.standard_normal(shape) * (200 if dtype == "f16" else 1e3)).astype(np_dtype)
    if special and values.size:
        flat = values.reshape(-1)
        tiny = np.finfo(np_dtype).tiny
        specials = np.array([np.inf, -np.inf, np.nan, -0.0, tiny / 4, np.finfo(np_dtype).max, 256.0],
                            dtype=np_dtype)
        flat[: min(len(specials), flat.size)] = specials[: flat.size]
    return values


class CliTestCase(unittest.TestCase):
    def setUp(self):
        os.makedirs(TMP_ROOT, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=self.id().split(".")[-1] + "-", dir=TMP_ROOT)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def save(self, name, array):
        np.save(self.path(name), array)
        return self.path(name)

    def save_two_byte_void(self, name, bits, mark="<"):
        """bf16 bits saved as np.save saves an ml_dtypes.bfloat16 array (see two_byte_void_npy)."""
        with open(self.path(name), "wb") as f:
            f.write(two_byte_void_npy(bits, mark))
        return self.path(name)

    def listing(self, directory=None):
        return sorted(os.listdir(directory or self.dir))

    def assert_ok(self, result):
        self.assertEqual(result.returncode, 0, "stderr: " + result.stderr)

    def assert_error(self, result, *fragments):
        """A non-zero exit, one line on stderr naming every fragment, nothing on stdout."""
        self.assertNotEqual(result.returncode, 0, "stdout: " + result.stdout)
        self.assertLess(result.returncode, 128, "killed by a signal: " + result.stderr)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, "expected one line on stderr, got: %r" % result.stderr)
        for fragment in fragments:
            self.assertIn(fragment, lines[0])
        self.assertEqual(result.stdout, "")

    def run_and_check(self, op, a, b, dtype, mode="numpy", axis=None, extra=(), a_file=None, b_file=None):
        a_path = self.save(a_file or "a.npy", a)
        b_path = self.save(b_file or "b.npy", b)
        args = ["run", "--op", op, a_path, b_path, "-o", self.path("out.npy"), "--broadcast", mode]
        if axis is not None:
            args.append("--axis=%d" % axis)
        if dtype == "bf16":
            args += ["--dtype", "bf16"]
        args += list(extra)
        result = run(args)
        self.assert_ok(result)
        got = np.load(self.path("out.npy"))
        self.assertEqual(got.dtype, a.dtype)
        expected = oracle(op, a, b, dtype, mode, -1 if axis is None else axis)
        assert_bit_exact(self, got, expected, dtype)
        return got


# --- sqdiff run ------------------------------------------------------------------

class RunTest(CliTestCase):
    def test_every_dtype_round_trip(self):
        rng = np.random.default_rng(1)
        for dtype in ALL_DTYPES:
            for op in ("squared_difference", "subtract"):
                with self.subTest(dtype=dtype, op=op):
                    a = random_array(rng, dtype, (4, 1, 6))
                    b = random_array(rng, dtype, (3, 6))
                    self.run_and_check(op, a, b, dtype)

    def test_spec_integer_and_half_examples(self):
        cases = [
            ("subtract", np.uint8, [0], [1], [255]),
            ("squared_difference", np.uint8, [0, 0], [255, 16], [1, 0]),
            ("squared_difference", np.int8, [-128], [127], [1]),
            ("subtract", np.int32, [-2**31], [1], [2**31 - 1]),
        ]
        for op, np_dtype, a, b, expected in cases:
            with self.subTest(op=op, dtype=np_dtype):
                self.save("a.npy", np.array(a, dtype=np_dtype))
                self.save("b.npy", np.array(b, dtype=np_dtype))
                self.assert_ok(run(["run", "--op", op, self.path("a.npy"), self.path("b.npy"), "-o",
                                    self.path("o.npy")]))
                np.testing.assert_array_equal(np.load(self.path("o.npy")), np.array(expected, dtype=np_dtype))
        # f16: (256 - 0)^2 = 65536 overflows to +inf.
        self.save("a.npy", np.array([256], dtype=np.float16))
        self.save("b.npy", np.array([0], dtype=np.float16))
        self.assert_ok(run(["run", "--op", "squared_difference", self.path("a.npy"), self.path("b.npy"), "-o",
                            self.path("o.npy")]))
        self.assertEqual(np.load(self.path("o.npy"))[0], np.float16(np.inf))

    def test_specs_example_shape(self):
        rng = np.random.default_rng(2)
        a = random_array(rng, "f32", (8, 1, 6, 1))
        b = random_array(rng, "f32", (7, 1, 5))
        got = self.run_and_check("squared_difference", a, b, "f32")
        self.assertEqual(got.shape, (8, 7, 6, 5))

    def test_modes(self):
        rng = np.random.default_rng(3)
        x = random_array(rng, "f32", (2, 3, 4, 5))
        self.run_and_check("subtract", x, random_array(rng, "f32", (3, 1)), "f32", "pdpd", 1)
        self.run_and_check("subtract", x, random_array(rng, "f32", (4, 5)), "f32", "pdpd", -1)
        self.run_and_check("subtract", x, random_array(rng, "f32", (1, 3)), "f32", "pdpd", 0)
        self.run_and_check("subtract", x, np.array(7, dtype=np.float32), "f32", "pdpd", -1)
        self.run_and_check("squared_difference", x, random_array(rng, "f32", (2, 3, 4, 5)), "f32", "none")
        # --axis with a space before a negative value also works.
        self.run_and_check("subtract", x, random_array(rng, "f32", (5,)), "f32", "pdpd", extra=["--axis", "-1"])

    def test_fortran_order_and_scalars(self):
        rng = np.random.default_rng(4)
        for dtype in ("f32", "i16", "f16", "u64"):
            with self.subTest(dtype=dtype):
                a = np.asfortranarray(random_array(rng, dtype, (5, 6, 7)))
                b = np.asfortranarray(random_array(rng, dtype, (6, 1)))
                self.run_and_check("subtract", a, b, dtype)
                self.run_and_check("squared_difference", a, np.ascontiguousarray(a[::-1]), dtype)
        a = np.array(3.5, dtype=np.float64)
        b = np.array(-1.0, dtype=np.float64)
        got = self.run_and_check("squared_difference", a, b, "f64")
        self.assertEqual(got.shape, ())
        self.assertEqual(got[()], 20.25)

    def test_empty_output(self):
        a = np.zeros((0, 3), dtype=np.float32)
        b = np.zeros((3,), dtype=np.float32)
        got = self.run_and_check("subtract", a, b, "f32")
        self.assertEqual(got.shape, (0, 3))
        got = self.run_and_check("subtract", np.zeros((1, 0), np.int8), np.zeros((4, 1), np.int8), "i8")
        self.assertEqual(got.shape, (4, 0))

    def test_chunked_path_matches(self):
        # Tiny chunks exercise the split along outer dims (and the progress accounting).
        rng = np.random.default_rng(5)
        cases = [((7, 5, 3), (5, 1), "numpy", None), ((3, 2, 129), (129,), "numpy", None),
                 ((2, 3, 4, 5), (3, 1), "pdpd", 1), ((6, 10), (6, 10), "none", None), ((1, 1, 300), (4, 1), "numpy", None)]
        for a_shape, b_shape, mode, axis in cases:
            for chunk in ("1", "8", "100", "1000"):
                with self.subTest(a=a_shape, b=b_shape, chunk=chunk):
                    a = np.asfortranarray(random_array(rng, "f32", a_shape))
                    b = random_array(rng, "f32", b_shape)
                    self.run_and_check("squared_difference", a, b, "f32", mode, axis, extra=["--chunk-bytes", chunk])

    def test_threads(self):
        rng = np.random.default_rng(6)
        a = random_array(rng, "f64", (300, 400))
        b = random_array(rng, "f64", (400,))
        for threads in ("0", "1", "2", "3"):
            with self.subTest(threads=threads):
                self.run_and_check("subtract", a, b, "f64", extra=["--threads", threads])

    def test_output_replaced_atomically(self):
        a = self.save("a.npy", np.arange(6, dtype=np.int32))
        b = self.save("b.npy", np.ones(6, dtype=np.int32))
        self.save("out.npy", np.zeros(2, dtype=np.uint8))
        self.assert_ok(run(["run", "--op", "subtract", a, b, "-o", self.path("out.npy")]))
        np.testing.assert_array_equal(np.load(self.path("out.npy")), np.arange(6) - 1)
        # The output may be one of the inputs: it is replaced only at the end.
        self.assert_ok(run(["run", "--op", "subtract", a, b, "-o", a]))
        np.testing.assert_array_equal(np.load(a), np.arange(6) - 1)
        self.assertEqual(self.listing(), ["a.npy", "b.npy", "out.npy"])

    def test_relative_paths(self):
        self.save("a.npy", np.arange(4, dtype=np.float32))
        self.save("b.npy", np.full(4, 2, dtype=np.float32))
        self.assert_ok(run(["run", "--op", "squared_difference", "a.npy", "b.npy", "-o", "o.npy"], cwd=self.dir))
        np.testing.assert_array_equal(np.load(self.path("o.npy")), (np.arange(4) - 2.0) ** 2)

    def test_bf16(self):
        rng = np.random.default_rng(7)
        a = random_array(rng, "bf16", (9, 17))
        b = random_array(rng, "bf16", (17,))
        for op in ("squared_difference", "subtract"):
            self.run_and_check(op, a, b, "bf16")
        # "bfloat16" is an alias; a --dtype that names the stored dtype changes nothing.
        self.save("a.npy", a)
        self.save("b.npy", b)
        self.assert_ok(run(["run", "--op", "subtract", self.path("a.npy"), self.path("b.npy"), "-o",
                            self.path("o.npy"), "--dtype", "bfloat16"]))
        self.assert_ok(run(["run", "--op", "subtract", self.path("a.npy"), self.path("b.npy"), "-o",
                            self.path("o.npy"), "--dtype", "u16"]))

    def test_bf16_from_two_byte_void_files(self):
        """--dtype bf16 reads 2-byte void files ('<V2' as np.save writes ml_dtypes.bfloat16, '|V2') as
        bf16 bits: the same output as the '<u2' bits files, bit for bit the oracle's, also beside a
        '<u2' file; the output is written as '<u2' bits, as always for bf16."""
        rng = np.random.default_rng(31)
        a = random_array(rng, "bf16", (9, 17))
        b = random_array(rng, "bf16", (17,))
        for mark in ("<", "|"):
            a_path = self.save_two_byte_void("a_void.npy", a, mark)
            b_path = self.save_two_byte_void("b_void.npy", b, mark)
            bits_b = self.save("b_bits.npy", b)
            for op in ("squared_difference", "subtract"):
                for name, second in (("bf16", b_path), ("bfloat16", b_path), ("bf16", bits_b)):
                    with self.subTest(mark=mark, op=op, dtype=name, b=second):
                        out = self.path("out.npy")
                        self.assert_ok(run(["run", "--op", op, a_path, second, "-o", out, "--dtype", name]))
                        got = np.load(out)
                        self.assertEqual(got.dtype, np.dtype("<u2"))
                        assert_bit_exact(self, got, oracle(op, a, b, "bf16"), "bf16")

    def test_bf16_from_np_save_of_ml_dtypes(self):
        """A file written by np.save of a real ml_dtypes.bfloat16 array: the hand-written '<V2' files
        are its bytes, and --dtype bf16 reads it."""
        ml_dtypes = ml_dtypes_or_skip(self)
        rng = np.random.default_rng(32)
        a = random_array(rng, "bf16", (5, 8))
        b = random_array(rng, "bf16", (8,))
        a_path = self.save("a_ml.npy", a.view(ml_dtypes.bfloat16))
        b_path = self.save("b_ml.npy", b.view(ml_dtypes.bfloat16))
        with open(a_path, "rb") as f:
            self.assertEqual(f.read(), two_byte_void_npy(a))
        out = self.path("out.npy")
        self.assert_ok(run(["run", "--op", "squared_difference", a_path, b_path, "-o", out, "--dtype", "bf16"]))
        assert_bit_exact(self, np.load(out), oracle("squared_difference", a, b, "bf16"), "bf16")

    def test_progress_bar_only_on_a_terminal(self):
        # Output of 4100 x 4100 f32 = 64.1 MiB: just above the threshold.
        a = self.save("a.npy", np.ones((4100, 1), dtype=np.float32))
        b = self.save("b.npy", np.zeros((4100,), dtype=np.float32))
        args = [SQDIFF, "run", "--op", "subtract", a, b, "-o", self.path("o.npy")]

        def on_pty(extra):
            text, _, status = run_with_terminal_stderr(args + extra, timeout=60)
            self.assertEqual(status, 0)
            return text

        text = on_pty([])
        self.assertIn("100%", text)
        self.assertIn("MiB", text)
        self.assertEqual(on_pty(["--quiet"]), "")
        self.assertEqual(on_pty(["-q"]), "")
        result = run(args[1:])  # stderr is a pipe: no bar
        self.assert_ok(result)
        self.assertEqual(result.stderr, "")
        self.assertEqual(np.load(self.path("o.npy"), mmap_mode="r")[4099, 4099], 1.0)

    def test_interrupted_run_leaves_nothing(self):
        # 2 GiB of output from tiny inputs: SIGINT arrives while it is written.
        a = self.save("a.npy", np.ones((16384, 1), dtype=np.float32))
        b = self.save("b.npy", np.ones((32768,), dtype=np.float32))
        out_dir = self.path("out")
        os.mkdir(out_dir)
        proc = subprocess.Popen([SQDIFF, "run", "--op", "subtract", a, b, "-o", os.path.join(out_dir, "o.npy"),
                                 "--threads", "1"], stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while not os.listdir(out_dir) and time.time() < deadline and proc.poll() is None:
            time.sleep(0.005)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
        if proc.returncode == 0:
            self.skipTest("the job finished before the signal arrived")
        self.assertEqual(proc.returncode, -signal.SIGINT)
        self.assertEqual(self.listing(out_dir), [])


# --- errors of sqdiff run ----------------------------------------------------------

class OutputTargetTest(CliTestCase):
    """-o PATH: regular files are replaced atomically (through symbolic links, keeping their
    mode); anything else (standard output as "-", a pipe, a FIFO, a device) is written
    through, never replaced by a regular file."""

    def inputs(self):
        a = self.save("a.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
        b = self.save("b.npy", np.full(4, 2.5, dtype=np.float32))
        expected = (np.arange(12, dtype=np.float32).reshape(3, 4) - np.float32(2.5)) ** 2
        return a, b, expected

    def run_to(self, target, *extra, stdout=subprocess.PIPE):
        a, b, _ = self.inputs()
        return subprocess.run([SQDIFF, "run", "--op", "squared_difference", a, b, "-o", target, *extra],
                              stdout=stdout, stderr=subprocess.PIPE, timeout=60)

    def test_dash_and_dev_stdout_write_to_the_pipe(self):
        # /dev/fd/1 is /dev/stdout's target: the same write-through, but a writer that renames
        # onto it fails inside /proc instead of replacing the machine's /dev/stdout.
        _, _, expected = self.inputs()
        for target in ("-", "/dev/fd/1"):
            with self.subTest(target=target):
                result = self.run_to(target)
                self.assertEqual(result.returncode, 0, result.stderr)
                np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), expected)
        # Chunked: the chunks reach the pipe in order.
        result = self.run_to("-", "--chunk-bytes", "16")
        self.assertEqual(result.returncode, 0, result.stderr)
        np.testing.assert_array_equal(np.load(io.BytesIO(result.stdout)), expected)
        self.assertEqual(self.listing(), ["a.npy", "b.npy"])

    def test_dash_on_a_terminal_is_refused(self):
        a, b, _ = self.inputs()
        leader, follower = pty.openpty()
        try:
            result = subprocess.run([SQDIFF, "run", "--op", "subtract", a, b, "-o", "-"], stdout=follower,
                                    stderr=subprocess.PIPE, text=True, timeout=60)
        finally:
            os.close(follower)
            os.close(leader)
        self.assertEqual(result.returncode, 1)
        self.assertIn("standard output is a terminal", result.stderr)

    def test_device_stays_a_device(self):
        # A device node of our own (the null device's numbers) where we may make one, so that a
        # writer that replaces devices breaks only this directory, not the machine's /dev/null;
        # /dev/null itself otherwise (only root could replace it).
        device = "/dev/null"
        if os.geteuid() == 0:
            device = self.path("null")
            os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        before = os.stat(device)
        result = self.run_to(device)
        self.assertEqual(result.returncode, 0, result.stderr)
        after = os.stat(device)
        self.assertTrue(stat.S_ISCHR(after.st_mode), device + " is no longer a character device")
        self.assertEqual((after.st_ino, after.st_rdev), (before.st_ino, before.st_rdev))

    def test_fifo_is_written_through(self):
        _, _, expected = self.inputs()
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        received = []
        reader = threading.Thread(target=lambda: received.append(open(fifo, "rb").read()))
        reader.start()
        result = self.run_to(fifo)
        reader.join(timeout=60)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        np.testing.assert_array_equal(np.load(io.BytesIO(received[0])), expected)

    def test_symbolic_link_target_gets_the_data(self):
        _, _, expected = self.inputs()
        os.mkdir(self.path("real"))
        os.symlink("real/target.npy", self.path("link.npy"))  # dangling: the target is created
        for _ in range(2):  # then replaced through the link
            result = self.run_to(self.path("link.npy"))
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertTrue(os.path.islink(self.path("link.npy")))
            np.testing.assert_array_equal(np.load(self.path("real/target.npy")), expected)
            self.assertEqual(self.listing(self.path("real")), ["target.npy"])

    def test_replaced_file_keeps_its_mode(self):
        target = self.save("private.npy", np.zeros(1))
        os.chmod(target, 0o600)
        self.assertEqual(self.run_to(target).returncode, 0)
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o600)

    def test_long_legal_name(self):
        name = "n" * 236 + ".npy"  # 240 bytes; the temporary's name must still fit in 255
        result = self.run_to(self.path(name))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.listing(), ["a.npy", "b.npy", name])

    def test_directory_is_refused(self):
        result = self.run_to(self.dir)
        self.assertEqual(result.returncode, 1)
        self.assertIn(self.dir + ": is a directory, not a file", result.stderr.decode())


class RunErrorTest(CliTestCase):
    def setUp(self):
        super().setUp()
        self.good_a = self.save("a.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
        self.good_b = self.save("b.npy", np.ones(3, dtype=np.float32))
        self.out_dir = self.path("out")
        os.mkdir(self.out_dir)
        self.out = os.path.join(self.out_dir, "o.npy")

    def expect_failure(self, args, *fragments):
        result = run(args)
        self.assert_error(result, *fragments)
        self.assertEqual(self.listing(self.out_dir), [], "no partial output file is left behind")
        return result

    def run_args(self, a, b, *extra, out=None):
        return ["run", "--op", "squared_difference", a, b, "-o", out or self.out] + list(extra)

    def write_raw(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def test_malformed_files(self):
        with open(self.good_a, "rb") as f:
            raw = f.read()
        header_end = raw.index(b"\n") + 1
        cases = {
            "empty.npy": (b"", "empty"),
            "text.npy": (b"just some text\n", "bad magic"),
            "magic_only.npy": (b"\x93NUMPY", "truncated"),
            "version.npy": (b"\x93NUMPY\x09\x00" + raw[8:], "format version 9.0"),
            "header_cut.npy": (raw[:40], "truncated"),
            "data_cut.npy": (raw[:-5], "truncated .npy file"),
            "trailing.npy": (raw + b"xyz", "trailing bytes"),
            "bad_dict.npy": (raw[:10] + raw[10:header_end].replace(b"'shape'", b"'shapf'"), "unexpected key"),
            "bad_descr.npy": (raw.replace(b"'<f4'", b"'<x4'"), "unsupported dtype descr '<x4'"),
            "bool.npy": (raw.replace(b"'<f4'", b"'|b1'")[:header_end] + b"\x00" * 6, "bool"),
            "complex.npy": (raw.replace(b"'<f4'", b"'<c8'") + b"\x00" * 24, "complex"),
            "bigendian.npy": (raw.replace(b"'<f4'", b"'>f4'"), "big-endian"),
            "fortran.npy": (raw.replace(b"False", b"Maybe"), "True or False"),
        }
        for name, (data, fragment) in cases.items():
            with self.subTest(file=name):
                path = self.write_raw(name, data)
                self.expect_failure(self.run_args(path, self.good_b), path, fragment)
                self.expect_failure(self.run_args(self.good_a, path), path, fragment)

    def test_big_endian_from_numpy(self):
        path = self.save("be.npy", np.arange(4, dtype=">i4"))
        self.expect_failure(self.run_args(path, path), path, "big-endian", "'>i4'")
        # Single-byte types have no byte order: NumPy writes '|u1' and that is fine.
        one = self.save("u1.npy", np.arange(4, dtype=np.uint8))
        self.assert_ok(run(self.run_args(one, one)))

    def test_unsupported_numpy_dtypes(self):
        for name, array, fragment in [("bool", np.array([True, False]), "bool"),
                                      ("complex", np.array([1j, 2]), "complex"),
                                      ("str", np.array(["ab"]), "string"),
                                      ("f128", np.array([1.0], dtype=np.longdouble), "'<f16'")]:
            with self.subTest(dtype=name):
                path = self.save(name + ".npy", array)
                self.expect_failure(self.run_args(path, path), path, fragment)
        path = self.path("obj.npy")
        np.save(path, np.array([None, 1], dtype=object), allow_pickle=True)
        self.expect_failure(self.run_args(path, path), path, "object")

    def test_bfloat16_npy_names_dtype_bf16(self):
        # ml_dtypes.bfloat16 arrays save as '<V2' (np.save of ml_dtypes 0.6), two raw bytes a
        # reader cannot tell from other void data: without --dtype bf16 the error says to pass it.
        bits = np.array([0x3F80, 0x4000, 0xC040], dtype=np.uint16)  # 1.0, 2.0, -3.0
        raw = two_byte_void_npy(bits)
        for mark in ("<", "|"):
            path = self.save_two_byte_void("bf16_ml_dtypes.npy", bits, mark)
            for extra in ((), ("--dtype", "f32"), ("--dtype", "u16")):
                with self.subTest(mark=mark, extra=extra):
                    self.expect_failure(self.run_args(path, path, *extra), path,
                                        "unsupported dtype descr '%sV2' (void/raw bytes)" % mark,
                                        "(np.save of an ml_dtypes.bfloat16 array writes '%sV2'), pass --dtype bf16 "
                                        "to sqdiff run or sqdiff compare" % mark)
            # The advice works.
            self.assert_ok(run(self.run_args(path, path, "--dtype", "bf16", out=self.path("ok.npy"))))
            self.assertEqual(np.load(self.path("ok.npy")).tolist(), [0, 0, 0])
        # Other void data, and big-endian voids, stay errors, also with --dtype bf16, and get no bfloat16 hint.
        for name, data, fragment in [("v4.npy", raw.replace(b"'<V2'", b"'|V4'")[:-6] + b"\x00" * 12, "void/raw bytes"),
                                     ("v1.npy", raw.replace(b"'<V2'", b"'|V1'")[:-3], "void/raw bytes"),
                                     ("v2be.npy", raw.replace(b"'<V2'", b"'>V2'"), "big-endian")]:
            other = self.write_raw(name, data)
            for extra in ((), ("--dtype", "bf16")):
                with self.subTest(file=name, extra=extra):
                    result = self.expect_failure(self.run_args(other, other, *extra), other, fragment)
                    self.assertNotIn("pass --dtype bf16", result.stderr)
        # A '<V2' file whose data is cut short names its descr and size.
        short = self.write_raw("short.npy", raw[:-1])
        self.expect_failure(self.run_args(short, short, "--dtype", "bf16"), short,
                            "truncated .npy file: shape [3] of <V2 needs 6 data bytes, the file holds 5")

    def test_mismatched_shapes(self):
        c = self.save("c.npy", np.ones((3, 2), dtype=np.float32))
        self.expect_failure(self.run_args(self.good_a, c), "squared_difference: cannot broadcast [2,3] with [3,2] (numpy)")
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--broadcast", "none"),
                            "cannot broadcast [2,3] with [3] (none)")
        self.expect_failure(self.run_args(self.good_a, c, "--broadcast", "pdpd", "--axis=-2"), "axis -2 is less than -1")
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--broadcast", "pdpd", "--axis=0"),
                            "(pdpd, axis 0)")

    def test_mixed_dtypes(self):
        d = self.save("d.npy", np.ones(3, dtype=np.float64))
        self.expect_failure(self.run_args(self.good_a, d), "mixed dtypes", "f32", "f64")
        i = self.save("i.npy", np.ones(3, dtype=np.int32))
        self.expect_failure(self.run_args(i, self.good_b), "mixed dtypes", "i32", "f32")

    def test_bad_dtype_option(self):
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--dtype", "bf16"), "cannot be read as bf16")
        result = self.expect_failure(self.run_args(self.good_a, self.good_b, "--dtype", "float128"),
                                     "--dtype: float128 not in {f16,bf16,bfloat16,f32,f64,i8,")
        self.assertEqual(result.returncode, 2, "an unknown name is a command-line mistake")

    def test_unknown_op_and_mode(self):
        self.expect_failure(["run", "--op", "divide", self.good_a, self.good_b, "-o", self.out], "--op", "divide")
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--broadcast", "explicit"), "--broadcast",
                            "explicit")
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--threads=-1"), "--threads")
        self.expect_failure(self.run_args(self.good_a, self.good_b, "--axis", "x"), "--axis")
        self.expect_failure(["run", self.good_a, self.good_b, "-o", self.out], "--op")
        self.expect_failure(["run", "--op", "subtract", self.good_a, self.good_b], "--output")
        self.expect_failure(["run", "--op", "subtract", self.good_a, "-o", self.out], "b")

    def test_missing_files(self):
        missing = self.path("missing.npy")
        self.expect_failure(self.run_args(missing, self.good_b), missing, "No such file")
        self.expect_failure(self.run_args(self.good_a, missing), missing, "No such file")
        self.expect_failure(self.run_args(self.dir, self.good_b), self.dir, "not a regular file")

    def test_unwritable_output(self):
        # The tests may run as root, so "unwritable" is a directory that cannot exist.
        out = self.path("no/such/dir/o.npy")
        self.expect_failure(self.run_args(self.good_a, self.good_b, out=out), out, "No such file")
        out = os.path.join(self.good_a, "o.npy")  # a.npy is a file, not a directory
        self.expect_failure(self.run_args(self.good_a, self.good_b, out=out), out, "Not a directory")
        # An existing directory as the output: the rename fails, the temporary goes.
        result = run(self.run_args(self.good_a, self.good_b, out=self.out_dir))
        self.assert_error(result, self.out_dir)
        self.assertEqual(self.listing(self.out_dir), [])
        self.assertEqual(self.listing(), ["a.npy", "b.npy", "out"])
        if os.geteuid() != 0:
            os.chmod(self.out_dir, 0o500)
            try:
                self.expect_failure(self.run_args(self.good_a, self.good_b), self.out, "Permission denied")
            finally:
                os.chmod(self.out_dir, 0o700)

    def test_existing_output_survives_failure(self):
        self.save("out/o.npy", np.arange(3, dtype=np.uint8))
        c = self.save("c.npy", np.ones((3, 2), dtype=np.float32))
        result = run(self.run_args(self.good_a, c))
        self.assert_error(result, "cannot broadcast")
        self.assertEqual(self.listing(self.out_dir), ["o.npy"])
        np.testing.assert_array_equal(np.load(self.out), np.arange(3, dtype=np.uint8))


# --- sqdiff shape --------------------------------------------------------------------

class ShapeTest(CliTestCase):
    def shape(self, *args):
        result = run(["shape"] + list(args))
        self.assert_ok(result)
        self.assertEqual(result.stderr, "")
        return result.stdout.strip()

    def test_static(self):
        self.assertEqual(self.shape("8,1,6,1", "7,1,5"), "[8,7,6,5]")
        self.assertEqual(self.shape("[8,1,6,1]", "[7,1,5]"), "[8,7,6,5]")
        self.assertEqual(self.shape("[]", "[]"), "[]")
        self.assertEqual(self.shape("2,3,5", "[]"), "[2,3,5]")
        self.assertEqual(self.shape("1,0,3", "3"), "[1,0,3]")
        self.assertEqual(self.shape("256,56", "256,56", "--broadcast", "none"), "[256,56]")
        self.assertEqual(self.shape("2,3,4,5", "3,1", "--broadcast", "pdpd", "--axis=1"), "[2,3,4,5]")
        self.assertEqual(self.shape("2,3,4,5", "3,1", "--broadcast=pdpd", "--axis", "1"), "[2,3,4,5]")
        self.assertEqual(self.shape("8,7,6,5", "7,1,5", "--broadcast", "pdpd", "--axis=-1"), "[8,7,6,5]")
        self.assertEqual(self.shape("2,3,4,5", "4,5", "--broadcast", "PDPD"), "[2,3,4,5]")

    def test_partial(self):
        self.assertEqual(self.shape("?,3", "2..7,1"), "[2..7,3]")
        self.assertEqual(self.shape("1..3", "1..5"), "[1..5]")
        self.assertEqual(self.shape("1..3", "2..7"), "[2..7]")
        self.assertEqual(self.shape("8..16", "4..12"), "[8..12]")
        self.assertEqual(self.shape("?", "3"), "[3]")
        self.assertEqual(self.shape("?", "1"), "[?]")
        self.assertEqual(self.shape("1..", "1"), "[1..?]")
        self.assertEqual(self.shape("...", "3"), "[...]")
        self.assertEqual(self.shape("-1,3", "4,1"), "[4,3]")
        self.assertEqual(self.shape("...", "2,3", "--broadcast", "none"), "[2,3]")
        self.assertEqual(self.shape("1", "4..8", "--broadcast", "pdpd"), "[4..8]")

    def test_errors(self):
        self.assert_error(run(["shape", "3", "2"]), "cannot broadcast [3] with [2] (numpy): dimension 0 is 3 vs 2")
        self.assert_error(run(["shape", "0", "5"]), "dimension 0 is 0 vs 5")
        self.assert_error(run(["shape", "2,4", "1,2,4", "--broadcast", "none"]), "ranks differ")
        self.assert_error(run(["shape", "1", "4", "--broadcast", "pdpd"]), "(pdpd, axis -1)")
        self.assert_error(run(["shape", "2,3,4,5", "3,1", "--broadcast", "pdpd", "--axis=-2"]), "axis -2")
        self.assert_error(run(["shape", "3,x", "3"]), "invalid shape \"3,x\"")
        self.assert_error(run(["shape", "7..2", "3"]), "empty")
        self.assert_error(run(["shape", "3", "3", "--broadcast", "bogus"]), "--broadcast", "bogus")
        self.assert_error(run(["shape", "3"]), "b")
        self.assert_error(run(["shape", "3", "4", "5"]), "5")


# --- the program as a whole ------------------------------------------------------------

class ProgramTest(CliTestCase):
    def test_version(self):
        result = run(["--version"])
        self.assert_ok(result)
        self.assertRegex(result.stdout.strip(), r"^sqdiff \d+\.\d+\.\d+ \(SIMD target: \S+\)$")

    def test_help(self):
        for args in (["--help"], ["run", "--help"], ["shape", "--help"], ["-h"]):
            with self.subTest(args=args):
                result = run(args)
                self.assert_ok(result)
                self.assertIn("Examples:", result.stdout)
        self.assertIn("run", run(["--help"]).stdout)
        self.assertIn("shape", run(["--help"]).stdout)
        self.assertIn("ir", run(["--help"]).stdout)

    def test_usage_errors(self):
        for args, fragment in [([], "subcommand"), (["frobnicate"], "frobnicate"), (["--bogus"], "--bogus"),
                               (["run", "--op", "divide", "a", "b", "-o", "c"], "divide"),
                               (["shape", "3", "--axis", "x"], "--axis"), (["shape", "3", "3", "--nope"], "--nope")]:
            with self.subTest(args=args):
                result = run(args)
                self.assert_error(result, fragment)
                self.assertEqual(result.returncode, 2, "a command-line mistake exits with 2")

    def test_paths_in_messages_stay_on_one_line(self):
        # A path holding a newline and escape sequences, in every command's error: one line on
        # stderr, the path written as the text rule of the reports spells it (docs/cli.md).
        directory = self.path("d\nsqdiff: error: forged\x1b[2J")
        os.mkdir(directory)
        missing = os.path.join(directory, "m\x07.npy")
        spelled = missing.replace("\\", "\\\\").replace("\n", "\\n").replace("\x1b", "\\x1b").replace("\x07", "\\x07")
        other = self.save("x.npy", np.zeros(3, np.float32))
        for args in (["run", "--op", "subtract", missing, other, "-o", self.path("o.npy")],
                     ["compare", missing, other], ["compare", other, missing],
                     ["ir", missing], ["tflite", missing]):
            with self.subTest(args=args[0]):
                result = run(args)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                self.assertTrue(result.stderr.startswith("sqdiff: error: "), result.stderr)
                self.assertIn(spelled, result.stderr)
                self.assertNotIn("\x1b", result.stderr + result.stdout)
                self.assertNotIn("\x07", result.stderr + result.stdout)

    def test_integer_options_out_of_range_are_refused_not_clamped(self):
        for args, fragment in [
                (["shape", "2,3", "3", "--broadcast", "pdpd", "--axis=99999999999999999999"],
                 "--axis: value 99999999999999999999 is out of range"),
                (["run", "--op", "subtract", "a", "b", "-o", "c", "--axis=-99999999999999999999"],
                 "is out of range"),
                (["run", "--op", "subtract", "a", "b", "-o", "c", "--threads", "4294967296"], "is out of range"),
                (["run", "--op", "subtract", "a", "b", "-o", "c", "--threads", "1e3"], "is not an integer"),
                (["ir", "m.xml", "--random", "18446744073709551616"], "is out of range"),
                (["ir", "m.xml", "--random=-1"], "is out of range")]:
            with self.subTest(args=args):
                result = run(args)
                self.assert_error(result, fragment)
                self.assertEqual(result.returncode, 2)

    def test_bad_option_values_exit_with_2(self):
        # Every option that takes a value, given a bad one: a command-line mistake (docs/cli.md:
        # status 2), reported in exactly this line before any file is opened (none of them exists).
        run_args = ["run", "--op", "subtract", "a.npy", "b.npy", "-o", "c.npy"]
        reduce_args = ["run", "--reduce", "sum", "a.npy", "b.npy", "-o", "c.npy"]
        compare_args = ["compare", "a.npy", "b.npy"]
        dtypes = "{f16,bf16,bfloat16,f32,f64,i8,i16,i32,i64,u8,u16,u32,u64}"
        int_range = "(0 to 2147483647)"
        int64 = "(-9223372036854775808 to 9223372036854775807)"
        cases = [
            (run_args[:2] + ["divide"] + run_args[3:], "--op: divide not in {squared_difference,subtract}"),
            (run_args + ["--broadcast=explicit"], "--broadcast: explicit not in {none,numpy,pdpd}"),
            (run_args + ["--axis=x"], "--axis: value x is not an integer"),
            (run_args + ["--axis=9223372036854775808"], "--axis: value 9223372036854775808 is out of range " + int64),
            (run_args + ["--threads=-1"], "--threads: value -1 is out of range " + int_range),
            (run_args + ["--threads=2147483648"], "--threads: value 2147483648 is out of range " + int_range),
            (run_args + ["--dtype=float128"], "--dtype: float128 not in " + dtypes),
            (reduce_args[:2] + ["max"] + reduce_args[3:], "--reduce: max not in {sum,mean}"),
            (reduce_args + ["--axes=0;1"],
             '--axes: "0;1" is not a comma-separated list of integers (e.g. 0,2 or -1) or none'),
            (reduce_args + ["--axes=-99999999999999999999"],
             "--axes: axis -99999999999999999999 is out of range " + int64),
            (reduce_args + ["--out-dtype=u8"], "--out-dtype: u8 not in {f16,bf16,bfloat16,f32,f64,i64,u64}"),
            (reduce_args + ["--dtype=half"], "--dtype: half not in " + dtypes),
            (reduce_args + ["--threads=-1"], "--threads: value -1 is out of range " + int_range),
            (compare_args + ["--peak=-1"], "--peak: value -1 is not a finite number greater than 0"),
            (compare_args + ["--fail-above=nan"], "--fail-above: value nan is not a number from 0 to inf"),
            (compare_args + ["--fail-above=-inf"], "--fail-above: value -inf is not a number from 0 to inf"),
            (compare_args + ["--dtype=float128"], "--dtype: float128 not in " + dtypes),
            (compare_args + ["--threads=-1"], "--threads: value -1 is out of range " + int_range),
            (["shape", "3", "3", "--broadcast=x"], "--broadcast: x not in {none,numpy,pdpd}"),
            (["shape", "3", "3", "--axis=1.5"], "--axis: value 1.5 is not an integer"),
            (["ir", "m.xml", "--random=x"], "--random: value x is not an integer"),
            (["ir", "m.xml", "--threads=-1"], "--threads: value -1 is out of range " + int_range),
            (["ir", "m.xml", "--input=a"], "--input: value a is not NAME=FILE.npy (NAME is a Parameter layer's name)"),
            (["ir", "m.xml", "--input==a.npy"],
             "--input: value =a.npy is not NAME=FILE.npy (NAME is a Parameter layer's name)"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                result = run(args, cwd=self.dir)
                self.assertEqual((result.returncode, result.stdout, result.stderr),
                                 (2, "", "sqdiff: error: %s (see sqdiff %s --help)\n" % (message, args[0])))
        self.assertEqual(self.listing(), [])

    def test_hidden_chunk_options_refuse_0_in_plain_numbers(self):
        # Test-only options (hidden from --help, so CLI11 names them "" in the message).
        for args in (["run", "--op", "subtract", "a", "b", "-o", "c", "--chunk-bytes=0"],
                     ["compare", "a", "b", "--chunk-elements=0"]):
            with self.subTest(args=args):
                result = run(args)
                self.assert_error(result, "value 0 is out of range (1 to 9223372036854775807)")
                self.assertEqual(result.returncode, 2)

    def test_job_errors_exit_with_1(self):
        self.assertEqual(run(["shape", "3", "2"]).returncode, 1)
        self.assertEqual(run(["run", "--op", "subtract", self.path("x.npy"), self.path("y.npy"), "-o",
                              self.path("z.npy")]).returncode, 1)


# --- every example in the help text runs as written ----------------------------------------

def help_examples(text):
    """[(command, [expected stdout lines])] from the "Examples:" part of a help text."""
    examples = []
    in_examples = False
    for line in text.splitlines():
        if line.strip() == "Examples:":
            in_examples = True
            continue
        if not in_examples:
            continue
        if not line.startswith("  "):
            in_examples = False
            continue
        if line.startswith("  $ "):
            examples.append((line[4:], []))
        elif examples and re.match(r"^  \S", line):
            examples[-1][1].append(line[2:])
    return examples


class HelpExamplesTest(CliTestCase):
    def prepare_inputs(self):
        rng = np.random.default_rng(8)
        self.save("a.npy", random_array(rng, "f32", (8, 1, 6, 1)))
        self.save("b.npy", random_array(rng, "f32", (7, 1, 5)))
        self.save("x.npy", random_array(rng, "f32", (2, 3, 4, 5)))
        self.save("y.npy", random_array(rng, "f32", (3, 1)))
        self.save("p.npy", random_array(rng, "f32", (256, 56)))
        self.save("q.npy", random_array(rng, "f32", (256, 56)))
        self.save("bf_a.npy", random_array(rng, "bf16", (4, 8)))
        self.save("bf_b.npy", random_array(rng, "bf16", (8,)))
        # The quantized example's int8 inputs (quant_run_test.py checks its output).
        self.save("qa.npy", np.array([[2, 4, 6], [8, 10, 12]], dtype=np.int8))
        self.save("qb.npy", np.array([14, 18, 22], dtype=np.int8))

    def test_examples_run_as_written(self):
        self.prepare_inputs()
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(os.path.abspath(SQDIFF)) + os.pathsep + env.get("PATH", "")
        count = 0
        for help_args in (["--help"], ["run", "--help"], ["shape", "--help"]):
            examples = help_examples(run(help_args).stdout)
            self.assertTrue(examples, "no examples in sqdiff %s" % " ".join(help_args))
            for command, expected in examples:
                with self.subTest(command=command):
                    self.assertTrue(command.startswith("sqdiff"))
                    result = subprocess.run(["bash", "-c", command], cwd=self.dir, env=env, stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True, timeout=120)
                    self.assertEqual(result.returncode, 0, command + ": " + result.stderr)
                    if expected:
                        self.assertEqual(result.stdout.splitlines(), expected)
                    count += 1
        # The run examples' outputs are right too.
        a, b = np.load(self.path("a.npy")), np.load(self.path("b.npy"))
        assert_bit_exact(self, np.load(self.path("squared.npy")), oracle("squared_difference", a, b, "f32"), "f32")
        assert_bit_exact(self, np.load(self.path("diff.npy")), oracle("subtract", a, b, "f32"), "f32")
        x, y = np.load(self.path("x.npy")), np.load(self.path("y.npy"))
        assert_bit_exact(self, np.load(self.path("z.npy")), oracle("subtract", x, y, "f32", "pdpd", 1), "f32")
        bf_a, bf_b = np.load(self.path("bf_a.npy")), np.load(self.path("bf_b.npy"))
        assert_bit_exact(self, np.load(self.path("bf_out.npy")), oracle("squared_difference", bf_a, bf_b, "bf16"),
                         "bf16")
        self.assertGreaterEqual(count, 10)


# --- two 512 MiB inputs through the memory-mapped path ----------------------------------------

class LargeTest(CliTestCase):
    def test_two_512_mib_inputs(self):
        rows, cols = 128, 1 << 20  # 128 Mi f32 elements = 512 MiB per file
        a_path, b_path, out_path = self.path("big_a.npy"), self.path("big_b.npy"), self.path("big_out.npy")
        rng = np.random.default_rng(9)
        started = time.time()
        for path in (a_path, b_path):
            array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, cols))
            for r in range(0, rows, 16):
                array[r:r + 16] = rng.standard_normal((16, cols), dtype=np.float32) * 100
            array.flush()
            del array
        self.assertEqual(os.path.getsize(a_path), 512 * 2**20 + 128)
        generated = time.time()
        result = run(["run", "--op", "squared_difference", a_path, b_path, "-o", out_path])
        self.assert_ok(result)
        computed = time.time()
        a = np.load(a_path, mmap_mode="r")
        b = np.load(b_path, mmap_mode="r")
        out = np.load(out_path, mmap_mode="r")
        self.assertEqual(out.shape, (rows, cols))
        self.assertEqual(out.dtype, np.float32)
        for r in range(0, rows, 16):
            expected = oracle("squared_difference", np.asarray(a[r:r + 16]), np.asarray(b[r:r + 16]), "f32")
            assert_bit_exact(self, np.asarray(out[r:r + 16]), expected, "f32")
        del a, b, out
        checked = time.time()
        for path in (a_path, b_path, out_path):
            os.remove(path)
        sys.stderr.write("generate %.1f s, sqdiff run %.1f s, check %.1f s\n" % (
            generated - started, computed - generated, checked - computed))


if __name__ == "__main__":
    unittest.main()
