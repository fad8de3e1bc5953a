#!/usr/bin/python3
"""Command-level tests of `sqdiff ir`: runs the built program on examples/ir/ and
on generated models, and compares every output with a NumPy oracle (SPEC
sections 1-3).

Run by CTest (tests/ir/CMakeLists.txt) as `ir_cli_test.py -v GROUP` with
SQDIFF=<path of the program>, SQDIFF_IR_TMP=<scratch dir>, cwd = the repository.
By hand: SQDIFF=build-ir/tools/sqdiff /usr/bin/python3 tests/ir/ir_cli_test.py -v
"""
import os
import pathlib
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "ir"
SQDIFF = os.path.abspath(os.environ.get("SQDIFF", str(REPO / "build" / "tools" / "sqdiff")))
TMP_ROOT = pathlib.Path(os.environ.get("SQDIFF_IR_TMP", tempfile.gettempdir()))

# A sanitizer report must not look like an ordinary error (exit status 1).
ENV = dict(os.environ)
for key in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    ENV[key] = ":".join(filter(None, [os.environ.get(key, ""), "exitcode=99"]))


def run_raw(*args, cwd=None):
    """sqdiff ARGS..."""
    return subprocess.run([SQDIFF, *map(str, args)], capture_output=True, text=True, env=ENV, cwd=cwd, timeout=300)


def run(*args, cwd=None):
    """sqdiff ir ARGS..."""
    return run_raw("ir", *args, cwd=cwd)


def assert_clean(test, proc):
    """No crash, no sanitizer report, status 0 or 1."""
    test.assertIn(proc.returncode, (0, 1), proc.stderr)
    for word in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "terminate called"):
        test.assertNotIn(word, proc.stderr)


class TempDirTest(unittest.TestCase):
    def setUp(self):
        TMP_ROOT.mkdir(parents=True, exist_ok=True)
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix=self.id().split(".")[-1] + "-", dir=TMP_ROOT))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)


# --- the oracle --------------------------------------------------------------

def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    """Round to nearest even; NaN stays NaN (quiet)."""
    b = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), rounded)


def pdpd_view(b, rank_a, axis):
    """b reshaped so that NumPy broadcasting aligns it at `axis` of a."""
    axis = rank_a - b.ndim if axis == -1 else axis
    return b.reshape((1,) * axis + b.shape + (1,) * (rank_a - axis - b.ndim))


def oracle(op, a, b, mode="numpy", axis=-1, dtype=None):
    """SPEC: same type in and out; f16/bf16 in f32, rounded once; integers wrap."""
    if mode == "pdpd":
        b = pdpd_view(b, a.ndim, axis)
    if dtype == "bf16":
        d = bf16_to_f32(a) - bf16_to_f32(b)
        return f32_to_bf16(d * d if op == "SquaredDifference" else d)
    if a.dtype == np.float16:
        d = a.astype(np.float32) - b.astype(np.float32)
        return (d * d if op == "SquaredDifference" else d).astype(np.float16)
    with np.errstate(over="ignore"):
        d = a - b
        return d * d if op == "SquaredDifference" else d


# --- models built on the fly ------------------------------------------------------

NP_TYPES = {"f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64, "i8": np.int8,
            "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
            "u64": np.uint64}


def dims(shape):
    return "".join(f"<dim>{d}</dim>" for d in shape)


def shape_attr(shape):
    return ",".join(str(d) for d in shape)


def op_model(a, b, out, op="SquaredDifference", etype="f32", data="", name="op", result="out", extra_layers="",
             extra_edges=""):
    """Parameters a and b -> op -> Result; shapes are lists (dims may be strings)."""
    data_xml = f"<data {data}/>" if data else ""
    return f"""<?xml version="1.0"?>
<net name="generated" version="11">
<layers>
<layer id="0" name="a" type="Parameter" version="opset1">
<data shape="{shape_attr(a)}" element_type="{etype}"/>
<output><port id="0">{dims(a)}</port></output>
</layer>
<layer id="1" name="b" type="Parameter" version="opset1">
<data shape="{shape_attr(b)}" element_type="{etype}"/>
<output><port id="0">{dims(b)}</port></output>
</layer>
<layer id="2" name="{name}" type="{op}" version="opset1">
{data_xml}
<input><port id="0">{dims(a)}</port><port id="1">{dims(b)}</port></input>
<output><port id="2">{dims(out)}</port></output>
</layer>
<layer id="3" name="{result}" type="Result" version="opset1">
<input><port id="0">{dims(out)}</port></input>
</layer>
{extra_layers}</layers>
<edges>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
{extra_edges}</edges>
</net>
"""


def random_array(rng, dtype, shape):
    np_type = NP_TYPES[dtype]
    if dtype == "bf16":
        return f32_to_bf16(rng.uniform(-100, 100, size=shape).astype(np.float32))
    if np.issubdtype(np_type, np.floating):
        return rng.uniform(-100, 100, size=shape).astype(np_type)
    info = np.iinfo(np_type)
    return rng.integers(info.min, info.max, size=shape, dtype=np_type, endpoint=True)


# --- the tests -----------------------------------------------------------------

EXAMPLE_LINES = {
    "squared_difference_none.xml":
        'layer 2 "squared_difference" SquaredDifference: [256,56] with [256,56] (none) -> [256,56] ok',
    "squared_difference_numpy.xml":
        'layer 2 "squared_difference" SquaredDifference: [8,1,6,1] with [7,1,5] (numpy) -> [8,7,6,5] ok',
    "subtract_pdpd.xml": 'layer 2 "subtract" Subtract: [2,3,4,5] with [3,1] (pdpd, axis 1) -> [2,3,4,5] ok',
    "dynamic_dims.xml":
        'layer 2 "squared_difference" SquaredDifference: [?,1,4] with [2..7,3,1] (numpy) -> [2..7,3,4] ok',
}


class Examples(TempDirTest):
    def test_every_example_is_listed(self):
        self.assertEqual(sorted(p.name for p in EXAMPLES.glob("*.xml")), sorted(EXAMPLE_LINES))

    def test_shape_check_of_each_example(self):
        for name, line in EXAMPLE_LINES.items():
            with self.subTest(name):
                proc = run(EXAMPLES / name)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn(line + "\n", proc.stdout)
                self.assertIn("shape check: 1 layer ok", proc.stdout)
                self.assertEqual(proc.stderr, "")
                self.assertEqual(list(self.dir.iterdir()), [])

    def check_run(self, name, seed):
        out = self.dir / f"{name}-{seed}"
        proc = run(EXAMPLES / name, "--random", seed, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(EXAMPLE_LINES[name], proc.stdout)
        result = np.load(out / "out.npy")
        self.assertIn(f'result "out" (layer 3): {out / "out.npy"}, ', proc.stdout)
        a = np.load(out / "inputs" / "a.npy")
        model = (EXAMPLES / name).read_text()
        op = "Subtract" if 'type="Subtract"' in model else "SquaredDifference"
        if name == "subtract_pdpd.xml":
            self.assertFalse((out / "inputs" / "b.npy").exists())  # a Const, not an input
            b = np.frombuffer((EXAMPLES / "subtract_pdpd.bin").read_bytes(), dtype="<i4").reshape(3, 1)
            expected = oracle(op, a, b, "pdpd", 1)
        else:
            b = np.load(out / "inputs" / "b.npy")
            expected = oracle(op, a, b)
        self.assertEqual(result.dtype, expected.dtype)
        self.assertEqual(result.shape, expected.shape)
        self.assertEqual(result.tobytes(), expected.tobytes())
        return proc, result

    def test_run_each_example_with_random_inputs(self):
        for name in EXAMPLE_LINES:
            for seed in (1, 2):
                with self.subTest(name=name, seed=seed):
                    self.check_run(name, seed)

    def test_random_values_and_sizes(self):
        _, result = self.check_run("dynamic_dims.xml", 1)
        self.assertEqual(result.shape, (2, 3, 4))  # ? -> 1 and 2..7 -> 2, broadcast
        self.assertEqual(result.dtype, np.float16)
        a = np.load(self.dir / "dynamic_dims.xml-1" / "inputs" / "a.npy")
        self.assertEqual(a.shape, (1, 1, 4))
        self.check_run("squared_difference_numpy.xml", 3)
        x = np.load(self.dir / "squared_difference_numpy.xml-3" / "inputs" / "a.npy")
        self.assertTrue(np.all((x >= -10) & (x < 10)))
        self.check_run("subtract_pdpd.xml", 3)
        i = np.load(self.dir / "subtract_pdpd.xml-3" / "inputs" / "a.npy")
        self.assertTrue(np.all((i >= -5) & (i <= 5)))

    def test_same_seed_same_output(self):
        first = run(EXAMPLES / "squared_difference_numpy.xml", "--random", 5, "-o", self.dir / "x")
        second = run(EXAMPLES / "squared_difference_numpy.xml", "--random", 5, "-o", self.dir / "y")
        self.assertEqual(first.returncode, 0, first.stderr)
        self.assertEqual((self.dir / "x" / "out.npy").read_bytes(), (self.dir / "y" / "out.npy").read_bytes())
        self.assertEqual(first.stdout.replace(str(self.dir / "x"), "D"), second.stdout.replace(str(self.dir / "y"), "D"))

    def test_run_output_lists_inputs_results_and_values(self):
        proc = run(EXAMPLES / "subtract_pdpd.xml", "--random", 1, "-o", self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertTrue(lines[0].startswith(f"{EXAMPLES / 'subtract_pdpd.xml'}: IR v11 \"subtract_pdpd\", 4 layers, 3 edges"))
        self.assertRegex(proc.stdout, r'input "a" \(layer 0\): random, saved as .*inputs/a\.npy, i32 \[2,3,4,5\]: '
                                      r'(-?\d+ ){8}\.\.\.\n')
        self.assertRegex(proc.stdout, r'result "out" \(layer 3\): .*out\.npy, i32 \[2,3,4,5\]: (-?\d+ ){8}\.\.\.\n')

    def test_random_without_output_dir_prints_but_writes_nothing(self):
        proc = run(EXAMPLES / "squared_difference_none.xml", "--random", 1, cwd=self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r'result "out" \(layer 3\): f32 \[256,56\]: ')
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_mismatch_is_reported_with_id_name_and_line(self):
        path = EXAMPLES / "broken" / "declared_shape_mismatch.xml"
        text = path.read_text().splitlines()
        layer_line = next(i for i, l in enumerate(text, 1) if '<layer id="2"' in l)
        port_line = next(i for i, l in enumerate(text, 1) if '<port id="2"' in l)
        proc = run(path)
        self.assertEqual(proc.returncode, 1)
        self.assertIn('layer 2 "squared_difference" SquaredDifference: [8,1,6,1] with [7,1,5] (numpy) -> [8,7,6,5] '
                      'MISMATCH (declared [8,7,6,4])', proc.stdout)
        self.assertIn(f'sqdiff: error: {path}:{port_line}: layer 2 "squared_difference" (SquaredDifference, line '
                      f'{layer_line}): output port 2 declares [8,7,6,4] but the inputs give [8,7,6,5] (numpy)\n',
                      proc.stderr)
        self.assertIn("shape check failed: 1 problem", proc.stderr)
        # And it is not run.
        proc = run(path, "--random", 1, "-o", self.dir)
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(list(self.dir.iterdir()), [])


class Inputs(TempDirTest):
    def test_input_files_c_and_fortran_order(self):
        rng = np.random.default_rng(1)
        a = np.asfortranarray(rng.standard_normal((256, 56)).astype(np.float32))
        b = rng.standard_normal((256, 56)).astype(np.float32)
        np.save(self.dir / "a.npy", a)
        np.save(self.dir / "b.npy", b)
        proc = run(EXAMPLES / "squared_difference_none.xml", "--input", f"a={self.dir / 'a.npy'}",
                   "--input", f"b={self.dir / 'b.npy'}", "-o", self.dir / "out")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'input "a" (layer 0): {self.dir / "a.npy"}, f32 [256,56]: ', proc.stdout)
        result = np.load(self.dir / "out" / "out.npy")
        self.assertEqual(result.tobytes(), oracle("SquaredDifference", a, b).tobytes())
        self.assertFalse((self.dir / "out" / "inputs").exists())  # only random inputs are saved

    def test_dynamic_dims_take_the_input_sizes(self):
        rng = np.random.default_rng(2)
        for a_shape, b_shape, out_shape in [((5, 1, 4), (5, 3, 1), (5, 3, 4)), ((1, 1, 4), (7, 3, 1), (7, 3, 4)),
                                            ((3, 1, 4), (3, 3, 1), (3, 3, 4))]:
            with self.subTest(a=a_shape, b=b_shape):
                a = rng.uniform(-4, 4, a_shape).astype(np.float16)
                b = rng.uniform(-4, 4, b_shape).astype(np.float16)
                np.save(self.dir / "a.npy", a)
                np.save(self.dir / "b.npy", b)
                proc = run(EXAMPLES / "dynamic_dims.xml", "--input", f"a={self.dir / 'a.npy'}", "--input",
                           f"b={self.dir / 'b.npy'}", "-o", self.dir / "out")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                result = np.load(self.dir / "out" / "out.npy")
                self.assertEqual(result.shape, out_shape)
                self.assertEqual(result.tobytes(), oracle("SquaredDifference", a, b).tobytes())

    def test_inputs_outside_the_parameter_shape(self):
        np.save(self.dir / "b.npy", np.zeros((8, 3, 1), np.float16))  # 8 is outside 2..7
        proc = run(EXAMPLES / "dynamic_dims.xml", "--random", 1, "--input", f"b={self.dir / 'b.npy'}")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("has shape [8,3,1], which does not fit the Parameter's shape [2..7,3,1]", proc.stderr)
        np.save(self.dir / "a.npy", np.zeros((2, 1, 4), np.float32))
        proc = run(EXAMPLES / "dynamic_dims.xml", "--random", 1, "--input", f"a={self.dir / 'a.npy'}")
        self.assertEqual(proc.returncode, 1)
        self.assertIn("holds f32 but the Parameter is f16", proc.stderr)

    def test_every_dtype_round_trip(self):
        rng = np.random.default_rng(3)
        cases = [("SquaredDifference", "numpy", "", [2, 1, 5], [3, 1], [2, 3, 5]),
                 ("Subtract", "pdpd", 'auto_broadcast="pdpd" auto_broadcast_axis="1"', [2, 3, 4], [3], [2, 3, 4]),
                 ("Subtract", "none", 'auto_broadcast="none"', [4, 6], [4, 6], [4, 6])]
        for etype in NP_TYPES:
            for op, mode, data, sa, sb, so in cases:
                with self.subTest(dtype=etype, op=op, mode=mode):
                    model = self.dir / f"{etype}-{op}-{mode}.xml"
                    model.write_text(op_model(sa, sb, so, op=op, etype=etype, data=data))
                    a = random_array(rng, etype, sa)
                    b = random_array(rng, etype, sb)
                    np.save(self.dir / "a.npy", a)
                    np.save(self.dir / "b.npy", b)
                    out = self.dir / "out"
                    proc = run(model, "--input", f"a={self.dir / 'a.npy'}", "--input", f"b={self.dir / 'b.npy'}",
                               "-o", out)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    result = np.load(out / "out.npy")
                    expected = oracle(op, a, b, mode, 1, etype)
                    self.assertEqual(result.dtype, expected.dtype)
                    self.assertEqual(result.tobytes(), expected.tobytes())
                    # Random data of every dtype runs too.
                    proc = run(model, "--random", 9)
                    self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_result_names_are_sanitized(self):
        model = self.dir / "m.xml"
        model.write_text(op_model([3], [3], [3], result="../out:1 x"))
        proc = run(model, "--random", 1, "-o", self.dir / "o")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in (self.dir / "o").iterdir()),
                         [".sqdiff-output", "_.._out_1_x.npy", "inputs"])

    def test_no_partial_output_when_a_layer_fails(self):
        # Two Results: "first" (a - b, fine) and "second" (a - c under "none": [?] with [3..5]),
        # which --random cannot satisfy (? -> 1, 3..5 -> 3). Nothing may be written.
        extra = """<layer id="4" name="c" type="Parameter" version="opset1">
<data shape="3..5" element_type="f32"/><output><port id="0"><dim>-1</dim></port></output></layer>
<layer id="5" name="bad" type="Subtract" version="opset1"><data auto_broadcast="none"/>
<input><port id="0"><dim>-1</dim></port><port id="1"><dim>-1</dim></port></input>
<output><port id="2"><dim>-1</dim></port></output></layer>
<layer id="6" name="second" type="Result" version="opset1"><input><port id="0"><dim>-1</dim></port></input></layer>
"""
        edges = """<edge from-layer="0" from-port="0" to-layer="5" to-port="0"/>
<edge from-layer="4" from-port="0" to-layer="5" to-port="1"/>
<edge from-layer="5" from-port="2" to-layer="6" to-port="0"/>
"""
        model = self.dir / "m.xml"
        model.write_text(op_model(["?"], [3], [3], op="Subtract", result="first", extra_layers=extra,
                                  extra_edges=edges))
        proc = run(model, "--random", 1, "-o", self.dir / "o")
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn('layer 5 "bad"', proc.stderr)
        self.assertIn("--random picked sizes for dynamic dims", proc.stderr)
        self.assertFalse((self.dir / "o").exists())  # not even the directory
        # With a file of size 3 for a, it runs.
        np.save(self.dir / "a.npy", np.arange(3, dtype=np.float32))
        proc = run(model, "--random", 1, "--input", f"a={self.dir / 'a.npy'}", "-o", self.dir / "o")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in (self.dir / "o").iterdir()),
                         [".sqdiff-output", "first.npy", "inputs", "second.npy"])
        self.assertEqual((self.dir / "o" / ".sqdiff-output").read_text().split(),
                         ["inputs/b.npy", "inputs/c.npy", "first.npy", "second.npy"])


class Outputs(TempDirTest):
    """-o DIR: the whole set appears at once, replaces an earlier set whole, never mixes with
    it or with files sqdiff did not write; saved inputs never overwrite each other."""

    def test_an_earlier_set_is_replaced_whole(self):
        out = self.dir / "o"
        model_a = self.dir / "a.xml"
        model_a.write_text(op_model([3], [3], [3], result="first"))
        model_b = self.dir / "b.xml"
        model_b.write_text(op_model([2], [2], [2], result="second"))
        self.assertEqual(run(model_a, "--random", 1, "-o", out).returncode, 0)
        self.assertEqual(sorted(p.name for p in out.iterdir()), [".sqdiff-output", "first.npy", "inputs"])
        proc = run(model_b, "--random", 1, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # Nothing of the first set is left beside the second.
        self.assertEqual(sorted(p.name for p in out.iterdir()), [".sqdiff-output", "inputs", "second.npy"])
        self.assertEqual(np.load(out / "second.npy").shape, (2,))
        self.assertEqual([p.name for p in self.dir.iterdir() if ".tmp-" in p.name], [])

    def test_a_directory_of_other_files_is_refused(self):
        out = self.dir / "mine"
        out.mkdir()
        (out / "notes.txt").write_text("keep me")
        model = self.dir / "m.xml"
        model.write_text(op_model([3], [3], [3]))
        proc = run(model, "--random", 1, "-o", out)
        assert_clean(self, proc)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f'{out}: is not empty and holds "notes.txt", which sqdiff did not write', proc.stderr)
        self.assertEqual(sorted(p.name for p in out.iterdir()), ["notes.txt"])
        # An empty directory is fine.
        empty = self.dir / "empty"
        empty.mkdir()
        self.assertEqual(run(model, "--random", 1, "-o", empty).returncode, 0)
        self.assertTrue((empty / "out.npy").exists())

    def test_saved_inputs_never_overwrite_each_other(self):
        # Parameters named "x:0" and "x/0" sanitize alike; two called "y" repeat.
        layers = "".join(f"""<layer id="{i}" name="{name}" type="Parameter" version="opset1">
<data shape="3" element_type="f32"/><output><port id="0"><dim>3</dim></port></output></layer>
""" for i, name in enumerate(["x:0", "x/0", "y", "y"]))
        ops = "".join(f"""<layer id="{4 + k}" name="d{k}" type="Subtract" version="opset1">
<input><port id="0"><dim>3</dim></port><port id="1"><dim>3</dim></port></input>
<output><port id="2"><dim>3</dim></port></output></layer>
<layer id="{6 + k}" name="r{k}" type="Result" version="opset1"><input><port id="0"><dim>3</dim></port></input></layer>
""" for k in range(2))
        edges = "".join(f"""<edge from-layer="{2 * k}" from-port="0" to-layer="{4 + k}" to-port="0"/>
<edge from-layer="{2 * k + 1}" from-port="0" to-layer="{4 + k}" to-port="1"/>
<edge from-layer="{4 + k}" from-port="2" to-layer="{6 + k}" to-port="0"/>
""" for k in range(2))
        model = self.dir / "m.xml"
        model.write_text(f'<?xml version="1.0"?>\n<net name="n" version="11"><layers>{layers}{ops}</layers>'
                         f"<edges>{edges}</edges></net>\n")
        out = self.dir / "o"
        proc = run(model, "--random", 5, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saved = sorted(p.name for p in (out / "inputs").iterdir())
        self.assertEqual(saved, ["x_0_0.npy", "x_0_1.npy", "y_2.npy", "y_3.npy"])
        # The saved inputs reproduce the run: each Result equals its two inputs' difference.
        inputs = {name: np.load(out / "inputs" / name) for name in saved}
        self.assertEqual(len({arr.tobytes() for arr in inputs.values()}), 4, "two saved inputs are the same data")
        np.testing.assert_array_equal(np.load(out / "r0.npy"), inputs["x_0_0.npy"] - inputs["x_0_1.npy"])
        np.testing.assert_array_equal(np.load(out / "r1.npy"), inputs["y_2.npy"] - inputs["y_3.npy"])

    def test_messages_name_the_file_in_plain_words(self):
        model = self.dir / "m.xml"
        model.write_text(op_model([3], [3], [3]))
        for args, needle in [([self.dir], f"{self.dir}: the model file is a directory, not a regular file"),
                             ([model, "--bin", self.dir], f"{self.dir}: the weights file (--bin) is a directory"),
                             (["/dev/zero"], "/dev/zero: the model file is a character device, not a regular file")]:
            with self.subTest(args=args):
                proc = run(*args)
                assert_clean(self, proc)
                self.assertEqual(proc.returncode, 1)
                self.assertTrue(proc.stderr.startswith(f"sqdiff: error: {needle}"), proc.stderr)
                self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
                for raw in ("basic_filebuf", "filesystem error", "std::"):
                    self.assertNotIn(raw, proc.stderr)
        # An output directory that cannot be made: one line, nothing printed mid-line.
        (self.dir / "file").write_text("x")
        proc = run(model, "--random", 1, "-o", self.dir / "file" / "o")
        self.assertEqual(proc.returncode, 1)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertIn(str(self.dir / "file"), proc.stderr)
        self.assertFalse(proc.stdout.endswith("random") or "input \"a\"" in proc.stdout, proc.stdout)


def chain_model(layers):
    """x [2,3] and p [3] -> `layers` Subtract/SquaredDifference layers in a chain -> Result."""
    def port(pid, shape, precision=""):
        attr = f' precision="{precision}"' if precision else ""
        return f'<port id="{pid}"{attr}>{dims(shape)}</port>'
    parts = ['<?xml version="1.0"?>\n<net name="chain" version="11">\n<layers>\n']
    for pid, name, shape in ((0, "x", [2, 3]), (1, "p", [3])):
        parts.append(f'<layer id="{pid}" name="{name}" type="Parameter" version="opset1">\n'
                     f'<data element_type="f32" shape="{shape_attr(shape)}"/>\n'
                     f"<output>{port(0, shape, 'FP32')}</output>\n</layer>\n")
    edges = []
    previous, previous_port = 0, 0
    for k in range(layers):
        op = "Subtract" if k % 2 == 0 else "SquaredDifference"
        parts.append(f'<layer id="{2 + k}" name="op{k}" type="{op}" version="opset1">\n'
                     f'<data auto_broadcast="numpy"/>\n<input>\n{port(0, [2, 3])}\n{port(1, [3])}\n</input>\n'
                     f"<output>\n{port(2, [2, 3], 'FP32')}\n</output>\n</layer>\n")
        edges.append(f'<edge from-layer="{previous}" from-port="{previous_port}" to-layer="{2 + k}" to-port="0"/>\n'
                     f'<edge from-layer="1" from-port="0" to-layer="{2 + k}" to-port="1"/>\n')
        previous, previous_port = 2 + k, 2
    parts.append(f'<layer id="{2 + layers}" name="out" type="Result" version="opset1">\n'
                 f"<input>{port(0, [2, 3])}</input>\n</layer>\n</layers>\n<edges>\n")
    edges.append(f'<edge from-layer="{previous}" from-port="2" to-layer="{2 + layers}" to-port="0"/>\n')
    return "".join(parts + edges + ["</edges>\n</net>\n"])


class Scaling(TempDirTest):
    """Checking a model is linear in its size (line numbers were counted from the start of
    the file for each element: 16,000 layers took 97 s). 16 times the layers must cost far
    less than 256 times the time; the smallest of three runs each, side by side."""

    def test_checking_time_grows_linearly(self):
        timings = {}
        for layers in (4000, 64000):
            model = self.dir / f"chain{layers}.xml"
            model.write_text(chain_model(layers))
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                proc = run(model)
                best = min(best, time.perf_counter() - start)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertIn(f"shape check: {layers} layers ok", proc.stdout)
            timings[layers] = best
        ratio = timings[64000] / timings[4000]
        print(f"checking 4,000 layers: {timings[4000]:.3f} s, 64,000 layers "
              f"({(self.dir / 'chain64000.xml').stat().st_size / 1e6:.0f} MB): {timings[64000]:.3f} s, ratio {ratio:.1f}")
        self.assertLess(ratio, 40, "checking time grows faster than linearly with the model's size")
        self.assertLess(timings[64000], 60)


class Errors(TempDirTest):
    def expect_error(self, args, *needles, cwd=None):
        proc = run(*args, cwd=cwd)
        assert_clean(self, proc)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        for needle in needles:
            self.assertIn(needle, proc.stderr)
        return proc

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def test_malformed_xml(self):
        path = self.write("m.xml", '<?xml version="1.0"?>\n<net version="11">\n<layers>\n<layer id="0"\n</net>\n')
        self.expect_error([path], f"{path}:5:", "malformed XML")

    def test_missing_files(self):
        self.expect_error([self.dir / "none.xml"], "cannot open the model file")
        self.expect_error([EXAMPLES / "subtract_pdpd.xml", "--bin", self.dir / "none.bin"],
                          f"{self.dir / 'none.bin'}: cannot open the weights file (--bin): No such file or directory")
        self.expect_error([EXAMPLES / "subtract_pdpd.xml", "--bin", self.dir],
                          f"{self.dir}: the weights file (--bin) is a directory, not a regular file")
        copy = self.dir / "subtract_pdpd.xml"
        shutil.copy(EXAMPLES / "subtract_pdpd.xml", copy)
        # The shape check does not need the .bin; running does.
        self.assertEqual(run(copy).returncode, 0)
        self.expect_error([copy, "--random", 1],
                          f"{self.dir / 'subtract_pdpd.bin'}: cannot open the weights file for the Const layers")
        (self.dir / "short.bin").write_bytes(b"\0" * 8)
        self.expect_error([copy, "--random", 1, "--bin", self.dir / "short.bin"],
                          'layer 1 "b" (Const, line', "offset 0 + size 12 = 12 bytes is beyond the end of",
                          "(8 bytes)")
        # The shape check reads the Consts' ranges too when there is a .bin.
        self.expect_error([copy, "--bin", self.dir / "short.bin"], "offset 0 + size 12 = 12 bytes is beyond the end",
                          "shape check failed: 1 problem (0 of 1 SquaredDifference/Subtract layer wrong, 1 Const wrong)")
        (self.dir / "subtract_pdpd.bin").write_bytes((EXAMPLES / "subtract_pdpd.bin").read_bytes())
        self.assertEqual(run(copy, "--random", 1).returncode, 0)

    def test_const_size_mismatch(self):
        text = (EXAMPLES / "subtract_pdpd.xml").read_text().replace('size="12"', 'size="16"')
        path = self.write("m.xml", text)
        self.expect_error([path, "--random", 1, "--bin", EXAMPLES / "subtract_pdpd.bin"],
                          "size=16 does not match the shape [3,1] of i32 (12 bytes)")

    def test_structure_errors(self):
        base = op_model([3], [3], [3])
        cases = [
            ("cycle", base.replace('<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>',
                                   '<edge from-layer="2" from-port="2" to-layer="2" to-port="0"/>'),
             "the graph has a cycle"),
            ("dangling", base.replace('<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>', ""),
             'input port 1 of layer 2 "op" (SquaredDifference, line 12) has no edge'),
            ("no layer", base.replace('from-layer="1"', 'from-layer="17"'), "there is no layer with id 17"),
            ("no port", base.replace('to-layer="2" to-port="1"', 'to-layer="2" to-port="5"'), "has no input port 5"),
            ("duplicate id", base.replace('<layer id="1"', '<layer id="0"'), "duplicate layer id 0"),
            ("version", base.replace('version="11"', 'version="7"', 1), 'IR version "7" is not supported'),
            ("explicit", base.replace("<layer id=\"2\" name=\"op\" type=\"SquaredDifference\" version=\"opset1\">\n",
                                      "<layer id=\"2\" name=\"op\" type=\"SquaredDifference\" version=\"opset1\">\n"
                                      "<data auto_broadcast=\"explicit\"/>"),
             'auto_broadcast="explicit" is not supported by SquaredDifference'),
            ("bool", base.replace('element_type="f32"', 'element_type="boolean"'),
             'input a has element type "boolean", which sqdiff does not compute'),
            ("mixed", base.replace('element_type="f32"', 'element_type="i32"', 1),
             'the inputs have different element types, "i32" and "f32"'),
        ]
        for name, text, needle in cases:
            with self.subTest(name):
                self.expect_error([self.write(name.replace(" ", "_") + ".xml", text)], needle)

    def test_unsupported_layer_is_an_error_only_when_running(self):
        text = op_model([3], [3], [3]).replace('type="Result"', 'type="Relu"').replace(
            '<input><port id="0"><dim>3</dim></port></input>\n</layer>\n</layers>',
            '<input><port id="0"><dim>3</dim></port></input>\n<output><port id="1"><dim>3</dim></port></output>\n'
            '</layer>\n</layers>')
        path = self.write("m.xml", text)
        proc = run(path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = next(i for i, l in enumerate(text.splitlines(), 1) if 'type="Relu"' in l)
        self.expect_error([path, "--random", 1], f'{path}:{line}: cannot run layer 3 "out" (Relu, line {line}): '
                                                 'layer type "Relu" is not supported')

    def test_input_option_errors(self):
        model = EXAMPLES / "squared_difference_numpy.xml"
        for bad in ("a", "=x.npy", "a="):  # not NAME=FILE.npy: a command-line mistake, status 2
            proc = run(model, "--input", bad)
            self.assertEqual((proc.returncode, proc.stdout), (2, ""), proc.stderr)
            self.assertEqual(proc.stderr, f"sqdiff: error: --input: value {bad} is not NAME=FILE.npy (NAME is a "
                                          "Parameter layer's name) (see sqdiff ir --help)\n")
        self.expect_error([model, "--input", "zz=x.npy"], 'the model has no Parameter called "zz"')
        self.expect_error([model, "--input", f"a={self.dir / 'none.npy'}", "--random", 1], "none.npy")
        self.expect_error([model, "-o", self.dir / "o"], "needs data: pass --input a=FILE.npy, or --random SEED")
        (self.dir / "bad.npy").write_bytes(b"\x93NUMPY garbage")
        self.expect_error([model, "--input", f"a={self.dir / 'bad.npy'}", "--random", 1], "bad.npy")

    def test_command_line_mistakes(self):
        proc = run()
        self.assertNotIn(proc.returncode, (0, 1))
        self.assertIn("model is required", proc.stderr)
        proc = run(EXAMPLES / "squared_difference_numpy.xml", "--random", "x")
        self.assertNotIn(proc.returncode, (0, 1))
        proc = run(EXAMPLES / "squared_difference_numpy.xml", "--threads=-1")
        self.assertNotIn(proc.returncode, (0, 1))

    def test_fuzzed_models_through_the_program(self):
        rng = random.Random(7)
        sources = sorted(EXAMPLES.glob("*.xml"))
        outcomes = set()
        for i in range(60):
            src = rng.choice(sources)
            data = bytearray(src.read_bytes())
            if rng.random() < 0.3:
                del data[rng.randrange(len(data)):]
            else:
                for _ in range(rng.randint(1, 4)):
                    data[rng.randrange(len(data))] = rng.choice(b'<>/="?.,-0123456789 x\xff')
            path = self.dir / f"fuzz{i}.xml"
            path.write_bytes(bytes(data))
            proc = run(path, "--random", 1, "-o", self.dir / "o", "--bin", EXAMPLES / "subtract_pdpd.bin")
            assert_clean(self, proc)
            outcomes.add(proc.returncode)
        self.assertEqual(outcomes, {0, 1})


class Help(TempDirTest):
    def test_help_has_examples_and_they_run(self):
        proc = run("--help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Examples:", proc.stdout)
        commands = [l.strip()[2:] for l in proc.stdout.splitlines() if l.strip().startswith("$ sqdiff ")]
        self.assertGreaterEqual(len(commands), 4)
        (self.dir / "examples").symlink_to(REPO / "examples")
        for command in commands:
            with self.subTest(command):
                args = shlex.split(command)[1:]
                proc = run_raw(*args, cwd=self.dir)
                self.assertEqual(proc.returncode, 0, proc.stderr)


class Docs(TempDirTest):
    """Every `$ build/tools/sqdiff ...` command in the console blocks of docs/ir.md and README.md
    prints what the page shows."""

    def commands(self, page="docs/ir.md"):
        text = (REPO / page).read_text()
        blocks = re.findall(r"```console\n(.*?)```", text, re.S)
        self.assertGreaterEqual(len(blocks), 1)
        for block in blocks:
            command, expected = None, []
            for line in block.splitlines() + ["$ end"]:
                if line.startswith("$ "):
                    if command:
                        yield command, expected
                    command, expected = line[2:], []
                elif line:
                    expected.append(line)

    def test_doc_examples_run_as_written(self):
        self.check_page("docs/ir.md", minimum=5)

    def test_readme_examples_run_as_written(self):
        self.check_page("README.md", minimum=3)

    def check_page(self, page, minimum):
        (self.dir / "examples").symlink_to(REPO / "examples")
        status = None
        count = 0
        for command, expected in self.commands(page):
            if command == "end":
                continue
            with self.subTest(command):
                if command == "echo $?":
                    self.assertEqual(expected, [str(status)])
                    continue
                args = shlex.split(command)
                self.assertEqual(args[0], "build/tools/sqdiff")
                proc = run_raw(*args[1:], cwd=self.dir)
                assert_clean(self, proc)
                status = proc.returncode
                self.assertEqual(proc.stdout.splitlines() + proc.stderr.splitlines(), expected)
                count += 1
        self.assertGreaterEqual(count, minimum)


if __name__ == "__main__":
    unittest.main()
