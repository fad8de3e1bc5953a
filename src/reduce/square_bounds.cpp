#include "reduce/square_bounds.hpp"

#include <cmath>

namespace sqdiff::detail {
namespace {

constexpr double kUnit = 0x1p-53;

// A margin on every bound: the bound's own computation rounds, and |S - Ŝ| <=
// g S becomes <= g / (1 - g) Ŝ.
constexpr double kMargin = 1.0 + 0x1p-20;

double magnitude(const SquareSums& s) { return (std::fabs(s.hi) + std::fabs(s.lo)) * kMargin; }

double squared(int64_t n) { return static_cast<double>(n) * static_cast<double>(n); }

}  // namespace

Approximation bound_single(const SquareSums& sums) {
  const double units = kChain + kTree + 2 + 1;  // one more for gamma's denominator
  const double error = (units * kUnit + 4 * squared(sums.additions + 2) * kUnit * kUnit) * magnitude(sums);
  return {sums.hi, sums.lo, error * kMargin};
}

double single_block_relative_bound() {
  return bound_single(SquareSums{1.0, 0.0, 1, false}).error * (1 + 0x1p-30);
}

Approximation bound_double(const SquareSums& sums, int64_t chain) {
  const double error = (0x1p-100 + 4 * squared(chain + sums.additions + 2) * kUnit * kUnit) * magnitude(sums);
  return {sums.hi, sums.lo, error * kMargin};
}

double double_lanes_relative_bound(int64_t chain) {
  return bound_double(SquareSums{1.0, 0.0, 1, false}, chain).error * (1 + 0x1p-30);
}

void add_sums(SquareSums& into, const SquareSums& from) {
  const double s = into.hi + from.hi;
  const double bv = s - into.hi;
  const double e = (into.hi - (s - bv)) + (from.hi - bv);
  into.hi = s;
  into.lo += from.lo + e;
  into.additions += from.additions + 1;
  into.needs_exact = into.needs_exact || from.needs_exact;
}

}  // namespace sqdiff::detail
