#include "reduce/integer_squares.hpp"

#include <algorithm>
#include <vector>

#include "reduce/int128.hpp"

namespace sqdiff::detail {
namespace {

// 192 bits, unsigned: squares of 64-bit differences added without carries lost.
struct Sum192 {
  uint128_t low = 0;
  uint64_t high = 0;

  void add(uint128_t square) {
    low += square;
    if (low < square) ++high;
  }
};

template <typename T>
uint128_t square_of_difference(T a, T b) {
  const int128_t d = static_cast<int128_t>(a) - static_cast<int128_t>(b);
  const uint128_t magnitude = d < 0 ? static_cast<uint128_t>(-d) : static_cast<uint128_t>(d);
  return magnitude * magnitude;
}

// One row of n elements with fixed strides: narrow types sum in 64 bits (a
// square below 2^32, 2^31 of them at most per run) before widening.
template <typename T>
void add_row(const T* a, int64_t sa, const T* b, int64_t sb, int64_t n, Sum192& sum) {
  if constexpr (sizeof(T) <= 2) {
    for (int64_t start = 0; start < n; start += int64_t{1} << 31) {
      const int64_t end = std::min(n, start + (int64_t{1} << 31));
      uint64_t run = 0;
      for (int64_t i = start; i < end; ++i) {
        const int64_t d = static_cast<int64_t>(a[i * sa]) - static_cast<int64_t>(b[i * sb]);
        run += static_cast<uint64_t>(d * d);
      }
      sum.add(run);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) sum.add(square_of_difference(a[i * sa], b[i * sb]));
  }
}

template <typename T>
ExactSum sum_of(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                const std::array<int64_t, kMaxOperands>& base) {
  // No terms (a 0 among the summed dims): the walk below would still visit
  // its first position, reading elements an empty input does not have.
  if (call.count == 0) return ExactSum(exact_format(call.input));
  const auto* a = reinterpret_cast<const T*>(call.data[0]);
  const auto* b = reinterpret_cast<const T*>(call.data[1]);
  Sum192 sum;
  if (summed.size() == 1) {  // one row: no walker (it allocates)
    const ReduceDim& row = summed.back();
    add_row(a + base[0], row.stride[0], b + base[1], row.stride[1], row.size, sum);
  } else if (!summed.empty()) {
    // The innermost reduced dim as the row; the others walked.
    const ReduceDim& row = summed.back();
    const std::vector<ReduceDim> outer(summed.begin(), summed.end() - 1);
    DimWalker walk(outer);
    do {
      add_row(a + base[0] + walk.offset(0), row.stride[0], b + base[1] + walk.offset(1), row.stride[1], row.size, sum);
    } while (walk.next());
  } else {
    sum.add(square_of_difference(a[base[0]], b[base[1]]));
  }
  ExactSum exact(exact_format(call.input));
  exact.add_integer(sum.low, 0, false);
  exact.add_integer(sum.high, 128, false);
  return exact;
}

}  // namespace

ExactSum integer_square_sum(const ReduceCall& call, const std::vector<ReduceDim>& summed,
                            const std::array<int64_t, kMaxOperands>& base) {
  switch (call.input) {
    case DType::i8: return sum_of<int8_t>(call, summed, base);
    case DType::i16: return sum_of<int16_t>(call, summed, base);
    case DType::i32: return sum_of<int32_t>(call, summed, base);
    case DType::i64: return sum_of<int64_t>(call, summed, base);
    case DType::u8: return sum_of<uint8_t>(call, summed, base);
    case DType::u16: return sum_of<uint16_t>(call, summed, base);
    case DType::u32: return sum_of<uint32_t>(call, summed, base);
    default: return sum_of<uint64_t>(call, summed, base);
  }
}

}  // namespace sqdiff::detail
