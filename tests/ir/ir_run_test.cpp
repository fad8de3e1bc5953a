// Running IR graphs: random and file inputs, Consts from the .bin, results
// against a scalar oracle, and every run-time error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/ir_outputs.hpp"
#include "ir/ir_run.hpp"
#include "ir_test_support.hpp"
#include "npy.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"

namespace sqdiff::tools::ir {
namespace {

using namespace test;

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "in: " << (haystack)

struct Loaded {
  Model model;
  ShapeReport report;
  explicit Loaded(Model m) : model(std::move(m)), report(check_shapes(model)) {}
};

Loaded load(const std::string& path) { return Loaded(load_model(path)); }
Loaded parse(const std::string& text, const std::string& path = "m.xml") { return Loaded(parse_model(text, path)); }

std::string run_error(const Loaded& l, const RunOptions& options) {
  try {
    run_model(l.model, l.report, options);
  } catch (const sqdiff::Error& e) {
    return e.what();
  }
  return "";
}

RunOptions with_seed(uint64_t seed) {
  RunOptions o;
  o.seed = seed;
  return o;
}

template <typename T>
T at(const Tensor& t, int64_t i) {
  EXPECT_TRUE(t.strides.empty());
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(t.data) + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

// Row-major index -> index into an input of shape `in`, aligned at `first`
// (numpy: rank(out) - rank(in); pdpd: the axis), broadcasting size-1 dims.
int64_t source_index(int64_t flat, const Shape& out, const Shape& in, std::size_t first) {
  std::vector<int64_t> index(out.size());
  for (std::size_t d = out.size(); d-- > 0;) {
    index[d] = flat % out[d];
    flat /= out[d];
  }
  int64_t k = 0;
  for (std::size_t j = 0; j < in.size(); ++j) k = k * in[j] + (in[j] == 1 ? 0 : index[first + j]);
  return k;
}

TEST(IrRun, NumpyExampleWithRandomInputsMatchesTheOracle) {
  const Loaded l = load(example("squared_difference_numpy.xml"));
  const RunOutput out = run_model(l.model, l.report, with_seed(1));
  ASSERT_EQ(out.inputs.size(), 2u);
  ASSERT_EQ(out.results.size(), 1u);
  const Tensor& a = out.inputs[0].value;
  const Tensor& b = out.inputs[1].value;
  EXPECT_TRUE(out.inputs[0].random);
  EXPECT_EQ(a.shape, (Shape{8, 1, 6, 1}));
  EXPECT_EQ(b.shape, (Shape{7, 1, 5}));
  const Tensor& r = out.results[0].value;
  ASSERT_EQ(r.shape, (Shape{8, 7, 6, 5}));
  ASSERT_EQ(r.dtype, DType::f32);
  for (int64_t i = 0; i < 8 * 7 * 6 * 5; ++i) {
    const float x = at<float>(a, source_index(i, r.shape, a.shape, 0));
    const float y = at<float>(b, source_index(i, r.shape, b.shape, 1));
    const float d = x - y;
    ASSERT_EQ(at<float>(r, i), d * d) << i;
  }
  // Random floats are in [-10, 10).
  for (int64_t i = 0; i < 48; ++i) {
    EXPECT_GE(at<float>(a, i), -10.0f);
    EXPECT_LT(at<float>(a, i), 10.0f);
  }
}

TEST(IrRun, RandomInputsAreDeterministicPerSeed) {
  const Loaded l = load(example("squared_difference_numpy.xml"));
  const RunOutput one = run_model(l.model, l.report, with_seed(1));
  const RunOutput again = run_model(l.model, l.report, with_seed(1));
  const RunOutput other = run_model(l.model, l.report, with_seed(2));
  const auto bytes = [](const Tensor& t) {
    const auto* p = static_cast<const unsigned char*>(t.data);
    return std::vector<unsigned char>(p, p + t.element_count() * static_cast<int64_t>(dtype_size(t.dtype)));
  };
  EXPECT_EQ(bytes(one.inputs[0].value), bytes(again.inputs[0].value));
  EXPECT_EQ(bytes(one.results[0].value), bytes(again.results[0].value));
  EXPECT_NE(bytes(one.inputs[0].value), bytes(other.inputs[0].value));
  // a and b get different streams.
  EXPECT_NE(at<float>(one.inputs[0].value, 0), at<float>(one.inputs[1].value, 0));
}

TEST(IrRun, PdpdSubtractWithAConstFromTheBin) {
  const Loaded l = load(example("subtract_pdpd.xml"));
  const RunOutput out = run_model(l.model, l.report, with_seed(3));
  ASSERT_EQ(out.inputs.size(), 1u);  // the Const is not an input
  const Tensor& a = out.inputs[0].value;
  const Tensor& r = out.results[0].value;
  ASSERT_EQ(r.shape, (Shape{2, 3, 4, 5}));
  ASSERT_EQ(r.dtype, DType::i32);
  const int32_t b[3] = {10, 20, 30};
  for (int64_t i = 0; i < 120; ++i) {
    const int64_t channel = (i / 20) % 3;
    ASSERT_EQ(at<int32_t>(r, i), at<int32_t>(a, i) - b[channel]) << i;
    EXPECT_GE(at<int32_t>(a, i), -5);
    EXPECT_LE(at<int32_t>(a, i), 5);
  }
}

TEST(IrRun, DynamicDimsWithRandomTakeTheSmallestPositiveSize) {
  const Loaded l = load(example("dynamic_dims.xml"));
  const RunOutput out = run_model(l.model, l.report, with_seed(7));
  const Tensor& a = out.inputs[0].value;
  const Tensor& b = out.inputs[1].value;
  EXPECT_EQ(a.shape, (Shape{1, 1, 4}));
  EXPECT_EQ(b.shape, (Shape{2, 3, 1}));
  const Tensor& r = out.results[0].value;
  ASSERT_EQ(r.shape, (Shape{2, 3, 4}));
  ASSERT_EQ(r.dtype, DType::f16);
  for (int64_t i = 0; i < 24; ++i) {
    const float x = static_cast<float>(float16::from_bits(at<uint16_t>(a, i % 4)));
    const float y = static_cast<float>(float16::from_bits(at<uint16_t>(b, i / 4)));
    const float d = x - y;
    ASSERT_EQ(at<uint16_t>(r, i), float16(d * d).bits()) << i;
  }
}

TEST(IrRun, RandomSizeForDims) {
  EXPECT_EQ(random_size_for(Dim::fixed(5)), 5);
  EXPECT_EQ(random_size_for(Dim::fixed(0)), 0);
  EXPECT_EQ(random_size_for(Dim::dynamic()), 1);
  EXPECT_EQ(random_size_for(Dim{2, 7}), 2);
  EXPECT_EQ(random_size_for(Dim{0, 5}), 1);
  EXPECT_EQ(random_size_for(Dim{3, kUnbounded}), 3);
  EXPECT_EQ(random_size_for(Dim{1, 1}), 1);
}

TEST(IrRun, NoneExampleFromNpyFiles) {
  const TempDir dir;
  std::vector<float> a(256 * 56), b(256 * 56);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<float>(i) * 0.5f;
    b[i] = static_cast<float>(i % 7);
  }
  write_npy(dir.file("a.npy"), DType::f32, {256, 56}, a.data());
  write_npy(dir.file("b.npy"), DType::f32, {256, 56}, b.data());
  const Loaded l = load(example("squared_difference_none.xml"));
  RunOptions options;
  options.inputs = {{"a", dir.file("a.npy")}, {"b", dir.file("b.npy")}};
  const RunOutput out = run_model(l.model, l.report, options);
  EXPECT_FALSE(out.inputs[0].random);
  EXPECT_EQ(out.inputs[0].file, dir.file("a.npy"));
  const Tensor& r = out.results[0].value;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const float d = a[i] - b[i];
    ASSERT_EQ(at<float>(r, static_cast<int64_t>(i)), d * d);
  }
  // Written and read back.
  write_tensor(dir.file("out.npy"), r);
  const NpyArray back = NpyArray::open(dir.file("out.npy"));
  EXPECT_EQ(back.shape(), (Shape{256, 56}));
  EXPECT_EQ(std::memcmp(back.data(), r.data, a.size() * 4), 0);
}

TEST(IrRun, InputFileMixedWithRandom) {
  const TempDir dir;
  const float a[3] = {1, 2, 3};
  write_npy(dir.file("a.npy"), DType::f32, {3}, a);
  const Loaded l = parse(net(parameter(0, "a", "?") + parameter(1, "b", "3") +
                                 op(2, "op", "Subtract", "", "-1", "3", "3") + result(3, "out", "3"),
                             edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)));
  ASSERT_TRUE(l.report.ok());
  RunOptions options = with_seed(5);
  options.inputs = {{"a", dir.file("a.npy")}};
  const RunOutput out = run_model(l.model, l.report, options);
  EXPECT_FALSE(out.inputs[0].random);
  EXPECT_TRUE(out.inputs[1].random);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(at<float>(out.results[0].value, i), a[i] - at<float>(out.inputs[1].value, i));
  }
}

TEST(IrRun, Bf16ParameterReadsUint16Files) {
  const TempDir dir;
  const uint16_t a[2] = {bfloat16(3.0f).bits(), bfloat16(-1.5f).bits()};
  const uint16_t b[2] = {bfloat16(1.0f).bits(), bfloat16(0.5f).bits()};
  write_npy(dir.file("a.npy"), DType::u16, {2}, a);
  write_npy(dir.file("b.npy"), DType::u16, {2}, b);
  const Loaded l = parse(net(parameter(0, "a", "2", "bf16") + parameter(1, "b", "2", "bf16") +
                                 op(2, "op", "SquaredDifference", "", "2", "2", "2") + result(3, "out", "2"),
                             edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)));
  RunOptions options;
  options.inputs = {{"a", dir.file("a.npy")}, {"b", dir.file("b.npy")}};
  const RunOutput out = run_model(l.model, l.report, options);
  EXPECT_EQ(out.results[0].value.dtype, DType::bf16);
  EXPECT_EQ(at<uint16_t>(out.results[0].value, 0), bfloat16(4.0f).bits());
  EXPECT_EQ(at<uint16_t>(out.results[0].value, 1), bfloat16(4.0f).bits());
  EXPECT_EQ(format_values(out.results[0].value, 8), "4 4");
}

TEST(IrRun, ChainAndTwoResultsAndParameterToResult) {
  const std::string layers = parameter(0, "a", "2,1", "i8") + parameter(1, "b", "3", "i8") +
                             op(2, "c", "SquaredDifference", "", "2,1", "3", "2,3") +
                             op(3, "d", "Subtract", "", "2,3", "3", "2,3") + result(4, "c/out", "2,3") +
                             result(5, "d/out", "2,3") + result(6, "a", "2,1");
  const std::string edges = edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0) + edge(1, 0, 3, 1) +
                            edge(2, 2, 4, 0) + edge(3, 2, 5, 0) + edge(0, 0, 6, 0);
  const Loaded l = parse(net(layers, edges));
  ASSERT_TRUE(l.report.ok());
  const RunOutput out = run_model(l.model, l.report, with_seed(11));
  ASSERT_EQ(out.results.size(), 3u);
  const Tensor& a = out.inputs[0].value;
  const Tensor& b = out.inputs[1].value;
  for (int64_t i = 0; i < 6; ++i) {
    const int x = at<int8_t>(a, i / 3);
    const int y = at<int8_t>(b, i % 3);
    const auto c = static_cast<int8_t>(static_cast<uint8_t>((x - y) * (x - y)));
    EXPECT_EQ(at<int8_t>(out.results[0].value, i), c);
    EXPECT_EQ(at<int8_t>(out.results[1].value, i), static_cast<int8_t>(static_cast<uint8_t>(c - y)));
  }
  EXPECT_EQ(result_file_names(l.model, out), (std::vector<std::string>{"c_out.npy", "d_out.npy", "a.npy"}));
}

TEST(IrRun, ResultFileNames) {
  EXPECT_EQ(sanitize_file_name("out"), "out");
  EXPECT_EQ(sanitize_file_name("a/b:c d"), "a_b_c_d");
  EXPECT_EQ(sanitize_file_name("../../etc/passwd"), "_.._.._etc_passwd");
  EXPECT_EQ(sanitize_file_name(".."), "_..");
  EXPECT_EQ(sanitize_file_name(""), "result");
  EXPECT_EQ(sanitize_file_name("é"), "__");
  EXPECT_EQ(sanitize_file_name(std::string(300, 'x')).size(), 200u);
  // Two Results that sanitize to the same name get their layer ids.
  const std::string layers = parameter(0, "a", "3") + result(4, "out:1", "3") + result(5, "out/1", "3");
  const Loaded l = parse(net(layers, edge(0, 0, 4, 0) + edge(0, 0, 5, 0)));
  const RunOutput out = run_model(l.model, l.report, with_seed(1));
  EXPECT_EQ(result_file_names(l.model, out), (std::vector<std::string>{"out_1_4.npy", "out_1_5.npy"}));
}

TEST(IrRun, FormatValues) {
  const Loaded l = load(example("subtract_pdpd.xml"));
  const RunOutput out = run_model(l.model, l.report, with_seed(3));
  const std::string text = format_values(out.results[0].value, 4);
  EXPECT_EQ(std::count(text.begin(), text.end(), ' '), 4) << text;
  EXPECT_EQ(text.substr(text.size() - 4), " ...");
}

TEST(IrRunErrors, UnsupportedLayerTypeIsNamed) {
  const std::string text =
      net(parameter(0, "a", "3") +
              "<layer id=\"1\" name=\"act\" type=\"Relu\" version=\"opset1\">\n<input>\n<port id=\"0\"><dim>3</dim></port>\n"
              "</input>\n<output>\n<port id=\"1\"><dim>3</dim></port>\n</output>\n</layer>\n" +
              result(2, "out", "3"),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  const Loaded l = parse(text);
  EXPECT_TRUE(l.report.ok());  // the shape check does not need to run it
  const std::string error = run_error(l, with_seed(1));
  const std::string line = std::to_string(line_of(text, "name=\"act\""));
  EXPECT_EQ(error, "m.xml:" + line + ": cannot run layer 1 \"act\" (Relu, line " + line +
                       "): layer type \"Relu\" is not supported (sqdiff ir runs Parameter, Const, SquaredDifference, "
                       "Subtract and Result layers)");
}

TEST(IrRunErrors, EveryUnsupportedLayerIsNamed) {
  // As in a LayerNorm converted from a framework: several layers of types sqdiff ir cannot run.
  const auto unary = [](int id, const char* name, const char* type) {
    return "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"" + type +
           "\" version=\"opset1\">\n<input>\n<port id=\"0\"><dim>3</dim></port>\n</input>\n<output>\n"
           "<port id=\"1\"><dim>3</dim></port>\n</output>\n</layer>\n";
  };
  const std::string text = net(parameter(0, "a", "3") + unary(1, "act", "Relu") + unary(2, "root", "Sqrt") +
                                   unary(3, "mean", "ReduceMean") + result(4, "out", "3"),
                               edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0) + edge(3, 1, 4, 0));
  const Loaded l = parse(text);
  EXPECT_TRUE(l.report.ok());
  const std::string error = run_error(l, with_seed(1));
  const std::string act = std::to_string(line_of(text, "name=\"act\""));
  const std::string root = std::to_string(line_of(text, "name=\"root\""));
  const std::string mean = std::to_string(line_of(text, "name=\"mean\""));
  EXPECT_EQ(error, "m.xml:" + act + ": cannot run layer 1 \"act\" (Relu, line " + act +
                       "): layer type \"Relu\" is not supported (sqdiff ir runs Parameter, Const, SquaredDifference, "
                       "Subtract and Result layers); also not supported: layer 2 \"root\" "
                       "(Sqrt, line " + root + "), layer 3 \"mean\" (ReduceMean, line " + mean + ")");
}

TEST(IrRunErrors, NeedsDataForEveryParameter) {
  const Loaded l = load(example("squared_difference_numpy.xml"));
  EXPECT_CONTAINS(run_error(l, RunOptions{}), "needs data: pass --input a=FILE.npy, or --random SEED");
  RunOptions unknown = with_seed(1);
  unknown.inputs = {{"x", "x.npy"}};
  EXPECT_CONTAINS(run_error(l, unknown), "the model has no Parameter called \"x\" (its Parameters: \"a\", \"b\")");
  RunOptions twice = with_seed(1);
  twice.inputs = {{"a", "1.npy"}, {"a", "2.npy"}};
  EXPECT_CONTAINS(run_error(l, twice), "--input a=...: given twice");
}

TEST(IrRun, ParametersSharingANameGetDifferentDataButCannotBeNamed) {
  const Loaded l = parse(net(parameter(0, "x", "4") + parameter(1, "x", "4") +
                                 op(2, "op", "Subtract", "", "4", "4", "4") + result(3, "out", "4"),
                             edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)));
  const RunOutput out = run_model(l.model, l.report, with_seed(1));
  EXPECT_NE(at<float>(out.inputs[0].value, 0), at<float>(out.inputs[1].value, 0));
  RunOptions named = with_seed(1);
  named.inputs = {{"x", "x.npy"}};
  EXPECT_CONTAINS(run_error(l, named), "are both called \"x\"; --input cannot tell them apart");
}

TEST(IrRunErrors, InputFileProblems) {
  const TempDir dir;
  const Loaded l = load(example("squared_difference_numpy.xml"));
  RunOptions missing = with_seed(1);
  missing.inputs = {{"a", dir.file("missing.npy")}};
  EXPECT_CONTAINS(run_error(l, missing), "missing.npy");

  const std::vector<double> f64(48, 1.0);
  write_npy(dir.file("f64.npy"), DType::f64, {8, 1, 6, 1}, f64.data());
  RunOptions wrong_type = with_seed(1);
  wrong_type.inputs = {{"a", dir.file("f64.npy")}};
  EXPECT_CONTAINS(run_error(l, wrong_type), "holds f64 but the Parameter is f32");

  const std::vector<float> f32(48, 1.0f);
  write_npy(dir.file("shape.npy"), DType::f32, {8, 6}, f32.data());
  RunOptions wrong_shape = with_seed(1);
  wrong_shape.inputs = {{"a", dir.file("shape.npy")}};
  EXPECT_CONTAINS(run_error(l, wrong_shape), "has shape [8,6], which does not fit the Parameter's shape [8,1,6,1]");

  // Intervals: b is 2..7 in dynamic_dims.xml; 8 does not fit.
  const Loaded d = load(example("dynamic_dims.xml"));
  const std::vector<uint16_t> h(24, 0);
  write_npy(dir.file("b8.npy"), DType::f16, {8, 3, 1}, h.data());
  RunOptions outside = with_seed(1);
  outside.inputs = {{"b", dir.file("b8.npy")}};
  EXPECT_CONTAINS(run_error(d, outside), "which does not fit the Parameter's shape [2..7,3,1]");
  write_npy(dir.file("b6.npy"), DType::f16, {6, 3, 1}, h.data());
  RunOptions inside = with_seed(1);
  inside.inputs = {{"b", dir.file("b6.npy")}};
  EXPECT_EQ(run_model(d.model, d.report, inside).results[0].value.shape, (Shape{6, 3, 4}));
}

TEST(IrRunErrors, RandomDataForDynamicSizesThatDoNotBroadcast) {
  // none: [?] with [3..5]: --random picks 1 and 3, which "none" refuses at run time.
  const Loaded l = parse(net(parameter(0, "a", "?") + parameter(1, "b", "3..5") +
                                 op(2, "op", "Subtract", "auto_broadcast=\"none\"", "-1", "-1", "3..5") +
                                 result(3, "out", "-1"),
                             edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)));
  ASSERT_TRUE(l.report.ok()) << (l.report.ops[0].problems.empty() ? "" : l.report.ops[0].problems[0]);
  const std::string error = run_error(l, with_seed(1));
  EXPECT_CONTAINS(error, "layer 2 \"op\"");
  EXPECT_CONTAINS(error, "--random picked sizes for dynamic dims");
  // A dynamic rank needs a file.
  const Loaded r = parse(net(parameter(0, "a", "...", "f32", "") + result(1, "out", ""), edge(0, 0, 1, 0)));
  EXPECT_CONTAINS(run_error(r, with_seed(1)), "has a dynamic rank: --random cannot pick one; pass --input a=FILE.npy");
}

TEST(IrRunErrors, RandomDataTooLarge) {
  const Loaded l = parse(net(parameter(0, "a", "100000,100000") + result(1, "out", "100000,100000"), edge(0, 0, 1, 0)));
  EXPECT_CONTAINS(run_error(l, with_seed(1)), "larger than the limit for random data");
  const Loaded o = parse(net(parameter(0, "a", "30000,1") + parameter(1, "b", "30000") +
                                 op(2, "op", "Subtract", "", "30000,1", "30000", "30000,30000") +
                                 result(3, "out", "30000,30000"),
                             edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)));
  RunOptions small = with_seed(1);
  small.max_tensor_bytes = 1 << 20;
  EXPECT_CONTAINS(run_error(o, small), "the output [30000,30000] of f32 is larger than the limit of 1048576 bytes");
}

TEST(IrRunErrors, ShapeCheckMustPass) {
  const Loaded l = load(example("broken/declared_shape_mismatch.xml"));
  EXPECT_CONTAINS(run_error(l, with_seed(1)), "the shape check failed; not running the model");
}

// A Const model written to a temp dir with a .bin of `bin_bytes` bytes.
struct ConstModel {
  TempDir dir;
  std::string xml;
  ConstModel(const std::string& type, const std::string& shape, int64_t offset, int64_t size, std::size_t bin_bytes,
             bool write_bin = true) {
    xml = dir.file("c.xml");
    write_text(xml, net(constant(0, "k", shape, type, offset, size) + result(1, "out", shape), edge(0, 0, 1, 0)));
    if (write_bin) write_text(dir.file("c.bin"), std::string(bin_bytes, '\x01'));
  }
};

TEST(IrRunErrors, ConstAndBinProblems) {
  {
    const ConstModel c("f32", "2,3", 0, 24, 24);
    const Loaded l = load(c.xml);
    const RunOutput out = run_model(l.model, l.report, RunOptions{});
    EXPECT_EQ(out.results[0].value.shape, (Shape{2, 3}));
    EXPECT_EQ(at<uint32_t>(out.results[0].value, 5), 0x01010101u);
  }
  {
    const ConstModel c("f32", "2,3", 4, 24, 24);  // one float past the end
    const Loaded l = load(c.xml);
    const std::string error = run_error(l, RunOptions{});
    EXPECT_CONTAINS(error, "offset 4 + size 24 = 28 bytes is beyond the end of");
    EXPECT_CONTAINS(error, "c.bin (24 bytes)");
    EXPECT_CONTAINS(error, "layer 0 \"k\" (Const, line");
  }
  {
    const ConstModel c("f32", "2,3", 0, 20, 24);
    EXPECT_CONTAINS(run_error(load(c.xml), RunOptions{}),
                    "size=20 does not match the shape [2,3] of f32 (24 bytes)");
  }
  {
    const ConstModel c("f32", "2,3", 0, 24, 0, false);
    EXPECT_CONTAINS(run_error(load(c.xml), RunOptions{}), "cannot open the weights file");
  }
  {
    const ConstModel c("f32", "2,3", 0, 24, 24);
    RunOptions other;
    other.bin_path = c.dir.file("other.bin");
    EXPECT_CONTAINS(run_error(load(c.xml), other), "other.bin: cannot open the weights file");
  }
  {
    const ConstModel c("f32", "2,3", 9223372036854775800, 24, 24);
    EXPECT_CONTAINS(run_error(load(c.xml), RunOptions{}), "= overflow bytes is beyond the end");
  }
  {
    const ConstModel c("boolean", "2,3", 0, 6, 6);
    EXPECT_CONTAINS(run_error(load(c.xml), RunOptions{}), "element type \"boolean\" is not one sqdiff computes");
  }
  {
    const ConstModel c("f32", "?,3", 0, 24, 24);
    EXPECT_CONTAINS(run_error(load(c.xml), RunOptions{}), "the shape [?,3] is not static");
  }
}

// A Const obeys the per-tensor limit like every tensor a run makes: checked
// against its size before anything is allocated or read.
TEST(IrRunErrors, ConstLargerThanTheTensorLimit) {
  const ConstModel c("f32", "2,3", 0, 24, 24);
  RunOptions small;
  small.max_tensor_bytes = 16;
  const std::string error = run_error(load(c.xml), small);
  EXPECT_CONTAINS(error, "layer 0 \"k\" (Const, line");
  EXPECT_CONTAINS(error, "its 24 bytes are more than the limit of 16 bytes per tensor");
  small.max_tensor_bytes = 24;
  const Loaded l = load(c.xml);
  EXPECT_EQ(run_model(l.model, l.report, small).results[0].value.shape, (Shape{2, 3}));
}

TEST(IrRunErrors, CheckWeightsWithoutRunning) {
  {
    const ConstModel c("f32", "2,3", 0, 24, 24);
    const Loaded l = load(c.xml);
    EXPECT_TRUE(check_weights(l.model, l.report, c.dir.file("c.bin")).empty());
    const auto missing = check_weights(l.model, l.report, c.dir.file("none.bin"));
    ASSERT_EQ(missing.size(), 1u);
    EXPECT_CONTAINS(missing[0], "none.bin: cannot open the weights file");
  }
  {
    const ConstModel c("f32", "2,3", 8, 24, 24);
    const Loaded l = load(c.xml);
    const auto problems = check_weights(l.model, l.report, c.dir.file("c.bin"));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_CONTAINS(problems[0], "offset 8 + size 24 = 32 bytes is beyond the end of");
  }
  {
    ConstModel c("f32", "2,3", 0, 24, 24);
    std::string text = read_text(c.xml);
    text.replace(text.find("offset=\"0\""), 10, "offset=\"x\"");
    write_text(c.xml, text);
    const Loaded l = load(c.xml);
    const auto problems = check_weights(l.model, l.report, c.dir.file("c.bin"));
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_CONTAINS(problems[0], "offset=\"x\" is not a non-negative integer");
    text.replace(text.find(" offset=\"x\""), 11, "");
    write_text(c.xml, text);
    const Loaded m = load(c.xml);
    EXPECT_CONTAINS(check_weights(m.model, m.report, c.dir.file("c.bin")).at(0), "a Const needs offset in <data>");
  }
}

TEST(IrRun, DefaultBinPath) {
  EXPECT_EQ(default_bin_path("model.xml"), "model.bin");
  EXPECT_EQ(default_bin_path("dir/m.v2.xml"), "dir/m.v2.bin");
  EXPECT_EQ(default_bin_path("noext"), "noext.bin");
}

}  // namespace
}  // namespace sqdiff::tools::ir
