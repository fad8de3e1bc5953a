// Fuzzes `sqdiff ir`'s pipeline (tools/ir/): the XML parser and graph
// validation (ir_model), shape and type inference (ir_shapes), and running the
// graph (ir_run) with random Parameters and Const weights.
//
// Input: the model's XML text, optionally followed by a NUL byte and the
// .bin weights' bytes (XML holds no NUL). The weights go to a memfd, reused for
// every input and opened as /proc/self/fd/N. Tensors are capped at 64 KiB so
// that one input runs in milliseconds. Checks:
// - each stage returns or throws sqdiff::Error (IrError included), nothing else;
// - a model that passes the shape check and runs gives one value per Result
//   and per Parameter, each of a shape that the partial shape the check
//   inferred for its port allows (dynamic dims of random Parameters get a
//   size), whose every element can be read (ASan);
// - a Result fed by a SquaredDifference or Subtract layer whose inputs are both
//   Parameters holds what the scalar oracle of tests/oracle.hpp computes from
//   those Parameters' values under the layer's broadcast mode;
// - the file names chosen for Results and random inputs are distinct.

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "memory_file.hpp"
#include "oracle.hpp"
#include "ir/ir_model.hpp"
#include "ir/ir_outputs.hpp"
#include "ir/ir_run.hpp"
#include "ir/ir_shapes.hpp"
#include "partial_shape.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"

using namespace sqdiff::tools::ir;
using sqdiff_fuzz::check;
using sqdiff_fuzz::fail;

namespace {

constexpr int64_t kMaxTensorBytes = int64_t{64} << 10;

const std::string& weights_path(const uint8_t* data, std::size_t size) {
  static const sqdiff_fuzz::MemoryFile weights("fuzz_ir_weights");
  weights.write(data, size);
  return weights.path();
}

std::string shape_text(const sqdiff::Shape& shape) {
  return sqdiff::tools::format_partial_shape(sqdiff::tools::PartialShape::from_shape(shape));
}

// The tensor has `expected`'s shape and every element is readable.
void check_tensor(const Tensor& value, const sqdiff::tools::PartialShape& expected, const std::string& what) {
  bool inside = expected.dynamic_rank || expected.dims.size() == value.shape.size();
  for (std::size_t i = 0; inside && !expected.dynamic_rank && i < value.shape.size(); ++i) {
    inside = expected.dims[i].contains(value.shape[i]);
  }
  check(inside, what + ": shape " + shape_text(value.shape) + ", outside what the check inferred, " +
                    sqdiff::tools::format_partial_shape(expected));
  const int64_t count = value.element_count();
  if (count == 0) return;
  check(value.data != nullptr, what + ": null data");
  const std::size_t item = sqdiff::dtype_size(value.dtype);
  check(count * static_cast<int64_t>(item) <= kMaxTensorBytes, what + ": larger than the tensor limit");
  check(value.strides.empty(), what + ": not dense");
  volatile unsigned char sink = 0;
  const auto* bytes = static_cast<const unsigned char*>(value.data);
  for (int64_t i = 0; i < count * static_cast<int64_t>(item); i += static_cast<int64_t>(item)) sink = sink ^ bytes[i];
  sink = sink ^ bytes[count * static_cast<int64_t>(item) - 1];
  (void)format_values(value, 4);
}

void check_distinct(const std::vector<std::string>& names, const std::string& what) {
  const std::set<std::string> unique(names.begin(), names.end());
  check(unique.size() == names.size(), what + ": two share a file name");
  for (const std::string& name : names) {
    check(!name.empty() && name.find('/') == std::string::npos && name.size() <= 255, what + ": bad file name " + name);
  }
}

// The oracle's result for `op` from the run's Parameter values, when both of
// its inputs are Parameters; compared with the Result it feeds.
void check_against_oracle(const Model& model, const RunOutput& output, std::size_t op, const Tensor& result,
                          const std::string& what) {
  const Layer& layer = model.layers[op];
  if (!is_elementwise_op(layer) || model.sources[op].size() != 2) return;
  const Tensor* inputs[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    for (const InputValue& in : output.inputs) {
      if (in.layer == model.sources[op][static_cast<std::size_t>(k)].layer) inputs[k] = &in.value;
    }
    if (inputs[k] == nullptr) return;  // a Const or another op
  }
  const sqdiff::Broadcast mode = broadcast_of(model, layer);
  namespace oracle = sqdiff_test::oracle;
  const auto expected = oracle::compute(
      layer.type == "Subtract" ? oracle::Op::subtract : oracle::Op::squared_difference,
      {inputs[0]->data, inputs[0]->dtype, inputs[0]->shape, inputs[0]->strides},
      {inputs[1]->data, inputs[1]->dtype, inputs[1]->shape, inputs[1]->strides}, mode.kind, mode.axis);
  check(expected.has_value(), what + ": ran, but the oracle says the inputs do not broadcast");
  check(expected->shape == result.shape && expected->dtype == result.dtype, what + ": shape or type differs from the oracle's");
  const std::size_t item = sqdiff::dtype_size(result.dtype);
  for (std::size_t i = 0; i < expected->bits.size(); ++i) {
    const uint64_t actual = oracle::load_bits(static_cast<const unsigned char*>(result.data) + i * item, result.dtype);
    check(oracle::bits_match(result.dtype, expected->bits[i], actual),
          what + ": element " + std::to_string(i) + " is " + oracle::hex_bits(result.dtype, actual) + ", the oracle says " +
              oracle::hex_bits(result.dtype, expected->bits[i]));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view xml = input.substr(0, nul);
  const std::string_view bin = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);

  Model model;
  try {
    model = parse_model(xml, "fuzz.xml");
  } catch (const sqdiff::Error&) {
    return 0;
  }
  check(model.topological_order.size() == model.layers.size(), "topological order misses layers");
  check(model.sources.size() == model.layers.size(), "sources per layer");

  const ShapeReport report = check_shapes(model);
  for (const OpCheck& op : report.ops) (void)format_op_check(model, op);
  if (!report.ok()) return 0;

  const std::string& bin_path = weights_path(reinterpret_cast<const uint8_t*>(bin.data()), bin.size());
  (void)check_weights(model, report, bin_path);

  RunOptions options;
  options.seed = 1;
  options.bin_path = bin_path;
  options.threads = 1;
  options.max_tensor_bytes = kMaxTensorBytes;
  RunOutput output;
  try {
    check_runnable(model);
    output = run_model(model, report, options);
  } catch (const sqdiff::Error&) {
    return 0;
  }

  std::size_t parameters = 0, results = 0;
  for (const Layer& layer : model.layers) {
    parameters += layer.type == "Parameter";
    results += layer.type == "Result";
  }
  check(output.inputs.size() == parameters, "one input value per Parameter");
  check(output.results.size() == results, "one value per Result");
  for (const InputValue& in : output.inputs) {
    check(in.random, "a Parameter read from a file that was never given");
    check_tensor(in.value, report.shapes[in.layer][0], model.describe(model.layers[in.layer]));
  }
  for (const ResultValue& out : output.results) {
    const Source& source = model.sources[out.layer].at(0);
    check_tensor(out.value, report.shapes[source.layer][source.output], model.describe(model.layers[out.layer]));
    check_against_oracle(model, output, source.layer, out.value, model.describe(model.layers[out.layer]));
  }
  check_distinct(result_file_names(model, output), "Results");
  check_distinct(random_input_file_names(model, output), "random inputs");
  return 0;
}
