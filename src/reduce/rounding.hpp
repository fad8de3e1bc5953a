// Correct rounding of the reductions' and gradients' results: an exact sum
// (or an exact sum divided by a count: a mean) rounded once, to nearest with
// ties to even, into the output type; and the fast paths' shortcut, which
// rounds an approximation directly when every value within its error bound
// rounds the same way (Ziv's strategy).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>

#include "reduce/exact_sum.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

// The output types: f16, bf16, f32, f64 (rounded) and i64, u64 (integer
// sums, which must fit).
bool is_float_output(DType out);

// The bits of the output element (in the low bits of the word), or nullopt
// for an integer sum that does not fit the integer output type. `divisor` 0
// means a plain sum; otherwise the mean is sum / divisor (a mean over no
// elements, divisor 0 with `mean` set, is NaN).
std::optional<uint64_t> round_exact(const ExactSum& sum, bool mean, uint64_t divisor, DType out);

// An approximation of an exact value: hi + lo (a double-double, |lo| at most
// half an ulp of hi), within `error` of the exact value. `negative_zero`: the
// exact value is zero and IEEE arithmetic would give -0 (every term was -0).
struct Approximation {
  double hi = 0;
  double lo = 0;
  double error = 0;
};

// The correctly rounded result in `out` (a float output type) when every
// value within x's bound rounds to it; nullopt when the bound straddles a
// rounding boundary or x is not finite (then the exact sum decides).
std::optional<uint64_t> round_if_decided(const Approximation& x, DType out);

// round_if_decided for an f32 output whose result is a normal number, in a
// few instructions: the CPU's conversion gives the candidate, and the exact
// midpoints to its neighbours decide. Must run with the IEEE defaults
// (round to nearest even; runtime/fp_environment.hpp), as the fast paths do.
// nullopt whenever the general function must decide.
std::optional<uint64_t> round_to_f32_if_decided(const Approximation& x);

// The decision of round_to_f32_if_decided on its own: s (a double within half
// an ulp of the approximation) rounds to the f32 it converts to when every
// value within `margin` of s does; nullopt otherwise. Inline for the pairwise
// blocks, a million outputs a call; callers are compiled with
// -ffp-contract=off (src/CMakeLists.txt), as the midpoints are computed exactly.
inline std::optional<uint32_t> f32_if_decided(double s, double margin) {
  const auto candidate = static_cast<float>(s);
  const float magnitude = std::fabs(candidate);
  if (!(magnitude >= std::numeric_limits<float>::min() && magnitude < std::numeric_limits<float>::max())) {
    return std::nullopt;  // zero, subnormal, the largest finite (its upper neighbour is inf), inf or NaN
  }
  const auto bits = std::bit_cast<uint32_t>(candidate);
  // The neighbours below and above in magnitude, and the midpoints to them:
  // sums of two floats, exact in double, as are their halves.
  const double below = std::bit_cast<float>(bits - 1);
  const double above = std::bit_cast<float>(bits + 1);
  const double mid_below = (static_cast<double>(candidate) + below) / 2;
  const double mid_above = (static_cast<double>(candidate) + above) / 2;
  // The distances to the midpoints are exact (Sterbenz: s and each midpoint
  // are within a factor of 2 of each other).
  const double to_below = std::fabs(s - mid_below);
  const double to_above = std::fabs(mid_above - s);
  const bool between = (s - mid_below) * (mid_above - s) > 0;
  if (!between || to_below <= margin || to_above <= margin) return std::nullopt;
  return bits;
}

// The approximation of x / divisor (a mean), with its bound; nullopt where
// the division cannot be bounded cheaply (a divisor beyond 2^53, or values
// so small that a double-double underflows).
std::optional<Approximation> divide(const Approximation& x, uint64_t divisor);

// The bits of a quiet NaN, +inf, -inf and zero in a float output type.
uint64_t nan_bits(DType out);
uint64_t infinity_bits(DType out, bool negative);
uint64_t zero_bits(DType out, bool negative);

// The output element's value as a double (f16/bf16/f32/f64 bits widened),
// for tests and the CLI.
double float_bits_to_double(uint64_t bits, DType out);

}  // namespace sqdiff::detail
