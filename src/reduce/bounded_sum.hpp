// A sum of squares known to within a rigorous error bound: the fast paths'
// double-double sum with its bound, before rounding. It is the bounded partial
// state (sqdiff/bounded_partial_sums.hpp): pieces of one reduction summed
// apart at the fast paths' speed, added with their bounds, and rounded once
// when the bound decides the rounding; the rare sum it leaves undecided is
// summed again exactly by the caller, who still has the data.
#pragma once

#include <cstdint>
#include <optional>

#include "kernels/reduce_table.hpp"
#include "reduce/exact_sum.hpp"
#include "reduce/rounding.hpp"
#include "sqdiff/dtype.hpp"

namespace sqdiff::detail {

struct BoundedSum {
  // hi + lo is within `error` of the exact sum (a double-double: |lo| at
  // most half an ulp of hi, all finite and hi, error >= 0), unless a flag
  // says otherwise.
  Approximation value;
  // A NaN term (a NaN input or inf - inf): the sum is NaN.
  static constexpr uint32_t kNan = 1;
  // An infinite term: the sum is +inf (unless NaN).
  static constexpr uint32_t kInfinity = 2;
  // The bound could not be kept (terms the kernels leave to the exact path,
  // or a sum beyond f64's range): only the exact sum decides.
  static constexpr uint32_t kUnbounded = 4;
  static constexpr uint32_t kKnownFlags = 7;
  uint32_t flags = 0;
};

// The kernels' sums of one output as a bounded sum: bound_double over `chain`
// terms per lane for f64 outputs (`double_precision`), bound_single otherwise
// (square_bounds.hpp).
BoundedSum bounded_of(const SquareSums& sums, bool double_precision, int64_t chain);

// An exact sum as a bounded one (its nearest double, within half an ulp, or
// exactly when the double is the sum).
BoundedSum bounded_of(const ExactSum& sum);

// x + y, with both bounds and the addition's own roundings in the result's.
BoundedSum add_bounded(const BoundedSum& x, const BoundedSum& y);

// The correctly rounded result in `out` of the sum (or, with `mean`, the sum
// divided by `count`, NaN when 0) when the bound decides it; nullopt when
// only the exact sum can.
std::optional<uint64_t> round_bounded(const BoundedSum& x, bool mean, uint64_t count, DType out);

}  // namespace sqdiff::detail
