// The rigorous error bounds of the kernels' sums of squares (kernels/
// reduce_table.hpp), turning a kernel's SquareSums into an Approximation the
// rounding can decide on. All terms are squares: non-negative, so the error is
// relative to the sum itself.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "kernels/reduce_table.hpp"
#include "reduce/rounding.hpp"

namespace sqdiff::detail {

// Single precision (f64 FMA chains): each term's rounding error is at most
// kChain + kTree + 2 units of 2^-53 (the difference's rounding counts twice
// in its square), and the double-double holding the block sums adds at most
// 4 (additions)^2 units squared.
Approximation bound_single(const SquareSums& sums);

// bound_single's error for the sum of one kernel block (additions 1, no low
// part) of 1, widened by 2^-30 so that its product with any |hi| is at least
// bound_single's error for that hi, whose own roundings differ: for loops
// that bound a block of outputs at a time (the pairwise kernel's).
double single_block_relative_bound();

// How far, in units of the last place of a sum s, s must lie from every f32
// midpoint for round_single_block_to_f32 to decide: at least the error
// bound's relative * |s| + 2^-53 |s| (as round_to_f32_if_decided's margin)
// over ulp(s) >= 2^-53 |s|, and far below the 2^27 units between s and the
// nearest midpoint of the binade below.
inline uint64_t single_block_clearance(double relative) {
  return static_cast<uint64_t>(std::ceil((relative + 0x1p-53) * (1 + 0x1p-40) * 0x1p53)) + 1;
}

// A sum of f32's normal range whose 29 bits below the f32 precision are
// further than `clearance` from 2^28 (the midpoint between two f32 values,
// in s's binade) rounds as every value within its error bound does: to the
// f32 nearest to it. Decided only so, with `relative` =
// single_block_relative_bound(): never a result that
// round_to_f32_if_decided(bound_single({s, 0, 1})) would not give
// (tests/reduce/square_bounds_test.cpp), in a few integer operations, for the
// pairwise blocks' million f32 outputs a call (the interval test before it
// cost the f32 K = 3 case two thirds of its time). Zero, subnormal sums and
// sums from FLT_MAX up are left undecided.
inline std::optional<uint32_t> round_single_block_to_f32(double s, double relative) {
  const double magnitude = std::fabs(s);
  if (!(magnitude >= static_cast<double>(std::numeric_limits<float>::min()) &&
        magnitude < static_cast<double>(std::numeric_limits<float>::max()))) {
    return std::nullopt;
  }
  constexpr uint64_t kBelowF32 = (uint64_t{1} << 29) - 1;
  constexpr uint64_t kMidpoint = uint64_t{1} << 28;
  const uint64_t clearance = single_block_clearance(relative);
  // Unsigned: below the window [midpoint - clearance, midpoint + clearance] wraps around to large.
  const uint64_t from_window = (std::bit_cast<uint64_t>(magnitude) & kBelowF32) - (kMidpoint - clearance);
  if (from_window <= 2 * clearance) return std::nullopt;
  return std::bit_cast<uint32_t>(static_cast<float>(s));
}

// Double precision (exact-product terms in double-double lanes): each term
// within 2^-102 of exact, and the low parts' roundings over `chain` terms
// per lane (kChain for rows, the rows added for columns) and the additions.
Approximation bound_double(const SquareSums& sums, int64_t chain);

// bound_double's error for one double-double lane of `chain` terms (a sum
// {hi, lo, additions 1}) relative to |hi| + |lo|, widened by 2^-30 so that its
// product with any |hi| + |lo| is at least bound_double's error for that sum:
// for the pairwise lanes kernels, which bound a row of f64 outputs at a time.
double double_lanes_relative_bound(int64_t chain);

// What round_if_decided(bound_double({hi, lo, 1}, chain), f64) decides, inline,
// with `relative` = double_lanes_relative_bound(chain): the same interval
// arithmetic with an error at least as large, so never a result that call
// would not give (tests/reduce/square_bounds_test.cpp); nullopt also for sums
// outside [2^-900, 2^1000) in magnitude (the bound's own arithmetic must not
// underflow, the interval's ends must be finite) and for |lo| >= |hi|.
inline std::optional<uint64_t> round_double_lanes_to_f64(double hi, double lo, double relative) {
  constexpr double kUnit = 0x1p-53;
  const double magnitude = std::fabs(hi);
  if (!(magnitude >= 0x1p-900 && magnitude < 0x1p1000 && std::fabs(lo) < magnitude)) return std::nullopt;
  const double error = relative * (magnitude + std::fabs(lo));
  const double e = 2 * std::max(error, kUnit * std::fabs(lo)) * (1 + 0x1p-40);
  const double low = hi + (lo - e);
  const double high = hi + (lo + e);
  if (!(low == high)) return std::nullopt;
  return std::bit_cast<uint64_t>(low);
}

// Adds one kernel sum into another (a double-double addition).
void add_sums(SquareSums& into, const SquareSums& from);

}  // namespace sqdiff::detail
