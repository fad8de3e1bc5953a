// OpenVINO IR (v10 and v11 XML) as a graph: layers, ports, edges, with the line
// of every element, validated structurally (ids, edges, ports, cycles).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "partial_shape.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::tools::ir {

// Every problem with a model file: the message starts with "FILE:LINE: " when
// the line is known. Derived from sqdiff::Error so that one handler catches all.
class IrError : public sqdiff::Error {
 public:
  using sqdiff::Error::Error;
};

// OpenVINO element type names ("f32", "u8", "bf16", ...) and precision spellings
// ("FP32", "U8", "BF16", ...) of the twelve numeric types; nullopt for anything
// else ("boolean", "u1", "i4", "string", "dynamic", unknown words).
std::optional<sqdiff::DType> dtype_from_ir(std::string_view name);

// An element type as written in the file, and the sqdiff type if it is one.
struct ElementType {
  std::string text;  // as written ("f32", "FP32", "boolean"), empty when unknown
  std::optional<sqdiff::DType> dtype;
  bool known() const { return !text.empty(); }
};
ElementType element_type_from_ir(std::string_view name);

struct Port {
  int64_t id = 0;
  std::string precision;  // the port's precision attribute, empty if absent
  PartialShape shape;     // from the <dim> children (none: rank 0)
  std::size_t line = 0;
};

struct Layer {
  int64_t id = 0;
  std::string name;
  std::string type;
  std::string version;
  std::size_t line = 0;
  bool has_data = false;
  std::size_t data_line = 0;
  std::map<std::string, std::string, std::less<>> data;  // attributes of <data>
  std::vector<Port> inputs;   // in document order: input 0 is "a", input 1 is "b"
  std::vector<Port> outputs;  // in document order

  // The <data> attribute, or nullopt.
  std::optional<std::string_view> attribute(std::string_view key) const;
};

struct Edge {
  int64_t from_layer = 0;
  int64_t from_port = 0;
  int64_t to_layer = 0;
  int64_t to_port = 0;
  std::size_t line = 0;
};

// An output port of a layer, by indices into Model::layers and Layer::outputs.
struct Source {
  std::size_t layer = 0;
  std::size_t output = 0;
};

struct Model {
  std::string path;  // the file name used in messages
  std::string name;  // <net name=...>
  int version = 0;   // 10 or 11
  std::vector<Layer> layers;
  std::vector<Edge> edges;
  // For each layer, for each input port (same order as Layer::inputs): the
  // output port that feeds it. Every input port has exactly one source.
  std::vector<std::vector<Source>> sources;
  // Indices into layers, producers before consumers.
  std::vector<std::size_t> topological_order;

  // "FILE:LINE: " (or "FILE: " when line is 0).
  std::string where(std::size_t line) const;
  // `layer 3 "sqdiff" (SquaredDifference, line 12)`
  std::string describe(const Layer& layer) const;
};

// Parses and validates XML text. `path` is only used in messages. Throws
// IrError for malformed XML (with its line and column), a root other than
// <net>, an IR version other than 10 or 11, missing or malformed ids, duplicate
// layer or port ids, edges naming missing layers or ports (or going the wrong
// way), two edges into one input port, an input port with no edge, cycles.
Model parse_model(std::string_view xml_text, std::string path);

// Model files larger than this are refused with a clear error rather than
// read into memory (the parsed document takes a few times the file's size;
// real OpenVINO models keep their weights in the .bin and are far smaller).
inline constexpr int64_t kMaxModelBytes = int64_t{1} << 30;

// Reads the file (a regular file, at most kMaxModelBytes), then parse_model.
Model load_model(const std::string& path);

// The lines of a text, indexed once, so that finding the line of each of a
// model's many elements costs a binary search, not a count from the start
// (which made checking a 16,000-layer model take 97 s).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // 1-based line of a byte offset (offsets past the end give the last line;
  // a negative offset, pugixml's "unknown", gives 0).
  std::size_t line_of(std::ptrdiff_t offset) const;

 private:
  std::vector<std::size_t> line_starts_;  // byte offset where each line begins
  std::size_t size_ = 0;
};

// LineIndex(text).line_of(offset), for a single lookup.
std::size_t line_of_offset(std::string_view text, std::ptrdiff_t offset);

// Strict non-negative or signed decimal integer parsing of attribute text
// (surrounding spaces allowed); nullopt when the text is not one.
std::optional<int64_t> parse_int(std::string_view text);

}  // namespace sqdiff::tools::ir
