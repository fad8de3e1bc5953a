// A comparison's result as the public CompareStats: a pass's statistics and
// rounded sums, with what the options derive from them (PSNR, the gates'
// verdict) and the shapes compared.
#pragma once

#include "compare/compare_pass.hpp"
#include "sqdiff/compare.hpp"

namespace sqdiff::detail {

// What was compared: the inputs' shapes and the aligned pair's dtype and shape.
struct ComparedShapes {
  DType dtype;
  Shape a_shape;
  Shape b_shape;
  Shape shape;
};

// The sums must be decided (RoundedSums::decided).
CompareStats compare_stats(const ComparedShapes& compared, const DifferenceStats& stats, const RoundedSums& sums,
                           const CompareOptions& options);

}  // namespace sqdiff::detail
