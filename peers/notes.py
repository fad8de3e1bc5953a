"""The explanations written by hand for docs/COMPATIBILITY.md: why each peer differs.

The tables are measured; these notes explain them. tests/peers/test_compatibility.py fails when
a table changes, which is the moment to reread the note next to it.
"""

INTRO = """\
Every peer runs the same inputs as sqdiff: the shapes of SPEC section 3's tables (the rows that
broadcast), random shapes, a 1000-element row, and one case of every pair of special values
(NaN, a negative NaN with a payload, +-inf, +-0, +-1, the smallest subnormal, the smallest
normal, the largest finite value, values whose square overflows, 256 and 255.875 for f16; for
integers the minimum, maximum, 0, +-1, 127, 128, 255, 256 and the middle), with random values
(8% of them specials) from a fixed seed. Models are built in each peer's own API: one
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

NOTES = {
    "openvino": """\
Why OpenVINO's CPU plugin differs:

- **f32, f16, bf16 SquaredDifference**: identical, also with the default precision hint (bf16 on
  this CPU): the plugin keeps element-wise ops in the model's type. f16 and bf16 are computed in
  f32 and rounded once, as SPEC 2 decides.
- **NaN bits** (Subtract f16/f32/bf16): when both inputs are NaN, or for `inf - inf`, the NaN
  that comes out differs in sign or payload (the plugin's JIT code subtracts in another operand
  order or makes the default NaN). SPEC 4 (SPEC_DECISIONS 4) leaves NaN payloads free across
  implementations; both are quiet NaNs.
- **bf16 Subtract, flush to 0**: the plugin stores bf16 with `vcvtneps2bf16`, which flushes f32
  subnormals to zero; sqdiff keeps them (SPEC 2: no flush-to-zero; HACKING.md's rule on
  `vcvtneps2bf16`). SquaredDifference of bf16 showed none here because squares of bf16 values
  rarely land in the subnormal range.
- **f64**: the CPU plugin has no f64 kernels: it converts f64 models to f32 (inputs rounded to f32,
  out-of-range values clamped to +-FLT_MAX instead of becoming inf, subnormals flushed), so almost
  every element differs; `1e300 - 0` gives 3.4e38. sqdiff computes in f64 (SPEC 2).
- **i64, u64**: computed in i32 (values truncated to 32 bits), e.g. `2^40 - 1` gives `-1`; sqdiff
  wraps modulo 2^64 (SPEC 2).
- **i8, u8 Subtract**: the plugin saturates (`u8: 0 - 1 = 0`, `i8: 127 - (-128) = 127`); sqdiff
  wraps (`255`, `-1`), as SPEC 2 decides ("never saturate").
- **i8, u8 SquaredDifference**: the results are neither wrapped nor saturated squares (`u8`: every
  element 0; `i8: (5 - 3)^2 = 0`, `(12 - 0)^2 = 0`): an error in the plugin's u8/i8
  SquaredDifference, not a rounding rule. i16, i32, u16, u32 are identical (wrap-around).
- **pdpd, refused**: SquaredDifference with pdpd broadcasting on bf16 and integer types fails in
  compile_model ("evaluate() is not implemented"): the plugin has no kernel for it and no
  reference to fall back on. Subtract with pdpd fails for the cases whose b is not aligned with
  a's trailing dims (axis given and `axis + rank(b) < rank(a)`): the plugin's ConvertSubtract pass
  rewrites `a - b` as `a + b * -1` and drops the axis. The Python factory
  (`opset*.subtract(..., auto_broadcast="pdpd")`) also creates pdpd with axis 0, not -1: the
  harness sets `auto_broadcast_axis` after creating the node.""",
    "openvino-f32-hint": """\
The same tables with `INFERENCE_PRECISION_HINT=f32` (integer types are not affected by the hint
and are not repeated): no change for these ops on this CPU.""",
}

NOT_DONE = """\
## Not done

- **oneDNN** (binary sub + square post-op): not done; Debian's libdnnl-dev would need a C++
  harness of its own.
- **XNNPACK, Eigen**: speed peers (issue 15 item 2), not compared here."""
