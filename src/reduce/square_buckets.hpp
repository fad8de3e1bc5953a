// An exact sum of squares of differences of single-precision values (f32, and
// f16/bf16, which widen to it exactly), several times faster than BinnedSum,
// for the exact path: the partial sums behind Dask blocks and `sqdiff
// compare` take it for every element.
//
// Two floats' difference d = a - b is a double exactly unless their exponents
// are far apart (TwoSum's error is then not 0); d is then M 2^k with M its
// 53-bit mantissa, and d^2 = M^2 2^2k, where M^2 < 2^106 is an exact 128-bit
// integer. M^2 is added into a 128-bit bucket of d's exponent: 2^21 such
// additions fit before a bucket could overflow. Four sets of buckets, taken
// in turn, keep a run of terms of one size from waiting on each other's
// additions to the same bucket.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "reduce/exact_sum.hpp"
#include "reduce/int128.hpp"

namespace sqdiff::detail {

class SquareBuckets {
 public:
  // Adds (a - b)^2 for values of f32 inputs and returns true; false (a
  // difference that is not a double exactly, or a non-finite input) leaves
  // the term to the caller.
  bool add(double a, double b) {
    const double s = a - b;
    const double bv = s - a;
    const double e = (a - (s - bv)) + (-b - bv);
    if (e != 0 || !(s - s == 0)) return false;  // inexact, or inf/NaN (s - s is NaN then)
    if (s == 0) return true;
    const uint64_t bits = std::bit_cast<uint64_t>(s);
    const auto field = static_cast<int>((bits >> 52) & 0x7FF);
    // f32 differences are never subnormal doubles (they are at least 2^-149).
    const uint64_t mantissa = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
    const auto square = static_cast<uint128_t>(mantissa) * mantissa;
    const int index = field - kLowestField;
    if (index < low_ || index > high_) cover(index);
    buckets_[set_][static_cast<std::size_t>(index)] += square;
    set_ = (set_ + 1) & (kSets - 1);
    if (++added_ == kAddsBeforeFlush) flush_buckets();
    return true;
  }

  // Adds everything so far into `sum` and starts again from zero.
  void flush_into(ExactSum& sum) {
    flush_buckets();
    sum.add(pending_);
    pending_ = ExactSum(pending_.format());
  }

  explicit SquareBuckets(ExactFormat format) : pending_(format) {}

 private:
  static constexpr int kSets = 4;
  // d's exponent field: from 2^-149 (the smallest f32 difference) to 2^129.
  static constexpr int kLowestField = 1023 - 149;
  static constexpr int kBuckets = 129 + 149 + 1;
  // Per set 2^21 additions of values below 2^106 stay below 2^127.
  static constexpr int kAddsBeforeFlush = kSets << 21;
  // The bound itself, checked where it is made: each set takes every kSets-th
  // addition, each below 2^106 (53-bit mantissas squared).
  static_assert(kAddsBeforeFlush / kSets <= (1 << 21), "a 128-bit bucket could overflow before its flush");

  // Only buckets in [low_, high_] hold values; the range is zeroed as it
  // grows, so that a sum of a few terms does not clear them all.
  void cover(int index) {
    const int from = high_ < low_ ? index : std::min(index, low_);
    const int to = high_ < low_ ? index : std::max(index, high_);
    for (int i = from; i <= to; ++i) {
      if (i >= low_ && i <= high_) continue;
      for (auto& set : buckets_) set[static_cast<std::size_t>(i)] = 0;
    }
    low_ = from;
    high_ = to;
  }

  void flush_buckets() {
    for (int i = low_; i <= high_; ++i) {
      for (auto& set : buckets_) {
        const uint128_t value = set[static_cast<std::size_t>(i)];
        // The bucket holds M^2 for d = M 2^(field - 1075): weight 2^(2 (field - 1075)).
        if (value != 0) pending_.add_integer(value, 2 * (i + kLowestField - 1075), false);
      }
    }
    low_ = kBuckets;
    high_ = -1;
    added_ = 0;
  }

  std::array<std::array<uint128_t, kBuckets>, kSets> buckets_;  // see cover()
  int low_ = kBuckets;
  int high_ = -1;
  int set_ = 0;
  int added_ = 0;
  ExactSum pending_;  // what full buckets were flushed into
};

}  // namespace sqdiff::detail
