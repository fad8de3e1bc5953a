#include "ir/ir_shapes.hpp"

#include <algorithm>
#include <cctype>

namespace sqdiff::tools::ir {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string type_list() { return "f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64"; }

// True when dims declared on a port say what flows through it. OpenVINO writes
// every dynamic dim, intervals included, as -1 on ports (intervals survive only
// in a Parameter's shape attribute) and a dynamic rank as no dims at all. So:
// a declared "?" (or -1) matches any dynamic dim, a declared static n or
// interval must match exactly, and an inferred dynamic rank matches anything.
bool same_shape(const PartialShape& declared, const PartialShape& actual) {
  if (actual.dynamic_rank) return true;
  if (declared.dynamic_rank) return false;
  if (declared.dims.size() != actual.dims.size()) return false;
  for (std::size_t i = 0; i < declared.dims.size(); ++i) {
    const Dim& d = declared.dims[i];
    const Dim& a = actual.dims[i];
    if (d == a) continue;
    if (d == Dim::dynamic() && a.is_dynamic()) continue;
    return false;
  }
  return true;
}

class Checker {
 public:
  explicit Checker(const Model& model) : model_(model) {
    report_.shapes.resize(model.layers.size());
    report_.types.resize(model.layers.size());
  }

  ShapeReport run() {
    for (const std::size_t i : model_.topological_order) {
      const Layer& layer = model_.layers[i];
      // Default: every output as declared on its port.
      for (const Port& port : layer.outputs) {
        report_.shapes[i].push_back(port.shape);
        report_.types[i].push_back(port.precision.empty() ? ElementType{} : element_type_from_ir(port.precision));
      }
      if (layer.type == "Parameter" || layer.type == "Const") {
        source_layer(i);
      } else if (is_elementwise_op(layer)) {
        op_layer(i);
      } else if (layer.type == "Result") {
        check_inputs(i, report_.other_problems);
      }
    }
    return std::move(report_);
  }

 private:
  std::string at(const Layer& layer, std::size_t line) const {
    return model_.where(line == 0 ? layer.line : line) + model_.describe(layer) + ": ";
  }

  // Parameter and Const: `shape` and `element_type` attributes override the port.
  void source_layer(std::size_t i) {
    const Layer& layer = model_.layers[i];
    auto& problems = report_.other_problems;
    if (layer.outputs.size() != 1) {
      problems.push_back(at(layer, 0) + "has " + std::to_string(layer.outputs.size()) +
                         " output ports, expected 1");
    }
    if (const auto text = layer.attribute("shape")) {
      PartialShape shape;
      bool parsed = true;
      try {
        shape = parse_partial_shape(*text);
      } catch (const sqdiff::Error& e) {
        problems.push_back(at(layer, layer.data_line) + "malformed shape attribute: " + e.what());
        parsed = false;
      }
      if (parsed && !layer.outputs.empty()) {
        if (!same_shape(layer.outputs[0].shape, shape)) {
          problems.push_back(at(layer, layer.outputs[0].line) + "output port " + std::to_string(layer.outputs[0].id) +
                             " declares " + format_partial_shape(layer.outputs[0].shape) +
                             " but the shape attribute is " + format_partial_shape(shape));
        }
        report_.shapes[i][0] = shape;
      }
    }
    if (const auto text = layer.attribute("element_type"); text && !layer.outputs.empty()) {
      const ElementType type = element_type_from_ir(*text);
      const ElementType& port = report_.types[i][0];
      if (port.known() && port.dtype && type.dtype && *port.dtype != *type.dtype) {
        problems.push_back(at(layer, layer.outputs[0].line) + "output port " + std::to_string(layer.outputs[0].id) +
                           " has precision " + in_quotes(port.text) + " but element_type is " + in_quotes(type.text));
      }
      report_.types[i][0] = type;
    }
  }

  // Input ports must declare what flows into them.
  void check_inputs(std::size_t i, std::vector<std::string>& problems) {
    const Layer& layer = model_.layers[i];
    for (std::size_t p = 0; p < layer.inputs.size(); ++p) {
      const Source& s = model_.sources[i][p];
      const PartialShape& actual = report_.shapes[s.layer][s.output];
      if (!same_shape(layer.inputs[p].shape, actual)) {
        const Layer& from = model_.layers[s.layer];
        problems.push_back(at(layer, layer.inputs[p].line) + "input port " + std::to_string(layer.inputs[p].id) +
                           " declares " + format_partial_shape(layer.inputs[p].shape) + " but layer " +
                           std::to_string(from.id) + " " + in_quotes(from.name) + " port " +
                           std::to_string(from.outputs[s.output].id) + " gives " + format_partial_shape(actual));
      }
    }
  }

  void op_layer(std::size_t i) {
    const Layer& layer = model_.layers[i];
    OpCheck check;
    check.layer = i;
    auto& problems = check.problems;
    if (layer.inputs.size() != 2 || layer.outputs.size() != 1) {
      problems.push_back(at(layer, 0) + "has " + std::to_string(layer.inputs.size()) + " input and " +
                         std::to_string(layer.outputs.size()) + " output ports, expected 2 and 1");
      if (layer.inputs.size() < 2) {
        report_.ops.push_back(std::move(check));
        return;
      }
    }
    try {
      check.mode = broadcast_of(model_, layer);
      check.mode_known = true;
    } catch (const IrError& e) {
      problems.push_back(e.what());
    }
    const Source& sa = model_.sources[i][0];
    const Source& sb = model_.sources[i][1];
    check.a = report_.shapes[sa.layer][sa.output];
    check.b = report_.shapes[sb.layer][sb.output];
    check_inputs(i, problems);

    // Element types: both inputs the same supported type.
    const ElementType& ta = report_.types[sa.layer][sa.output];
    const ElementType& tb = report_.types[sb.layer][sb.output];
    bool types_ok = true;
    for (const auto* t : {&ta, &tb}) {
      if (t->known() && !t->dtype) {
        problems.push_back(at(layer, 0) + "input " + (t == &ta ? "a" : "b") + " has element type " + in_quotes(t->text) +
                           ", which sqdiff does not compute (it computes " + type_list() + ")");
        types_ok = false;
      }
    }
    if (types_ok && ta.dtype && tb.dtype && *ta.dtype != *tb.dtype) {
      problems.push_back(at(layer, 0) + "the inputs have different element types, " + in_quotes(ta.text) + " and " +
                         in_quotes(tb.text) + " (no promotion: both must be the same)");
      types_ok = false;
    }
    if (types_ok) check.type = ta.known() ? ta : tb;

    if (check.mode_known) {
      try {
        check.inferred = broadcast_partial_shape("layer " + std::to_string(layer.id) + " " + in_quotes(layer.name),
                                                 check.a, check.b, check.mode);
      } catch (const sqdiff::Error& e) {
        problems.push_back(model_.where(layer.line) + e.what());
      }
    }
    if (!layer.outputs.empty()) {
      const Port& out = layer.outputs[0];
      check.declared = out.shape;
      if (check.inferred && !same_shape(out.shape, *check.inferred)) {
        problems.push_back(at(layer, out.line) + "output port " + std::to_string(out.id) + " declares " +
                           format_partial_shape(out.shape) + " but the inputs give " +
                           format_partial_shape(*check.inferred) + " " + tools::format_broadcast(check.mode));
      }
      if (check.inferred) report_.shapes[i][0] = *check.inferred;
      // The output's element type is the inputs' type; a declared precision must agree.
      const ElementType declared_type = report_.types[i][0];
      if (declared_type.known() && !declared_type.dtype) {
        problems.push_back(at(layer, out.line) + "output port " + std::to_string(out.id) + " has precision " +
                           in_quotes(declared_type.text) + ", which sqdiff does not compute");
      } else if (declared_type.dtype && check.type.dtype && *declared_type.dtype != *check.type.dtype) {
        problems.push_back(at(layer, out.line) + "output port " + std::to_string(out.id) + " has precision " +
                           in_quotes(declared_type.text) + " but the inputs are " + in_quotes(check.type.text));
      }
      if (check.type.known()) report_.types[i][0] = check.type;
    }
    report_.ops.push_back(std::move(check));
  }

  const Model& model_;
  ShapeReport report_;
};

}  // namespace

bool is_elementwise_op(const Layer& layer) {
  return layer.type == "SquaredDifference" || layer.type == "Subtract";
}

sqdiff::Broadcast broadcast_of(const Model& model, const Layer& layer) {
  sqdiff::Broadcast mode;
  const auto where = [&] { return model.where(layer.has_data ? layer.data_line : layer.line) + model.describe(layer) + ": "; };
  if (const auto text = layer.attribute("auto_broadcast")) {
    const std::string name = lower(*text);
    if (name == "none") {
      mode.kind = sqdiff::BroadcastKind::none;
    } else if (name == "numpy") {
      mode.kind = sqdiff::BroadcastKind::numpy;
    } else if (name == "pdpd") {
      mode.kind = sqdiff::BroadcastKind::pdpd;
    } else if (name == "explicit") {
      throw IrError(where() + "auto_broadcast=\"explicit\" is not supported by " + layer.type +
                    " (use none, numpy or pdpd)");
    } else {
      throw IrError(where() + "unknown auto_broadcast=" + in_quotes(*text) + " (expected none, numpy or pdpd)");
    }
  }
  if (mode.kind == sqdiff::BroadcastKind::pdpd) {
    // OpenVINO's serializer writes the axis as a field of the auto_broadcast spec,
    // auto_broadcast.auto_broadcast_axis, and its reader reads only that name. The plain
    // auto_broadcast_axis (which OpenVINO ignores) is still read when the other is absent.
    for (const char* axis_name : {"auto_broadcast.auto_broadcast_axis", "auto_broadcast_axis"}) {
      if (const auto text = layer.attribute(axis_name)) {
        const auto axis = parse_int(*text);
        if (!axis) throw IrError(where() + axis_name + "=" + in_quotes(*text) + " is not an integer");
        mode.axis = *axis;
        break;
      }
    }
  }
  return mode;
}

std::size_t ShapeReport::problem_count() const {
  std::size_t n = other_problems.size();
  for (const OpCheck& op : ops) n += op.problems.size();
  return n;
}

ShapeReport check_shapes(const Model& model) { return Checker(model).run(); }

std::string format_op_check(const Model& model, const OpCheck& check) {
  const Layer& layer = model.layers[check.layer];
  std::string line = "layer " + std::to_string(layer.id) + " " + in_quotes(layer.name) + " " + layer.type + ": " +
                     format_partial_shape(check.a) + " with " + format_partial_shape(check.b) + " " +
                     (check.mode_known ? tools::format_broadcast(check.mode) : std::string("(unknown mode)")) + " -> ";
  if (!check.inferred) return line + "error";
  line += format_partial_shape(*check.inferred);
  if (check.ok()) return line + " ok";
  if (check.declared && !same_shape(*check.declared, *check.inferred)) {
    return line + " MISMATCH (declared " + format_partial_shape(*check.declared) + ")";
  }
  return line + " error";
}

}  // namespace sqdiff::tools::ir
