// The table of operator kinds `sqdiff tflite` runs (operator_kind.hpp).
#include <algorithm>
#include <array>
#include <new>

#include "shape_count.hpp"
#include "tflite/builtin_operators.hpp"
#include "tflite/operator_kind.hpp"
#include "tflite/ops/kinds.hpp"
#include "tflite/tensor_storage.hpp"

namespace sqdiff::tools::tflite {
namespace {

// Every kind once; the order is the names' in messages (alphabetical).
const std::array<const OperatorKind*, 13> kKinds = {
    &ops::kDequantize, &ops::kMaximum,  &ops::kMean,   &ops::kMinimum, &ops::kMul,
    &ops::kQuantize,   &ops::kRelu,     &ops::kRelu6,  &ops::kRelu0To1, &ops::kReluN1To1,
    &ops::kSquare,     &ops::kSquaredDifference, &ops::kSub};

}  // namespace

const OperatorKind* find_operator_kind(int32_t builtin_code) {
  const auto it = std::find_if(kKinds.begin(), kKinds.end(),
                               [builtin_code](const OperatorKind* kind) { return kind->code == builtin_code; });
  return it == kKinds.end() ? nullptr : *it;
}

std::string runnable_operator_names() {
  std::string names;
  for (const OperatorKind* kind : kKinds) {
    names += (names.empty() ? "" : ", ") + std::string(builtin_operator_name(kind->code));
  }
  return names;
}

std::string OperatorCall::where() const { return model.path + ": " + op.describe() + ": "; }

OperatorOutput OperatorCall::allocate_output() const {
  const TensorInfo& info = output_info();
  const sqdiff::DType dtype = *info.dtype;
  const std::optional<int64_t> bytes = byte_count(info.shape, sqdiff::dtype_size(dtype));
  if (!bytes || *bytes > limits.max_tensor_bytes) {
    throw TfliteError(where() + "the output " + shape_text(info.shape) + " is larger than the limit of " +
                      std::to_string(limits.max_tensor_bytes) + " bytes");
  }
  std::shared_ptr<void> storage;
  try {
    storage = allocate_tensor_storage(static_cast<std::size_t>(*bytes));
  } catch (const std::bad_alloc&) {
    throw TfliteError(where() + "out of memory for " + std::to_string(*bytes) + " bytes");
  }
  OperatorOutput output;
  output.data = storage.get();
  output.value.dtype = dtype;
  output.value.shape = info.shape;
  output.value.data = storage.get();
  output.value.owner = std::move(storage);
  return output;
}

}  // namespace sqdiff::tools::tflite
