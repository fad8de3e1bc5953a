// Shape and type inference of SquaredDifference/Subtract layers and the check
// against declared dims (SPEC sections 3 and 5).
#include <gtest/gtest.h>

#include <string>

#include "ir/ir_shapes.hpp"
#include "ir_test_support.hpp"

namespace sqdiff::tools::ir {
namespace {

using namespace test;

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

std::string all_problems(const ShapeReport& r) {
  std::string out;
  for (const OpCheck& op : r.ops) {
    for (const std::string& p : op.problems) out += p + "\n";
  }
  for (const std::string& p : r.other_problems) out += p + "\n";
  return out;
}

// One op between two Parameters (shapes a and b) and a Result; the op declares `out`.
struct OneOp {
  std::string text;
  Model model;
  ShapeReport report;
  OneOp(const std::string& a, const std::string& b, const std::string& out, const std::string& data = "",
        const std::string& type = "SquaredDifference", const std::string& ta = "f32", const std::string& tb = "f32")
      : text(net(parameter(0, "a", a, ta, a) + parameter(1, "b", b, tb, b) + op(2, "op", type, data, a, b, out) +
                     result(3, "out", out),
                 edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0))),
        model(parse_model(text, "m.xml")),
        report(check_shapes(model)) {}
  const OpCheck& check() const { return report.ops.at(0); }
  std::string line() const { return format_op_check(model, check()); }
};

TEST(IrShapes, TheExamples) {
  struct Case {
    const char* file;
    const char* line;
  };
  const Case cases[] = {
      {"squared_difference_none.xml",
       "layer 2 \"squared_difference\" SquaredDifference: [256,56] with [256,56] (none) -> [256,56] ok"},
      {"squared_difference_numpy.xml",
       "layer 2 \"squared_difference\" SquaredDifference: [8,1,6,1] with [7,1,5] (numpy) -> [8,7,6,5] ok"},
      {"subtract_pdpd.xml", "layer 2 \"subtract\" Subtract: [2,3,4,5] with [3,1] (pdpd, axis 1) -> [2,3,4,5] ok"},
      {"dynamic_dims.xml",
       "layer 2 \"squared_difference\" SquaredDifference: [?,1,4] with [2..7,3,1] (numpy) -> [2..7,3,4] ok"},
  };
  for (const Case& c : cases) {
    const Model m = load_model(example(c.file));
    const ShapeReport r = check_shapes(m);
    EXPECT_TRUE(r.ok()) << c.file << ": " << all_problems(r);
    ASSERT_EQ(r.ops.size(), 1u) << c.file;
    EXPECT_EQ(format_op_check(m, r.ops[0]), c.line);
  }
}

TEST(IrShapes, ElementTypesFlowThrough) {
  const Model m = load_model(example("dynamic_dims.xml"));
  const ShapeReport r = check_shapes(m);
  EXPECT_EQ(r.ops[0].type.dtype, DType::f16);
  EXPECT_EQ(r.types[2][0].dtype, DType::f16);
  const Model p = load_model(example("subtract_pdpd.xml"));
  EXPECT_EQ(check_shapes(p).ops[0].type.dtype, DType::i32);
}

TEST(IrShapes, TheWrongExampleIsReportedWithIdNameAndLine) {
  const std::string path = example("broken/declared_shape_mismatch.xml");
  const std::string text = read_text(path);
  const Model m = load_model(path);
  const ShapeReport r = check_shapes(m);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.problem_count(), 1u) << all_problems(r);
  const std::string problem = r.ops[0].problems[0];
  const std::size_t layer_line = line_of(text, "<layer id=\"2\"");
  const std::size_t port_line = line_of(text, "<port id=\"2\"");
  EXPECT_EQ(problem, path + ":" + std::to_string(port_line) +
                         ": layer 2 \"squared_difference\" (SquaredDifference, line " + std::to_string(layer_line) +
                         "): output port 2 declares [8,7,6,4] but the inputs give [8,7,6,5] (numpy)");
  EXPECT_EQ(format_op_check(m, r.ops[0]),
            "layer 2 \"squared_difference\" SquaredDifference: [8,1,6,1] with [7,1,5] (numpy) -> [8,7,6,5] "
            "MISMATCH (declared [8,7,6,4])");
}

TEST(IrShapes, DefaultModeIsNumpy) {
  const OneOp o("8,1,6,1", "7,1,5", "8,7,6,5");
  EXPECT_TRUE(o.report.ok()) << all_problems(o.report);
  EXPECT_EQ(o.check().mode.kind, BroadcastKind::numpy);
}

TEST(IrShapes, SpecSection3Tables) {
  struct Case {
    const char* a;
    const char* b;
    const char* data;
    const char* out;  // nullptr: error
  };
  const Case cases[] = {
      {"", "", "", ""},
      {"2,3", "1", "", "2,3"},
      {"3", "2,3", "", "2,3"},
      {"2,1,5", "4,1", "auto_broadcast=\"numpy\"", "2,4,5"},
      {"1,0,3", "3", "", "1,0,3"},
      {"3", "2", "", nullptr},
      {"2,3", "3,2", "", nullptr},
      {"2,4", "1,2,4", "auto_broadcast=\"none\"", nullptr},
      {"3,4", "3,1", "auto_broadcast=\"none\"", nullptr},
      {"3,4", "3,4", "auto_broadcast=\"NONE\"", "3,4"},
      {"2,3,4,5", "3,4", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"1\"", "2,3,4,5"},
      {"2,3,4,5", "4,5", "auto_broadcast=\"pdpd\"", "2,3,4,5"},
      {"2,3,4,5", "1,3", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"0\"", "2,3,4,5"},
      {"2,3,4,5", "3,1", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"-1\"", nullptr},
      {"2,3,4,5", "3,1", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"-2\"", nullptr},
      {"8,1,6,1", "7,1,5", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"1\"", nullptr},
      // The axis matters only for pdpd.
      {"8,1,6,1", "7,1,5", "auto_broadcast=\"numpy\" auto_broadcast_axis=\"3\"", "8,7,6,5"},
      // The name OpenVINO's save_model writes (and its reader reads): read, and preferred.
      {"2,3,4,5", "3,1", "auto_broadcast=\"pdpd\" auto_broadcast.auto_broadcast_axis=\"1\"", "2,3,4,5"},
      {"2,3,4,5", "3,1", "auto_broadcast=\"pdpd\" auto_broadcast.auto_broadcast_axis=\"1\" auto_broadcast_axis=\"-1\"",
       "2,3,4,5"},
      {"2,3,4,5", "3,1", "auto_broadcast=\"pdpd\" auto_broadcast.auto_broadcast_axis=\"-1\"", nullptr},
  };
  for (const Case& c : cases) {
    const OneOp o(c.a, c.b, c.out ? c.out : c.a, c.data, "Subtract");
    SCOPED_TRACE(std::string(c.a) + " with " + c.b + " " + c.data);
    if (c.out) {
      EXPECT_TRUE(o.report.ok()) << all_problems(o.report);
      ASSERT_TRUE(o.check().inferred.has_value());
      EXPECT_EQ(format_partial_shape(*o.check().inferred), "[" + std::string(c.out) + "]");
    } else {
      EXPECT_FALSE(o.report.ok());
      EXPECT_FALSE(o.check().inferred.has_value());
      EXPECT_CONTAINS(all_problems(o.report), "layer 2 \"op\": cannot broadcast");
      EXPECT_EQ(o.line().substr(o.line().size() - 8), "-> error");
    }
  }
}

TEST(IrShapes, PartialShapesSection5) {
  struct Case {
    const char* a;
    const char* b;
    const char* data;
    const char* out;  // nullptr: error
  };
  const Case cases[] = {
      {"1..3", "1..5", "", "1..5"},
      {"?", "?", "", "?"},
      {"?", "1", "", "?"},
      {"1..3", "2..7", "", "2..7"},
      {"?", "3", "", "3"},
      {"8..16", "4..12", "", "8..12"},
      {"0", "5", "", nullptr},
      {"?,3", "2..7,3", "auto_broadcast=\"none\"", "2..7,3"},
      {"2..4", "5..9", "auto_broadcast=\"none\"", nullptr},
      {"2,3,4,5", "3..9,1", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"1\"", "2,3,4,5"},
      {"2,1,4,5", "4..8", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"1\"", "2,4..8,4,5"},
  };
  for (const Case& c : cases) {
    const std::string out = c.out ? c.out : c.a;
    // Port dims as OpenVINO writes them: every dynamic dim as -1.
    const OneOp o(c.a, c.b, out, c.data);
    SCOPED_TRACE(std::string(c.a) + " with " + c.b + " " + c.data);
    if (c.out) {
      EXPECT_TRUE(o.report.ok()) << all_problems(o.report);
      ASSERT_TRUE(o.check().inferred.has_value());
      EXPECT_EQ(format_partial_shape(*o.check().inferred), "[" + std::string(c.out) + "]");
    } else {
      EXPECT_FALSE(o.report.ok());
    }
  }
}

TEST(IrShapes, DeclaredMinusOneMatchesAnyDynamicDimButNotAStaticOne) {
  // OpenVINO writes interval dims on ports as -1.
  const std::string layers = parameter(0, "a", "2..7,3", "f32", "-1,3") + parameter(1, "b", "3", "f32", "3") +
                             op(2, "op", "Subtract", "", "-1,3", "3", "-1,3") + result(3, "out", "-1,3");
  const std::string edges = edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0);
  const Model m = parse_model(net(layers, edges), "m.xml");
  const ShapeReport r = check_shapes(m);
  EXPECT_TRUE(r.ok()) << all_problems(r);
  EXPECT_EQ(format_partial_shape(*r.ops[0].inferred), "[2..7,3]");

  // a [?,3] with b [4,3] gives [4,3]; a declared [-1,3] output is a mismatch.
  const OneOp o("?,3", "4,3", "-1,3");
  EXPECT_FALSE(o.report.ok());
  EXPECT_CONTAINS(all_problems(o.report), "output port 2 declares [?,3] but the inputs give [4,3]");
  // A declared interval must be exact.
  const OneOp p("2..7,3", "3", "2..6,3");
  EXPECT_FALSE(p.report.ok());
}

TEST(IrShapes, DynamicRank) {
  // shape="..." with a port without dims: OpenVINO's way to write a dynamic rank.
  const std::string layers = parameter(0, "a", "...", "f32", "") + parameter(1, "b", "3") +
                             op(2, "op", "SquaredDifference", "", "", "3", "") + result(3, "out", "");
  const Model m = parse_model(net(layers, edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)), "m.xml");
  const ShapeReport r = check_shapes(m);
  EXPECT_TRUE(r.ok()) << all_problems(r);
  EXPECT_EQ(format_op_check(m, r.ops[0]), "layer 2 \"op\" SquaredDifference: [...] with [3] (numpy) -> [...] ok");
}

TEST(IrShapes, ChainsUseInferredShapes) {
  // c = (a - b)^2 with [2,1] and [3]; d = c - e with e [2,3]: d declares [2,3].
  const std::string layers = parameter(0, "a", "2,1") + parameter(1, "b", "3") + parameter(2, "e", "2,3") +
                             op(3, "c", "SquaredDifference", "", "2,1", "3", "2,3") +
                             op(4, "d", "Subtract", "", "2,3", "2,3", "2,3") + result(5, "out", "2,3");
  const std::string edges =
      edge(0, 0, 3, 0) + edge(1, 0, 3, 1) + edge(3, 2, 4, 0) + edge(2, 0, 4, 1) + edge(4, 2, 5, 0);
  const Model m = parse_model(net(layers, edges), "m.xml");
  const ShapeReport r = check_shapes(m);
  EXPECT_TRUE(r.ok()) << all_problems(r);
  ASSERT_EQ(r.ops.size(), 2u);
  EXPECT_EQ(format_partial_shape(r.ops[1].a), "[2,3]");

  // Now c wrongly declares [2,4]: c is a mismatch, and d's input port (which
  // declares [2,3]) still agrees with what really flows in.
  std::string wrong = layers;
  const std::size_t at = wrong.find("<port id=\"2\"><dim>2</dim><dim>3</dim>");
  wrong.replace(wrong.find("<dim>3</dim>", at), 12, "<dim>4</dim>");
  const ShapeReport w = check_shapes(parse_model(net(wrong, edges), "m.xml"));
  EXPECT_EQ(w.problem_count(), 1u) << all_problems(w);
  EXPECT_CONTAINS(all_problems(w), "layer 3 \"c\"");
}

TEST(IrShapes, InputPortsMustDeclareWhatFlowsIn) {
  const std::string layers = parameter(0, "a", "2,3") + parameter(1, "b", "3") +
                             op(2, "op", "Subtract", "", "2,3", "4", "2,3") + result(3, "out", "2,2");
  const std::string text = net(layers, edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0));
  const ShapeReport r = check_shapes(parse_model(text, "m.xml"));
  const std::string problems = all_problems(r);
  EXPECT_EQ(r.problem_count(), 2u) << problems;
  EXPECT_CONTAINS(problems, "input port 1 declares [4] but layer 1 \"b\" port 0 gives [3]");
  EXPECT_CONTAINS(problems, "layer 3 \"out\" (Result, line");
  EXPECT_CONTAINS(problems, "input port 0 declares [2,2] but layer 2 \"op\" port 2 gives [2,3]");
}

TEST(IrShapes, ParameterShapeAttributeAgainstPort) {
  const std::string layers = parameter(0, "a", "2,3", "f32", "2,4") + result(1, "out", "2,3");
  const ShapeReport r = check_shapes(parse_model(net(layers, edge(0, 0, 1, 0)), "m.xml"));
  EXPECT_CONTAINS(all_problems(r), "output port 0 declares [2,4] but the shape attribute is [2,3]");
  const std::string bad = parameter(0, "a", "2,x", "f32", "2,3") + result(1, "out", "2,3");
  const ShapeReport b = check_shapes(parse_model(net(bad, edge(0, 0, 1, 0)), "m.xml"));
  EXPECT_CONTAINS(all_problems(b), "malformed shape attribute");
}

TEST(IrShapes, ModesThatAreNotSupported) {
  const OneOp e("3", "3", "3", "auto_broadcast=\"explicit\"");
  EXPECT_CONTAINS(all_problems(e.report), "auto_broadcast=\"explicit\" is not supported by SquaredDifference");
  EXPECT_EQ(e.line(), "layer 2 \"op\" SquaredDifference: [3] with [3] (unknown mode) -> error");
  const OneOp u("3", "3", "3", "auto_broadcast=\"bidirectional\"");
  EXPECT_CONTAINS(all_problems(u.report), "unknown auto_broadcast=\"bidirectional\"");
  const OneOp x("3", "3", "3", "auto_broadcast=\"pdpd\" auto_broadcast_axis=\"one\"");
  EXPECT_CONTAINS(all_problems(x.report), "auto_broadcast_axis=\"one\" is not an integer");
}

TEST(IrShapes, ElementTypeProblems) {
  const OneOp mixed("3", "3", "3", "", "Subtract", "f32", "i32");
  EXPECT_CONTAINS(all_problems(mixed.report), "different element types, \"f32\" and \"i32\"");
  const OneOp boolean("3", "3", "3", "", "Subtract", "boolean", "boolean");
  EXPECT_CONTAINS(all_problems(boolean.report), "input a has element type \"boolean\", which sqdiff does not compute");
  const OneOp u1("3", "3", "3", "", "Subtract", "f32", "u1");
  EXPECT_CONTAINS(all_problems(u1.report), "input b has element type \"u1\"");
  const OneOp same("3", "3", "3", "", "Subtract", "bf16", "BF16");
  EXPECT_TRUE(same.report.ok()) << all_problems(same.report);
  EXPECT_EQ(same.check().type.dtype, DType::bf16);
}

TEST(IrShapes, DeclaredOutputPrecisionMustAgree) {
  std::string text = OneOp("3", "3", "3").text;
  text.replace(text.find("<port id=\"2\">"), 13, "<port id=\"2\" precision=\"I32\">");
  const ShapeReport r = check_shapes(parse_model(text, "m.xml"));
  EXPECT_CONTAINS(all_problems(r), "output port 2 has precision \"I32\" but the inputs are \"f32\"");
}

TEST(IrShapes, WrongPortCounts) {
  std::string layers = parameter(0, "a", "3") +
                       "<layer id=\"2\" name=\"op\" type=\"Subtract\">\n<input>\n<port id=\"0\"><dim>3</dim></port>\n"
                       "</input>\n<output>\n<port id=\"2\"><dim>3</dim></port>\n</output>\n</layer>\n" +
                       result(3, "out", "3");
  const ShapeReport r = check_shapes(parse_model(net(layers, edge(0, 0, 2, 0) + edge(2, 2, 3, 0)), "m.xml"));
  EXPECT_CONTAINS(all_problems(r), "has 1 input and 1 output ports, expected 2 and 1");
}

TEST(IrShapes, OtherLayerTypesUseDeclaredDims) {
  const std::string relu = "<layer id=\"5\" name=\"relu\" type=\"Relu\" version=\"opset1\">\n<input>\n<port id=\"0\">" +
                           dims("2,3") + "</port>\n</input>\n<output>\n<port id=\"1\" precision=\"FP32\">" +
                           dims("2,3") + "</port>\n</output>\n</layer>\n";
  const std::string layers = parameter(0, "a", "2,3") + parameter(1, "b", "3") + relu +
                             op(2, "op", "Subtract", "", "2,3", "3", "2,3") + result(3, "out", "2,3");
  const Model m = parse_model(net(layers, edge(0, 0, 5, 0) + edge(5, 1, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)),
                              "m.xml");
  const ShapeReport r = check_shapes(m);
  EXPECT_TRUE(r.ok()) << all_problems(r);
  EXPECT_EQ(r.ops[0].type.dtype, DType::f32);
}

TEST(IrShapes, NoOps) {
  const ShapeReport r =
      check_shapes(parse_model(net(parameter(0, "a", "3") + result(1, "out", "3"), edge(0, 0, 1, 0)), "m.xml"));
  EXPECT_TRUE(r.ok());
  EXPECT_TRUE(r.ops.empty());
}

}  // namespace
}  // namespace sqdiff::tools::ir
