// A fast exact sum of doubles: each double's 53-bit mantissa is added, as a
// signed integer, into a bin of its own exponent (2048 bins of int64, so 1024
// additions fit in any bin before the bins are flushed into an ExactSum).
// Terms that are products of two values go in as the exact pair an FMA gives
// (x y = p + q). Several times faster than adding each term to the long
// fixed-point sum, and as exact.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

#include "reduce/exact_sum.hpp"

namespace sqdiff::detail {

class BinnedSum {
 public:
  explicit BinnedSum(ExactFormat format) : pending_(format) {}

  // Adds a finite double exactly.
  void add(double x) {
    uint64_t bits;
    std::memcpy(&bits, &x, 8);
    const auto field = static_cast<int>((bits >> 52) & 0x7FF);
    const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
    // A subnormal shares the smallest normal's bin (same weight per unit).
    const int bin = field == 0 ? 1 : field;
    const auto mantissa = static_cast<int64_t>(field == 0 ? fraction : fraction | (uint64_t{1} << 52));
    if (bin < low_ || bin > high_) cover(bin);
    bins_[static_cast<std::size_t>(bin)] += (bits >> 63) != 0 ? -mantissa : mantissa;
    if (++added_ == kAddsBeforeFlush) flush_bins();
  }

  // True when x y and its FMA error are both doubles exactly, so that
  // add_product is exact: no overflow, and the error not below 2^-1074
  // (|x y| >= 2^-969 ensures it), or an exact zero.
  static bool product_is_exact(double x, double y) {
    if (x == 0 || y == 0) return true;
    const double p = x * y;
    const double magnitude = p < 0 ? -p : p;
    return magnitude >= 0x1p-960 && magnitude < 0x1p1020;
  }

  // Adds x y exactly (product_is_exact(x, y) must hold).
  void add_product(double x, double y) {
    const double p = x * y;
    add(p);
    add(__builtin_fma(x, y, -p));
  }

  // Adds everything added so far to `sum`, and starts again from zero.
  void flush_into(ExactSum& sum) {
    flush_bins();
    sum.add(pending_);
    pending_ = ExactSum(pending_.format());
  }

 private:
  static constexpr int kBins = 2048;
  static constexpr int kAddsBeforeFlush = 1024;  // 1024 * 2^53 < 2^63: no bin overflows

  // Only the bins in [low_, high_] hold values; the rest are never read, so
  // they are zeroed as the range grows (a new BinnedSum costs nothing).
  void cover(int bin) {
    if (high_ < low_) {
      low_ = high_ = bin;
      bins_[static_cast<std::size_t>(bin)] = 0;
      return;
    }
    for (; low_ > bin; bins_[static_cast<std::size_t>(--low_)] = 0) {
    }
    for (; high_ < bin; bins_[static_cast<std::size_t>(++high_)] = 0) {
    }
  }

  void flush_bins() {
    for (int bin = low_; bin <= high_; ++bin) {
      const int64_t value = bins_[static_cast<std::size_t>(bin)];
      if (value == 0) continue;
      const bool negative = value < 0;
      const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
      pending_.add_integer(magnitude, bin - 1075, negative);
    }
    low_ = kBins;
    high_ = -1;
    added_ = 0;
  }

  std::array<int64_t, kBins> bins_;  // see cover()
  int low_ = kBins;
  int high_ = -1;
  int added_ = 0;
  ExactSum pending_;  // what full bins were flushed into
};

}  // namespace sqdiff::detail
