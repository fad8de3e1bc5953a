#include "ir/ir_model.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <new>
#include <unordered_map>
#include <utility>

#include "input_file.hpp"

namespace sqdiff::tools::ir {
namespace {

struct TypeName {
  std::string_view element_type;  // "f32"
  std::string_view precision;     // "FP32"
  sqdiff::DType dtype;
};

constexpr std::array<TypeName, 12> kTypeNames{{
    {"f16", "FP16", sqdiff::DType::f16},
    {"bf16", "BF16", sqdiff::DType::bf16},
    {"f32", "FP32", sqdiff::DType::f32},
    {"f64", "FP64", sqdiff::DType::f64},
    {"i8", "I8", sqdiff::DType::i8},
    {"i16", "I16", sqdiff::DType::i16},
    {"i32", "I32", sqdiff::DType::i32},
    {"i64", "I64", sqdiff::DType::i64},
    {"u8", "U8", sqdiff::DType::u8},
    {"u16", "U16", sqdiff::DType::u16},
    {"u32", "U32", sqdiff::DType::u32},
    {"u64", "U64", sqdiff::DType::u64},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Builds the model from a parsed document, throwing IrError with lines.
class Builder {
 public:
  Builder(std::string_view text, std::string path) : lines_(text) { model_.path = std::move(path); }

  Model build(const pugi::xml_document& doc) {
    const pugi::xml_node net = doc.document_element();
    if (!net) fail(0, "no root element (expected <net>)");
    if (std::string_view(net.name()) != "net") {
      fail(line(net), "the root element is <" + std::string(net.name()) + ">, expected <net> (an OpenVINO IR file)");
    }
    model_.name = net.attribute("name").value();
    const pugi::xml_attribute version = net.attribute("version");
    if (!version) fail(line(net), "<net> has no version attribute (sqdiff ir reads IR versions 10 and 11)");
    const auto v = parse_int(version.value());
    if (!v || (*v != 10 && *v != 11)) {
      fail(line(net), "IR version " + in_quotes(version.value()) + " is not supported (sqdiff ir reads versions 10 and 11)");
    }
    model_.version = static_cast<int>(*v);

    const pugi::xml_node layers = net.child("layers");
    if (!layers) fail(line(net), "<net> has no <layers> element");
    for (const pugi::xml_node node : layers.children("layer")) read_layer(node);
    if (model_.layers.empty()) fail(line(layers), "<layers> holds no <layer>");

    const pugi::xml_node edges = net.child("edges");
    if (edges) {
      for (const pugi::xml_node node : edges.children("edge")) read_edge(node);
    }
    connect(edges ? line(edges) : line(net));
    sort_topologically();
    return std::move(model_);
  }

 private:
  std::size_t line(const pugi::xml_node& node) const { return lines_.line_of(node.offset_debug()); }

  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    throw IrError(model_.where(at) + message);
  }

  int64_t int_attribute(const pugi::xml_node& node, const char* key, std::string_view what) const {
    const pugi::xml_attribute attribute = node.attribute(key);
    if (!attribute) fail(line(node), std::string(what) + " has no " + key + " attribute");
    const auto value = parse_int(attribute.value());
    if (!value || *value < 0) {
      fail(line(node), std::string(what) + " has " + key + "=" + in_quotes(attribute.value()) +
                           ", expected a non-negative integer");
    }
    return *value;
  }

  Port read_port(const pugi::xml_node& node, const Layer& layer) const {
    Port port;
    port.line = line(node);
    port.id = int_attribute(node, "id", "a <port> of " + model_.describe(layer));
    port.precision = node.attribute("precision").value();
    for (const pugi::xml_node dim : node.children("dim")) {
      const std::string_view text = trim(dim.child_value());
      PartialShape one;
      try {
        one = parse_partial_shape(text);
      } catch (const sqdiff::Error& e) {
        fail(line(dim), "port " + std::to_string(port.id) + " of " + model_.describe(layer) + ": <dim>" +
                            std::string(text) + "</dim> is not a dimension (" + e.what() + ")");
      }
      if (one.dynamic_rank || one.dims.size() != 1) {
        fail(line(dim), "port " + std::to_string(port.id) + " of " + model_.describe(layer) + ": <dim>" +
                            std::string(text) + "</dim> is not one dimension (expected n, -1, ?, lo..hi, ..hi or lo..)");
      }
      port.shape.dims.push_back(one.dims.front());
    }
    return port;
  }

  void read_layer(const pugi::xml_node& node) {
    Layer layer;
    layer.line = line(node);
    layer.name = node.attribute("name").value();
    layer.type = node.attribute("type").value();
    layer.version = node.attribute("version").value();
    layer.id = int_attribute(node, "id", "a <layer>");
    if (layer.type.empty()) fail(layer.line, model_.describe(layer) + " has no type attribute");
    if (const auto it = layer_index_.find(layer.id); it != layer_index_.end()) {
      fail(layer.line, "duplicate layer id " + std::to_string(layer.id) + ": " + model_.describe(layer) + " and " +
                           model_.describe(model_.layers[it->second]));
    }
    if (const pugi::xml_node data = node.child("data")) {
      layer.has_data = true;
      layer.data_line = line(data);
      for (const pugi::xml_attribute attribute : data.attributes()) {
        layer.data.emplace(attribute.name(), attribute.value());
      }
    }
    std::unordered_map<int64_t, std::size_t> port_lines;
    auto add_ports = [&](const char* section, std::vector<Port>& ports) {
      for (const pugi::xml_node group : node.children(section)) {
        for (const pugi::xml_node port_node : group.children("port")) {
          Port port = read_port(port_node, layer);
          if (const auto it = port_lines.find(port.id); it != port_lines.end()) {
            fail(port.line, model_.describe(layer) + " has two ports with id " + std::to_string(port.id) +
                                " (lines " + std::to_string(it->second) + " and " + std::to_string(port.line) + ")");
          }
          port_lines.emplace(port.id, port.line);
          ports.push_back(std::move(port));
        }
      }
    };
    add_ports("input", layer.inputs);
    add_ports("output", layer.outputs);
    layer_index_.emplace(layer.id, model_.layers.size());
    model_.layers.push_back(std::move(layer));
  }

  void read_edge(const pugi::xml_node& node) {
    Edge edge;
    edge.line = line(node);
    edge.from_layer = int_attribute(node, "from-layer", "an <edge>");
    edge.from_port = int_attribute(node, "from-port", "an <edge>");
    edge.to_layer = int_attribute(node, "to-layer", "an <edge>");
    edge.to_port = int_attribute(node, "to-port", "an <edge>");
    model_.edges.push_back(edge);
  }

  std::string edge_text(const Edge& e) const {
    return "edge from layer " + std::to_string(e.from_layer) + " port " + std::to_string(e.from_port) + " to layer " +
           std::to_string(e.to_layer) + " port " + std::to_string(e.to_port);
  }

  static std::optional<std::size_t> find_port(const std::vector<Port>& ports, int64_t id) {
    for (std::size_t i = 0; i < ports.size(); ++i) {
      if (ports[i].id == id) return i;
    }
    return std::nullopt;
  }

  // Resolves every edge to port indices; every input port gets exactly one edge.
  void connect(std::size_t edges_line) {
    constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::vector<std::vector<std::size_t>> edge_of(model_.layers.size());
    model_.sources.resize(model_.layers.size());
    for (std::size_t i = 0; i < model_.layers.size(); ++i) {
      edge_of[i].assign(model_.layers[i].inputs.size(), kNone);
      model_.sources[i].resize(model_.layers[i].inputs.size());
    }
    for (std::size_t k = 0; k < model_.edges.size(); ++k) {
      const Edge& e = model_.edges[k];
      const auto from = layer_index_.find(e.from_layer);
      if (from == layer_index_.end()) {
        fail(e.line, edge_text(e) + ": there is no layer with id " + std::to_string(e.from_layer));
      }
      const auto to = layer_index_.find(e.to_layer);
      if (to == layer_index_.end()) {
        fail(e.line, edge_text(e) + ": there is no layer with id " + std::to_string(e.to_layer));
      }
      const Layer& source = model_.layers[from->second];
      const Layer& target = model_.layers[to->second];
      const auto out = find_port(source.outputs, e.from_port);
      if (!out) {
        const bool is_input = find_port(source.inputs, e.from_port).has_value();
        fail(e.line, edge_text(e) + ": " + model_.describe(source) +
                         (is_input ? " has port " + std::to_string(e.from_port) + " as an input, not an output"
                                   : " has no output port " + std::to_string(e.from_port)));
      }
      const auto in = find_port(target.inputs, e.to_port);
      if (!in) {
        const bool is_output = find_port(target.outputs, e.to_port).has_value();
        fail(e.line, edge_text(e) + ": " + model_.describe(target) +
                         (is_output ? " has port " + std::to_string(e.to_port) + " as an output, not an input"
                                    : " has no input port " + std::to_string(e.to_port)));
      }
      std::size_t& slot = edge_of[to->second][*in];
      if (slot != kNone) {
        fail(e.line, edge_text(e) + ": input port " + std::to_string(e.to_port) + " of " + model_.describe(target) +
                         " already has an edge (line " + std::to_string(model_.edges[slot].line) + ")");
      }
      slot = k;
      model_.sources[to->second][*in] = Source{from->second, *out};
    }
    for (std::size_t i = 0; i < model_.layers.size(); ++i) {
      const Layer& layer = model_.layers[i];
      for (std::size_t p = 0; p < layer.inputs.size(); ++p) {
        if (edge_of[i][p] == kNone) {
          fail(layer.inputs[p].line, "input port " + std::to_string(layer.inputs[p].id) + " of " +
                                         model_.describe(layer) + " has no edge (a dangling input; <edges> is at line " +
                                         std::to_string(edges_line) + ")");
        }
      }
    }
  }

  void sort_topologically() {
    const std::size_t n = model_.layers.size();
    std::vector<std::vector<std::size_t>> consumers(n);
    std::vector<std::size_t> pending(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      for (const Source& s : model_.sources[i]) {
        consumers[s.layer].push_back(i);
        ++pending[i];
      }
    }
    std::vector<std::size_t> ready;
    for (std::size_t i = n; i-- > 0;) {
      if (pending[i] == 0) ready.push_back(i);
    }
    while (!ready.empty()) {
      const std::size_t i = ready.back();
      ready.pop_back();
      model_.topological_order.push_back(i);
      for (const std::size_t c : consumers[i]) {
        if (--pending[c] == 0) ready.push_back(c);
      }
    }
    if (model_.topological_order.size() == n) return;
    // Every layer left over is on a cycle or downstream of one; walk sources
    // among them until one repeats to name an actual cycle.
    std::size_t start = 0;
    while (pending[start] == 0) ++start;
    std::vector<std::size_t> path;
    std::vector<std::size_t> position(n, static_cast<std::size_t>(-1));
    std::size_t current = start;
    while (position[current] == static_cast<std::size_t>(-1)) {
      position[current] = path.size();
      path.push_back(current);
      for (const Source& s : model_.sources[current]) {
        if (pending[s.layer] != 0) {
          current = s.layer;
          break;
        }
      }
    }
    std::vector<std::size_t> cycle(path.begin() + static_cast<std::ptrdiff_t>(position[current]), path.end());
    std::reverse(cycle.begin(), cycle.end());  // producer -> consumer order
    std::string text;
    for (const std::size_t i : cycle) text += model_.describe(model_.layers[i]) + " -> ";
    text += model_.describe(model_.layers[cycle.front()]);
    fail(model_.layers[cycle.front()].line, "the graph has a cycle: " + text);
  }

  LineIndex lines_;
  Model model_;
  std::unordered_map<int64_t, std::size_t> layer_index_;
};

}  // namespace

std::optional<sqdiff::DType> dtype_from_ir(std::string_view name) {
  for (const TypeName& t : kTypeNames) {
    if (name == t.element_type || name == t.precision) return t.dtype;
  }
  return std::nullopt;
}

ElementType element_type_from_ir(std::string_view name) {
  return ElementType{std::string(name), dtype_from_ir(name)};
}

std::optional<std::string_view> Layer::attribute(std::string_view key) const {
  const auto it = data.find(key);
  if (it == data.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::string Model::where(std::size_t line) const {
  if (line == 0) return path + ": ";
  return path + ":" + std::to_string(line) + ": ";
}

std::string Model::describe(const Layer& layer) const {
  return "layer " + std::to_string(layer.id) + " " + in_quotes(layer.name) + " (" +
         (layer.type.empty() ? std::string("no type") : layer.type) + ", line " + std::to_string(layer.line) + ")";
}

LineIndex::LineIndex(std::string_view text) : size_(text.size()) {
  line_starts_.push_back(0);
  for (std::size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) {
    line_starts_.push_back(i + 1);
  }
}

std::size_t LineIndex::line_of(std::ptrdiff_t offset) const {
  if (offset < 0) return 0;
  // A newline at the very end starts no line of its own: clamp into the text.
  const std::size_t at = std::min(static_cast<std::size_t>(offset), size_ == 0 ? 0 : size_ - 1);
  return static_cast<std::size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), at) -
                                  line_starts_.begin());
}

std::size_t line_of_offset(std::string_view text, std::ptrdiff_t offset) { return LineIndex(text).line_of(offset); }

std::optional<int64_t> parse_int(std::string_view text) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  if (text.front() == '+') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Model parse_model(std::string_view xml_text, std::string path) {
  if (xml_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw IrError(path + ": the file is empty (expected an OpenVINO IR <net> document)");
  }
  pugi::xml_document doc;
  const pugi::xml_parse_result result =
      doc.load_buffer(xml_text.data(), xml_text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!result) {
    const std::size_t at = line_of_offset(xml_text, result.offset);
    // Column: bytes since the last newline before the offset, 1-based.
    const auto offset = std::min(static_cast<std::size_t>(std::max<std::ptrdiff_t>(result.offset, 0)), xml_text.size());
    const std::size_t line_start = xml_text.rfind('\n', offset == 0 ? 0 : offset - 1);
    const std::size_t column = offset - (line_start == std::string_view::npos || offset == 0 ? 0 : line_start + 1) + 1;
    throw IrError(path + ":" + std::to_string(at) + ":" + std::to_string(column) + ": malformed XML: " +
                  result.description());
  }
  Builder builder(xml_text, std::move(path));
  return builder.build(doc);
}

Model load_model(const std::string& path) {
  std::string text;
  try {
    text = InputFile::open(path, "the model file").read_all(kMaxModelBytes);
  } catch (const IrError&) {
    throw;
  } catch (const sqdiff::Error& e) {
    throw IrError(e.what());
  } catch (const std::bad_alloc&) {
    throw IrError(path + ": out of memory reading the model file");
  }
  try {
    return parse_model(text, path);
  } catch (const std::bad_alloc&) {
    throw IrError(path + ": out of memory parsing the model (" + std::to_string(text.size()) + " bytes)");
  }
}

}  // namespace sqdiff::tools::ir
