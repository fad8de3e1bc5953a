#include "reduce/state_arguments.hpp"

#include <limits>
#include <span>

#include "reduce/reduce_call.hpp"
#include "shape/broadcast_rules.hpp"
#include "shape/dense_strides.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::detail {

bool check_combine_arguments(const char* op, uint64_t* into, const uint64_t* from, int64_t outputs,
                             std::size_t words) {
  if (outputs < 0) throw Error(std::string(op) + ": outputs " + std::to_string(outputs) + " is negative");
  if (outputs == 0) return false;
  if (into == nullptr || from == nullptr) {
    throw Error(std::string(op) + ": a states pointer is null, but there are " + std::to_string(outputs) + " outputs");
  }
  const auto count = static_cast<std::size_t>(outputs);
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(uint64_t) / words) {
    throw Error(std::string(op) + ": " + std::to_string(outputs) + " states do not fit in memory");
  }
  const auto a = reinterpret_cast<std::uintptr_t>(into);
  const auto b = reinterpret_cast<std::uintptr_t>(from);
  const std::size_t bytes = count * words * sizeof(uint64_t);
  if (a != b && a < b + bytes && b < a + bytes) {
    throw Error(std::string(op) + ": into and from overlap without being the same states");
  }
  return true;
}

int64_t check_finish_arguments(const char* op, DType input, const uint64_t* states, int64_t count, bool mean,
                               const TensorView& out) {
  check_dtype_is_valid(op, out.dtype);
  check_reduction_output_type(op, input, out.dtype, mean);
  const int64_t outputs = element_count(out.shape);
  if (outputs < 0) throw Error(std::string(op) + ": the output's element count overflows int64");
  if (!out.strides.empty() && !(dense_strides(out.shape) == std::span<const int64_t>(out.strides))) {
    throw Error(std::string(op) + ": the output must be dense (row-major)");
  }
  if (outputs > 0 && (out.data == nullptr || states == nullptr)) {
    throw Error(std::string(op) + ": a data pointer is null, but there are " + std::to_string(outputs) + " outputs");
  }
  if (count < 0) throw Error(std::string(op) + ": count " + std::to_string(count) + " is negative");
  return outputs;
}

}  // namespace sqdiff::detail
