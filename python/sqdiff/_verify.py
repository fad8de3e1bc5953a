"""sqdiff.verify: a model run in its real runtime, and every operator sqdiff implements checked
against sqdiff on the runtime's own input tensors (docs/verify.md).

One runner per runtime (_verify_litert.py, _verify_openvino.py) runs the model with the checked
operators' inputs and outputs kept, and hands back, per operator, the runtime's output and
sqdiff's output computed from the runtime's inputs; one comparator here turns each pair into a
record (differing elements, the worst distance in ulps or steps and where), as Polygraphy's
runners and comparator do with two runtimes.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import sys
import typing as _typing

import numpy as np

from . import _sqdiff
from ._bfloat16_bits import from_bfloat16_bits, to_bfloat16_bits

if _typing.TYPE_CHECKING:
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

    from numpy.typing import ArrayLike, NDArray

Error = _sqdiff.Error

RUNTIMES = ("litert", "openvino")
RESOLVERS = ("default", "builtin", "reference")

# sqdiff's name of each element type, its NumPy dtype (bf16: uint16 bits), and the unsigned
# type of its bits for floats.
NUMPY_DTYPES = {
    "f16": np.float16, "bf16": np.uint16, "f32": np.float32, "f64": np.float64,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
}
FLOAT_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
DTYPE_NAMES = {np.dtype(t): name for name, t in NUMPY_DTYPES.items() if name != "bf16"}


def missing_runtime(runtime: str, error: ImportError) -> Error:
    package = {"litert": "ai-edge-litert", "openvino": "openvino"}[runtime]
    return Error('sqdiff.verify with runtime="%s" needs %s, which is not installed (%s): pip install "sqdiff[%s]"'
                 % (runtime, package, error, runtime))


# --- What a runner hands back --------------------------------------------------------------------

@dataclasses.dataclass
class Check:
    """One operator the runtime ran and sqdiff recomputed from the runtime's inputs."""
    index: int
    name: str
    kind: str
    dtype: str                     # sqdiff's name of the output's element type
    runtime: Any                   # the runtime's output (bf16: uint16 bits)
    expected: Any                  # sqdiff's, from the runtime's inputs
    inputs: List[str]              # the input tensors' names
    quantization: Optional[Tuple[float, int]] = None
    broadcast: Optional[str] = None
    executed_as: Optional[str] = None
    unmodified_executed_as: Optional[str] = None


@dataclasses.dataclass
class Skip:
    """An operator sqdiff implements that was not checked, and why."""
    index: int
    name: str
    kind: str
    reason: str


@dataclasses.dataclass
class RunResult:
    checks: List[Check]
    skipped: List[Skip]
    runtime: Dict[str, Any]                  # runtime, version, device or resolver
    others: Dict[str, int]                   # operators sqdiff does not implement, by kind
    outputs: List[Tuple[str, Any, Any]]      # (name, instrumented run's value, unmodified run's value)


@dataclasses.dataclass
class InputSpec:
    name: str
    dtype: Optional[str]           # sqdiff's name, or None for a type sqdiff has no random data for
    shape: Tuple[int, ...]         # for random data (dynamic dims: their smallest size, at least 1)
    type_name: str                 # the runtime's name of the type, for messages
    static: bool = True            # a given array must have exactly `shape`


# --- The comparator -------------------------------------------------------------------------------

def _as_float(values: Any, dtype: str) -> Any:
    if dtype == "bf16":
        return from_bfloat16_bits(values)
    return values


def _ordinals(bits: Any, width: int) -> Any:
    """Float bit patterns as integers in the order of their values (+0 and -0 both 0)."""
    if width == 64:
        signed = bits.view(np.int64)
        return np.where(signed < 0, -(signed & np.int64(0x7FFFFFFFFFFFFFFF)), signed)
    wide = bits.astype(np.int64)
    magnitude = wide & ((1 << (width - 1)) - 1)
    return np.where(wide >> (width - 1) != 0, -magnitude, magnitude)


def _distance(x: Any, y: Any) -> Any:
    """|x - y| of two int64 or uint64 arrays, exactly, as uint64."""
    ux, uy = x.astype(x.dtype).view(np.uint64), y.astype(y.dtype).view(np.uint64)
    return np.where(x >= y, ux - uy, uy - ux)


def _scalar(value: Any, dtype: str) -> Union[int, float]:
    if dtype in FLOAT_BITS:
        return float(np.asarray(_as_float(np.asarray(value).reshape(1), dtype))[0])
    return int(value)


@dataclasses.dataclass(frozen=True)
class VerifiedOp:
    """One checked operator: the runtime's output against sqdiff's on the runtime's own inputs.

    ``differing`` counts elements whose bits differ (two NaNs are equal, whatever their bits);
    ``worst`` is the largest distance between the runtime's value and sqdiff's, in ``unit``:
    ``"ulps"`` for floats (units in the last place of the output's type, counted along the
    values: +0 and -0 are 0 apart, inf is one past the largest finite; ``math.inf`` for NaN
    against a number), ``"steps"`` for integers (quantized ones: quantization steps);
    ``position`` is its multi-index (the first in C order), ``runtime_value`` and
    ``sqdiff_value`` the two values there. All four are None when nothing differs.

    >>> op = sqdiff.verify("model.xml", {"a": a, "b": b}).ops[0]  # doctest: +SKIP
    >>> op.kind, op.dtype, op.differing, op.worst, op.unit, op.position  # doctest: +SKIP
    ('SquaredDifference', 'u8', 14, 247, 'steps', (0, 3))
    """
    index: int
    name: str
    kind: str
    dtype: str
    shape: Tuple[int, ...]
    elements: int
    differing: int
    worst: Optional[Union[int, float]]
    unit: str
    position: Optional[Tuple[int, ...]]
    runtime_value: Optional[Union[int, float]]
    sqdiff_value: Optional[Union[int, float]]
    inputs: Tuple[str, ...] = ()
    quantization: Optional[Tuple[float, int]] = None
    broadcast: Optional[str] = None
    executed_as: Optional[str] = None
    unmodified_executed_as: Optional[str] = None
    note: Optional[str] = None

    @property
    def passed(self) -> bool:
        return self.differing == 0 and self.note is None

    def to_dict(self) -> Dict[str, Any]:
        fields = dataclasses.asdict(self)
        fields["shape"] = list(self.shape)
        fields["position"] = None if self.position is None else list(self.position)
        fields["inputs"] = list(self.inputs)
        fields["quantization"] = None if self.quantization is None else list(self.quantization)
        return _finite_fields(fields, ("worst", "runtime_value", "sqdiff_value"))


def _finite_fields(fields: Dict[str, Any], names: Sequence[str]) -> Dict[str, Any]:
    """As sqdiff compare's JSON: a NaN or infinite float is null, and named in "nonfinite"."""
    nonfinite = {}
    for name in names:
        value = fields[name]
        if isinstance(value, float) and not math.isfinite(value):
            nonfinite[name] = "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
            fields[name] = None
    fields["nonfinite"] = nonfinite
    return fields


def compare(check: Check) -> VerifiedOp:
    """The record of one check: differing elements, the worst distance and where."""
    got = np.ascontiguousarray(check.runtime)
    want = np.ascontiguousarray(check.expected)
    dtype = check.dtype
    unit = "ulps" if dtype in FLOAT_BITS else "steps"
    common = dict(index=check.index, name=check.name, kind=check.kind, dtype=dtype, unit=unit,
                  inputs=tuple(check.inputs), quantization=check.quantization, broadcast=check.broadcast,
                  executed_as=check.executed_as, unmodified_executed_as=check.unmodified_executed_as)
    if got.shape != want.shape:
        return VerifiedOp(shape=tuple(got.shape), elements=int(got.size), differing=int(got.size), worst=None,
                          position=None, runtime_value=None, sqdiff_value=None,
                          note="the runtime's output has shape %s, sqdiff's %s" % (list(got.shape), list(want.shape)),
                          **common)
    if dtype in FLOAT_BITS:
        bits_type = FLOAT_BITS[dtype]
        got_bits, want_bits = got.view(bits_type), want.view(bits_type)
        got_nan = np.isnan(_as_float(got, dtype))
        want_nan = np.isnan(_as_float(want, dtype))
        equal = (got_bits == want_bits) | (got_nan & want_nan)
        width = np.dtype(bits_type).itemsize * 8
        distance = _distance(_ordinals(got_bits, width), _ordinals(want_bits, width))
        one_nan = got_nan != want_nan
    else:
        equal = got == want
        wide = np.uint64 if dtype.startswith("u") else np.int64
        distance = _distance(got.astype(wide), want.astype(wide))
        one_nan = np.zeros(got.shape, bool)
    differing = int(np.count_nonzero(~equal))
    worst = position = runtime_value = sqdiff_value = None
    if differing:
        if one_nan.any():
            flat = int(np.argmax(one_nan.reshape(-1)))
            worst = math.inf
        else:
            flat_distance = np.where(equal, np.uint64(0), distance).reshape(-1)
            flat = int(np.argmax(flat_distance))
            if flat_distance[flat] == 0:  # +0 against -0 only: the first differing element
                flat = int(np.argmax(~equal.reshape(-1)))
            worst = int(flat_distance[flat])
        position = tuple(int(i) for i in np.unravel_index(flat, got.shape))
        runtime_value = _scalar(got.reshape(-1)[flat], dtype)
        sqdiff_value = _scalar(want.reshape(-1)[flat], dtype)
    return VerifiedOp(shape=tuple(got.shape), elements=int(got.size), differing=differing, worst=worst,
                      position=position, runtime_value=runtime_value, sqdiff_value=sqdiff_value, **common)


def outputs_identical(a: Any, b: Any) -> bool:
    """Bit for bit, two NaNs equal whatever their bits."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return bool(np.all((a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | (np.isnan(a) & np.isnan(b))))
    return bool(np.array_equal(a, b))


# --- Random inputs: the rule of `sqdiff tflite --random SEED` --------------------------------------

_GOLDEN = 0x9E3779B97F4A7C15
_STREAM = 0xD1B54A32D192ED03
_MASK = (1 << 64) - 1


def _splitmix64(state: int, count: int) -> Any:
    """The first `count` numbers of splitmix64 from `state` (tools/split_mix64.hpp)."""
    with np.errstate(over="ignore"):
        z = np.uint64(state) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(_GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def random_input(seed: int, position: int, dtype: str, shape: Sequence[int]) -> Any:
    """Input `position` of a model drawn as `sqdiff tflite --random SEED` draws it: its own
    splitmix64 stream; floats from a standard normal distribution (Box-Muller in double, through
    the C library's log and cos, then rounded to the type), integers the low bytes of one draw
    each (uniform over the type's range)."""
    count = int(np.prod(shape, dtype=np.int64))
    state = (seed + _STREAM * (position + 1)) & _MASK
    if dtype in FLOAT_BITS:
        draws = _splitmix64(state, 2 * count)
        units = (draws >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        u1, u2 = 1.0 - units[0::2], units[1::2]
        # math.log and math.cos are the C library's, as the program's std::log and std::cos.
        logs = np.fromiter(map(math.log, u1.tolist()), np.float64, count)
        cosines = np.fromiter(map(math.cos, ((2.0 * math.pi) * u2).tolist()), np.float64, count)
        normal = np.sqrt(-2.0 * logs) * cosines
        if dtype == "f64":
            values = normal
        elif dtype == "bf16":
            values = to_bfloat16_bits(normal.astype(np.float32))
        else:
            values = normal.astype(np.float32).astype(NUMPY_DTYPES[dtype])
    else:
        draws = _splitmix64(state, count)
        unsigned = np.dtype(NUMPY_DTYPES[dtype]).str.replace("i", "u")
        values = draws.astype(unsigned).view(NUMPY_DTYPES[dtype])
    return np.ascontiguousarray(values.reshape(tuple(shape)))


def prepare_inputs(specs: Sequence[InputSpec], inputs: Optional[Mapping[str, ArrayLike]],
                   random_seed: Optional[int]) -> Tuple[Dict[str, Any], List[Dict[str, Any]]]:
    """The arrays to feed, by input name, and a line of the report for each."""
    given = dict(inputs or {})
    names = [s.name for s in specs]
    for name in given:
        if name not in names:
            raise Error("inputs: the model has no input called %r (its inputs: %s)"
                        % (name, ", ".join(repr(n) for n in names) or "none"))
    feed, described = {}, []
    for position, spec in enumerate(specs):
        if spec.name in given:
            array = np.asarray(given[spec.name])
            if spec.dtype == "bf16" and array.dtype.name == "bfloat16":
                array = array.view(np.uint16)
            expected = None if spec.dtype is None else np.dtype(NUMPY_DTYPES[spec.dtype])
            if expected is not None and array.dtype != expected:
                raise Error("inputs[%r]: dtype %s, but the model's input is %s (%s)"
                            % (spec.name, array.dtype, spec.type_name, expected.name if spec.dtype != "bf16"
                               else "bfloat16: ml_dtypes.bfloat16, or uint16 bits"))
            if spec.static and tuple(array.shape) != tuple(spec.shape):
                raise Error("inputs[%r]: shape %s, but the model's input has %s"
                            % (spec.name, list(array.shape), list(spec.shape)))
            feed[spec.name] = np.ascontiguousarray(array)
            source = "given"
        elif random_seed is not None:
            if spec.dtype is None:
                raise Error("input %r: type %s has no random data; pass it in inputs" % (spec.name, spec.type_name))
            feed[spec.name] = random_input(random_seed, position, spec.dtype, spec.shape)
            source = "random"
        else:
            raise Error("input %r needs data: pass it in inputs (--input %s=FILE.npy), or a random_seed (--random SEED)"
                        % (spec.name, spec.name))
        described.append({"name": spec.name, "dtype": spec.dtype or spec.type_name,
                          "shape": list(feed[spec.name].shape), "source": source})
    return feed, described


# --- The report -----------------------------------------------------------------------------------

class VerifyReport:
    """What :func:`sqdiff.verify` found: one record per checked operator.

    ``report.passed`` is True when every checked operator's output is the runtime's bit for bit
    (NaNs equal whatever their bits); ``report.ops`` lists the records (:class:`VerifiedOp`:
    index, name, kind, dtype, shape, elements, differing, worst, unit, position, ...),
    ``report.skipped`` the operators sqdiff implements that could not be checked and why,
    ``report.others`` how many operators of each other kind the model has,
    ``report.unmodified`` whether the model's own outputs were the same with the checked
    tensors kept as without. ``report.to_dict()`` is ``--json``'s object.

    >>> report = sqdiff.verify("model.xml", random_seed=1)  # doctest: +SKIP
    >>> report.passed, report.to_dict()["checked"]  # doctest: +SKIP
    (True, 1)
    """

    def __init__(self, model: str, run: RunResult, inputs: List[Dict[str, Any]]) -> None:
        self.model = model
        self.runtime = dict(run.runtime)
        self.inputs = inputs
        self.ops: List[VerifiedOp] = [compare(check) for check in run.checks]
        self.skipped: List[Skip] = list(run.skipped)
        self.others: Dict[str, int] = dict(run.others)
        differing = [name for name, kept, plain in run.outputs if not outputs_identical(kept, plain)]
        self.unmodified: Dict[str, Any] = {"outputs": len(run.outputs), "identical": not differing,
                                           "differing": differing}

    @property
    def passed(self) -> bool:
        return all(op.passed for op in self.ops)

    def to_dict(self) -> Dict[str, Any]:
        return {
            "model": self.model,
            **self.runtime,
            "inputs": [dict(i) for i in self.inputs],
            "passed": self.passed,
            "checked": len(self.ops),
            "differing_ops": sum(1 for op in self.ops if not op.passed),
            "ops": [op.to_dict() for op in self.ops],
            "skipped": [dataclasses.asdict(s) for s in self.skipped],
            "others": dict(self.others),
            "unmodified": dict(self.unmodified, differing=list(self.unmodified["differing"])),
        }

    def __repr__(self) -> str:
        return "VerifyReport(passed=%r, checked=%d, differing_ops=%d, skipped=%d)" % (
            self.passed, len(self.ops), sum(1 for op in self.ops if not op.passed), len(self.skipped))

    def text(self) -> str:
        """The report as the command prints it without --json."""
        lines = []
        where = ", ".join("%s %s" % (k, v) for k, v in self.runtime.items() if k not in ("runtime",) and v)
        lines.append("%s: %s (%s)" % (self.model, self.runtime["runtime"], where))
        for i in self.inputs:
            lines.append("input %r: %s %s, %s" % (i["name"], i["dtype"], _shape_text(i["shape"]), i["source"]))
        for op in self.ops:
            head = "operator %d %r %s: %s %s" % (op.index, op.name, op.kind, op.dtype, _shape_text(op.shape))
            if op.broadcast:
                head += " (%s)" % op.broadcast
            if op.note:
                body = "DIFFERS: " + op.note
            elif op.differing == 0:
                body = "identical (%d elements)" % op.elements
            else:
                worst = "NaN against a number" if op.worst == math.inf else "%d %s" % (op.worst, op.unit)
                body = "DIFFERS: %d of %d elements, worst %s at %s: runtime %r, sqdiff %r" % (
                    op.differing, op.elements, worst, _shape_text(op.position), op.runtime_value, op.sqdiff_value)
            ran = "" if op.executed_as is None else "; ran as " + op.executed_as
            if op.unmodified_executed_as is not None and op.unmodified_executed_as != op.executed_as:
                ran += ", unmodified: " + op.unmodified_executed_as
            lines.append(head + ": " + body + ran)
        for s in self.skipped:
            lines.append("operator %d %r %s: not checked: %s" % (s.index, s.name, s.kind, s.reason))
        if self.others:
            lines.append("other operators: " + ", ".join("%s x %d" % kv for kv in sorted(self.others.items())))
        u = self.unmodified
        if u["outputs"]:
            lines.append("the model's %d output%s with the checked tensors kept: %s" % (
                u["outputs"], "" if u["outputs"] == 1 else "s",
                "identical to an unmodified run" if u["identical"]
                else "DIFFERENT from an unmodified run (%s)" % ", ".join(u["differing"])))
        failed = [op for op in self.ops if not op.passed]
        summary = "verify: %d operator%s checked" % (len(self.ops), "" if len(self.ops) == 1 else "s")
        if self.skipped:
            summary += ", %d not checked" % len(self.skipped)
        summary += (", %d differ%s" % (len(failed), "s" if len(failed) == 1 else "")) if failed else ", all identical"
        lines.append(summary)
        return "\n".join(lines)


def _shape_text(shape: Optional[Sequence[int]]) -> str:
    return "[" + ",".join(str(d) for d in (shape or ())) + "]"


# --- The entry point ------------------------------------------------------------------------------

def runtime_for(model: Any) -> str:
    path = os.fspath(model) if isinstance(model, (str, os.PathLike)) else ""
    return "litert" if str(path).lower().endswith(".tflite") else "openvino"


def make_runner(model: Any, runtime: str, device: str, resolver: Optional[str],
                properties: Optional[Mapping[str, Any]]) -> Any:
    if runtime == "litert":
        from . import _verify_litert
        return _verify_litert.Runner(model, resolver or "default")
    from . import _verify_openvino
    return _verify_openvino.Runner(model, device, dict(properties or {}))


def verify(model: Any, inputs: Optional[Mapping[str, ArrayLike]] = None, *, runtime: Optional[str] = None,
           device: str = "CPU", random_seed: Optional[int] = None, resolver: Optional[str] = None,
           properties: Optional[Mapping[str, Any]] = None) -> VerifyReport:
    """Runs ``model`` in its runtime and checks every operator sqdiff implements against sqdiff,
    computed from the runtime's own input tensors of that operator (docs/verify.md).

    Parameters
    ----------
    model : str or os.PathLike (or an openvino.Model for runtime="openvino")
        A .tflite file (LiteRT), or any file OpenVINO reads: IR .xml (its .bin beside it),
        .onnx, .tflite.
    inputs : dict of str -> array_like, optional
        Data for the model's inputs, by name; each of the input's dtype exactly (bfloat16:
        ml_dtypes.bfloat16 or uint16 bits) and, unless the input's shape is dynamic, its shape.
    runtime : {"litert", "openvino"}, optional
        Default: "litert" for a .tflite file, "openvino" for anything else. Each needs its
        extra: ``pip install "sqdiff[litert]"`` or ``"sqdiff[openvino]"``.
    device : str, default "CPU"
        OpenVINO's device.
    random_seed : int, optional
        Random data for every input not in ``inputs``, drawn as ``sqdiff tflite --random SEED``
        draws it (the same seed, the same data): floats standard normal, integers uniform over
        the type's range.
    resolver : {"default", "builtin", "reference"}, optional
        LiteRT's kernels: "default" (the Interpreter's default: the XNNPACK delegate and the
        optimized kernels), "builtin" (the optimized kernels without the delegate) or
        "reference" (the reference kernels, which sqdiff reproduces bit for bit).
    properties : dict, optional
        OpenVINO compile properties ({"INFERENCE_PRECISION_HINT": "f32"}).

    Returns
    -------
    VerifyReport
        ``.passed``, ``.ops`` (one :class:`VerifiedOp` per checked operator: index, name, kind,
        dtype, shape, elements, differing, worst, unit, position, ...), ``.skipped``,
        ``.unmodified``, ``.to_dict()`` (the command's ``--json`` object), ``.text()``.

    Raises
    ------
    sqdiff.Error
        For a missing runtime (naming the extra to install), a missing file, inputs that do not
        fit the model, a missing ``sqdiff`` program (LiteRT), and what the runtime refuses.

    Examples
    --------
    >>> import sqdiff
    >>> report = sqdiff.verify("model.tflite", random_seed=1, resolver="reference")  # doctest: +SKIP
    >>> report.passed, [(op.kind, op.differing) for op in report.ops]  # doctest: +SKIP
    (True, [('SUB', 0), ('SQUARED_DIFFERENCE', 0)])
    >>> sqdiff.verify("model.tflite", runtime="tvm")
    Traceback (most recent call last):
    ...
    sqdiff.Error: runtime='tvm': not one of 'litert', 'openvino'
    """
    if runtime is None:
        runtime = runtime_for(model)
    if runtime not in RUNTIMES:
        raise Error("runtime=%r: not one of %s" % (runtime, ", ".join(repr(r) for r in RUNTIMES)))
    if not isinstance(model, (str, os.PathLike)) and not (runtime == "openvino" and hasattr(model, "get_ordered_ops")):
        raise TypeError("model must be a path (str or os.PathLike)%s, not %s"
                        % (" or an openvino.Model" if runtime == "openvino" else "", type(model).__name__))
    if isinstance(model, (str, os.PathLike)) and not os.path.isfile(model):
        raise Error("model %s: no such file" % os.fspath(model))
    if runtime == "litert":
        if device != "CPU":
            raise Error("device=%r: LiteRT runs on the CPU here; device= is for runtime=\"openvino\"" % (device,))
        if properties:
            raise Error("properties= are OpenVINO's compile properties; runtime=\"litert\" takes none")
        if resolver is not None and resolver not in RESOLVERS:
            raise Error("resolver=%r: not one of %s" % (resolver, ", ".join(repr(r) for r in RESOLVERS)))
    elif resolver is not None:
        raise Error("resolver= is LiteRT's; runtime=\"openvino\" takes none")
    if not isinstance(device, str):
        raise TypeError("device must be a str, not %s" % type(device).__name__)
    if random_seed is not None:
        if isinstance(random_seed, bool) or not isinstance(random_seed, (int, np.integer)):
            raise TypeError("random_seed must be an int, not %s" % type(random_seed).__name__)
        if not 0 <= int(random_seed) < 2 ** 64:
            raise Error("random_seed=%d: not in 0 to 2**64 - 1" % random_seed)
        random_seed = int(random_seed)
    if inputs is not None and not isinstance(inputs, dict) and not hasattr(inputs, "keys"):
        raise TypeError("inputs must be a dict of input name -> array, not %s" % type(inputs).__name__)
    runner = make_runner(model, runtime, device, resolver, properties)
    feed, described = prepare_inputs(runner.input_specs(), inputs, random_seed)
    result = runner.run(feed)
    name = os.fspath(model) if isinstance(model, (str, os.PathLike)) else "<openvino.Model %s>" % model.get_name()
    return VerifyReport(str(name), result, described)


# --- python -m sqdiff.verify ----------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sqdiff.verify",
        description="Run a model in its runtime (LiteRT or OpenVINO) and check every operator sqdiff implements "
                    "against sqdiff, on the runtime's own input tensors. Exit status: 0 all identical, 3 any "
                    "difference, 1 an error, 2 a command-line mistake (docs/verify.md).")
    parser.add_argument("model", help="the model: .tflite (LiteRT), or a file OpenVINO reads (.xml, .onnx, .tflite)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy",
                        help="data for the model's input called NAME (repeat for each input)")
    parser.add_argument("--random", type=_seed, metavar="SEED",
                        help="random data for every input without --input (as `sqdiff tflite --random SEED`)")
    parser.add_argument("--runtime", choices=RUNTIMES,
                        help="litert or openvino (default: litert for .tflite files, openvino otherwise)")
    parser.add_argument("--device", default="CPU", help="OpenVINO's device (default CPU)")
    parser.add_argument("--resolver", choices=RESOLVERS,
                        help="LiteRT's kernels: default (its XNNPACK delegate and optimized kernels), builtin "
                             "(optimized kernels, no delegate) or reference (the reference kernels)")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="an OpenVINO compile property (INFERENCE_PRECISION_HINT=f32); repeat for each")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    return parser


def _seed(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError("not an integer: %r" % text) from None
    if not 0 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError("%s is not in 0 to 2**64 - 1" % text)
    return value


def _pairs(parser: argparse.ArgumentParser, items: Sequence[str], option: str) -> Dict[str, str]:
    pairs: Dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name or not value:
            parser.error("%s %s: not %s" % (option, item, "NAME=FILE.npy" if option == "--input" else "KEY=VALUE"))
        if name in pairs:
            parser.error("%s %s: given twice" % (option, name))
        pairs[name] = value
    return pairs


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    files = _pairs(parser, args.input, "--input")
    properties = _pairs(parser, args.property, "--property")
    runtime = args.runtime or runtime_for(args.model)
    if args.resolver and runtime != "litert":
        parser.error("--resolver is for --runtime litert")
    if (properties or args.device != "CPU") and runtime != "openvino":
        parser.error("--device and --property are for --runtime openvino")
    try:
        inputs = {}
        for name, path in files.items():
            try:
                inputs[name] = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as error:
                raise Error("--input %s=%s: %s" % (name, path, error)) from None
        report = verify(args.model, inputs, runtime=runtime, device=args.device, random_seed=args.random,
                        resolver=args.resolver, properties=properties)
    except Exception as error:  # noqa: BLE001 - every failure is one line and exit status 1
        message = str(error).strip().replace("\n", " | ")
        kind = "" if isinstance(error, Error) else type(error).__name__ + ": "
        print("sqdiff.verify: error: %s%s" % (kind, message), file=sys.stderr)
        return 1
    if args.json:
        import json
        print(json.dumps(report.to_dict()))
    else:
        print(report.text())
    return 0 if report.passed else 3


# Public as sqdiff.verify, sqdiff.VerifyReport and sqdiff.VerifiedOp (help() and doctest look there).
verify.__module__ = "sqdiff"
VerifyReport.__module__ = "sqdiff"
VerifiedOp.__module__ = "sqdiff"
