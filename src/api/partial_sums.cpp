// Exact partial states of sum_squared_difference: computed, combined and
// rounded apart, for callers that split one reduction into pieces.
#include "sqdiff/partial_sums.hpp"

#include <span>
#include <string>
#include <vector>

#include "reduce/element_access.hpp"
#include "reduce/exact_sum.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"
#include "reduce/rounding.hpp"
#include "shape/broadcast_rules.hpp"
#include "shape/dense_strides.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff {

std::size_t partial_sum_words(DType input) {
  detail::check_dtype_is_valid("partial_sum_words", input);
  return static_cast<std::size_t>(detail::exact_format(input).limbs) + 1;
}

void partial_sum_squared_difference(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                                    const ReduceOptions& options) {
  constexpr const char* op = "partial_sum_squared_difference";
  detail::check_dtype_is_valid(op, a.dtype);
  const detail::ReduceCall call =
      detail::validate_partial_reduction(op, a, b, partials, partial_sum_words(a.dtype), options);
  detail::execute_partial_reduction(call);
}

void combine_partial_sums(DType input, uint64_t* into, const uint64_t* from, int64_t outputs) {
  detail::check_dtype_is_valid("combine_partial_sums", input);
  const detail::ExactFormat format = detail::exact_format(input);
  const std::size_t words = partial_sum_words(input);
  for (int64_t i = 0; i < outputs; ++i) {
    const auto at = static_cast<std::size_t>(i) * words;
    detail::ExactSum sum = detail::ExactSum::load(format, into + at);
    sum.add(detail::ExactSum::load(format, from + at));
    sum.store(into + at);
  }
}

void finish_partial_sums(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out) {
  constexpr const char* op = "finish_partial_sums";
  detail::check_dtype_is_valid(op, input);
  detail::check_dtype_is_valid(op, out.dtype);
  detail::check_reduction_output_type(op, input, out.dtype, mean);
  const int64_t outputs = detail::element_count(out.shape);
  if (outputs < 0) throw Error(std::string(op) + ": the output's element count overflows int64");
  if (!out.strides.empty() && !(detail::dense_strides(out.shape) == std::span<const int64_t>(out.strides))) {
    throw Error(std::string(op) + ": the output must be dense (row-major)");
  }
  if (outputs > 0 && (out.data == nullptr || partials == nullptr)) {
    throw Error(std::string(op) + ": a data pointer is null, but there are " + std::to_string(outputs) + " outputs");
  }
  if (count < 0) throw Error(std::string(op) + ": count " + std::to_string(count) + " is negative");
  const detail::ExactFormat format = detail::exact_format(input);
  const std::size_t words = partial_sum_words(input);
  std::vector<uint64_t> results(static_cast<std::size_t>(outputs));
  for (int64_t i = 0; i < outputs; ++i) {
    const detail::ExactSum sum = detail::ExactSum::load(format, partials + static_cast<std::size_t>(i) * words);
    const auto bits = detail::round_exact(sum, mean, static_cast<uint64_t>(count), out.dtype);
    if (!bits) {
      throw Error(std::string(op) + ": the sum of squares at output element " + std::to_string(i) +
                  " does not fit " + std::string(dtype_name(out.dtype)) + "; nothing was written");
    }
    results[static_cast<std::size_t>(i)] = *bits;
  }
  auto* to = static_cast<std::byte*>(out.data);
  for (int64_t i = 0; i < outputs; ++i) {
    detail::store_bits(to + i * static_cast<int64_t>(dtype_size(out.dtype)), out.dtype, results[static_cast<std::size_t>(i)]);
  }
}

}  // namespace sqdiff
