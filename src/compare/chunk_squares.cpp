#include "compare/chunk_squares.hpp"

#include <cmath>
#include <cstring>

#include "kernels/reduce_table.hpp"
#include "reduce/bounded_state.hpp"
#include "reduce/bounded_sum.hpp"
#include "reduce/element_access.hpp"
#include "reduce/exact_state.hpp"
#include "sqdiff/bfloat16.hpp"
#include "sqdiff/float16.hpp"
#include "sqdiff/bounded_partial_sums.hpp"
#include "sqdiff/partial_sums.hpp"

namespace sqdiff::detail {
namespace {

ReduceOptions one_thread() {
  ReduceOptions options;
  options.threads = 1;  // the chunks are the parallelism
  return options;
}

template <typename T>
bool is_finite(T value) {
  if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
    return std::isfinite(static_cast<float>(value));
  } else {
    return std::isfinite(value);
  }
}

// Appends the chunk's pairs where both are finite to `a_out` and `b_out`
// (bytes of T); returns how many.
template <typename T>
int64_t compact_finite(const void* a, const Shape& a_strides, const void* b, const Shape& b_strides,
                       const Shape& shape, std::vector<unsigned char>& a_out, std::vector<unsigned char>& b_out) {
  int64_t total = 1;
  for (int64_t dim : shape) total *= dim;
  a_out.resize(static_cast<std::size_t>(total) * sizeof(T));
  b_out.resize(static_cast<std::size_t>(total) * sizeof(T));
  if (total == 0) return 0;
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* qa = reinterpret_cast<T*>(a_out.data());
  T* qb = reinterpret_cast<T*>(b_out.data());
  const std::size_t rank = shape.size();
  Shape index(rank, 0);
  int64_t kept = 0;
  for (int64_t k = 0; k < total; ++k) {
    int64_t oa = 0, ob = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      oa += index[d] * a_strides[d];
      ob += index[d] * b_strides[d];
    }
    if (is_finite(pa[oa]) && is_finite(pb[ob])) {
      std::memcpy(qa + kept, pa + oa, sizeof(T));
      std::memcpy(qb + kept, pb + ob, sizeof(T));
      ++kept;
    }
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return kept;
}

}  // namespace

ChunkSquares::ChunkSquares(DType dtype, bool exact)
    : dtype_(dtype),
      exact_(exact || !is_float_type(dtype)),
      empty_(exact_ ? detail::exact_state_words(dtype) : kBoundedPartialSumWords) {
  // The state of an empty sum comes from the library, not from zero words.
  const uint64_t none = 0;
  const ConstTensorView nothing{&none, dtype, {0}, {1}};
  if (exact_) {
    detail::compute_exact_states(nothing, nothing, empty_.data(), one_thread());
  } else {
    detail::compute_bounded_states(nothing, nothing, DType::f64, empty_.data(), one_thread());
  }
  scratch_ = empty_;
}

void ChunkSquares::add_chunk(std::vector<uint64_t>& total, const void* a, const Shape& a_strides, const void* b,
                             const Shape& b_strides, const Shape& shape) {
  const ConstTensorView va{a, dtype_, shape, a_strides};
  const ConstTensorView vb{b, dtype_, shape, b_strides};
  if (exact_) {
    detail::compute_exact_states(va, vb, scratch_.data(), one_thread());
  } else {
    detail::compute_bounded_states(va, vb, DType::f64, scratch_.data(), one_thread());
  }
  combine(total, scratch_);
}

void ChunkSquares::add_finite_pairs(std::vector<uint64_t>& total, const void* a, const Shape& a_strides,
                                    const void* b, const Shape& b_strides, const Shape& shape) {
  int64_t kept = 0;
  switch (dtype_) {
    case DType::f16: kept = compact_finite<float16>(a, a_strides, b, b_strides, shape, a_pairs_, b_pairs_); break;
    case DType::bf16: kept = compact_finite<bfloat16>(a, a_strides, b, b_strides, shape, a_pairs_, b_pairs_); break;
    case DType::f32: kept = compact_finite<float>(a, a_strides, b, b_strides, shape, a_pairs_, b_pairs_); break;
    case DType::f64: kept = compact_finite<double>(a, a_strides, b, b_strides, shape, a_pairs_, b_pairs_); break;
    default: add_chunk(total, a, a_strides, b, b_strides, shape); return;  // integers are always finite
  }
  add_chunk(total, a_pairs_.data(), {1}, b_pairs_.data(), {1}, {kept});
}

void ChunkSquares::add_fused_squares(std::vector<uint64_t>& total, const SquareSums& sums) {
  // Double precision: compare rounds its sums into f64.
  store_bounded_state(bounded_of(sums, true, kChain), dtype_, scratch_.data());
  combine(total, scratch_);
}

void ChunkSquares::combine(std::vector<uint64_t>& into, const std::vector<uint64_t>& from) const {
  if (exact_) {
    detail::combine_exact_states(dtype_, into.data(), from.data(), 1);
  } else {
    detail::combine_bounded_states(dtype_, into.data(), from.data(), 1);
  }
}

std::optional<double> ChunkSquares::finish(const std::vector<uint64_t>& total, int64_t count, bool mean) const {
  double result = 0;
  const TensorView out{&result, DType::f64, {}, {}};
  if (exact_) {
    detail::finish_exact_states(dtype_, total.data(), count, mean, out);
    return result;
  }
  uint8_t undecided = 0;
  detail::finish_bounded_states(dtype_, total.data(), count, mean, out, &undecided);
  if (undecided != 0) return std::nullopt;
  return result;
}

}  // namespace sqdiff::detail
