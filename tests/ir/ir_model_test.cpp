// Reading IR XML: element types, ports and dims, lines, and every structural error.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/ir_model.hpp"
#include "ir_test_support.hpp"

namespace sqdiff::tools::ir {
namespace {

using namespace test;

// The IrError message of parse_model(text), or "" when it parses.
std::string parse_error(const std::string& text) {
  try {
    parse_model(text, "m.xml");
  } catch (const IrError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

const std::string kSimpleLayers = parameter(0, "a", "2,3") + parameter(1, "b", "3") +
                                  op(2, "sd", "SquaredDifference", "", "2,3", "3", "2,3") + result(3, "out", "2,3");
const std::string kSimpleEdges = edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0);

TEST(IrElementTypes, TheTwelveInBothSpellings) {
  const std::pair<const char*, const char*> names[] = {{"f16", "FP16"}, {"bf16", "BF16"}, {"f32", "FP32"},
                                                       {"f64", "FP64"}, {"i8", "I8"},     {"i16", "I16"},
                                                       {"i32", "I32"},  {"i64", "I64"},   {"u8", "U8"},
                                                       {"u16", "U16"},  {"u32", "U32"},   {"u64", "U64"}};
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto dtype = static_cast<DType>(i);
    EXPECT_EQ(dtype_from_ir(names[i].first), dtype) << names[i].first;
    EXPECT_EQ(dtype_from_ir(names[i].second), dtype) << names[i].second;
    EXPECT_EQ(dtype_name(dtype), names[i].first);
  }
}

TEST(IrElementTypes, OthersAreNotSqdiffTypes) {
  for (const char* name : {"boolean", "BOOL", "u1", "BIN", "i4", "u4", "I4", "U4", "nf4", "string", "STRING",
                           "dynamic", "undefined", "f8e4m3", "", "F32", "fp32", "float"}) {
    EXPECT_FALSE(dtype_from_ir(name).has_value()) << name;
  }
  const ElementType boolean = element_type_from_ir("boolean");
  EXPECT_TRUE(boolean.known());
  EXPECT_FALSE(boolean.dtype.has_value());
}

TEST(IrModel, ReadsTheV11Example) {
  const Model m = load_model(example("squared_difference_none.xml"));
  EXPECT_EQ(m.version, 11);
  EXPECT_EQ(m.name, "squared_difference_none");
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(m.edges.size(), 3u);
  const Layer& sd = m.layers[2];
  EXPECT_EQ(sd.type, "SquaredDifference");
  EXPECT_EQ(sd.name, "squared_difference");
  EXPECT_EQ(sd.attribute("auto_broadcast"), "none");
  ASSERT_EQ(sd.inputs.size(), 2u);
  ASSERT_EQ(sd.outputs.size(), 1u);
  EXPECT_EQ(format_partial_shape(sd.outputs[0].shape), "[256,56]");
  EXPECT_EQ(sd.outputs[0].precision, "FP32");
  const std::string text = read_text(example("squared_difference_none.xml"));
  EXPECT_EQ(sd.line, line_of(text, "<layer id=\"2\""));
  EXPECT_EQ(m.layers[0].attribute("shape"), "256,56");
  EXPECT_EQ(m.sources[2][0].layer, 0u);
  EXPECT_EQ(m.sources[2][1].layer, 1u);
  EXPECT_EQ(m.sources[3][0].layer, 2u);
}

TEST(IrModel, ReadsTheV10Example) {
  const Model m = load_model(example("squared_difference_numpy.xml"));
  EXPECT_EQ(m.version, 10);
  ASSERT_EQ(m.layers.size(), 4u);
  EXPECT_EQ(format_partial_shape(m.layers[2].outputs[0].shape), "[8,7,6,5]");
  EXPECT_EQ(m.layers[2].inputs[0].precision, "");  // v10 input ports carry no precision here
}

TEST(IrModel, DynamicAndIntervalDims) {
  const std::string text =
      net(parameter(0, "a", "?,2..7,..5,3..,-1", "f32", "-1,2..7,..5,3..,?") + result(1, "out", "?,-1,-1,-1,-1"),
          edge(0, 0, 1, 0));
  const Model m = parse_model(text, "m.xml");
  const PartialShape& s = m.layers[0].outputs[0].shape;
  ASSERT_EQ(s.dims.size(), 5u);
  EXPECT_EQ(s.dims[0], Dim::dynamic());
  EXPECT_EQ(s.dims[1], (Dim{2, 7}));
  EXPECT_EQ(s.dims[2], (Dim{0, 5}));
  EXPECT_EQ(s.dims[3], (Dim{3, kUnbounded}));
  EXPECT_EQ(s.dims[4], Dim::dynamic());
}

TEST(IrModel, APortWithoutDimsIsRankZero) {
  const Model m = parse_model(net(parameter(0, "a", "") + result(1, "out", ""), edge(0, 0, 1, 0)), "m.xml");
  EXPECT_FALSE(m.layers[0].outputs[0].shape.dynamic_rank);
  EXPECT_TRUE(m.layers[0].outputs[0].shape.dims.empty());
}

TEST(IrModel, TopologicalOrderFollowsEdgesNotDocumentOrder) {
  // The Result and the op come first in the file.
  const std::string layers = result(9, "out", "2,3") + op(5, "sd", "Subtract", "", "2,3", "3", "2,3") +
                             parameter(1, "b", "3") + parameter(0, "a", "2,3");
  const Model m = parse_model(net(layers, edge(0, 0, 5, 0) + edge(1, 0, 5, 1) + edge(5, 2, 9, 0)), "m.xml");
  std::vector<int64_t> order;
  for (const std::size_t i : m.topological_order) order.push_back(m.layers[i].id);
  ASSERT_EQ(order.size(), 4u);
  const auto pos = [&](int64_t id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  EXPECT_LT(pos(0), pos(5));
  EXPECT_LT(pos(1), pos(5));
  EXPECT_LT(pos(5), pos(9));
}

TEST(IrModel, InputOrderIsDocumentOrderOfPorts) {
  // Input ports listed as id 1 then id 0: "a" is the first listed port.
  std::string sd = op(2, "sd", "Subtract", "", "2,3", "3", "2,3");
  sd.replace(sd.find("<port id=\"0\">"), 13, "<port id=\"7\">");
  const Model m = parse_model(net(parameter(0, "a", "2,3") + parameter(1, "b", "3") + sd + result(3, "out", "2,3"),
                                  edge(0, 0, 2, 7) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)),
                              "m.xml");
  EXPECT_EQ(m.layers[2].inputs[0].id, 7);
  EXPECT_EQ(m.sources[2][0].layer, 0u);
}

TEST(IrModelErrors, MalformedXmlGivesLineAndColumn) {
  const std::string text = "<?xml version=\"1.0\"?>\n<net version=\"11\">\n<layers>\n<layer id=\"0\" name=\"a\"\n</net>\n";
  const std::string error = parse_error(text);
  EXPECT_CONTAINS(error, "m.xml:");
  EXPECT_CONTAINS(error, "malformed XML");
  // pugixml stops at line 5 (the '<' inside the unfinished start tag).
  EXPECT_CONTAINS(error, "m.xml:5:");
}

TEST(IrModelErrors, EmptyFileAndTruncatedFile) {
  EXPECT_EQ(parse_error(""), "m.xml: the file is empty (expected an OpenVINO IR <net> document)");
  EXPECT_CONTAINS(parse_error(" \n"), "the file is empty");
  EXPECT_CONTAINS(parse_error("<!-- only a comment -->"), "malformed XML: No document element found");
  const std::string whole = net(kSimpleLayers, kSimpleEdges);
  EXPECT_CONTAINS(parse_error(whole.substr(0, whole.size() / 2)), "malformed XML");
}

TEST(IrModelErrors, RootAndVersion) {
  EXPECT_CONTAINS(parse_error("<model version=\"11\"/>"), "the root element is <model>");
  EXPECT_CONTAINS(parse_error("<net name=\"x\"><layers/></net>"), "no version attribute");
  EXPECT_CONTAINS(parse_error(net(kSimpleLayers, kSimpleEdges, 7)), "IR version \"7\" is not supported");
  EXPECT_CONTAINS(parse_error("<net version=\"eleven\"><layers/></net>"), "IR version \"eleven\"");
  EXPECT_CONTAINS(parse_error("<net version=\"11\"></net>"), "no <layers>");
  EXPECT_CONTAINS(parse_error("<net version=\"11\"><layers/></net>"), "holds no <layer>");
}

TEST(IrModelErrors, IdsAndAttributes) {
  std::string no_id = kSimpleLayers;
  no_id.replace(no_id.find("id=\"1\""), 6, "");
  EXPECT_CONTAINS(parse_error(net(no_id, kSimpleEdges)), "a <layer> has no id attribute");
  std::string bad_id = kSimpleLayers;
  bad_id.replace(bad_id.find("id=\"1\""), 6, "id=\"x1\"");
  EXPECT_CONTAINS(parse_error(net(bad_id, kSimpleEdges)), "id=\"x1\", expected a non-negative integer");
  std::string negative = kSimpleLayers;
  negative.replace(negative.find("id=\"1\""), 6, "id=\"-1\"");
  EXPECT_CONTAINS(parse_error(net(negative, kSimpleEdges)), "expected a non-negative integer");
  std::string no_type = kSimpleLayers;
  no_type.replace(no_type.find("type=\"Result\""), 13, "");
  EXPECT_CONTAINS(parse_error(net(no_type, kSimpleEdges)), "has no type attribute");
  std::string edge_text = kSimpleEdges;
  edge_text.replace(edge_text.find("to-port=\"1\""), 11, "to-port=\"one\"");
  EXPECT_CONTAINS(parse_error(net(kSimpleLayers, edge_text)), "an <edge> has to-port=\"one\"");
  std::string bad_dim = kSimpleLayers;
  bad_dim.replace(bad_dim.find("<dim>3</dim>"), 12, "<dim>three</dim>");
  const std::string error = parse_error(net(bad_dim, kSimpleEdges));
  EXPECT_CONTAINS(error, "<dim>three</dim> is not a dimension");
  EXPECT_CONTAINS(error, "layer 0 \"a\"");
  std::string two_dims = kSimpleLayers;
  two_dims.replace(two_dims.find("<dim>3</dim>"), 12, "<dim>3,4</dim>");
  EXPECT_CONTAINS(parse_error(net(two_dims, kSimpleEdges)), "is not one dimension");
}

TEST(IrModelErrors, DuplicateLayerIdNamesBothLayersAndLine) {
  const std::string layers = parameter(0, "a", "2,3") + parameter(0, "b", "3") +
                             op(2, "sd", "SquaredDifference", "", "2,3", "3", "2,3") + result(3, "out", "2,3");
  const std::string text = net(layers, kSimpleEdges);
  const std::string error = parse_error(text);
  EXPECT_CONTAINS(error, "duplicate layer id 0");
  EXPECT_CONTAINS(error, "layer 0 \"b\"");
  EXPECT_CONTAINS(error, "layer 0 \"a\"");
  EXPECT_CONTAINS(error, "m.xml:" + std::to_string(line_of(text, "name=\"b\"")) + ":");
}

TEST(IrModelErrors, DuplicatePortId) {
  std::string sd = op(2, "sd", "SquaredDifference", "", "2,3", "3", "2,3");
  sd.replace(sd.find("<port id=\"2\">"), 13, "<port id=\"1\">");
  const std::string error =
      parse_error(net(parameter(0, "a", "2,3") + parameter(1, "b", "3") + sd + result(3, "out", "2,3"), kSimpleEdges));
  EXPECT_CONTAINS(error, "has two ports with id 1");
}

TEST(IrModelErrors, EdgesToMissingLayersAndPorts) {
  const auto with_edges = [](const std::string& edges) { return parse_error(net(kSimpleLayers, edges)); };
  EXPECT_CONTAINS(with_edges(edge(7, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)), "there is no layer with id 7");
  EXPECT_CONTAINS(with_edges(edge(0, 0, 8, 0) + kSimpleEdges), "there is no layer with id 8");
  EXPECT_CONTAINS(with_edges(edge(0, 5, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)), "has no output port 5");
  EXPECT_CONTAINS(with_edges(edge(0, 0, 2, 4) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)), "has no input port 4");
  EXPECT_CONTAINS(with_edges(edge(2, 0, 3, 0) + edge(0, 0, 2, 0) + edge(1, 0, 2, 1)), "as an input, not an output");
  EXPECT_CONTAINS(with_edges(edge(0, 0, 2, 2) + kSimpleEdges), "as an output, not an input");
  const std::string twice = with_edges(kSimpleEdges + edge(1, 0, 2, 0));
  EXPECT_CONTAINS(twice, "input port 0 of layer 2 \"sd\"");
  EXPECT_CONTAINS(twice, "already has an edge");
}

TEST(IrModelErrors, EdgeErrorsGiveTheEdgeLine) {
  const std::string text = net(kSimpleLayers, edge(0, 0, 2, 0) + edge(1, 0, 42, 1) + edge(2, 2, 3, 0));
  EXPECT_CONTAINS(parse_error(text), "m.xml:" + std::to_string(line_of(text, "to-layer=\"42\"")) + ":");
}

TEST(IrModelErrors, DanglingInputPort) {
  const std::string text = net(kSimpleLayers, edge(0, 0, 2, 0) + edge(2, 2, 3, 0));
  const std::string error = parse_error(text);
  EXPECT_CONTAINS(error, "input port 1 of layer 2 \"sd\" (SquaredDifference, line ");
  EXPECT_CONTAINS(error, "has no edge");
  EXPECT_CONTAINS(error, "m.xml:" + std::to_string(line_of(text, "<port id=\"1\">")) + ":");
}

TEST(IrModelErrors, MissingEdgesElement) {
  std::string text = net(kSimpleLayers, "");
  text.replace(text.find("<edges>\n</edges>\n"), 17, "");
  EXPECT_CONTAINS(parse_error(text), "has no edge");
}

TEST(IrModelErrors, Cycles) {
  // a -> sd1 -> sd2 -> sd1 (port 1), sd2 -> out.
  const std::string layers = parameter(0, "a", "3") + op(1, "sd1", "Subtract", "", "3", "3", "3") +
                             op(2, "sd2", "Subtract", "", "3", "3", "3") + result(3, "out", "3");
  const std::string error =
      parse_error(net(layers, edge(0, 0, 1, 0) + edge(2, 2, 1, 1) + edge(1, 2, 2, 0) + edge(0, 0, 2, 1) + edge(2, 2, 3, 0)));
  EXPECT_CONTAINS(error, "the graph has a cycle");
  EXPECT_CONTAINS(error, "layer 1 \"sd1\"");
  EXPECT_CONTAINS(error, "layer 2 \"sd2\"");
  EXPECT_EQ(error.find("layer 3 "), std::string::npos) << "the Result is downstream, not on the cycle: " << error;

  // A layer feeding itself.
  const std::string self = parameter(0, "a", "3") + op(1, "self", "Subtract", "", "3", "3", "3") + result(2, "out", "3");
  const std::string self_text = net(self, edge(0, 0, 1, 0) + edge(1, 2, 1, 1) + edge(1, 2, 2, 0));
  const std::string self_line = std::to_string(line_of(self_text, "name=\"self\""));
  EXPECT_CONTAINS(parse_error(self_text),
                  "m.xml:" + self_line + ": the graph has a cycle: layer 1 \"self\" (Subtract, line " + self_line +
                      ") -> layer 1 \"self\"");
}

TEST(IrModelErrors, MissingFile) {
  try {
    load_model("/nonexistent/model.xml");
    FAIL() << "no error";
  } catch (const IrError& e) {
    EXPECT_CONTAINS(e.what(), "/nonexistent/model.xml: cannot open the model file");
  }
}

// A model must be a regular file: a FIFO would block the open, a device such
// as /dev/zero would be read until memory runs out.
TEST(IrModelErrors, NotARegularFile) {
  const std::string fifo = ::testing::TempDir() + "/sqdiff_ir_model_test_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const auto& [path, kind] : std::vector<std::pair<std::string, std::string>>{
           {fifo, "a FIFO (named pipe)"}, {"/dev/zero", "a character device"}, {"/tmp", "a directory"}}) {
    try {
      load_model(path);
      ADD_FAILURE() << path << ": no error";
    } catch (const IrError& e) {
      EXPECT_CONTAINS(e.what(), path + ": the model file is " + kind + ", not a regular file");
    }
  }
  ::unlink(fifo.c_str());
}

// Line numbers come from an index of the line starts, built once: checking a
// model is linear in its size (each lookup used to count from the start).
TEST(IrModel, LineIndex) {
  const LineIndex lines("a\nbb\n\nc\n");
  EXPECT_EQ(lines.line_of(0), 1u);
  EXPECT_EQ(lines.line_of(1), 1u);  // the newline belongs to its line
  EXPECT_EQ(lines.line_of(2), 2u);
  EXPECT_EQ(lines.line_of(5), 3u);
  EXPECT_EQ(lines.line_of(6), 4u);
  EXPECT_EQ(lines.line_of(7), 4u);  // the final newline starts no line of its own
  EXPECT_EQ(lines.line_of(1000), 4u);
  EXPECT_EQ(lines.line_of(-1), 0u);
  EXPECT_EQ(LineIndex("").line_of(0), 1u);
  // The same answers as counting newlines, everywhere in a random text.
  std::string text;
  for (int i = 0; i < 2000; ++i) text += (i * 7919 % 13 == 0) ? '\n' : 'x';
  const LineIndex index(text);
  for (std::size_t at = 0; at < text.size(); ++at) {
    const auto counted = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    ASSERT_EQ(index.line_of(static_cast<std::ptrdiff_t>(at)), counted) << at;
  }
}

TEST(IrModel, LineOfOffset) {
  EXPECT_EQ(line_of_offset("a\nb\nc", 0), 1u);
  EXPECT_EQ(line_of_offset("a\nb\nc", 2), 2u);
  EXPECT_EQ(line_of_offset("a\nb\nc", 4), 3u);
  EXPECT_EQ(line_of_offset("a\nb\nc", 100), 3u);
  EXPECT_EQ(line_of_offset("a\nb\nc", -1), 0u);
}

TEST(IrModel, ParseInt) {
  EXPECT_EQ(parse_int("12"), 12);
  EXPECT_EQ(parse_int(" -3 "), -3);
  EXPECT_EQ(parse_int("+4"), 4);
  EXPECT_FALSE(parse_int("").has_value());
  EXPECT_FALSE(parse_int("1.5").has_value());
  EXPECT_FALSE(parse_int("99999999999999999999").has_value());
  EXPECT_FALSE(parse_int("0x10").has_value());
}

}  // namespace
}  // namespace sqdiff::tools::ir
