#include "reduce/bounded_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "reduce/square_bounds.hpp"

namespace sqdiff::detail {
namespace {

// Covers the roundings of the bound's own computation.
constexpr double kMargin = 1.0 + 0x1p-40;

BoundedSum unbounded() { return BoundedSum{{}, BoundedSum::kUnbounded}; }

}  // namespace

BoundedSum bounded_of(const SquareSums& sums, bool double_precision, int64_t chain) {
  if (sums.needs_exact) return unbounded();
  // Squares are never negative: a NaN in the sum comes from a NaN term, an
  // infinite sum from an infinite term (the kernels flag squares beyond
  // f64's range as needing the exact path).
  if (std::isnan(sums.hi)) return BoundedSum{{}, BoundedSum::kNan};
  if (std::isinf(sums.hi)) return BoundedSum{{}, BoundedSum::kInfinity};
  if (sums.hi == 0 && sums.lo == 0) return BoundedSum{};
  return BoundedSum{double_precision ? bound_double(sums, chain) : bound_single(sums), 0};
}

BoundedSum bounded_of(const ExactSum& sum) {
  if (sum.is_nan()) return BoundedSum{{}, BoundedSum::kNan};
  if (sum.is_positive_infinity()) return BoundedSum{{}, BoundedSum::kInfinity};
  if (!sum.is_finite() || sum.is_negative()) return unbounded();
  const double hi = std::bit_cast<double>(*round_exact(sum, false, 0, DType::f64));
  if (!std::isfinite(hi)) return unbounded();
  // hi keeps the sum's leading bits, so it lies on the sum's fixed-point grid.
  ExactSum nearest(sum.format());
  nearest.add_value(hi, false);
  const bool exact = std::ranges::equal(nearest.limbs(), sum.limbs());
  const double half_ulp = (std::nextafter(hi, std::numeric_limits<double>::infinity()) - hi) / 2;
  return BoundedSum{{hi, 0, exact ? 0 : half_ulp}, 0};
}

namespace {

// s + e == x + y exactly (Knuth's TwoSum; exact among subnormals too).
struct TwoSum {
  double s;
  double e;
};
TwoSum two_sum(double x, double y) {
  const double s = x + y;
  const double bv = s - x;
  return {s, (x - (s - bv)) + (y - bv)};
}

}  // namespace

BoundedSum add_bounded(const BoundedSum& x, const BoundedSum& y) {
  const uint32_t flags = x.flags | y.flags;
  if (flags != 0) return BoundedSum{{}, flags};
  const Approximation& a = x.value;
  const Approximation& b = y.value;
  // Every step is a TwoSum: the two roundings of the low parts are known
  // exactly and join the bound, so sums that stay exact (integer data, say)
  // keep a zero bound and round without the exact path.
  const TwoSum high = two_sum(a.hi, b.hi);
  const TwoSum lows = two_sum(a.lo, b.lo);
  const TwoSum low = two_sum(lows.s, high.e);
  const TwoSum sum = two_sum(high.s, low.s);
  const double hi = sum.s;
  const double lo = sum.e;
  const double error = (a.error + b.error + std::fabs(lows.e) + std::fabs(low.e)) * kMargin;
  if (!std::isfinite(hi) || !std::isfinite(lo) || !std::isfinite(error)) return unbounded();
  return BoundedSum{{hi, lo, error}, 0};
}

std::optional<uint64_t> round_bounded(const BoundedSum& x, bool mean, uint64_t count, DType out) {
  if (mean && count == 0) return nan_bits(out);
  if ((x.flags & BoundedSum::kUnbounded) != 0) return std::nullopt;
  if ((x.flags & BoundedSum::kNan) != 0) return nan_bits(out);
  if ((x.flags & BoundedSum::kInfinity) != 0) return infinity_bits(out, false);
  if (x.value.hi == 0 && x.value.lo == 0 && x.value.error == 0) return zero_bits(out, false);
  std::optional<Approximation> v = x.value;
  if (mean) v = divide(*v, count);
  if (!v) return std::nullopt;
  if (out == DType::f32) {
    if (const std::optional<uint64_t> bits = round_to_f32_if_decided(*v)) return bits;
  }
  return round_if_decided(*v, out);
}

}  // namespace sqdiff::detail
