"""sqdiff.verify's OpenVINO runner: the model read by OpenVINO (IR .xml, .onnx, .tflite, or an
openvino.Model), every SquaredDifference-1 and Subtract-1 node's inputs and output added as model
outputs (Model.add_outputs), compiled on the device and run; each node recomputed with
sqdiff.squared_difference / sqdiff.subtract (its auto_broadcast and element type) from the
runtime's own input tensors. The unmodified model is compiled and run on the same inputs too:
whether its outputs are the same, and how each node ran there (the compiled model's runtime
graph: which executed node holds it, fused with what), say what adding the outputs changed.
"""

from __future__ import annotations

import typing as _typing

import numpy as np

from . import _sqdiff, _verify

if _typing.TYPE_CHECKING:
    from typing import Any, Dict, List, Optional, Tuple

# The node types sqdiff computes exactly as OpenVINO's spec defines them (SPEC_DECISIONS.md),
# and the Python function that does.
KINDS = {"SquaredDifference": "squared_difference", "Subtract": "subtract"}
TYPES = {"f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}


def _openvino() -> Any:
    try:
        import openvino
    except ImportError as error:
        raise _verify.missing_runtime("openvino", error) from None
    return openvino


def _one_line(error: Exception) -> str:
    return " | ".join(line.strip() for line in str(error).splitlines() if line.strip())


def _type_name(element_type: Any) -> str:
    return element_type.get_type_name()


def _port_name(port: Any) -> str:
    names = port.get_names()
    if names:
        return sorted(names)[0]
    node = port.get_node()
    return node.get_friendly_name() + ("" if node.get_output_size() == 1 else ":%d" % port.get_index())


def _read_tensor(tensor: Any, type_name: str) -> Any:
    data = np.array(tensor.data, copy=True)
    return data.view(np.uint16) if type_name == "bf16" else data


class Runner:
    def __init__(self, model: Any, device: str, properties: Dict[str, Any]) -> None:
        ov = self.ov = _openvino()
        self.core = ov.Core()
        self.device = device
        self.properties = properties
        if hasattr(model, "get_ordered_ops"):
            self.model = model.clone()
            self.name = model.get_name()
        else:
            try:
                self.model = self.core.read_model(str(model))
            except RuntimeError as error:
                raise _verify.Error("OpenVINO cannot read %s: %s" % (model, _one_line(error))) from None
        self.instrumented = self.model.clone()
        ordered = self.instrumented.get_ordered_ops()
        original = self.model.get_ordered_ops()
        self.nodes: List[Tuple[int, Any]] = []
        self.skipped: List[_verify.Skip] = []
        self.others: Dict[str, int] = {}
        for index, node in enumerate(ordered):
            kind = node.get_type_name()
            if kind not in KINDS:
                if kind not in ("Parameter", "Result", "Constant"):
                    self.others[kind] = self.others.get(kind, 0) + 1
                continue
            assert original[index].get_friendly_name() == node.get_friendly_name()
            version = node.get_type_info().version_id
            type_name = _type_name(node.get_output_element_type(0))
            if version != "opset1":
                self.skipped.append(_verify.Skip(index, node.get_friendly_name(), kind,
                                                 "%s of %s: sqdiff implements opset1's" % (kind, version)))
            elif type_name not in TYPES:
                self.skipped.append(_verify.Skip(index, node.get_friendly_name(), kind,
                                                 "element type %s: not one sqdiff computes" % type_name))
            else:
                self.nodes.append((index, node))
        self.outputs = len(self.instrumented.outputs)
        ports = []
        for _, node in self.nodes:
            ports += [node.input_value(0), node.input_value(1), node.output(0)]
        added = self.instrumented.add_outputs(ports) if ports else []
        self.result_index = [self.instrumented.get_result_index(port) for port in added]

    def input_specs(self) -> List[_verify.InputSpec]:
        specs = []
        for port in self.model.inputs:
            type_name = _type_name(port.get_element_type())
            partial = port.get_partial_shape()
            if partial.rank.is_dynamic:
                raise _verify.Error("input %r has a dynamic rank: pass it in inputs" % _port_name(port))
            shape = []
            for dim in partial:
                if dim.is_static:
                    shape.append(dim.get_length())
                else:  # as `sqdiff ir --random`: 1 where the interval holds it, else its smallest size
                    lo, hi = dim.get_min_length(), dim.get_max_length()
                    shape.append(1 if lo <= 1 and (hi < 0 or hi >= 1) else lo)
            specs.append(_verify.InputSpec(_port_name(port), type_name if type_name in TYPES else None, tuple(shape),
                                           type_name, static=partial.is_static))
        return specs

    def _infer(self, model: Any, feed: Dict[str, Any], what: str) -> Tuple[Any, Any]:
        try:
            compiled = self.core.compile_model(model, self.device, self.properties)
        except RuntimeError as error:
            raise _verify.Error("OpenVINO's %s plugin cannot compile the model%s: %s"
                                % (self.device, what, _one_line(error))) from None
        request = compiled.create_infer_request()
        tensors = {}
        for position, port in enumerate(model.inputs):
            array = feed[_port_name(port)]
            tensor = self.ov.Tensor(port.get_element_type(), list(array.shape))
            if array.size:
                tensor.data[...] = array.view(tensor.data.dtype)
            tensors[position] = tensor
        request.infer(tensors)
        return compiled, request

    @staticmethod
    def _runtime_nodes(compiled: Any) -> Dict[str, str]:
        """Original layer name -> how it ran: the executed node that holds it, its type and
        precision, and the other layers fused into it."""
        where = {}
        for node in compiled.get_runtime_model().get_ordered_ops():
            info = node.get_rt_info()
            layers = [name for name in info["originalLayersNames"].astype(str).split(",") if name]
            text = "%s %r (%s)" % (info["layerType"].astype(str), node.get_friendly_name(),
                                   info["runtimePrecision"].astype(str))
            for layer in layers:
                others = [other for other in layers if other != layer]
                where[layer] = text + (", fused with " + ", ".join(others) if others else "")
        return where

    def run(self, feed: Dict[str, Any]) -> _verify.RunResult:
        import sqdiff

        compiled, request = self._infer(self.instrumented, feed, " with the checked nodes' inputs and outputs added")
        ran = self._runtime_nodes(compiled)
        plain_compiled, plain_request = self._infer(self.model, feed, "")
        plain_ran = self._runtime_nodes(plain_compiled)
        checks, skipped = [], list(self.skipped)
        for k, (index, node) in enumerate(self.nodes):
            kind, name = node.get_type_name(), node.get_friendly_name()
            type_name = _type_name(node.get_output_element_type(0))
            a, b, out = (_read_tensor(request.get_output_tensor(self.result_index[3 * k + j]), type_name)
                         for j in range(3))
            attributes = node.get_attributes()
            mode = str(attributes.get("auto_broadcast", "numpy")).lower()
            axis = int(attributes.get("auto_broadcast.auto_broadcast_axis", -1))
            if mode not in ("none", "numpy", "pdpd"):
                skipped.append(_verify.Skip(index, name, kind, "auto_broadcast %r: not one sqdiff has" % mode))
                continue
            function = getattr(sqdiff, KINDS[kind])
            try:
                expected = function(a, b, broadcast=mode, broadcast_axis=axis,
                                    dtype="bfloat16" if type_name == "bf16" else None)
            except _sqdiff.Error as error:
                skipped.append(_verify.Skip(index, name, kind, "sqdiff refuses the runtime's inputs: %s" % error))
                continue
            inputs = [_port_name(node.input_value(j)) for j in range(2)]
            checks.append(_verify.Check(
                index=index, name=name, kind=kind, dtype=type_name, runtime=out, expected=expected, inputs=inputs,
                broadcast=mode + (" axis %d" % axis if mode == "pdpd" else ""),
                executed_as=ran.get(name),
                unmodified_executed_as=plain_ran.get(name, None if name not in ran else
                                                     "not in the runtime graph (folded, or fused away)")))
        outputs = []
        for position, port in enumerate(self.model.outputs):
            type_name = _type_name(port.get_element_type())
            outputs.append((_port_name(port), _read_tensor(request.get_output_tensor(position), type_name),
                            _read_tensor(plain_request.get_output_tensor(position), type_name)))
        runtime = {"runtime": "openvino", "version": self.ov.get_version(), "device": self.device}
        if self.properties:
            runtime["properties"] = {k: str(v) for k, v in self.properties.items()}
        return _verify.RunResult(checks, skipped, runtime, self.others, outputs)
