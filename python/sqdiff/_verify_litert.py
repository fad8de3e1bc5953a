"""sqdiff.verify's LiteRT runner: the model in ai_edge_litert's Interpreter with its intermediate
tensors kept (experimental_preserve_all_tensors), each checked operator recomputed by the
`sqdiff` program's `tflite --tensors` from the tensors the Interpreter holds: the operator kinds
of `sqdiff tflite` (tools/tflite/operator_kinds.cpp), one implementation for both.

The resolvers (docs/verify.md):
- "default": what LiteRT's Python Interpreter runs unless told otherwise: the XNNPACK delegate for
  what it takes, LiteRT's optimized kernels for the rest. With the tensors kept, the delegate
  takes each operator as a partition of its own (one DELEGATE node per operator), so every
  intermediate tensor is written; without them one partition runs the whole supported graph and
  its intermediate tensors are never written (get_tensor: "Tensor data is null").
- "builtin": the optimized kernels, no delegate.
- "reference": the reference kernels (BUILTIN_REF), which `sqdiff tflite` reproduces bit for bit.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import typing as _typing
import warnings

import numpy as np

from . import _program, _verify

if _typing.TYPE_CHECKING:
    from typing import Any, Dict, List


def _interpreter_module() -> Any:
    try:
        from ai_edge_litert import interpreter
    except ImportError as error:
        raise _verify.missing_runtime("litert", error) from None
    return interpreter


def _tflite(*args: str) -> Dict[str, Any]:
    """`sqdiff tflite ARGS --json`: its report, or sqdiff.Error with the program's message."""
    command = [_program.program(), "tflite", *args, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=None)
    if done.returncode != 0:
        message = " ".join(line.replace("sqdiff: error: ", "", 1) for line in done.stderr.splitlines() if line)
        raise _verify.Error("sqdiff tflite: %s" % (message or "exit status %d" % done.returncode))
    return json.loads(done.stdout)


def _static(op: Dict[str, Any], producers: Dict[int, str]) -> bool:
    """Whether an operator reads only static tensors: constants (not in its "read" list) and the
    outputs of DENSIFY, which LiteRT computes once when it prepares the model."""
    return all(producers.get(t) == "DENSIFY" for t in op["read"])


class Runner:
    def __init__(self, model: Any, resolver: str) -> None:
        self.litert = _interpreter_module()
        self.path = os.fspath(model)
        self.resolver = resolver
        self.resolver_type = {
            "default": self.litert.OpResolverType.AUTO,
            "builtin": self.litert.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
            "reference": self.litert.OpResolverType.BUILTIN_REF,
        }[resolver]
        with tempfile.TemporaryDirectory(prefix="sqdiff-verify-") as empty:
            # The operators sqdiff runs, and the tensors each needs: nothing is in `empty`.
            self.plan = _tflite(self.path, "--tensors", empty)
        self.interpreter = self._interpreter(keep=True)
        self.details = {d["index"]: d for d in self.interpreter.get_tensor_details()}

    def _interpreter(self, keep: bool) -> Any:
        with warnings.catch_warnings():
            # LiteRT warns that keeping every tensor costs memory: that is the point here.
            warnings.simplefilter("ignore")
            interpreter = self.litert.Interpreter(model_path=self.path, experimental_op_resolver_type=self.resolver_type,
                                                  experimental_preserve_all_tensors=keep, num_threads=1)
        interpreter.allocate_tensors()
        return interpreter

    def input_specs(self) -> List[_verify.InputSpec]:
        specs = []
        for d in self.interpreter.get_input_details():
            dtype = _verify.DTYPE_NAMES.get(np.dtype(d["dtype"]))
            specs.append(_verify.InputSpec(d["name"], dtype, tuple(int(n) for n in d["shape"]),
                                           np.dtype(d["dtype"]).name))
        return specs

    def _invoke(self, interpreter: Any, feed: Dict[str, Any]) -> None:
        for d in interpreter.get_input_details():
            interpreter.set_tensor(d["index"], feed[d["name"]])
        interpreter.invoke()

    def _executed_as(self) -> Dict[int, str]:
        """The tensors written by a DELEGATE node of their own (the XNNPACK delegate)."""
        delegated = {}
        for node in self.interpreter._get_ops_details():  # noqa: SLF001 - LiteRT's only list of nodes
            if node["op_name"] == "DELEGATE":
                for t in node["outputs"]:
                    delegated[int(t)] = "XNNPACK delegate"
        return delegated

    def run(self, feed: Dict[str, Any]) -> _verify.RunResult:
        self._invoke(self.interpreter, feed)
        kernels = {"default": "optimized kernel", "builtin": "optimized kernel", "reference": "reference kernel"}
        delegated = self._executed_as()
        checks, skipped, others = [], [], {}
        with tempfile.TemporaryDirectory(prefix="sqdiff-verify-") as work:
            tensors = os.path.join(work, "tensors")
            os.mkdir(tensors)
            unavailable: Dict[int, str] = {}
            wanted = set()
            for op in self.plan["operators"]:
                if op["status"] in ("skipped", "ready"):
                    wanted.update(op["read"])
                    wanted.update(t for t in op["outputs"] if t >= 0)
            for t in sorted(wanted):
                try:
                    value = self.interpreter.get_tensor(t)
                except ValueError as error:  # "Tensor data is null": the runtime did not keep it
                    unavailable[t] = str(error)
                    continue
                np.save(os.path.join(tensors, "%d.npy" % t), np.ascontiguousarray(value))
            computed = _tflite(self.path, "--tensors", tensors, "-o", os.path.join(work, "out"))
            producers = {t: op["kind"] for op in computed["operators"] for t in op["outputs"] if t >= 0}
            for op in computed["operators"]:
                kind, index = op["kind"], op["index"]
                output = op["outputs"][0] if op["outputs"] else -1
                name = self.details[output]["name"] if output in self.details else ""
                if op["status"] == "not run":
                    others[kind] = others.get(kind, 0) + 1
                elif op["status"] == "refused":
                    skipped.append(_verify.Skip(index, name, kind, "refused by sqdiff tflite's check: "
                                                + " ".join(op["problems"])))
                elif op["status"] == "skipped":
                    missing = ", ".join("tensor %d (%s)" % (t, unavailable.get(t, "not kept")) for t in op["missing"])
                    skipped.append(_verify.Skip(index, name, kind, "the runtime did not keep " + missing))
                elif output in unavailable:
                    skipped.append(_verify.Skip(index, name, kind, "the runtime did not keep its output, tensor %d (%s)"
                                                % (output, unavailable[output])))
                elif kind == "DEQUANTIZE" and output in delegated and _static(op, producers):
                    # XNNPACK takes the DEQUANTIZE of static weights (a constant, or a DENSIFY's output)
                    # into the operators that read them and never writes the DEQUANTIZE's own output
                    # tensor, whose memory holds whatever the arena left there: nothing to compare.
                    skipped.append(_verify.Skip(index, name, kind, "the XNNPACK delegate folds the DEQUANTIZE of "
                                                "static weights into the operators that read them and does not write "
                                                "its output; resolver='builtin' or 'reference' computes it"))
                else:
                    detail = self.details.get(output, {})
                    scale, zero_point = detail.get("quantization", (0.0, 0))
                    checks.append(_verify.Check(
                        index=index, name=name, kind=kind, dtype=_verify.DTYPE_NAMES[np.dtype(detail["dtype"])],
                        runtime=np.load(os.path.join(tensors, "%d.npy" % output)), expected=np.load(op["file"]),
                        inputs=[self.details[t]["name"] if t in self.details else str(t) for t in op["inputs"]],
                        quantization=(float(scale), int(zero_point)) if scale else None,
                        executed_as=delegated.get(output, kernels[self.resolver])))
        outputs = []
        plain = self._interpreter(keep=False)
        self._invoke(plain, feed)
        for d in self.interpreter.get_output_details():
            outputs.append((d["name"], self.interpreter.get_tensor(d["index"]), plain.get_tensor(d["index"])))
        import importlib.metadata as metadata
        version = metadata.version("ai-edge-litert")
        return _verify.RunResult(checks, skipped, {"runtime": "litert", "version": version, "resolver": self.resolver},
                                 others, outputs)
