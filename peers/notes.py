"""The explanations written by hand for docs/COMPATIBILITY.md: why each peer differs.

The tables are measured; these notes explain them. tests/peers/test_compatibility.py fails when
a table changes, which is the moment to reread the note next to it. Where a note states the
run's own figures (which cases, how many elements, which formula), it is a function of the
configuration's records and facts, written by fact_notes.py, not text.
"""

import fact_notes

INTRO = """\
Every peer runs the same inputs as sqdiff: the shapes of SPEC section 3's tables (the rows that
broadcast), random shapes, a 1000-element row, and one case of every pair of special values
(NaN, a negative NaN with a payload, +-inf, +-0, +-1, the smallest subnormal, the smallest
normal, the largest finite value, values whose square overflows, 256 and 255.875 for f16; for
integers the minimum, maximum, 0, +-1, 127, 128, 255, 256 and the middle), with random values
(8% of them specials) from a fixed seed; and cases that tell two behaviours apart: pdpd with
rank(b) equal to rank(a) next to lower ranks, and differences of one element or with a last
dimension of 1 next to longer ones. Models are built in each peer's own API: one
SquaredDifference-1 / Subtract-1 node (OpenVINO), Sub, Sub + Mul(d, d), Sub + Pow(d, 2) (ONNX),
the SQUARED_DIFFERENCE / SUB builtins (LiteRT), `(a - b)**2` and `a - b` (NumPy, PyTorch).
What sqdiff computes is docs/SPEC_DECISIONS.md; "SPEC 2" below is its section 2."""

PEER_OF = {"openvino-f32-hint": "openvino", "onnxruntime-mul": "onnxruntime",
           "onnxruntime-pow": "onnxruntime", "numpy": "arrays", "pytorch": "arrays"}

TITLES = {
    "openvino": "OpenVINO CPU plugin, default properties",
    "openvino-f32-hint": "OpenVINO CPU plugin, INFERENCE_PRECISION_HINT=f32",
    "onnxruntime-mul": "ONNX Runtime: Sub, and Sub then Mul(d, d)",
    "onnxruntime-pow": "ONNX Runtime: Sub, and Sub then Pow(d, 2)",
    "numpy": "NumPy: (a - b)**2 and a - b",
    "pytorch": "PyTorch: (a - b)**2 and a - b",
    "litert": "LiteRT (TFLite): SQUARED_DIFFERENCE and SUB builtins",
}

OPENVINO_HEAD = """\
Why OpenVINO's CPU plugin differs:

- **f32, f16, bf16 SquaredDifference**: identical, with the default precision hint (bf16 on this
  CPU) too: the plugin keeps element-wise ops in the model's type, and computes f16 and bf16 in
  f32, rounding once, as SPEC 2 decides.
- **NaN bits** (Subtract): when both inputs are NaN the plugin returns b's NaN where sqdiff
  returns a's (x86 keeps the first operand's), or drops a payload. Both are quiet NaNs; SPEC 4
  leaves NaN payloads free.
- **bf16 Subtract, flush to 0**: the plugin stores bf16 with `vcvtneps2bf16`, which flushes f32
  subnormals to zero; sqdiff keeps them (SPEC 2: no flush-to-zero; HACKING.md's rule on
  `vcvtneps2bf16`).
- **f64**: the CPU plugin has no f64 kernels and runs f64 models in f32: results are f32 values
  (*narrower type*), out-of-range values become +-FLT_MAX instead of inf (`1e300 - 0` gives
  3.4e38), subnormals are lost. sqdiff computes in f64 (SPEC 2).
- **i64, u64**: computed in 32 bits: the low 32 bits agree, the rest does not (`2^40 - 1` gives
  `-1`); sqdiff wraps modulo 2^64 (SPEC 2)."""

OPENVINO_8BIT_SQUARES = """\
- **i8, u8 SquaredDifference**: the results are neither wrapped nor saturated squares (`u8`: 0
  for every pair tried, `(0 - 255)^2` and `(3 - 5)^2` included; `i8: (5 - 3)^2 = 0`): an error in
  the plugin's 8-bit SquaredDifference, not a rounding rule. i16, i32, u16, u32 are identical
  (wrap-around)."""

OPENVINO_FACTORY = """\
The Python factory (`opset13.subtract(..., auto_broadcast="pdpd")`) creates pdpd with axis 0, not
-1: the harness sets `auto_broadcast_axis` after creating the node."""


def _openvino(records, facts):
    bullets = [fact_notes.u8_subtract(facts), fact_notes.i8_subtract(facts), OPENVINO_8BIT_SQUARES,
               fact_notes.pdpd_refusals(records, facts)]
    table = fact_notes.pdpd_table(facts)
    return "\n".join([OPENVINO_HEAD, *filter(None, bullets), "", OPENVINO_FACTORY]
                     + (["", table] if table else []))


def _onnxruntime_pow(records, facts):
    return fact_notes.pow_overflow(facts)


NOTES = {
    "openvino": _openvino,
    "openvino_ir": """\
What the IR files show:

- **examples/ir/dynamic_dims.xml**: OpenVINO's reader refuses `?` in a port's `<dim>` (it writes
  and reads `-1` there); `sqdiff ir` reads both (docs/ir.md, "What is read").
- **examples/ir/subtract_pdpd.xml**: OpenVINO reads it (the axis as
  `auto_broadcast.auto_broadcast_axis`, the name its `save_model` writes; `sqdiff ir` read only
  `auto_broadcast_axis` before this suite found it) but cannot compile it: its
  ConvertSubtractWithConstant pass loses the pdpd axis, as ConvertSubtract does for Parameters
  (see the opset tables). `sqdiff ir` runs it.
- **save_model files**: every SquaredDifference/Subtract layer OpenVINO writes is read, checked and
  run by `sqdiff ir`, dynamic dims included (`-1` on ports, intervals in the Parameters' `shape`);
  where OpenVINO runs the same file the results are identical, except u8 Subtract (OpenVINO
  saturates, except with pdpd broadcasting where rank(b) < rank(a), as in these files' pdpd
  cases) and the pdpd cases OpenVINO refuses, as in the opset tables. (`--random` data is small
  here: integer extremes are in the opset tables.)
- **LayerNorm**: the shape check passes on both SquaredDifference/Subtract layers; a run is
  refused with every layer `sqdiff ir` cannot run named (ReduceMean, Add, Sqrt, Divide).""",
    "openvino-f32-hint": """\
The same with `INFERENCE_PRECISION_HINT=f32` (the hint does not concern integer types, which are
not repeated): the same results as the default properties for these ops.""",
    "onnxruntime-mul": """\
ONNX Runtime has no bf16 kernel for Sub on the CPU. f16: the results show `Sub` then `Mul` (or
`Pow`) evaluated in f32 and rounded once, exactly as SPEC 2 decides, also with graph
optimizations off (ORT's CPU provider runs f16 nodes that lack f16 kernels through casts to f32,
and no cast back to f16 is left between the two nodes). The one f16 difference is a NaN whose payload ORT drops (0xfe01 gives 0xfe00).
Integers wrap, as in sqdiff.""",
    "onnxruntime-pow": _onnxruntime_pow,
    "numpy": """\
NumPy computes each operation in the type: `a - b` is rounded to f16 (bf16) first, then squared
and rounded again (double rounding: up to 2 ulps, and *overflow* where the rounded difference
reaches 256 and its square f16's infinity while the exact square is 65504 after one rounding).
sqdiff rounds once (SPEC 2); this is the difference SPEC 2 describes for OpenVINO's reference.
bf16 is ml_dtypes.bfloat16, which drops NaN payloads (and, in squares, the sign: 0x7fc0).
*Refused* here means NumPy 1.24 changed the type: with 0-d inputs its value-based casting makes
`(a - b)**2` float64 or int64. Everything else is identical, integers included (wrap-around).""",
    "pytorch": """\
PyTorch rounds `a - b` to f16/bf16 before squaring, as NumPy does (double rounding, up to 2 ulps).
NaN bits: when both inputs are NaN PyTorch returns b's, and f16/bf16 NaNs lose their payload or
sign. Debian's torch 1.13 has no uint16/32/64. Integers wrap, as in sqdiff.""",
    "litert": """\
LiteRT runs these models through its default XNNPACK delegate. f32 SQUARED_DIFFERENCE is
identical; f32 SUB reads subnormal inputs as 0 (denormals-are-zero: `-0 - 8.8e-39` gives -0),
which sqdiff does not do (SPEC 2). f16 is computed by XNNPACK in f16 arithmetic, rounding
`a - b` before squaring (as NumPy: up to 2 ulps, overflow at 256); 0-d f16 tensors are not
delegated and the builtin kernel refuses f16. SQUARED_DIFFERENCE takes only f32 and i32
(and quantized types); SUB takes f32, i32, i64 (and quantized); i8, u8 and i16 without
quantization parameters abort the process in the kernel, recorded as refused.""",
}


def note(name, records, facts):
    """The note of a configuration (or of a peer's extra section): text, or written from the
    run's records and facts."""
    text = NOTES[name]
    return text(records, facts) if callable(text) else text


NOT_DONE = """\
## Not done

- **oneDNN** (binary sub + square post-op): not done; Debian's libdnnl-dev would need a C++
  harness of its own.
- **XNNPACK, Eigen**: speed peers (issue 15 item 2), not compared here."""
