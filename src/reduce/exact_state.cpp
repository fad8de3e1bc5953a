// Exact partial states of sum_squared_difference (sqdiff/partial_sums.hpp):
// computed, combined and rounded apart, for callers that split one reduction
// into pieces; every state handed back is checked before it is read.
#include "reduce/exact_state.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "reduce/element_access.hpp"
#include "reduce/exact_sum.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"
#include "reduce/rounding.hpp"
#include "reduce/state_arguments.hpp"
#include "shape/broadcast_rules.hpp"
#include "shape/shape_format.hpp"
#include "shape/dense_strides.hpp"
#include "shape/validate.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff {

std::size_t detail::exact_state_words(DType input) {
  detail::check_dtype_is_valid("partial_sum_words", input);
  return static_cast<std::size_t>(detail::exact_format(input).limbs) + 1;
}

void detail::compute_exact_states(const ConstTensorView& a, const ConstTensorView& b, uint64_t* partials,
                                  const ReduceOptions& options) {
  constexpr const char* op = "partial_sum_squared_difference";
  detail::check_dtype_is_valid(op, a.dtype);
  const detail::ReduceCall call =
      detail::validate_partial_reduction(op, a, b, partials, detail::exact_state_words(a.dtype), options);
  detail::execute_partial_reduction(call);
}

namespace {

// The input types whose states have `format` ("bf16", "integer"), for
// messages about a state of another type.
std::string types_of_format(const detail::ExactFormat& format) {
  for (int t = 0; t < kDTypeCount; ++t) {
    const auto dtype = static_cast<DType>(t);
    if (detail::exact_format(dtype) == format) {
      return detail::is_float_type(dtype) ? std::string(dtype_name(dtype)) : "integer";
    }
  }
  return "no";
}

std::string input_text(DType input) {
  return detail::is_float_type(input) ? std::string(dtype_name(input)) : "integer";
}

// The Error for a state that is not one: `name` and `index` say which (its
// text is built only here, off the path of good states).
[[noreturn]] void refuse_state(const char* op, const char* name, int64_t index, const std::string& what) {
  throw Error(std::string(op) + ": " + name + " " + std::to_string(index) + " " + what +
              "; a state must come from partial_sum_squared_difference or combine_partial_sums of this library, "
              "for inputs of the type it is passed with");
}

// State `index` of `states` (named `name` in messages) as an ExactSum, once
// it has been checked to be what partial_sum_squared_difference and
// combine_partial_sums write for inputs of type `input`: the tag word's
// magic, layout version and format, flags a sum of squares can have (never
// -inf or an unknown bit; NaN and +inf only from float inputs; terms noted
// whenever the sum is not zero, and a square is never -0), and a finite part
// that is not negative. A state from elsewhere (another library version,
// another input type, zeroed or garbage memory) is an Error, never a sum.
detail::ExactSum checked_state(const char* op, const char* name, DType input, const uint64_t* states, int64_t index) {
  using detail::ExactSum;
  const detail::ExactFormat format = detail::exact_format(input);
  const uint64_t* words = states + static_cast<std::size_t>(index) * (static_cast<std::size_t>(format.limbs) + 1);
  const uint64_t tag_word = words[format.limbs];
  const ExactSum::StateTag tag = ExactSum::read_tag(tag_word);
  if (tag.magic != ExactSum::kStateMagic) {
    refuse_state(op, name, index,
                 "is not a partial state: its last word, " + detail::hex_word(tag_word) + ", lacks the state's mark");
  }
  if (tag.version != ExactSum::kStateVersion) {
    refuse_state(op, name, index,
                 "is a state of layout version " + std::to_string(tag.version) +
                     ", which this library does not read (it writes version " +
                     std::to_string(ExactSum::kStateVersion) + ")");
  }
  if (!(tag.format == format)) {
    refuse_state(op, name, index,
                 "is a state of " + types_of_format(tag.format) + " inputs (" + std::to_string(tag.format.limbs) +
                     " limbs from 2^" + std::to_string(tag.format.lsb_exponent) + "), not of " + input_text(input) +
                     " inputs");
  }
  if ((tag.flags & ~ExactSum::kKnownFlags) != 0) {
    refuse_state(op, name, index, "has unknown flag bits (its tag word is " + detail::hex_word(tag_word) + ")");
  }
  if ((tag.flags & ExactSum::kNegativeInfinityFlag) != 0) {
    refuse_state(op, name, index, "is flagged -inf, which a sum of squares never is");
  }
  if (!detail::is_float_type(input) && (tag.flags & (ExactSum::kNanFlag | ExactSum::kPositiveInfinityFlag)) != 0) {
    refuse_state(op, name, index,
                 std::string("is flagged ") + ((tag.flags & ExactSum::kNanFlag) != 0 ? "NaN" : "+inf") +
                     ", which a sum of integer squares never is");
  }
  // The flags say whether a term was added, and whether one was not -0: for
  // squares, never -0, the two go together.
  const bool any_term = (tag.flags & ExactSum::kAnyTermFlag) != 0;
  if (any_term != ((tag.flags & ExactSum::kNonNegativeZeroTermFlag) != 0)) {
    refuse_state(op, name, index, "has inconsistent flags for its terms (a square is never -0)");
  }
  const ExactSum sum = ExactSum::load(format, words);
  if (sum.is_negative()) {
    refuse_state(op, name, index, "holds a negative sum (its top word is " + detail::hex_word(sum.limbs().back()) + ")");
  }
  if (!sum.is_zero() && !any_term) refuse_state(op, name, index, "holds a sum but is flagged as having no terms");
  return sum;
}

// The largest power of two a state's finite part stays below: its top bit is
// the sign of two's complement, which a sum of squares never sets.
std::string capacity_text(DType input) {
  const detail::ExactFormat format = detail::exact_format(input);
  return "2^" + std::to_string(64 * format.limbs - 1 + format.lsb_exponent);
}

}  // namespace

void detail::combine_exact_states(DType input, uint64_t* into, const uint64_t* from, int64_t outputs) {
  constexpr const char* op = "combine_partial_sums";
  detail::check_dtype_is_valid(op, input);
  const std::size_t words = detail::exact_state_words(input);
  if (!detail::check_combine_arguments(op, into, from, outputs, words)) return;
  // Two passes: every state is checked, and every sum checked against the
  // format's capacity, before the first word of `into` changes.
  const auto combined = [&](int64_t i) {
    detail::ExactSum sum = checked_state(op, "into's state", input, into, i);
    sum.add(checked_state(op, "from's state", input, from, i));
    return sum;
  };
  for (int64_t i = 0; i < outputs; ++i) {
    // Both parts are checked non-negative, below the sign bit's weight, so
    // their sum cannot wrap past the top limb: one that reaches the sign bit
    // has overflowed.
    if (combined(i).is_negative()) {
      throw Error(std::string(op) + ": the sum of state " + std::to_string(i) + " of into and from reaches " +
                  capacity_text(input) + ", beyond what a state of " + input_text(input) +
                  " inputs holds (more than 2^63 of the type's largest squares); nothing was written");
    }
  }
  for (int64_t i = 0; i < outputs; ++i) combined(i).store(into + static_cast<std::size_t>(i) * words);
}

void detail::finish_exact_states(DType input, const uint64_t* partials, int64_t count, bool mean, const TensorView& out) {
  constexpr const char* op = "finish_partial_sums";
  detail::check_dtype_is_valid(op, input);
  const int64_t outputs = detail::check_finish_arguments(op, input, partials, count, mean, out);
  std::vector<uint64_t> results(static_cast<std::size_t>(outputs));
  for (int64_t i = 0; i < outputs; ++i) {
    const detail::ExactSum sum = checked_state(op, "state", input, partials, i);
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
