#include "compare/compare_result.hpp"

#include <cmath>
#include <limits>

#include "compare/compare_call.hpp"
#include "reduce/element_access.hpp"

namespace sqdiff::detail {
namespace {

// The range of an integer type, max - min, as PSNR's default peak (255 for u8 and i8).
double integer_range(DType dtype) { return std::ldexp(1.0, 8 * static_cast<int>(dtype_size(dtype))) - 1.0; }

// A maximum's key as the public value: the exact |a - b| of integers, the
// bits of the f64 |a - b| of floats.
LargestDifference largest_difference(DType dtype, const Maximum& m) {
  if (m.position < 0) return {};
  if (is_float_type(dtype)) return {m.position, m.as_double(), 0};
  return {m.position, static_cast<double>(m.key), m.key};
}

}  // namespace

CompareStats compare_stats(const ComparedShapes& compared, const DifferenceStats& s, const RoundedSums& sums,
                           const CompareOptions& options) {
  const DType dtype = compared.dtype;
  CompareStats r;
  r.dtype = dtype;
  r.a_shape = compared.a_shape;
  r.b_shape = compared.b_shape;
  r.shape = compared.shape;
  r.broadcast = options.broadcast;
  r.broadcasted = r.a_shape != r.shape || r.b_shape != r.shape;
  r.elements = 1;
  for (int64_t dim : r.shape) r.elements *= dim;

  r.nan_a = s.a_nan;
  r.nan_b = s.b_nan;
  r.inf_a = s.a_inf;
  r.inf_b = s.b_inf;
  r.first_nan_a = s.a_first_nan;
  r.first_nan_b = s.b_first_nan;
  r.first_inf_a = s.a_first_inf;
  r.first_inf_b = s.b_first_inf;
  r.differing = s.differing;

  r.sum_squares = *sums.sum;
  r.mse = *sums.mean;
  r.rmse = std::sqrt(r.mse);
  r.largest = largest_difference(dtype, s.max_abs);
  r.max_abs_diff = r.largest.value;
  r.peak = options.peak;
  if (!r.peak && !is_float_type(dtype)) r.peak = integer_range(dtype);
  if (r.peak) {
    r.psnr = r.mse == 0 ? std::numeric_limits<double>::infinity() : 20 * std::log10(*r.peak) - 10 * std::log10(r.mse);
  }

  r.finite_elements = s.finite_pairs;
  r.finite_sum_squares = *sums.finite_sum;
  r.finite_mse = *sums.finite_mean;
  r.finite_rmse = std::sqrt(r.finite_mse);
  r.finite_largest = largest_difference(dtype, s.finite_max_abs);

  if (const std::optional<Tolerance> t = requested_tolerance(options)) {
    r.tolerance = CompareTolerance{t->atol, t->rtol, t->equal_nan};
    r.out_of_tolerance = s.out_of_tolerance;
    if (s.out_of_tolerance > 0) {
      r.worst = largest_difference(dtype, s.worst);
      r.worst_rel_error = r.worst.value / s.worst.b_magnitude;
    }
  }
  r.fail_above = options.fail_above;
  r.identical = !r.broadcasted && s.differing == 0;
  r.passed = r.out_of_tolerance == 0 && (!options.fail_above || r.mse <= *options.fail_above);
  return r;
}

}  // namespace sqdiff::detail
