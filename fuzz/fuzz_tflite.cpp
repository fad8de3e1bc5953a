// Fuzzes `sqdiff tflite`'s pipeline (tools/tflite/): the FlatBuffers Verifier
// and the reader (tflite_model), the operators' and the graph's check, and the
// run with random inputs (tflite_run).
//
// Input: the bytes of a .tflite file. Tensors are capped at 64 KiB so that one
// input runs in milliseconds. Checks:
// - each stage returns or throws sqdiff::Error (TfliteError included), nothing else;
// - a model the check passes and that runs gives one value per subgraph input
//   and output, of the declared shape and type, whose every element can be
//   read (ASan); its output file names are distinct and safe;
// - the check's summary lines format without touching freed or foreign memory.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "ir/ir_outputs.hpp"
#include "sqdiff/dtype.hpp"
#include "sqdiff/error.hpp"
#include "tflite/tflite_model.hpp"
#include "tflite/tflite_run.hpp"

using namespace sqdiff::tools::tflite;
using sqdiff_fuzz::check;

namespace {

constexpr int64_t kMaxTensorBytes = int64_t{64} << 10;

void check_value(const Model& model, int32_t tensor, const sqdiff::tools::ir::Tensor& value, const std::string& what) {
  const TensorInfo& info = model.tensors[static_cast<std::size_t>(tensor)];
  check(value.shape == info.shape, what + ": not the declared shape");
  check(info.dtype.has_value() && value.dtype == *info.dtype, what + ": not the declared type");
  const int64_t count = value.element_count();
  check(count >= 0, what + ": bad element count");
  if (count == 0) return;
  check(value.data != nullptr, what + ": null data");
  const auto item = static_cast<int64_t>(sqdiff::dtype_size(value.dtype));
  check(count * item <= kMaxTensorBytes, what + ": larger than the tensor limit");
  if (value.strides.empty()) {
    volatile unsigned char sink = 0;
    const auto* bytes = static_cast<const unsigned char*>(value.data);
    for (int64_t i = 0; i < count * item; i += item) sink = sink ^ bytes[i];
    sink = sink ^ bytes[count * item - 1];
  }
  (void)sqdiff::tools::ir::format_values(value, 4);
}

void check_names(const std::vector<std::string>& names, const std::string& what) {
  const std::set<std::string> unique(names.begin(), names.end());
  check(unique.size() == names.size(), what + ": two share a file name");
  for (const std::string& name : names) {
    check(!name.empty() && name.find('/') == std::string::npos && name != "." && name != ".." && name.size() <= 255,
          what + ": bad file name " + name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  ReadLimits limits;
  limits.max_copied_bytes = int64_t{1} << 20;
  limits.max_tensor_bytes = kMaxTensorBytes;
  Model model;
  try {
    model = parse_model(data, size, "fuzz.tflite", limits);
  } catch (const sqdiff::Error&) {
    return 0;
  }
  for (const TensorInfo& t : model.tensors) check(t.shape.size() <= kMaxRank, "rank above the limit");
  for (const OperatorInfo& op : model.operators) (void)op.describe();

  const CheckReport report = check_model(model);
  check(report.ops.size() == model.operators.size(), "one check per operator");
  if (report.graph_problems.empty()) {
    check(report.order.size() == model.operators.size(), "an order without graph problems must hold every operator");
  }
  (void)unsupported_messages(model, report);
  if (!report.runnable()) return 0;

  RunOptions options;
  options.seed = 1;
  options.threads = 1;
  options.max_tensor_bytes = kMaxTensorBytes;
  RunOutput output;
  try {
    output = run_model(model, report, options);
  } catch (const sqdiff::Error&) {
    return 0;
  }
  // A tensor listed twice is one value (one draw).
  check(output.inputs.size() == std::set<int32_t>(model.inputs.begin(), model.inputs.end()).size(),
        "one value per distinct subgraph input");
  check(output.outputs.size() == std::set<int32_t>(model.outputs.begin(), model.outputs.end()).size(),
        "one value per distinct subgraph output");
  for (const InputValue& in : output.inputs) check_value(model, in.tensor, in.value, "input");
  for (const OutputValue& out : output.outputs) check_value(model, out.tensor, out.value, "output");
  check_names(output_file_names(model, output), "outputs");
  check_names(random_input_file_names(model, output), "random inputs");
  return 0;
}
