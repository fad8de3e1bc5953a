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

BoundedSum bounded_of(const SquareSums& sums, bool double_precision, int64_t chain) {
  // Squares are never negative: a NaN in the sum comes from a NaN term (a NaN
  // input or inf - inf), whatever else the kernels flagged, and the exact sum
  // is NaN too.
  if (std::isnan(sums.hi)) return BoundedSum{{}, BoundedSum::kNan};
  if (sums.needs_exact) return unbounded();
  // An infinite sum comes from an infinite term (the kernels flag squares
  // beyond f64's range as needing the exact path).
  if (std::isinf(sums.hi)) return BoundedSum{{}, BoundedSum::kInfinity};
  if (sums.hi == 0 && sums.lo == 0) return BoundedSum{};
  Approximation x = double_precision ? bound_double(sums, chain) : bound_single(sums);
  // Stored renormalised (|lo| at most half an ulp of hi), the same value.
  const TwoSum normal = two_sum(x.hi, x.lo);
  x.hi = normal.s;
  x.lo = normal.e;
  return BoundedSum{x, 0};
}

BoundedSum bounded_of(const ExactSum& sum) {
  if (sum.is_nan()) return BoundedSum{{}, BoundedSum::kNan};
  if (sum.is_positive_infinity()) return BoundedSum{{}, BoundedSum::kInfinity};
  if (!sum.is_finite() || sum.is_negative()) return unbounded();
  // hi, the nearest double, keeps the sum's leading bits (so it lies on the
  // sum's fixed-point grid), and the rest, sum - hi, is exact in the format;
  // lo is the rest's nearest double, exactly it or within one ulp of it.
  const double hi = std::bit_cast<double>(*round_exact(sum, false, 0, DType::f64));
  if (!std::isfinite(hi)) return unbounded();
  ExactSum rest = sum;
  rest.add_value(hi, true);
  const double lo = std::bit_cast<double>(*round_exact(rest, false, 0, DType::f64));
  ExactSum nearest(sum.format());
  nearest.add_value(lo, false);
  const bool exact = std::ranges::equal(nearest.limbs(), rest.limbs());
  // A whole ulp of lo (at least the smallest subnormal, never 0, so that a
  // rest below the subnormals' spacing keeps a bound).
  const double magnitude = std::fabs(lo);
  const double ulp = std::nextafter(magnitude, std::numeric_limits<double>::infinity()) - magnitude;
  const TwoSum normal = two_sum(hi, lo);
  return BoundedSum{{normal.s, normal.e, exact ? 0 : ulp}, 0};
}

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
