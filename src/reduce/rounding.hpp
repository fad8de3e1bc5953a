// Correct rounding of the reductions' and gradients' results: an exact sum
// (or an exact sum divided by a count: a mean) rounded once, to nearest with
// ties to even, into the output type; and the fast paths' shortcut, which
// rounds an approximation directly when every value within its error bound
// rounds the same way (Ziv's strategy).
#pragma once

#include <cstdint>
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
