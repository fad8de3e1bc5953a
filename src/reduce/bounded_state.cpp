// Bounded partial states of sum_squared_difference (sqdiff/bounded_partial_sums.hpp):
// the fast paths' sums with their bounds, computed, combined and rounded apart;
// how a BoundedSum is stored in a state's words, and the checks that a state
// handed back to the library is one it wrote.
#include "reduce/bounded_state.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include <vector>

#include "reduce/element_access.hpp"
#include "reduce/reduce_call.hpp"
#include "reduce/reduce_execute.hpp"
#include "reduce/rounding.hpp"
#include "reduce/state_arguments.hpp"
#include "shape/broadcast_rules.hpp"
#include "shape/dense_strides.hpp"
#include "shape/shape_format.hpp"
#include "shape/validate.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/error.hpp"

namespace sqdiff::detail {
namespace {

// The tag word, the state's last:
//   bits 63-40  kMagic ("SQB")
//   bits 39-32  kVersion, the layout's version
//   bits 15-8   the input type (DType)
//   bits  7-0   BoundedSum's flags
constexpr uint64_t kMagic = 0x535142;
constexpr uint64_t kVersion = 1;

uint64_t tag_of(DType input, uint32_t flags) {
  return kMagic << 40 | kVersion << 32 | static_cast<uint64_t>(input) << 8 | flags;
}

[[noreturn]] void refuse_state(const char* op, const char* name, int64_t index, const std::string& what) {
  throw Error(std::string(op) + ": " + name + " " + std::to_string(index) + " " + what +
              "; a bounded state must come from bounded_partial_sum_squared_difference or "
              "combine_bounded_partial_sums of this library, for inputs of the type it is passed with");
}

// The largest high part or bound a state of `input` inputs can hold: at most
// 2^63 terms (an element count is an int64), each at most the square of twice
// the type's largest finite value (a larger term is infinite, and flagged),
// and twice that for the bound's own share. f64's sums beyond its range are
// flagged unbounded, so any finite value may come from f64 inputs.
double largest_bounded_value(DType input) {
  double largest_input = std::numeric_limits<double>::max();
  switch (input) {
    case DType::f16: largest_input = 65504.0; break;
    case DType::bf16: largest_input = std::ldexp(255.0, 120); break;  // 0x1.FEp127
    case DType::f32: largest_input = std::numeric_limits<float>::max(); break;
    default: return std::numeric_limits<double>::max();
  }
  const double term = (2 * largest_input) * (2 * largest_input);
  return std::ldexp(term, 64);
}

}  // namespace

// State `index` of `states`, once checked to be what this library's bounded
// functions write for inputs of type `input`: its tag (mark, version, input
// type, known flags), and values a sum of squares can have (finite, never
// negative; all zero when a flag replaces them).
BoundedSum load_bounded_state(const char* op, const char* name, DType input, const uint64_t* states, int64_t index) {
  const uint64_t* words = states + static_cast<std::size_t>(index) * kBoundedPartialSumWords;
  const uint64_t tag = words[3];
  if (tag >> 40 != kMagic) {
    refuse_state(op, name, index, "is not a bounded state: its last word, " + detail::hex_word(tag) + ", lacks the state's mark");
  }
  if ((tag >> 32 & 0xff) != kVersion) {
    refuse_state(op, name, index,
                 "is a bounded state of layout version " + std::to_string(tag >> 32 & 0xff) +
                     ", which this library does not read (it writes version " + std::to_string(kVersion) + ")");
  }
  const uint64_t type = tag >> 8 & 0xff;
  if (type != static_cast<uint64_t>(input)) {
    const bool known = type < static_cast<uint64_t>(kDTypeCount);
    refuse_state(op, name, index,
                 "is a state of " +
                     (known ? std::string(dtype_name(static_cast<DType>(type))) : "type " + std::to_string(type)) +
                     " inputs, not of " + std::string(dtype_name(input)) + " inputs");
  }
  if ((tag & 0xffff0000) != 0 || (tag & 0xff & ~uint64_t{BoundedSum::kKnownFlags}) != 0) {
    refuse_state(op, name, index, "has unknown bits in its tag word, " + detail::hex_word(tag));
  }
  BoundedSum sum;
  sum.flags = static_cast<uint32_t>(tag & 0xff);
  sum.value = {std::bit_cast<double>(words[0]), std::bit_cast<double>(words[1]), std::bit_cast<double>(words[2])};
  if (sum.flags != 0) {
    if (words[0] != 0 || words[1] != 0 || words[2] != 0) {
      refuse_state(op, name, index, "is flagged but holds a sum");
    }
    return sum;
  }
  const auto& v = sum.value;
  if (!std::isfinite(v.hi) || !std::isfinite(v.lo) || !std::isfinite(v.error) || v.hi < 0 || v.error < 0 ||
      std::signbit(v.hi) || (v.hi == 0 && v.lo != 0)) {
    refuse_state(op, name, index, "holds values that are not a bounded sum of squares");
  }
  // A double-double: the low part at most half an ulp of the high part.
  if (std::fabs(v.lo) > (std::nextafter(v.hi, std::numeric_limits<double>::infinity()) - v.hi) / 2) {
    refuse_state(op, name, index, "holds a low part beyond half an ulp of its high part (not a double-double)");
  }
  const double largest = largest_bounded_value(input);
  if (v.hi > largest || v.error > largest) {
    char text[64];
    std::snprintf(text, sizeof text, "%.6g", largest);
    refuse_state(op, name, index,
                 "holds a sum or bound larger than any " + std::string(dtype_name(input)) + " inputs can give (at most " +
                     text + ")");
  }
  return sum;
}

void store_bounded_state(const BoundedSum& sum, DType input, uint64_t* to) {
  to[0] = std::bit_cast<uint64_t>(sum.value.hi);
  to[1] = std::bit_cast<uint64_t>(sum.value.lo);
  to[2] = std::bit_cast<uint64_t>(sum.value.error);
  to[3] = tag_of(input, sum.flags);
}

}  // namespace sqdiff::detail

namespace sqdiff {
namespace {

using detail::BoundedSum;

void check_float_input(const char* op, DType input) {
  detail::check_dtype_is_valid(op, input);
  if (!detail::is_float_type(input)) {
    throw Error(std::string(op) + ": bounded states are for float inputs, not " + std::string(dtype_name(input)) +
                " (sums of integer squares are exact: use partial_sum_squared_difference's states)");
  }
}

}  // namespace

void detail::compute_bounded_states(const ConstTensorView& a, const ConstTensorView& b, DType out, uint64_t* states,
                                    const ReduceOptions& options) {
  constexpr const char* op = "bounded_partial_sum_squared_difference";
  check_float_input(op, a.dtype);
  detail::check_dtype_is_valid(op, out);
  detail::check_reduction_output_type(op, a.dtype, out, false);
  detail::ReduceCall call = detail::validate_partial_reduction(op, a, b, states, kBoundedPartialSumWords, options);
  call.output = out;
  const std::vector<BoundedSum> sums = detail::execute_bounded_partial_reduction(call);
  for (std::size_t i = 0; i < sums.size(); ++i) {
    detail::store_bounded_state(sums[i], a.dtype, states + i * kBoundedPartialSumWords);
  }
}

void detail::combine_bounded_states(DType input, uint64_t* into, const uint64_t* from, int64_t outputs) {
  constexpr const char* op = "combine_bounded_partial_sums";
  check_float_input(op, input);
  if (!detail::check_combine_arguments(op, into, from, outputs, kBoundedPartialSumWords)) return;
  for (int64_t i = 0; i < outputs; ++i) {
    detail::load_bounded_state(op, "into's state", input, into, i);
    detail::load_bounded_state(op, "from's state", input, from, i);
  }
  for (int64_t i = 0; i < outputs; ++i) {
    const BoundedSum sum = detail::add_bounded(detail::load_bounded_state(op, "into's state", input, into, i),
                                               detail::load_bounded_state(op, "from's state", input, from, i));
    detail::store_bounded_state(sum, input, into + static_cast<std::size_t>(i) * kBoundedPartialSumWords);
  }
}

int64_t detail::finish_bounded_states(DType input, const uint64_t* states, int64_t count, bool mean,
                                      const TensorView& out, uint8_t* undecided) {
  constexpr const char* op = "finish_bounded_partial_sums";
  check_float_input(op, input);
  const int64_t outputs = detail::check_finish_arguments(op, input, states, count, mean, out);
  if (outputs > 0 && undecided == nullptr) {
    throw Error(std::string(op) + ": undecided is null, but there are " + std::to_string(outputs) + " outputs");
  }
  std::vector<BoundedSum> sums(static_cast<std::size_t>(outputs));
  for (int64_t i = 0; i < outputs; ++i) sums[static_cast<std::size_t>(i)] = detail::load_bounded_state(op, "state", input, states, i);
  auto* to = static_cast<std::byte*>(out.data);
  int64_t left = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    const std::optional<uint64_t> bits =
        detail::round_bounded(sums[static_cast<std::size_t>(i)], mean, static_cast<uint64_t>(count), out.dtype);
    undecided[i] = bits ? 0 : 1;
    if (bits) {
      detail::store_bits(to + i * static_cast<int64_t>(dtype_size(out.dtype)), out.dtype, *bits);
    } else {
      ++left;
    }
  }
  return left;
}

}  // namespace sqdiff
